// Host settings: the forms config.js accepts, the one-line refusals, and the k6 scripts
// and `npm run compare` using them. Load goes to loopback servers only.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { k6Bin, k6Run } from '../helpers/k6.js';
import { ROOT, startServer } from '../helpers/server.js';

/** True when this machine can listen on `host` (IPv6 may be off in a container). */
async function canListenOn(host) {
  const probe = net.createServer();
  try {
    await new Promise((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}

const IPV6_LOOPBACK = await canListenOn('::1');
const FORMS = 'must be host:port, http://host:port or [v6]:port (e.g. 10.1.2.3:4000)';

describe('k6 scripts', () => {
  let server;
  let dir;
  before(async () => {
    k6Bin();
    server = await startServer({ MODE: 'http' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'hosts-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('http-tests/local.js loads a live server given LOCAL_HTTP_HOST=http://127.0.0.1:<port>', async () => {
    const summaryFile = path.join(dir, 'http.json');
    const { code, output } = await k6Run(['--vus', '2', '--duration', '1s', '-e', `LOCAL_HTTP_HOST=http://127.0.0.1:${server.httpPort}`,
      '-e', `SUMMARY_FILE=${summaryFile}`, 'http-tests/local.js']);
    assert.equal(code, 0, output);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
    assert.equal(summary.bench.host, `127.0.0.1:${server.httpPort}`, 'the summary records the normalised authority');
    assert.equal(summary.metrics.http_req_failed.values.passes, 0);
  });

  test('both protocols reach a server on [::1] given [v6]:port or http://[v6]:port', { skip: !IPV6_LOOPBACK && 'no IPv6 loopback here' }, async () => {
    const v6 = await startServer({ MODE: 'both', HOST: '::1' });
    try {
      for (const [script, name, value] of [
        ['http-tests/local.js', 'LOCAL_HTTP_HOST', `http://[::1]:${v6.httpPort}/`],
        ['grpc-tests/local.js', 'LOCAL_GRPC_HOST', `[::1]:${v6.grpcPort}`],
      ]) {
        const summaryFile = path.join(dir, `v6-${name}.json`);
        const { code, output } = await k6Run(['--vus', '2', '--duration', '1s', '-e', `${name}=${value}`,
          '-e', `SUMMARY_FILE=${summaryFile}`, script]);
        assert.equal(code, 0, output);
        const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
        assert.match(summary.bench.host, /^\[::1\]:[0-9]+$/);
      }
    } finally {
      await v6.stop();
    }
  });

  test('a bad host stops k6 at init, before any load, naming the variable', async () => {
    const started = Date.now();
    const { code, output } = await k6Run(['--vus', '1', '--duration', '30s', '-e', 'REMOTE_GRPC_HOST=nonsense',
      '-e', `SUMMARY_FILE=${path.join(dir, 'never.json')}`, 'grpc-tests/remote.js'], { timeoutMs: 20000 });
    assert.notEqual(code, 0, output);
    assert.ok(code !== null, 'k6 was killed, so it did not stop at init');
    assert.match(output, /REMOTE_GRPC_HOST=\\?"nonsense\\?": must be host:port, http:\/\/host:port or \[v6\]:port/);
    assert.ok(Date.now() - started < 15000, 'k6 ran load instead of failing at init');
  });

  test('npm run compare refuses a summary whose bench.host is not a host, naming the file', async () => {
    const summaryFile = path.join(dir, 'valid.json');
    const { code, output } = await k6Run(['--vus', '1', '--duration', '1s', '-e', `LOCAL_HTTP_HOST=127.0.0.1:${server.httpPort}`,
      '-e', `SUMMARY_FILE=${summaryFile}`, 'http-tests/local.js']);
    assert.equal(code, 0, output);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
    const compare = (...files) => promisify(execFile)(process.execPath, ['bench/cli.js', 'compare', ...files, '--out', dir],
      { cwd: ROOT, timeout: 30000 }).then(() => ({ code: 0, stderr: '' }), (err) => err);

    const bad = path.join(dir, 'bad-host.json');
    await writeFile(bad, JSON.stringify({ ...summary, bench: { ...summary.bench, host: 'https://127.0.0.1:3000' } }));
    const refused = await compare(summaryFile, bad);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.stderr, `compare: ${bad}: bench.host="https://127.0.0.1:3000": ${FORMS} — https:// is not accepted: give host:port; TLS is switched on apart (k6: -e TLS_CA=<the CA certificate>)\n`);

    // Summaries from before bench.host existed say ''; they still compare.
    const old = path.join(dir, 'no-host.json');
    await writeFile(old, JSON.stringify({ ...summary, bench: { ...summary.bench, host: '' } }));
    const accepted = await compare(summaryFile, old);
    assert.equal(accepted.code, 0, accepted.stderr);
  });
});
