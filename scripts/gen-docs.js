// Writes the docs' generated parts between marker comments (npm run docs): the tables of settings and report rows
// from their one definition in the code, and the sample report (README.md, docs/report.md's verdict) from a real run's
// JSON report committed as docs/sample-report.json, rendered by the report's own code. The prose around them is left alone.
// `--check` writes nothing: it exits 1 naming every file whose tables differ from the code
// (test/unit/docs.test.js runs the same check).
//
//   node scripts/gen-docs.js            rewrite the generated sections
//   node scripts/gen-docs.js --check    exit 1 if any is stale
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchSettingSpecs } from '../bench/settings/bench.js';
import { soakSettingSpecs } from '../bench/settings/soak.js';
import { faultSettingSpecs } from '../bench/settings/faults.js';
import { sweepSettingSpecs } from '../bench/settings/sweep.js';
import { ROWS, SOURCES, WIDE_SPREAD } from '../bench/report/rows.js';
import { BANNERS } from '../bench/report/banners.js';
import { PERFORMANCE_TARGETS, TARGET_TEXTS } from '../bench/performance-targets.js';
import { provenanceLine, renderTable } from '../bench/report/render.js';
import { serverSettingSpecs } from '../server/settings.js';

/** The repository's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const code = (text) => `\`${text}\``;
// A pipe would end the cell, a line break the row.
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** A GFM table, one line a row, unpadded (as the hand-written tables of docs/ are). */
const table = (header, rows) => [header, header.map(() => '---'), ...rows]
  .map((row) => `|${row.map((c) => (c === '' ? ' ' : ` ${cell(c)} `)).join('|')}|`)
  .join('\n');

/**
 * How the docs show a setting's default: its `defaultText` when it has one (a default that
 * depends on the machine or on other settings), else the value as one would type it.
 * @param {object} spec an envalid spec
 * @returns {string} Markdown
 */
export function defaultOf(spec) {
  if (typeof spec.defaultText === 'string') return spec.defaultText;
  const value = spec.default;
  if (value === undefined) return 'unset';
  if (value === '') return 'empty';
  return code(Array.isArray(value) ? value.join(',') : String(value));
}

/**
 * The meaning column: the spec's desc, with its choices when the desc does not already name each.
 * @param {string} name the setting
 * @param {object} spec an envalid spec
 * @returns {string} Markdown
 * @throws {Error} when the spec has no desc
 */
export function meaningOf(name, spec) {
  const { desc, choices } = spec;
  if (typeof desc !== 'string' || desc.trim() === '') throw new Error(`setting ${name} has no desc`);
  if (!choices || choices.every((c) => desc.includes(code(c)))) return desc;
  return `${desc}; one of ${choices.map(code).join(', ')}`;
}

/**
 * One Markdown table of a reader's settings: setting | default | meaning, and example when any has one.
 * @param {Record<string, object>} specs envalid specs by variable name (serverSettingSpecs() and the like)
 * @returns {string} Markdown, without a final newline
 * @throws {Error} when a spec has no desc
 */
export function settingsTable(specs) {
  const entries = Object.entries(specs);
  const examples = entries.some(([, spec]) => spec.example !== undefined);
  const header = ['setting', 'default', 'meaning', ...(examples ? ['example'] : [])];
  const rows = entries.map(([name, spec]) => [
    code(name), defaultOf(spec), meaningOf(name, spec),
    ...(examples ? [spec.example === undefined ? '' : code(spec.example)] : []),
  ]);
  return table(header, rows);
}

/**
 * The Markdown table of the report's rows: row | JSON field | what it is.
 * @param {ReadonlyArray<import('../bench/report/rows.js').Row>} rows bench/report/rows.js ROWS
 * @returns {string} Markdown, without a final newline
 * @throws {Error} when a row has no `what`
 */
