// A drain that begins while a worker still opens its listeners (issue 38): the listener that finishes opening after
// the drain began must not serve on until the worker exits. Here the worker's second listener (http) opens 1.5 s late
// (test/fixtures/slow-listen.js), SIGTERM comes once the first (grpc) listens, and a gRPC stream left open keeps the
// drain going past the late listener's opening: during the drain that listener's port must be closed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, listeningPorts } from '../helpers/proc.js';
import { freePort, ROOT } from '../helpers/server.js';

const SLOW_LISTEN_MS = 1500;
// Longer than the test needs the drain to last: the open stream holds it until the test lets go.
const DRAIN_MS = 10000;

/** Whether a TCP connect to 127.0.0.1:port succeeds. */
const accepts = (port) => new Promise((resolve) => {
  const socket = net.connect({ host: '127.0.0.1', port }, () => { socket.destroy(); resolve(true); });
  socket.on('error', () => resolve(false));
});

test('a listener that opens after the drain began is closed at once, not left serving until the exit', async () => {
  const ports = { HTTP_PORT: await freePort(), GRPC_PORT: await freePort() };
  const fixture = path.join(ROOT, 'test/fixtures/slow-listen.js');
  const proc = spawn(process.execPath, ['server'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MODE: 'grpc,http', WORKERS: '1', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS),
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${fixture}`,
      SLOW_LISTEN_PORT: String(ports.HTTP_PORT), SLOW_LISTEN_MS: String(SLOW_LISTEN_MS),
      HTTP_PORT: String(ports.HTTP_PORT), GRPC_PORT: String(ports.GRPC_PORT) },
  });
  let output = '';
  proc.stdout.on('data', (chunk) => { output += chunk; });
  proc.stderr.on('data', (chunk) => { output += chunk; });
  const exited = once(proc, 'exit');
  let session;
  try {
    // The first listener open, the second still waiting for its listen.
    assert.ok(await eventually(() => listeningPorts().has(ports.GRPC_PORT), 15000), `grpc never listened:\n${output}`);
    assert.ok(!listeningPorts().has(ports.HTTP_PORT), `http listened before the test could signal:\n${output}`);
    // A stream with its headers sent and no end: the grpc listener's drain waits for it.
    session = http2.connect(`http://127.0.0.1:${ports.GRPC_PORT}`);
    session.on('error', () => {});
    const stream = session.request({ ':method': 'POST', ':path': '/user.v1.UserService/GetUser',
      'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
    stream.on('error', () => {});
    await once(session, 'remoteSettings');
    await sleep(100); // the stream's HEADERS reach the worker
    proc.kill('SIGTERM');
    assert.ok(await eventually(() => output.includes('slow-listen: listening'), SLOW_LISTEN_MS + 5000),
      `the late listener never opened:\n${output}`);
    await sleep(300);
    // The drain still runs (the stream is open), so the worker is alive: its late listener must already be closed.
    assert.equal(proc.exitCode, null, `the server exited before the check:\n${output}`);
    assert.ok(!listeningPorts().has(ports.HTTP_PORT), `the late listener still listens during the drain:\n${output}`);
    assert.equal(await accepts(ports.HTTP_PORT), false, 'the late listener accepted a connection during the drain');
    session.destroy(); // the drain ends
    const result = await Promise.race([exited, sleep(5000).then(() => null)]);
    assert.ok(result, `the server did not exit once the stream ended:\n${output}`);
    assert.equal(result[0], 0, `exit ${result[0]}:\n${output}`);
  } finally {
    session?.destroy();
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
});
