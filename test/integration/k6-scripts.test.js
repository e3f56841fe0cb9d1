// Each of the four k6 scripts, run for real against a live server.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { readSummary } from '../../bench/records/summary.js';
import { k6Bin, k6Run } from '../helpers/k6.js';
import { freePort, startServer } from '../helpers/server.js';
import { CLEARTEXT_MODE_NAMES, MODES } from '../../bench/modes.js';
import { listenerSetOf } from '../../bench/invoke.js';
import { LISTENERS } from '../../server/listeners.js';
import { grpcFrame, toProto3Json } from '../../proto/index.js';
import { demoMethods } from '../../proto/methods.js';

/** The demo's User as the listeners answer it: its type and message (from the GetUser method's one response sample). */
const demoUser = () => {
  const { rpc, responses } = demoMethods({ port: 1, workerPid: 1 })[0];
  return { type: rpc.responseType, message: responses.messages[0] };
};

let server;
let dir;
before(async () => {
  k6Bin();
  server = await startServer({ MODE: listenerSetOf(CLEARTEXT_MODE_NAMES) });
  dir = await mkdtemp(path.join(os.tmpdir(), 'k6-scripts-'));
});
after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// Every script of every mode (bench/modes.js) that runs in cleartext: [script, its host variable, mode]. The TLS-only
// mode (json-h2) runs the HTTP scripts, which test/integration/tls.test.js loads over TLS.
const SCRIPTS = CLEARTEXT_MODE_NAMES.map((mode) => [mode, MODES[mode]]).flatMap(([mode, { scripts, hostVars }]) =>
  ['local', 'remote'].map((target) => [scripts[target], hostVars[target], mode]));

for (const [script, hostVar, mode] of SCRIPTS) {
  test(`${script} loads the live ${mode} server with no failure`, async () => {
    const port = server.ports[MODES[mode].listener];
    const summaryFile = path.join(dir, `${mode}-${path.basename(script, '.js')}.json`);
    // SAMPLE_EVERY=10 so the short run checks plenty of responses.
    // A mode that runs another mode's scripts (connect-grpc) is named in their summary by SUMMARY_MODE, as the jobs do.
    const own = script.startsWith(`${mode}-tests/`);
    const { code, output } = await k6Run(['--vus', '4', '--duration', '2s', '-e', `${hostVar}=127.0.0.1:${port}`,
      '-e', `SUMMARY_FILE=${summaryFile}`, '-e', 'SAMPLE_EVERY=10', ...(own ? [] : ['-e', `SUMMARY_MODE=${mode}`]), script]);
    assert.equal(code, 0, output);
    assert.match(output, /data_sent/);
    assert.match(output, /data_received/);

    const figures = await readSummary(summaryFile);
    assert.equal(figures.mode, mode);
    assert.equal(figures.host, `127.0.0.1:${port}`);
    assert.ok(figures.requests > 100, `only ${figures.requests} requests`);
    assert.equal(figures.failed, 0);
    assert.equal(figures.checks_failed, 0);
    assert.ok(figures.data_sent_bytes > 0 && figures.data_received_bytes > 0);
    const raw = JSON.parse(await readFile(summaryFile, 'utf8'));
    assert.ok(raw.metrics.checks.values.passes >= 4 * 2, 'every VU checked its first response and more');
  });
}