export function rowsTable(rows) {
  const body = rows.map(({ label, field, how, what, checkSpread, source }) => {
    if (typeof what !== 'string' || what.trim() === '') throw new Error(`report row ${label} has no what`);
    if (!Object.hasOwn(SOURCES, source)) throw new Error(`report row ${label} names no source of SOURCES`);
    const spread = checkSpread ? `; runs more than ${WIDE_SPREAD * 100}% of the median apart get a [WIDE SPREAD](#the-banners) warning` : '';
    return [label, code(field), source, `${how === 'sum' ? `${what}; summed over the repeats` : what}${spread}`];
  });
  return `${table(['row', 'JSON field', 'source', 'what it is'], body)}\n\nSources: ${Object.entries(SOURCES).map(([name, text]) => `\`${name}\`, ${text}`).join('; ')}.`;
}

/**
 * The Markdown table of the report's banners: what sets each off, its threshold, what it changes and what to do.
 * @param {ReadonlyArray<import('../bench/report/banners.js').Banner>} banners bench/report/banners.js BANNERS
 * @returns {string} Markdown, without a final newline
 * @throws {Error} when a banner lacks one of its texts
 */
export function bannersTable(banners) {
  const columns = ['name', 'where', 'trigger', 'threshold', 'effect', 'todo'];
  const body = banners.map((banner) => columns.map((c) => {
    if (typeof banner[c] !== 'string' || banner[c].trim() === '') throw new Error(`banner ${banner.name} has no ${c}`);
    return c === 'name' ? `**${banner[c]}**` : banner[c];
  }));
  return table(['banner', 'printed', 'set off when', 'threshold', 'what it changes', 'what to do'], body);
}

/**
 * The Markdown table of the performance targets: ratio | least | what it compares.
 * @param {Readonly<Record<string, number>>} targets bench/performance-targets.js PERFORMANCE_TARGETS
 * @param {Readonly<Record<string, string>>} texts TARGET_TEXTS, by the same keys
 * @returns {string} Markdown, without a final newline
 * @throws {Error} when a target has no text
 */
export function targetsTable(targets, texts) {
  const body = Object.entries(targets).map(([pair, least]) => {
    if (typeof texts[pair] !== 'string') throw new Error(`target ${pair} has no text`);
    return [code(pair), `≥ ${least}`, texts[pair]];
  });
  return table(['ratio', 'required', 'what it compares'], body);
}

/**
 * The sample report: the JSON report of a real `bash bench.sh` run with the defaults, copied from results/ (made by the
 * command its provenance records; regenerate both when the versions it records change: test/unit/sample-report.test.js).
 */
export const SAMPLE = 'docs/sample-report.json';

/** The README's rows of the sample, by JSON field, in the table's order; docs/report.md explains every row. */
export const SAMPLE_FIELDS = Object.freeze(['rps', 'capacity_rps', 'client_ceiling_rps', 'client_share', 'failed',
  'latency_ms.p50', 'latency_ms.p99', 'received_per_request', 'payload_bytes', 'server_cpu_us_per_request',
  'server_rss_peak_mib', 'server_heap_allocated_bytes_per_request']);

/**
 * Reads the sample report.
 * @param {string} [root] the repository (default ROOT)
 * @returns {any} the JSON report bench/report/files.js writes (`modes`, `ratios`, `verdict`, `provenance`, ...)
 * @throws {Error} when it cannot be read or parsed, or holds no recorded provenance
 */
export function readSample(root = ROOT) {
  const report = JSON.parse(readFileSync(path.join(root, SAMPLE), 'utf8'));
  if (!report.provenance?.recorded?.commit) throw new Error(`${SAMPLE}: records no provenance (a report of bash bench.sh records it)`);
  return report;
}

/** What made the sample, in words: the command, the commit, the date and the settings that shape its figures. */
function sampleOrigin(report) {
  const { commit, dirty, bench, pinning, machine } = report.provenance.recorded;
  if (dirty) throw new Error(`${SAMPLE}: made from a checkout with uncommitted changes; make it from a clean one`);
  const placement = pinning.split('; ').slice(0, 2).join(', ').replace(' (taskset)', '');
  return `\`bash bench.sh\` at commit ${commit.slice(0, 7)} on ${report.generated_at.slice(0, 10)} (the defaults: ${bench.REPEATS} runs `
    + `per mode, interleaved, ${bench.DURATION} each after a ${bench.WARMUP} warm-up, ${bench.VUS} VUs; ${placement}; a `
    + `${machine.cpu_count}-core ${machine.cpu_model} machine)`;
}

/**
 * The README's sample report: what made it, the verdict, the table's headline rows (SAMPLE_FIELDS) with the legend of
 * their ratios, and the provenance line, as the report writes them (bench/report/render.js).
 * @param {any} report readSample()
 * @returns {string} Markdown
 * @throws {Error} when SAMPLE_FIELDS names a field ROWS lacks, or the sample was made from uncommitted changes
 */
export function sampleReport(report) {
  const rows = SAMPLE_FIELDS.map((field) => ROWS.find((r) => r.field === field) ?? (() => { throw new Error(`SAMPLE_FIELDS: no report row has field ${field}`); })());
  const { table, legend } = renderTable(report, rows);
  const shown = table.split('\n').length - 2;
  const verdict = report.verdict.map((v) => `- ${v}`).join('\n');
  const provenance = provenanceLine(report.provenance.recorded, report.order.map((k) => report.modes[k].node));
  return `What ${sampleOrigin(report)} printed: the verdict and ${shown} of the table's rows, medians with the min–max of the runs `
    + `([${SAMPLE}](${SAMPLE}) has them all):\n\n**Verdict.**\n\n${verdict}\n\n${table}\n\n${legend}${provenance.replace(/^provenance/, 'Provenance')}.`;
}

/**
 * docs/report.md's example of a verdict: the sample's, with what made it.
 * @param {any} report readSample()
 * @returns {string} Markdown
 */
export function sampleVerdict(report) {
  return `The verdict of ${sampleOrigin(report)}, whose report is [sample-report.json](sample-report.json):\n\n`
    + report.verdict.map((v) => `- ${v}`).join('\n');
}

