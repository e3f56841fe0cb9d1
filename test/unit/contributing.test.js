// docs/contributing.md stays true: each addition it describes is made in a scratch copy of the repository, the docs
// regenerated there (npm run docs), and the files that changed are counted against the number the page states.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../bench/root.js';
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
  const files = await changed(t, (copy) => copy.edit('proto/payload.js', "  'users-100': {",
    "  'users-10': { description: '10 nested Users in a repeated field', ...users(10) },\n  'users-100': {"));
  assert.deepEqual(files, ['docs/settings.md', 'proto/payload.js']);
  assert.equal(files.length, stated('Adding a scenario'));
});

test('adding a listener changes the files docs/contributing.md says', async (t) => {
  const last = "    start: async (options) => (await import('./baseline-grpc.js')).startBaselineGrpc(options),\n  },\n";
  const files = await changed(t, (copy) => copy.edit('server/listeners.js', last, `${last}  'json-alt': {
    portSetting: 'JSON_ALT_PORT', defaultPort: 3009, protocol: 'HTTP (alt)', label: 'JSON · HTTP/1.1 · fastify, another port',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, probe: null,
    start: async (options) => (await import('./http.js')).startHttp(options),
  },
`));
  assert.deepEqual(files, ['docs/server.md', 'server/listeners.js']);
  assert.equal(files.length, stated('Adding a listener'));
});

test('adding a mode changes the files docs/contributing.md says', async (t) => {
  const files = await changed(t, async (copy) => {
    const last = "    payload: 'protobuf-message',\n  },\n";
    await copy.edit('bench/modes.js', last, `${last}  alt: {
    label: 'HTTP (JSON), alt',
    listener: 'http',
    scripts: { local: 'alt-tests/local.js', remote: 'alt-tests/remote.js' },
    hostVars: { local: 'LOCAL_ALT_HOST', remote: 'REMOTE_ALT_HOST' },
    minimalScript: 'bench/k6-minimal/http.js',
    metrics: { requests: ['http_reqs', 'count'], latency: 'http_req_duration', failed: 'http_req_failed' },
    payload: 'json-body',
  },
`);
    await mkdir(path.join(copy.dir, 'alt-tests'));
    for (const target of ['local', 'remote']) {
      const script = readFileSync(path.join(ROOT, `http-tests/${target}.js`), 'utf8').replaceAll(`${target.toUpperCase()}_HTTP_HOST`,
        `${target.toUpperCase()}_ALT_HOST`);
      await writeFile(path.join(copy.dir, `alt-tests/${target}.js`), script);
    }
    await copy.edit('config.js', "  REMOTE_ADMIN_HOST: '',\n",
      "  LOCAL_ALT_HOST: 'localhost:3000',\n  REMOTE_ALT_HOST: '192.168.0.10:3000',\n  REMOTE_ADMIN_HOST: '',\n");
    await copy.edit('config.js', "export const REMOTE_ADMIN_HOST = ",
      "export const LOCAL_ALT_HOST = pick('LOCAL_ALT_HOST');\nexport const REMOTE_ALT_HOST = pick('REMOTE_ALT_HOST');\nexport const REMOTE_ADMIN_HOST = ");
    return ['alt-tests/local.js', 'alt-tests/remote.js'];
  });
  assert.deepEqual(files, ['alt-tests/local.js', 'alt-tests/remote.js', 'bench/modes.js', 'config.js', 'docs/faults.md',
    'docs/settings.md', 'docs/soak.md']);
  assert.equal(files.length, stated('Adding a mode'));
});
