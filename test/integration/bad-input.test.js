// Bad input on either port gets a clear, protocol-correct answer, shows the client no
// internals, and leaves the worker running: after each case the same worker answers both protocols.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import grpc from '@grpc/grpc-js';
import { methodOf } from '../../proto/index.js';
import { GET_USER_RPC, rpcPath } from '../../proto/payload.js';
import {
  assertNoInternals, grpcGetUser, httpRequest, openKeptConnections, rawGrpcClient, tcpExchange,
} from '../helpers/clients.js';
import { h2Request } from '../helpers/proc.js';
import { startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';

const LIMITS = { HEADERS_TIMEOUT_MS: 1000, REQUEST_TIMEOUT_MS: 2000, MAX_BODY_BYTES: 1024, MAX_CONNECTIONS: 6 };
// Node checks the request deadlines once a second (server/http.js), so one may be up to 1 s late.
const CHECK_INTERVAL_MS = 1000;

let server;
let workerPid;
before(async () => {
  server = await startServer({ MODE: 'both', ...Object.fromEntries(Object.entries(LIMITS).map(([k, v]) => [k, String(v)])) });
  [workerPid] = server.workerPids();
});
after(() => server.stop());

/** The worker that answered before the bad input still answers, on both ports. */
async function assertSameWorkerServes() {
  const res = await httpRequest(server.httpPort);
  assert.equal(res.status, 200);
  assert.equal(JSON.parse(res.body).workerPid, workerPid);
  assert.equal((await grpcGetUser(server.grpcPort)).workerPid, workerPid);
  assert.ok(!server.lines.some((l) => l.event === EVENT.WORKER_REPLACED || l.event === EVENT.WORKER_DIED_EARLY), 'a worker died');
}

/** The status line and JSON body of a raw HTTP/1.1 answer. */
function parseAnswer(data) {
  const text = data.toString('latin1');
  const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
  return { statusLine: head.split('\r\n')[0], head, json: JSON.parse(body) };
}

// ---------------------------------------------------------------- HTTP

test('HTTP unknown path: 404 with a JSON body', async () => {
  const res = await httpRequest(server.httpPort, { path: '/no/such/thing?x=1' });
  assert.equal(res.status, 404);
  assert.match(res.headers['content-type'], /^application\/json/);
  assert.deepEqual(JSON.parse(res.body), { statusCode: 404, error: 'Not Found', message: 'no route GET /no/such/thing' });
  await assertSameWorkerServes();
});

test('HTTP wrong method on a known path: 405 with Allow and a JSON body', async () => {
  for (const [method, path] of [['POST', '/'], ['DELETE', '/health'], ['PUT', '/']]) {
    const res = await httpRequest(server.httpPort, { method, path });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.equal(JSON.parse(res.body).error, 'Method Not Allowed');
  }
  await assertSameWorkerServes();
});

test('HTTP body over MAX_BODY_BYTES: 413', async () => {
  const res = await httpRequest(server.httpPort, {
    method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: `"${'x'.repeat(LIMITS.MAX_BODY_BYTES * 4)}"`,
  });
  assert.equal(res.status, 413);
  assert.equal(JSON.parse(res.body).error, 'Payload Too Large');
  await assertSameWorkerServes();
});

test('HTTP malformed request line: 400 and the connection closed', async () => {
  for (const line of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n']) {
    const { data, closed } = await tcpExchange(server.httpPort, line);
    assert.ok(closed, JSON.stringify(line));
    const { statusLine, json } = parseAnswer(data);
    assert.equal(statusLine, 'HTTP/1.1 400 Bad Request', JSON.stringify(line));
    assert.equal(json.statusCode, 400);
    assertNoInternals(data);
  }
  await assertSameWorkerServes();
});

test('HTTP malformed headers: 400, and headers over Node\'s 16 KiB: 431', async () => {
  for (const header of ['No colon here', 'Bad Name: x', 'X-Ok: a\rb', 'Content-Length: 1\r\nContent-Length: 2']) {
    const { data, closed } = await tcpExchange(server.httpPort, `GET / HTTP/1.1\r\nHost: a\r\n${header}\r\n\r\n`);
    assert.ok(closed);
    assert.equal(parseAnswer(data).statusLine, 'HTTP/1.1 400 Bad Request', JSON.stringify(header));
    assertNoInternals(data);
  }
  const { data, closed } = await tcpExchange(server.httpPort, `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'b'.repeat(20000)}\r\n\r\n`);
  assert.ok(closed);
  assert.equal(parseAnswer(data).statusLine, 'HTTP/1.1 431 Request Header Fields Too Large');
  await assertSameWorkerServes();
});

test('HTTP headers sent too slowly (Slowloris): 408 once HEADERS_TIMEOUT_MS has passed', async () => {
  // A new header line every 200 ms, never the blank line that ends the head.
  const trickle = ['GET / HTTP/1.1\r\nHost: a\r\n', ...Array.from({ length: 30 }, (_, i) => `X-${i}: slow\r\n`)];
  const { data, closed, elapsedMs } = await tcpExchange(server.httpPort, trickle, { gapMs: 200, timeoutMs: 6000 });
  assert.ok(closed, 'the connection is still open');
  assert.ok(elapsedMs >= LIMITS.HEADERS_TIMEOUT_MS && elapsedMs < LIMITS.HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + 1000, `closed after ${elapsedMs} ms`);
  assert.equal(parseAnswer(data).statusLine, 'HTTP/1.1 408 Request Timeout');
  await assertSameWorkerServes();
});

test('HTTP connection that sends nothing: 408 and closed once HEADERS_TIMEOUT_MS has passed', async () => {
  const { data, closed, elapsedMs } = await tcpExchange(server.httpPort, [], { timeoutMs: 6000 });
  assert.ok(closed);
  assert.ok(elapsedMs >= LIMITS.HEADERS_TIMEOUT_MS && elapsedMs < LIMITS.HEADERS_TIMEOUT_MS + CHECK_INTERVAL_MS + 1000, `closed after ${elapsedMs} ms`);
  assert.equal(parseAnswer(data).statusLine, 'HTTP/1.1 408 Request Timeout');
  await assertSameWorkerServes();
});

test('HTTP body sent too slowly: 408 once REQUEST_TIMEOUT_MS has passed', async () => {
  const head = 'POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
  const { data, closed, elapsedMs } = await tcpExchange(server.httpPort, [head, ...Array(40).fill(' ')], { gapMs: 200, timeoutMs: 7000 });
  assert.ok(closed);
  assert.ok(elapsedMs >= LIMITS.REQUEST_TIMEOUT_MS && elapsedMs < LIMITS.REQUEST_TIMEOUT_MS + CHECK_INTERVAL_MS + 1000, `closed after ${elapsedMs} ms`);
  assert.equal(parseAnswer(data).statusLine, 'HTTP/1.1 408 Request Timeout');
  await assertSameWorkerServes();
});

test('HTTP connections past MAX_CONNECTIONS are closed at once, and served again once one closes', async () => {
  await sleep(100); // connections of earlier tests finish closing on the server's side
  const kept = await openKeptConnections(server.httpPort, LIMITS.MAX_CONNECTIONS);
  try {
    const extra = await tcpExchange(server.httpPort, 'GET / HTTP/1.1\r\nHost: a\r\n\r\n', { timeoutMs: 2000 });
    assert.ok(extra.closed, 'the connection past the cap is still open');
    assert.equal(extra.data.length, 0, 'the connection past the cap got an answer');
    kept.pop().destroy();
    await sleep(100);
    const [again] = await openKeptConnections(server.httpPort, 1);
    kept.push(again);
  } finally {
    for (const socket of kept) socket.destroy();
  }
  await sleep(100);
  await assertSameWorkerServes();
});

// ---------------------------------------------------------------- gRPC

test('gRPC unknown method or service: UNIMPLEMENTED', async () => {
  const client = rawGrpcClient(server.grpcPort);
  try {
    for (const path of ['/user.v1.UserService/DeleteUser', '/no.such.Service/GetUser']) {
      const { code, details } = await client.call(path, Buffer.alloc(0));
      assert.equal(code, grpc.status.UNIMPLEMENTED, path);
      assertNoInternals(details);
    }
  } finally {
    client.close();
  }
  await assertSameWorkerServes();
});

test('gRPC malformed protobuf message: INTERNAL or INVALID_ARGUMENT, no internals in the details', async () => {
  const client = rawGrpcClient(server.grpcPort);
  try {
    // Wire type 7 does not exist; a length past the end; a varint that never ends.
    for (const bytes of [[0x0f, 0x01], [0x0a, 0x05, 0x01], [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]]) {
      const { code, details } = await client.call(`/${GET_USER_RPC}`, Buffer.from(bytes));
      assert.ok([grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT].includes(code), `${bytes}: ${grpc.status[code]} ${details}`);
      assertNoInternals(details);
    }
  } finally {
    client.close();
  }
  await assertSameWorkerServes();
});

test('gRPC request that selects no scenario: INVALID_ARGUMENT naming the .proto field and the values served', async () => {
  const client = rawGrpcClient(server.grpcPort);
  try {
    for (const [rpc, request, details] of [
      ['GetBlob', { sizeBytes: 5 }, 'size_bytes must be one of 32768, 1048576'],
      ['ListUsers', { count: 7 }, 'count must be one of 100'],
    ]) {
      const type = methodOf(rpc).resolvedRequestType;
      const answer = await client.call(`/${rpcPath(rpc)}`, Buffer.from(type.encode(type.fromObject(request)).finish()));
      assert.deepEqual(answer, { code: grpc.status.INVALID_ARGUMENT, details }, rpc);
    }
  } finally {
    client.close();
  }
  await assertSameWorkerServes();
});

test('gRPC request message cut short (the stream ends inside it): INVALID_ARGUMENT, not UNIMPLEMENTED', async () => {
  // The 5-byte prefix announces 10 bytes; 3 come, then END_STREAM. And a stream that ends inside the prefix.
  for (const body of [Buffer.from([0, 0, 0, 0, 10, 0x08, 0x01, 0x08]), Buffer.from([0, 0, 0])]) {
    const answer = await h2Request(server.grpcPort, {
      method: 'POST', path: `/${rpcPath('GetBlob')}`, headers: { 'content-type': 'application/grpc', te: 'trailers' }, body,
    });
    assert.equal(answer.grpcStatus, String(grpc.status.INVALID_ARGUMENT), body.toString('hex'));
  }
  await assertSameWorkerServes();
});

test('gRPC message over MAX_BODY_BYTES: RESOURCE_EXHAUSTED', async () => {
  const client = rawGrpcClient(server.grpcPort);
  try {
    // Field 15, length-delimited, 4 KiB: valid protobuf that GetUserRequest would skip.
    const size = LIMITS.MAX_BODY_BYTES * 4;
    const big = Buffer.concat([Buffer.from([0x7a, 0x80 | (size & 0x7f), size >> 7]), Buffer.alloc(size, 1)]);
    const { code, details } = await client.call(`/${GET_USER_RPC}`, big);
    assert.equal(code, grpc.status.RESOURCE_EXHAUSTED, details);
    assertNoInternals(details);
  } finally {
    client.close();
  }
  await assertSameWorkerServes();
});

test('gRPC port, garbage bytes: the connection is closed', async () => {
  const garbage = Buffer.from('\x16\x03\x01\x02\x00 not HTTP/2 at all \x00\xff\xfe', 'latin1');
  const { closed, data, elapsedMs } = await tcpExchange(server.grpcPort, garbage);
  assert.ok(closed, 'the connection is still open');
  assert.ok(elapsedMs < 2000);
  assertNoInternals(data);
  await assertSameWorkerServes();
});

test('gRPC port, an HTTP/1.1 request: the connection is closed without an HTTP/1.1 answer', async () => {
  const { closed, data } = await tcpExchange(server.grpcPort, 'GET / HTTP/1.1\r\nHost: a\r\n\r\n');
  assert.ok(closed);
  assert.ok(!data.toString('latin1').startsWith('HTTP/1.1'), 'the gRPC port spoke HTTP/1.1');
  assertNoInternals(data);
  await assertSameWorkerServes();
});
