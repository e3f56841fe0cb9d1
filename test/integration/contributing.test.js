// docs/contributing.md stays true: each addition it describes is made in a scratch copy of the repository, the docs
// regenerated there (npm run docs), and the files that changed are counted against the number the page states.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../bench/root.js';
import { addListener, addMode, addReportRow, addScenario } from '../helpers/additions.js';
import { scratchCopy } from '../helpers/scratch.js';

const DOC = readFileSync(path.join(ROOT, 'docs/contributing.md'), 'utf8');

/** The number of files the page says an addition changes: the first "Files changed: N" of its section. */
const stated = (heading) => {
  const section = DOC.split(/^## /m).find((s) => s.startsWith(heading));
  assert.ok(section, `docs/contributing.md has no section "${heading}"`);
  return Number(/Files changed: (\d+)/.exec(section)?.[1]);
};

/** Files of the copy that differ from the repository's, or are new: the tracked ones and those listed. */
const changedFiles = (dir, added) => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n').filter((f) => f && existsSync(path.join(ROOT, f)));
  const differs = files.filter((f) => readFileSync(path.join(ROOT, f), 'utf8') !== readFileSync(path.join(dir, f), 'utf8'));
  return [...differs, ...added].sort();
};

/** Makes a change in a scratch copy, regenerates the docs there, and returns the files that changed. */
async function changed(t, change) {
  const copy = await scratchCopy((fn) => t.after(fn));
  const added = (await change(copy)) ?? [];
  execFileSync(process.execPath, ['scripts/gen-docs.js'], { cwd: copy.dir, stdio: 'ignore' });
  return changedFiles(copy.dir, added);
}

test('adding a scenario changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, (copy) => addScenario(copy));
  assert.deepEqual(files, ['docs/settings.md', 'docs/sweep.md', 'proto/payload.js']);
  assert.equal(files.length, stated('Adding a scenario'));
});

test('adding a listener changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, (copy) => addListener(copy, 'json-alt'));
  assert.deepEqual(files, ['docs/server.md', 'server/listeners.js']);
  assert.equal(files.length, stated('Adding a listener'));
});

test('adding a mode changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, (copy) => addMode(copy, { name: 'alt', listener: 'http', ownScripts: true }));
  assert.deepEqual(files, ['alt-tests/local.js', 'alt-tests/remote.js', 'bench/modes.js', 'config.js', 'docs/faults.md',
    'docs/settings.md', 'docs/soak.md']);
  assert.equal(files.length, stated('Adding a mode'));
});

test('adding a report row changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, (copy) => addReportRow(copy));
  assert.deepEqual(files, ['bench/records/summary.js', 'bench/report/rows.js', 'docs/report.md']);
  assert.equal(files.length, stated('Adding a report row'));
});
