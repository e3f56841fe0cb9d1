// Starting the cluster: WORKERS workers, one log line each, clear errors for bad settings and busy ports.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import net from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { freePort, ROOT, startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';
import { LISTENER_NAMES } from '../../server/listeners.js';
import { listenersOf } from '../../server/settings.js';

const run = promisify(execFile);

async function serverExit(env) {
  try {
    await run(process.execPath, ['server'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', ...env }, timeout: 15000 });
    return { code: 0, stdout: '', stderr: '' };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

test('the primary forks WORKERS workers, each logs one line, and requests reach them', async () => {
  const server = await startServer({ WORKERS: '2', MODE: 'http' });
  try {
    const workerLines = server.lines.filter((l) => l.event === EVENT.WORKER_LISTENING);
    const pids = new Set(workerLines.map((l) => l.pid));
    assert.equal(pids.size, 2);
    assert.ok(!pids.has(server.proc.pid), 'workers are not the primary');
    assert.deepEqual(server.lines.find((l) => l.event === EVENT.READY), {
      ...server.lines.find((l) => l.event === EVENT.READY), mode: 'http', workers: 2, http: server.httpPort,
    });
    // Every response names a worker process of this cluster.
    for (let i = 0; i < 20; i++) {
      const body = await (await fetch(`http://127.0.0.1:${server.httpPort}/`)).json();
      assert.ok(pids.has(body.workerPid), `pid ${body.workerPid} is not a worker`);
    }
  } finally {
    assert.equal(await server.stop(), 0, 'SIGTERM ends the primary with 0');
  }
});

test('the server starts in every MODE with nothing on stderr: no deprecation, no warning', async () => {
  // Every MODE value: both, all, and each listener alone; at the default LOG_LEVEL (request logging off) and at debug.
  const starts = [...['both', 'all', ...LISTENER_NAMES].map((mode) => ({ MODE: mode })), { MODE: 'all', LOG_LEVEL: 'debug' },
    { MODE: 'all', COMPRESSION: 'gzip' }];
  for (const env of starts) {
    const server = await startServer(env);
    try {
      // A request too: a deprecated use may warn on the first reply, not when the server is built.
      if (listenersOf(env.MODE).includes('http')) assert.equal((await fetch(`http://127.0.0.1:${server.httpPort}/`)).status, 200);
      // A process warning is written when it is emitted, on the next tick: give it one.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await server.stop();
    }
    assert.equal(server.stderr(), '', `${JSON.stringify(env)}: stderr`);
    assert.doesNotMatch(server.output(), /Warning|FSTDEP|\(node:\d+\)/, JSON.stringify(env));
  }
});

test('invalid settings stop the server before it forks, with one clear line', async () => {
  for (const [name, value] of [['WORKERS', 'abc'], ['MODE', 'soap'], ['HTTP_PORT', '70000']]) {
    const { code, stdout, stderr } = await serverExit({ [name]: value });
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`^server: invalid setting ${name}="${value}": `));
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.doesNotMatch(stdout, /"event":"worker-listening"/);
  }
});

test('a port already in use: the server names it and exits nonzero, no stack trace', async () => {
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  const { port } = blocker.address();
  try {
    const { code, stdout, stderr } = await serverExit({ MODE: 'grpc', GRPC_PORT: String(port), WORKERS: '1' });
    assert.equal(code, 1);
    assert.match(stdout, new RegExp(`gRPC port 127.0.0.1:${port} is already in use`));
    assert.doesNotMatch(stdout + stderr, /\n\s+at /, 'no stack trace');
  } finally {
    blocker.close();
  }
});

test('a listener that fails for another reason than its address says so, not "cannot be bound"', async () => {
  const fixture = pathToFileURL(`${ROOT}test/fixtures/broken-listener.js`).href;
  const port = String(await freePort());
  const { code, stdout, stderr } = await serverExit({ MODE: 'grpc', GRPC_PORT: port, WORKERS: '1', NODE_OPTIONS: `--import=${fixture}` });
  assert.equal(code, 1);
  assert.match(stdout, /the grpc listener failed to start: injected defect in createServer/);
  assert.doesNotMatch(stdout, /cannot be bound|already in use/);
  assert.doesNotMatch(stdout + stderr, /\n\s+at /, 'no stack trace');
});
