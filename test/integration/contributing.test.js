// docs/contributing.md stays true: each addition it describes is made in a scratch copy of the repository, the docs
// regenerated there (npm run docs), and the files that changed are counted against the number the page states.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../bench/root.js';
import { addListener, addMode, addReportRow, addScenario, addServerLibrary } from '../helpers/additions.js';
import { scratchCopy } from '../helpers/scratch.js';

const DOC = readFileSync(path.join(ROOT, 'docs/contributing.md'), 'utf8');

/** A section of the page, by the start of its heading. */
const sectionOf = (heading) => {
  const section = DOC.split(/^## /m).find((s) => s.startsWith(heading));
  assert.ok(section, `docs/contributing.md has no section "${heading}"`);
  return section;
};

/** The number of files the page says an addition changes: the first "Files changed: N" of its section. */
const stated = (heading) => Number(/Files changed: (\d+)/.exec(sectionOf(heading))?.[1]);

/** Tracked files, relative to the repository. */
const tracked = () => execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);

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

test('adding a server library changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, (copy) => addServerLibrary(copy, 'lib-alt'));
  assert.deepEqual(files, ['bench/provenance.js', 'docs/server.md', 'package-lock.json', 'package.json', 'server/lib-alt.js',
    'server/listeners.js']);
  assert.equal(files.length, stated('Adding a server library'));
});

test('connect-node, the server library added last, is named only where docs/contributing.md says a library goes', () => {
  const naming = tracked().filter((f) => !f.startsWith('test/') && !f.startsWith('docs/') && !f.endsWith('.md')
    && existsSync(path.join(ROOT, f)) && readFileSync(path.join(ROOT, f), 'utf8').includes('@connectrpc/connect-node'));
  assert.deepEqual(naming, ['bench/provenance.js', 'package-lock.json', 'package.json', 'server/connect.js']);
});

// What reads an RPC's kind: rpcKind, SERVED_KINDS (and its type), k6's STREAM_KINDS, a method's requestStream or
// responseStream, an RPC's kind or a kind's name, or the value of k6's -e STREAM.
const READS_KIND = /\b(requestStream|responseStream|SERVED_KINDS|STREAM_KINDS|rpcKind|RpcKind)\b|'(server|client|bidirectional) streaming'|stream === '(server|client)'|\brpc\.kind\b/;

test("the files that read an RPC's kind are the ones docs/contributing.md lists", () => {
  const section = sectionOf('Adding a kind of RPC');
  const listed = [...new Set([...section.matchAll(/`((?:server|proto|bench|k6)\/[\w/.-]+\.js)`/g)].map((m) => m[1]))].sort();
  const found = tracked().filter((f) => f.endsWith('.js') && !f.startsWith('test/') && !f.startsWith('proto/gen/')
    && existsSync(path.join(ROOT, f)) && READS_KIND.test(readFileSync(path.join(ROOT, f), 'utf8')));
  assert.deepEqual(found, listed);
  assert.equal(found.length, Number(/Files that read an RPC's kind: (\d+)/.exec(section)?.[1]));
});
