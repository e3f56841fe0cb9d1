// Health as Docker and grpc_health_probe see it: GET /health, grpc.health.v1.Health,
// and the CLI server/healthcheck.js that a HEALTHCHECK runs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';
import { SERVICE_NAME } from '../../proto/payload.js';
import { grpcHealthClient, httpRequest, partialHttpRequest } from '../helpers/clients.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';

const run = promisify(execFile);

/** Runs `node server/healthcheck.js` with these settings; resolves with its exit code and output. */
async function healthcheck(env) {
  const options = { cwd: ROOT, env: { ...process.env, ...env }, timeout: 10000 };
  try {
    const { stdout, stderr } = await run(process.execPath, ['server/healthcheck.js'], options);
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

let server;
before(async () => { server = await startServer({ MODE: 'both' }); });
after(() => server.stop());

test('a serving worker: GET /health is 200 SERVING', async () => {
  const res = await httpRequest(server.httpPort, { path: '/health' });
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'], /^application\/json/);
  assert.deepEqual(JSON.parse(res.body), { status: 'SERVING' });
});

test('a serving worker: grpc.health.v1.Health/Check is SERVING for the server and UserService, NOT_FOUND for others', async () => {
  const health = grpcHealthClient(server.grpcPort);
  try {
    assert.equal(await health.check(''), 'SERVING');
    assert.equal(await health.check(SERVICE_NAME), 'SERVING');
    await assert.rejects(health.check('no.such.Service'), (err) => err.code === grpc.status.NOT_FOUND);
  } finally {
    health.close();
  }
});

test('the healthcheck CLI exits 0 when every listener of MODE serves', async () => {
  const { code, stdout } = await healthcheck({ MODE: 'both', HOST: '127.0.0.1', HTTP_PORT: String(server.httpPort), GRPC_PORT: String(server.grpcPort) });
  assert.equal(code, 0);
  assert.equal(stdout, `healthy: HTTP 127.0.0.1:${server.httpPort}, gRPC 127.0.0.1:${server.grpcPort}\n`);
});

test('the healthcheck CLI exits 1 naming the listener that does not answer', async () => {
  const deadPort = await freePort();
  const { code, stdout, stderr } = await healthcheck({ MODE: 'both', HOST: '0.0.0.0', HTTP_PORT: String(server.httpPort), GRPC_PORT: String(deadPort) });
  assert.equal(code, 1);
  assert.equal(stdout, '');
  assert.equal(stderr, `unhealthy: gRPC 127.0.0.1:${deadPort} UNAVAILABLE ECONNREFUSED\n`);
  const httpDown = await healthcheck({ MODE: 'http', HOST: '127.0.0.1', HTTP_PORT: String(deadPort) });
  assert.equal(httpDown.code, 1);
  assert.equal(httpDown.stderr, `unhealthy: HTTP 127.0.0.1:${deadPort} ECONNREFUSED\n`);
});

test('the healthcheck CLI exits 1 (not Docker\'s reserved 2) with one line on invalid settings', async () => {
  const { code, stderr } = await healthcheck({ MODE: 'soap' });
  assert.equal(code, 1);
  assert.match(stderr, /^healthcheck: invalid setting MODE="soap": [^\n]+\n$/);
});

// Last in this file: it stops the server.
test('while draining: a Watch stream turns NOT_SERVING and GET /health answers 503', async () => {
  const health = grpcHealthClient(server.grpcPort);
  try {
    const watch = health.watch('');
    assert.equal(await watch.next(), 'SERVING');
    const probe = partialHttpRequest(server.httpPort, '/health');
    await sleep(300); // the worker reads the partial head before the drain starts
    server.proc.kill('SIGTERM');
    assert.equal(await watch.next(), 'NOT_SERVING');
    watch.cancel();
    const answer = await probe.finish();
    assert.match(answer, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), { status: 'NOT_SERVING' });
    assert.equal((await server.exited)[0], 0);
  } finally {
    health.close();
  }
});
