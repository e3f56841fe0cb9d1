// A mode whose name is not its listener's (as a connect-grpc mode on a connect listener would be), added in a
// scratch copy of the repository and run end to end by every command that starts a server for a mode: the main
// job, the soak and the fault matrix each give the server the mode's listener as its MODE, not the mode's name.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { addListener, addMode } from '../helpers/additions.js';
import { scratchCopy } from '../helpers/scratch.js';
import { sh } from '../helpers/run.js';

let copy;
// Registered here, not from inside the hook: an after() called in a before() hook runs when that hook ends.
const removals = [];
after(() => Promise.all(removals.map((remove) => remove())));
before(async () => {
  copy = await scratchCopy((remove) => removals.push(remove));
  await addListener(copy, 'json-alt');
  // A mode named otherwise than the listener it loads, with the HTTP scripts.
  await addMode(copy, { name: 'alt', listener: 'json-alt' });
});

/** Runs a bench command in the copy. */
const cli = (command, env) => sh(process.execPath, [path.join(copy.dir, 'bench/cli.js'), command], { K6_BIN: k6Bin(), ...env }, 180000);

const jsonIn = async (dir, pattern) => {
  const file = (await readdir(dir)).find((f) => pattern.test(f));
  assert.ok(file, `no file like ${pattern} in ${dir}`);
  return JSON.parse(await readFile(path.join(dir, file), 'utf8'));
};

test('the main job measures a mode whose listener has another name', async () => {
  const dir = path.join(copy.dir, 'results-run');
  const run = await cli('run', { MODES: 'alt', DURATION: '1s', WARMUP: '0s', VUS: '2', REPEATS: '1', RESULTS_DIR: dir });
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const report = await jsonIn(dir, /^compare-.*\.json$/);
  assert.ok(report.modes.alt.requests > 0, 'the alt column has requests');
  assert.equal(report.modes.alt.failed, 0);
  const summary = JSON.parse(await readFile(report.modes.alt.runs[0].file, 'utf8'));
  assert.equal(summary.bench.run.provenance.server.MODE, 'json-alt', 'the server opened the mode\'s listener');
});

test('the soak loads a mode whose listener has another name', async () => {
  const dir = path.join(copy.dir, 'results-soak');
  // SOAK_RATE=closed: no ceiling runs (2 × 15 s by default); what is checked is the listener the soak opens.
  const soak = await cli('soak', { MODE: 'alt', SOAK_DURATION: '1s', SOAK_RATE: 'closed', WARMUP: '0s', FAULTS: 'false', VUS: '2', WORKERS: '1', RESULTS_DIR: dir });
  assert.equal(soak.code, 0, soak.stderr + soak.stdout);
  const report = await jsonIn(dir, /^soak-[0-9TZ-]+\.json$/);
  assert.equal(report.soak[0].mode, 'alt');
  assert.ok(report.soak[0].requests > 0 && report.soak[0].failed === 0, JSON.stringify(report.soak[0]));
});

test('the fault matrix loads a mode whose listener has another name', async () => {
  const dir = path.join(copy.dir, 'results-faults');
  const faults = await cli('faults', { MODES: 'alt', FAULTS: 'reload', FAULT_DURATION: '8s', VUS: '2', RESULTS_DIR: dir });
  assert.equal(faults.code, 0, faults.stderr + faults.stdout);
  const report = await jsonIn(dir, /^faults-[0-9TZ-]+\.json$/);
  assert.deepEqual(report.cells.map((c) => [c.fault, c.mode]), [['reload', 'alt']]);
  assert.ok(report.cells[0].completed > 0, JSON.stringify(report.cells[0]));
});