test('the scripts tag their samples with error_code only (SYSTEM_TAGS), unless --system-tags asks for others', async () => {
  // k6's CSV output has a column per system tag it keeps: error_code alone with the scripts' own option.
  const tagsOf = async (mode, extra) => {
    const { scripts: { local }, hostVars } = MODES[mode];
    const csv = path.join(dir, `tags-${mode}-${extra.length}.csv`);
    const { code, output } = await k6Run(['--vus', '1', '--duration', '1s', '-e', `${hostVars.local}=127.0.0.1:${server.ports[MODES[mode].listener]}`,
      '-e', `SUMMARY_FILE=${path.join(dir, 'tags.json')}`, '--out', `csv=${csv}`, ...extra, local]);
    assert.equal(code, 0, output);
    const [header, ...rows] = (await readFile(csv, 'utf8')).trim().split('\n').map((line) => line.split(','));
    assert.ok(rows.length > 100, `${mode}: ${rows.length} samples`);
    const columns = header.filter((name) => !['metric_name', 'timestamp', 'metric_value', 'extra_tags', 'metadata'].includes(name));
    return { columns, filled: columns.filter((tag) => rows.some((row) => row[header.indexOf(tag)] !== '')) };
  };
  for (const mode of ['http', 'grpc']) {
    assert.deepEqual(await tagsOf(mode, []), { columns: ['error_code'], filled: [] }, `${mode}: the scripts' own tags`);
    assert.deepEqual(await tagsOf(mode, ['--system-tags=status']), { columns: ['status'], filled: ['status'] }, `${mode}: --system-tags`);
  }
});

test('a script aimed at a host where nothing listens stops with an error naming the host', async () => {
  const host = `127.0.0.1:${await freePort()}`;
  for (const [script, hostVar] of SCRIPTS.filter(([s]) => s.endsWith('/local.js'))) {
    const { code, output } = await k6Run(['--vus', '1', '--duration', '2s', '-e', `${hostVar}=${host}`,
      '-e', `SUMMARY_FILE=${path.join(dir, 'unreachable.json')}`, script]);
    assert.notEqual(code, 0, output);
    assert.match(output, new RegExp(`cannot reach the (HTTP|gRPC) server at ${host}`));
  }
});

/**
 * A server that answers its first request (the scripts' setup()) with the user payload and never
 * answers another: HTTP/1.1 on one port, gRPC over h2c on the other.
 */
async function answerOnceServers() {
  const { type, message } = demoUser();
  const json = toProto3Json(type, message);
  let httpSeen = 0;
  const h1 = http.createServer((req, res) => {
    if (httpSeen++ === 0) res.end(JSON.stringify(json));
  });
  let grpcSeen = 0;
  const h2 = http2.createServer();
  h2.on('stream', (stream) => {
    stream.on('error', () => {});
    if (grpcSeen++ > 0) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(grpcFrame(type.encode(message).finish()));
  });
  await Promise.all([h1, h2].map((s) => new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(undefined)))));
  return {
    ports: { http: h1.address().port, grpc: h2.address().port },
    close: () => { h1.closeAllConnections(); h1.close(); h2.close(); },
  };
}

test('a request with no answer ends at REQUEST_TIMEOUT and counts as failed and timed out, in every script', async () => {
  // Each script once (connect-grpc runs grpc's), against the server of its transport.
  for (const [script, hostVar, mode] of SCRIPTS.filter(([s, , m]) => s === `${m}-tests/local.js`)) {
    // Fresh servers per script: each answers one request in all.
    const servers = await answerOnceServers();
    try {
      const summaryFile = path.join(dir, `timeout-${mode}.json`);
      const started = Date.now();
      const h2 = LISTENERS[MODES[mode].listener].transport === 'HTTP/2';
      const { code, output } = await k6Run(['--vus', '2', '--duration', '2s', '-e', `${hostVar}=127.0.0.1:${servers.ports[h2 ? 'grpc' : 'http']}`,
        '-e', 'REQUEST_TIMEOUT=300ms', '-e', `SUMMARY_FILE=${summaryFile}`, script]);
      assert.equal(code, 0, output);
      // Not held until k6's graceful stop (30 s): every request ended at its timeout.
      assert.ok(Date.now() - started < 15000, `k6 took ${Date.now() - started} ms`);
      const figures = await readSummary(summaryFile);
      assert.ok(figures.timed_out >= 4, `${mode}: ${figures.timed_out} timed out`);
      assert.equal(figures.failed, figures.timed_out, `${mode}: every failure is a timeout`);
      assert.equal(figures.requests, figures.timed_out + 1, `${mode}: only setup()'s request was answered`);
    } finally {
      servers.close();
    }
  }
});

