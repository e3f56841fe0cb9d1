// The docs' generated tables (scripts/gen-docs.js) against the code they come from: the settings
// readers' specs (server/settings.js, bench/settings/bench.js, bench/settings/soak.js, bench/settings/faults.js) and the report's
// rows (bench/report/report.js ROWS); the sample report's own tests are test/unit/sample-report.test.js. Pure: reads
// README.md and docs/, writes only to a temporary folder.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { benchSettingSpecs, readBenchSettings } from '../../bench/settings/bench.js';
import { splitCores } from '../../bench/settings/cores.js';
import { readSoakSettings, SOAK_SETTING_NAMES, soakSettingSpecs } from '../../bench/settings/soak.js';
import { ROWS } from '../../bench/report/rows.js';
import { readSettings, serverSettingSpecs } from '../../server/settings.js';
import { bannersTable, generate, replaceSection, ROOT, rowsTable, run, SECTIONS, settingsTable, targetsTable } from '../../scripts/gen-docs.js';
import { BANNERS } from '../../bench/report/banners.js';
import { DISTURBED } from '../../bench/report/machine-noise.js';
import { WIDE_SPREAD } from '../../bench/report/rows.js';
import { PERFORMANCE_TARGETS } from '../../bench/performance-targets.js';
import { faultSettingSpecs, readFaultSettings } from '../../bench/settings/faults.js';

const READERS = [
  { name: 'server', doc: 'docs/server.md', read: readSettings, specs: serverSettingSpecs },
  { name: 'main job', doc: 'docs/settings.md', read: readBenchSettings, specs: benchSettingSpecs, derived: ['link'] },
  { name: 'soak', doc: 'docs/soak.md', read: readSoakSettings, specs: soakSettingSpecs },
  { name: 'faults', doc: 'docs/faults.md', read: readFaultSettings, specs: faultSettingSpecs },
];

/** The generated part of a doc: what lies between a section's markers (its first section's, unless one is named). */
const sectionOf = (doc, name) => {
  const { marker } = SECTIONS.find((s) => s.file === doc && (name === undefined || s.marker === name));
  const text = readFileSync(path.join(ROOT, doc), 'utf8');
  return text.slice(text.indexOf(`<!-- ${marker}:start -->`), text.indexOf(`<!-- ${marker}:end -->`));
};

test('every generated table in docs/ is what the code says (else: run npm run docs)', () => {
  for (const { file, current, wanted } of generate()) {
    assert.ok(current === wanted, `${file} is out of date with the code: run npm run docs`);
  }
});

test('every setting each reader accepts has a desc and a row in its doc', () => {
  for (const { name, doc, read, specs, derived = [] } of READERS) {
    // The reader reads exactly the specs the docs are made from.
    const keys = Object.keys(read({})).filter((k) => !derived.includes(k));
    assert.deepEqual(keys, Object.keys(specs()), `${name}: readEnv is not given the exported specs`);
    const section = sectionOf(doc);
    for (const [setting, spec] of Object.entries(specs())) {
      assert.ok(typeof spec.desc === 'string' && spec.desc.trim() !== '', `${name} setting ${setting} has no desc`);
      assert.ok(section.includes(`| \`${setting}\` |`), `${setting} missing from ${doc}: run npm run docs`);
    }
  }
  assert.deepEqual(SOAK_SETTING_NAMES, Object.keys(soakSettingSpecs()));
});

test('the settings tables are the same on any machine (defaults that depend on it have a defaultText)', () => {
  const [one, many] = [splitCores([0]), splitCores([0, 1, 2, 3, 4, 5, 6, 7])];
  assert.equal(settingsTable(serverSettingSpecs(1)), settingsTable(serverSettingSpecs(64)));
  assert.equal(settingsTable(benchSettingSpecs(one)), settingsTable(benchSettingSpecs(many)));
  assert.equal(settingsTable(soakSettingSpecs(one)), settingsTable(soakSettingSpecs(many)));
});