/**
 * @typedef {object} Section one generated part of a doc
 * @property {string} file the doc, relative to the repository
 * @property {string} marker its markers are `<!-- ${marker}:start -->` and `<!-- ${marker}:end -->`
 * @property {string} source where to edit what it says
 * @property {(root: string) => string} render the Markdown between the markers, from the repository at root
 */

/**
 * Every generated section, by doc.
 * @type {ReadonlyArray<Section>}
 */
export const SECTIONS = Object.freeze([
  { file: 'docs/server.md', marker: 'settings:server', source: 'serverSettingSpecs in server/settings.js',
    render: () => settingsTable(serverSettingSpecs()) },
  { file: 'docs/settings.md', marker: 'settings:bench', source: 'benchSettingSpecs in bench/settings/bench.js',
    render: () => settingsTable(benchSettingSpecs()) },
  { file: 'docs/soak.md', marker: 'settings:soak', source: 'soakSettingSpecs in bench/settings/soak.js',
    render: () => settingsTable(soakSettingSpecs()) },
  { file: 'docs/faults.md', marker: 'settings:faults', source: 'faultSettingSpecs in bench/settings/faults.js',
    render: () => settingsTable(faultSettingSpecs()) },
  { file: 'docs/sweep.md', marker: 'settings:sweep', source: 'sweepSettingSpecs in bench/settings/sweep.js',
    render: () => settingsTable(sweepSettingSpecs()) },
  { file: 'docs/decomposition.md', marker: 'targets', source: 'PERFORMANCE_TARGETS and TARGET_TEXTS in bench/performance-targets.js',
    render: () => targetsTable(PERFORMANCE_TARGETS, TARGET_TEXTS) },
  { file: 'docs/report.md', marker: 'report:banners', source: 'BANNERS in bench/report/banners.js',
    render: () => bannersTable(BANNERS) },
  { file: 'docs/report.md', marker: 'report:rows', source: 'ROWS in bench/report/rows.js',
    render: () => rowsTable(ROWS) },
  { file: 'docs/report.md', marker: 'report:sample-verdict', source: `${SAMPLE}, by sampleVerdict in scripts/gen-docs.js`,
    render: (root) => sampleVerdict(readSample(root)) },
  { file: 'README.md', marker: 'sample:report', source: `${SAMPLE}, by sampleReport in scripts/gen-docs.js`,
    render: (root) => sampleReport(readSample(root)) },
]);

/**
 * A doc's text with one section between its markers replaced. A start marker indented on its line (in a list item)
 * indents every generated line alike, so that the section stays inside the item.
 * @param {string} text the doc
 * @param {Section} section
 * @param {string} [root] the repository the section renders from (default ROOT)
 * @returns {string}
 * @throws {Error} when the markers are missing, repeated or out of order
 */
export function replaceSection(text, { file, marker, source, render }, root = ROOT) {
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from || text.indexOf(start, from + 1) >= 0 || text.indexOf(end, to + 1) >= 0) {
    throw new Error(`${file}: needs ${start} and then ${end}, each once`);
  }
  const before = text.slice(text.lastIndexOf('\n', from - 1) + 1, from);
  const indent = /^[ \t]*$/.test(before) ? before : '';
  const generated = `<!-- Generated by npm run docs from ${source}: edit there, not here. -->\n\n${render(root)}`
    .split('\n').map((line) => (line ? `${indent}${line}` : line)).join('\n');
  return `${text.slice(0, from + start.length)}\n${generated}\n\n${indent}${text.slice(to)}`;
}

/**
 * Each doc with generated sections, as it is and as the code says it should be.
 * @param {string} [root] the repository (default ROOT)
 * @returns {Array<{file: string, current: string, wanted: string}>} file relative to root
 * @throws {Error} when a doc cannot be read or lacks its markers
 */
export function generate(root = ROOT) {
  const files = [...new Set(SECTIONS.map((s) => s.file))];
  return files.map((file) => {
    const current = readFileSync(path.join(root, file), 'utf8');
    const wanted = SECTIONS.filter((s) => s.file === file).reduce((text, section) => replaceSection(text, section, root), current);
    return { file, current, wanted };
  });
}

/**
 * Rewrites the stale docs, or with `check` only names them.
 * @param {{check?: boolean, root?: string, log?: (line: string) => void, error?: (line: string) => void}} [options]
 * @returns {number} exit status: 0, or 1 when `check` found a stale doc
 */
export function run({ check = false, root = ROOT, log = console.log, error = console.error } = {}) {
  const stale = generate(root).filter(({ current, wanted }) => current !== wanted);
  if (check) {
    for (const { file } of stale) error(`${file} is out of date with the code: run npm run docs`);
    return stale.length ? 1 : 0;
  }
  for (const { file, wanted } of stale) {
    writeFileSync(path.join(root, file), wanted);
    log(`wrote ${file}`);
  }
  if (!stale.length) log('docs up to date');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args.some((a) => a !== '--check')) {
    console.error('usage: node scripts/gen-docs.js [--check]');
    process.exit(2);
  }
  try {
    process.exitCode = run({ check: args.includes('--check') });
  } catch (err) {
    console.error(`gen-docs: ${err.message}`);
    process.exitCode = 1;
  }
}