test('the gRPC script counts every call: a server gone after setup() leaves each later call failed', async () => {
  // Answers setup()'s call, then closes its listener and its sessions: every later connection is refused.
  const { type, message } = demoUser();
  const h2 = http2.createServer();
  h2.on('stream', (stream) => {
    stream.on('error', () => {});
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => {
      stream.sendTrailers({ 'grpc-status': '0' });
      h2.close();
      stream.session.close();
    });
    stream.end(grpcFrame(type.encode(message).finish()));
  });
  await new Promise((resolve) => h2.listen(0, '127.0.0.1', () => resolve(undefined)));
  const summaryFile = path.join(dir, 'gone.json');
  try {
    const { code, output } = await k6Run(['--vus', '2', '--duration', '2s', '-e', `LOCAL_GRPC_HOST=127.0.0.1:${h2.address().port}`,
      '-e', `SUMMARY_FILE=${summaryFile}`, MODES.grpc.scripts.local]);
    assert.equal(code, 0, output);
  } finally {
    h2.close();
  }
  const figures = await readSummary(summaryFile);
  const { metrics } = JSON.parse(await readFile(summaryFile, 'utf8'));
  // One call per iteration, and setup()'s: the only one answered.
  assert.equal(figures.requests, metrics.iterations.values.count + 1);
  assert.ok(figures.requests > 2, `${figures.requests} requests`);
  assert.equal(figures.failed, figures.requests - 1);
  assert.equal(metrics.grpc_req_failures, undefined, 'the counter the rate is made from is not in the summary');
});

test('a bad REQUEST_TIMEOUT stops a script at once, naming it', async () => {
  const { code, output } = await k6Run(['--vus', '1', '--duration', '1s', '-e', 'LOCAL_HTTP_HOST=127.0.0.1:1', '-e', 'REQUEST_TIMEOUT=5',
    'http-tests/local.js']);
  assert.notEqual(code, 0);
  assert.match(output, /REQUEST_TIMEOUT=\\?"5\\?": must be a k6 duration/);
});

test('the HTTP script checks its sampled answers: a 200 whose body is not the payload fails the body check, in each request shape', async () => {
  // Answers every request 200 with a User of the wrong name: the status check passes, the payload check must not.
  const wrong = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ username: 'Alice', premium: true, port: 1, workerPid: 1 }));
    });
  });
  await new Promise((resolve) => wrong.listen(0, '127.0.0.1', () => resolve(undefined)));
  try {
    // The three iterations the script chooses from (k6/http.js): a GET with no params, one with params (a timeout), and
    // the Connect protocol's POST.
    const shapes = [['get', []], ['get with params', ['-e', 'REQUEST_TIMEOUT=5s']], ['post', ['-e', 'SUMMARY_MODE=connect-json']]];
    for (const [shape, vars] of shapes) {
      const summaryFile = path.join(dir, `wrong-${shape.replaceAll(' ', '-')}.json`);
      const script = shape === 'post' ? MODES['connect-json'].scripts.local : MODES.http.scripts.local;
      const hostVar = shape === 'post' ? MODES['connect-json'].hostVars.local : MODES.http.hostVars.local;
      const { code, output } = await k6Run(['--vus', '2', '--duration', '1s', '-e', `${hostVar}=127.0.0.1:${wrong.address().port}`,
        '-e', 'SAMPLE_EVERY=10', '-e', `SUMMARY_FILE=${summaryFile}`, ...vars, script]);
      assert.equal(code, 0, output);
      const { metrics } = JSON.parse(await readFile(summaryFile, 'utf8'));
      const sampled = Math.ceil(metrics.iterations.values.count / 10);
      // Two checks per sampled answer: the status passes, the body fails. Each VU samples its first and every 10th.
      assert.ok(metrics.checks.values.fails >= sampled - 2 && metrics.checks.values.fails <= sampled + 2,
        `${shape}: ${metrics.checks.values.fails} failed checks for about ${sampled} sampled answers`);
      assert.equal(metrics.checks.values.passes, metrics.checks.values.fails, `${shape}: the status check passed each time`);
    }
  } finally {
    wrong.close();
  }
});