test('every report row has its explanation and a row in docs/report.md', () => {
  assert.equal(new Set(ROWS.map((r) => r.label)).size, ROWS.length, 'row labels are the keys of ratios: each once');
  assert.equal(new Set(ROWS.map((r) => r.field)).size, ROWS.length, 'each JSON field once');
  const section = sectionOf('docs/report.md', 'report:rows');
  for (const { label, field, what } of ROWS) {
    assert.ok(typeof what === 'string' && what.trim() !== '', `report row ${label} has no what`);
    assert.ok(section.includes(`| ${label} | \`${field}\` |`), `${label} missing from docs/report.md: run npm run docs`);
  }
  assert.throws(() => rowsTable([{ label: 'x', field: 'x', how: 'median', what: '' }]), /report row x has no what/);
  assert.throws(() => settingsTable({ X: { default: 1 } }), /setting X has no desc/);
});

test('--check names a stale doc and writes nothing; without it the doc is rewritten', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gen-docs-'));
  try {
    cpSync(path.join(ROOT, 'docs'), path.join(root, 'docs'), { recursive: true });
    cpSync(path.join(ROOT, 'README.md'), path.join(root, 'README.md'));
    const file = path.join(root, 'docs/server.md');
    const drifted = readFileSync(file, 'utf8').replace('| `HOST` |', '| `HOSTNAME` |');
    writeFileSync(file, drifted);
    const errors = [];
    assert.equal(run({ check: true, root, error: (line) => errors.push(line), log: () => {} }), 1);
    assert.deepEqual(errors, ['docs/server.md is out of date with the code: run npm run docs']);
    assert.equal(readFileSync(file, 'utf8'), drifted);
    assert.equal(run({ root, log: () => {} }), 0);
    assert.equal(run({ check: true, root, error: (line) => errors.push(line) }), 0);
    assert.equal(readFileSync(file, 'utf8'), readFileSync(path.join(ROOT, 'docs/server.md'), 'utf8'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('each banner of docs/report.md is one the report prints, with the code\'s thresholds', () => {
  const code = readdirSync(path.join(ROOT, 'bench/report')).filter((f) => f.endsWith('.js') && f !== 'banners.js')
    .map((f) => readFileSync(path.join(ROOT, 'bench/report', f), 'utf8')).join('\n');
  // The capitalised ones are printed as they are named; the two notes are named by a phrase their note prints.
  const printed = { 'client-bound': 'so the RPS is client-bound', 'client\'s ceiling not trusted': 'is not trusted' };
  for (const { name } of BANNERS) assert.ok(code.includes(printed[name] ?? name), `banner ${name} is printed nowhere in bench/report/`);
  const section = sectionOf('docs/report.md', 'report:banners');
  for (const { name } of BANNERS) assert.ok(section.includes(`| **${name}** |`), `banner ${name} missing from docs/report.md`);
  assert.ok(section.includes(`> ${WIDE_SPREAD * 100}% of the median`));
  assert.ok(section.includes(`steal ≥ ${DISTURBED.steal * 100}% or other processes ≥ ${DISTURBED.other * 100}%`));
  assert.throws(() => bannersTable([{ name: 'X', where: 'w', trigger: 't', threshold: '', effect: 'e', todo: 'd' }]), /banner X has no threshold/);
});

test('docs/decomposition.md gives each performance target the code sets', () => {
  const section = sectionOf('docs/decomposition.md', 'targets');
  for (const [pair, least] of Object.entries(PERFORMANCE_TARGETS)) assert.ok(section.includes(`| \`${pair}\` | ≥ ${least} |`), pair);
  assert.throws(() => targetsTable({ 'a/b': 1 }, {}), /target a\/b has no text/);
});

test('README.md stays at most 200 lines, its generated sample included', () => {
  const lines = readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
  assert.ok(lines <= 200, `README.md has ${lines} lines: move detail to docs/ (or fewer rows: SAMPLE_FIELDS in scripts/gen-docs.js)`);
});

test('a section whose markers are indented (in a list item) is generated indented alike, and stays so', () => {
  const section = { file: 'x.md', marker: 'm', source: 'here', render: () => 'one\n\n- two' };
  const doc = '- item\n\n  <!-- m:start -->\n  <!-- m:end -->\n\n  more of the item\n';
  const once = replaceSection(doc, section);
  assert.equal(once, '- item\n\n  <!-- m:start -->\n  <!-- Generated by npm run docs from here: edit there, not here. -->\n\n  one\n\n'
    + '  - two\n\n  <!-- m:end -->\n\n  more of the item\n');
  assert.equal(replaceSection(once, section), once);
  assert.throws(() => replaceSection('<!-- m:end --><!-- m:start -->', section), /x\.md: needs <!-- m:start --> and then <!-- m:end -->, each once/);
});
