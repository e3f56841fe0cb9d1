// The layers of bench/ (README, Layout): bench/cli.js over bench/commands/, which orchestrate bench/passes/ (which
// measure, and return data) and bench/report/ (which turns data into tables and files, and loads no process code);
// bench/records/ below both: the run record the passes write into each k6 summary and the report reads, with the
// arithmetic on what the passes read; bench/k6/, k6's room, below them all: its command line, runner, output and split runs.
// Read from the code's own imports, so that a file put in the wrong room fails here. That every file k6 runs is
// type-checked against k6's API is test/unit/k6-sources.test.js's.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../bench/root.js';

/** Every .js file under bench/, repository-relative. */
const BENCH = readdirSync(path.join(ROOT, 'bench'), { recursive: true }).filter((f) => f.endsWith('.js') && !f.startsWith('k6-minimal'))
  .map((f) => `bench/${f}`);

// Comments hold JSDoc types (`import('./x.js').Type`), which load nothing: they are left out.
const code = (file) => readFileSync(path.join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/**
 * What a file imports: relative imports resolved to repository paths, and package or builtin names.
 * @param {string} file
 * @returns {{static: string[], dynamic: string[]}} static: `import ... from`, loaded with the file; dynamic: `import()`,
 *   loaded when the code runs it
 */
function importsOf(file) {
  const resolve = (spec) => (spec.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)) : spec);
  const text = code(file);
  return {
    static: [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm)].map((m) => resolve(m[1] ?? m[2])),
    dynamic: [...text.matchAll(/\bimport\(\s*['"`]([^'"`$]+)['"`]\s*\)/g)].map((m) => resolve(m[1])),
  };
}

/** Every file a file loads with it, through static imports (itself included), and the modules outside the tree. */
function loadedWith(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const target of importsOf(file).static) {
    // A package's own file (protobufjs/ext/descriptor.js) is outside the tree, like the package.
    if (target.endsWith('.js') && !target.startsWith('node:') && existsSync(path.join(ROOT, target))) loadedWith(target, seen);
    else seen.add(target);
  }
  return seen;
}

const inRoom = (room) => (file) => file.startsWith(`bench/${room}/`);
// Process code: what starts, signals or talks to processes and servers.
const PROCESS_CODE = [
  inRoom('commands'), inRoom('passes'), inRoom('placement'),
  (f) => ['bench/cli.js', 'bench/processes.js', 'bench/tools.js', 'bench/invoke.js', 'bench/provenance.js', 'bench/k6/runner.js'].includes(f),
  (f) => ['node:child_process', 'child_process', 'node:net', 'node:cluster', 'node:http', 'node:http2', 'node:dgram'].includes(f),
];

test('the layering test sees every room and finds imports', () => {
  for (const room of ['commands', 'passes', 'placement', 'records', 'report', 'settings', 'faults', 'k6']) assert.ok(BENCH.some(inRoom(room)), `no bench/${room}/`);
  assert.ok(importsOf('bench/commands/run.js').static.includes('bench/report/report.js'));
  assert.ok(importsOf('bench/cli.js').dynamic.includes('bench/commands/run.js'));
  assert.ok(loadedWith('bench/commands/run.js').has('node:child_process'), 'a command loads process code');
});

test('bench/report/ loads no process code: reading and rendering results starts nothing', () => {
  for (const file of BENCH.filter(inRoom('report'))) {
    const wrong = [...loadedWith(file)].filter((f) => PROCESS_CODE.some((is) => is(f)));
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('the passes load nothing of bench/report/: what they record and the arithmetic on it are bench/records/\'s', () => {
  for (const file of BENCH.filter(inRoom('passes'))) {
    const wrong = [...loadedWith(file)].filter(inRoom('report'));
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('bench/records/ loads no command, pass, placement or report, and no process code: the report reads it', () => {
  for (const file of BENCH.filter(inRoom('records'))) {
    const wrong = [...loadedWith(file)].filter((f) => ['commands', 'passes', 'placement', 'report'].some((room) => inRoom(room)(f))
      || f === 'bench/cli.js' || PROCESS_CODE.some((is) => is(f)));
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('bench/settings/ loads no process code: the CLI reads and checks a command\'s settings without loading any job', () => {
  // Process code includes the fault registry's injectors and its misbehaving clients (node:http2 and protobufjs): the
  // settings take the faults' names and descriptions from bench/faults/names.js.
  const processCode = (f) => PROCESS_CODE.some((is) => is(f)) || f === 'bench/faults/registry.js' || f === 'bench/faults/clients.js';
  for (const file of BENCH.filter(inRoom('settings'))) {
    const wrong = [...loadedWith(file)].filter(processCode);
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
  // The mode registry is data alone.
  const wrong = [...loadedWith('bench/modes.js')].filter((f) => PROCESS_CODE.some((is) => is(f)));
  assert.deepEqual(wrong, [], `bench/modes.js loads ${wrong.join(', ')}`);
});

test('the fault registry and its clients load no command, pass, placement or report', () => {
  for (const file of BENCH.filter(inRoom('faults'))) {
    const wrong = [...loadedWith(file)].filter((f) => ['commands', 'passes', 'placement', 'report'].some((room) => inRoom(room)(f)));
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('bench/k6/ loads no command, pass, placement or report, and only its runner loads process code', () => {
  for (const file of BENCH.filter(inRoom('k6'))) {
    const wrong = [...loadedWith(file)].filter((f) => ['commands', 'passes', 'placement', 'report'].some((room) => inRoom(room)(f))
      || f === 'bench/cli.js' || (file !== 'bench/k6/runner.js' && PROCESS_CODE.some((is) => is(f))));
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('no command imports another, and only bench/cli.js imports a command', () => {
  for (const file of BENCH.filter((f) => f !== 'bench/cli.js')) {
    const { static: loaded, dynamic } = importsOf(file);
    const commands = [...loaded, ...dynamic].filter(inRoom('commands'));
    assert.deepEqual(commands, [], `${file} imports ${commands.join(', ')}`);
  }
  // And the CLI loads a command only when it runs it.
  assert.deepEqual(importsOf('bench/cli.js').static.filter(inRoom('commands')), []);
});

test('the passes return data: none renders Markdown, none imports a renderer', () => {
  for (const file of BENCH.filter(inRoom('passes'))) {
    const { static: loaded } = importsOf(file);
    assert.ok(!loaded.includes('markdown-table'), `${file} imports markdown-table`);
    assert.doesNotMatch(code(file), /\brender[A-Z]\w*\(/, `${file} renders`);
  }
});

test('neither the passes nor the report load bench/cli.js or a command: dependencies point down', () => {
  for (const file of BENCH.filter((f) => inRoom('passes')(f) || inRoom('report')(f) || inRoom('placement')(f))) {
    const wrong = [...loadedWith(file)].filter((f) => inRoom('commands')(f) || f === 'bench/cli.js');
    assert.deepEqual(wrong, [], `${file} loads ${wrong.join(', ')}`);
  }
});

test('the fault registry injects exactly the faults bench/faults/names.js names, in its order', async () => {
  const { FAULTS } = await import('../../bench/faults/registry.js');
  const { FAULT_ABOUT, FAULT_NAMES } = await import('../../bench/faults/names.js');
  assert.deepEqual(Object.keys(FAULTS), [...FAULT_NAMES]);
  for (const name of FAULT_NAMES) {
    assert.equal(FAULTS[name].about, FAULT_ABOUT[name]);
    assert.equal(typeof FAULTS[name].inject, 'function', name);
  }
});
