// Seeded random input on both ports, bounded in count and time: the worker survives it,
// never answers 5xx or shows internals, and both protocols answer afterwards.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { GET_USER_RPC } from '../../proto/payload.js';
import { assertNoInternals, grpcGetUser, httpRequest, rawGrpcClient, tcpExchange } from '../helpers/clients.js';
import { startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';

// Change the seed to explore; a failure names the input, so a seed replays it.
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const PER_KIND = 1200;
const DEADLINE_MS = 20000;
const CONCURRENCY = 32;
// The server answers or closes at once on input it cannot use; past this the client hangs up
// (a well-framed HTTP/2 connection with no call in it is left open by the server).
const HANG_UP_MS = 300;

const bytes = (maxLength) => fc.uint8Array({ maxLength }).map(Buffer.from);
/** Valid input with 1 to 6 bytes overwritten at random places. */
const mutated = (valid) => fc.tuple(fc.constantFrom(...valid.map((v) => Buffer.from(v, 'latin1'))),
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }))
  .map(([input, edits]) => {
    const out = Buffer.from(input);
    for (const [at, value] of edits) out[at % out.length] = value;
    return out;
  });
const prefixed = (prefixes, tail) => fc.tuple(fc.constantFrom(...prefixes.map((p) => Buffer.from(p, 'latin1'))), tail)
  .map((parts) => Buffer.concat(parts));

const HTTP_REQUESTS = [
  'GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n',
  'GET /health HTTP/1.1\r\nHost: a\r\n\r\n',
  'POST / HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}',
  'GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
];
const httpInput = fc.oneof(
  bytes(512),
  prefixed(['GET / HTTP/1.1\r\n', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n', 'GET /health HTTP/1.1\r\nHost: a\r\n'], bytes(256)),
  mutated(HTTP_REQUESTS),
);

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
/** An HTTP/2 frame with a right length and random type, flags, stream and payload. */
const h2Frame = fc.record({
  type: fc.integer({ min: 0, max: 10 }), flags: fc.integer({ min: 0, max: 255 }),
  stream: fc.integer({ min: 0, max: 7 }), payload: bytes(64),
}).map(({ type, flags, stream, payload }) => {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
});
const grpcTcpInput = fc.oneof(
  bytes(512),
  prefixed([PREFACE.toString('latin1')], bytes(256)),
  fc.tuple(fc.array(h2Frame, { minLength: 1, maxLength: 4 })).map(([frames]) => Buffer.concat([PREFACE, EMPTY_SETTINGS, ...frames])),
);
/** A gRPC message body: random bytes, or random protobuf fields (tag, wire type, then bytes). */
const grpcMessage = fc.oneof(bytes(128), fc.array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 7 }), bytes(12)),
  { maxLength: 5 }).map((fields) => Buffer.concat(fields.flatMap(([n, w, b]) => [Buffer.from([(n << 3) | w]), b]))));

let server;
let workerPid;
before(async () => {
  server = await startServer({ MODE: 'both', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1000' });
  [workerPid] = server.workerPids();
});
after(() => server.stop());

/** Runs `send` over `inputs`, CONCURRENCY at a time, until done or `deadline`; returns how many ran. */
async function pool(inputs, send, deadline) {
  let next = 0;
  const lane = async () => {
    while (next < inputs.length && Date.now() < deadline) await send(inputs[next++]);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return Math.min(next, inputs.length);
}

test(`seeded fuzz (seed ${SEED}) of both ports: no crash, no 5xx, no internals; both protocols answer after`, { timeout: 60000 }, async (t) => {
  const deadline = Date.now() + DEADLINE_MS;
  const sample = (arbitrary, offset) => fc.sample(arbitrary, { seed: SEED + offset, numRuns: PER_KIND });
  const statuses = new Map();

  const httpRan = await pool(sample(httpInput, 0), async (input) => {
    const { data } = await tcpExchange(server.httpPort, input, { timeoutMs: HANG_UP_MS, end: true });
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(data.toString('latin1'))?.[1] ?? 'none';
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    assert.ok(!status.startsWith('5'), `HTTP ${status} for input ${JSON.stringify(input.toString('latin1'))}`);
    assertNoInternals(data);
  }, deadline);

  const grpcTcpRan = await pool(sample(grpcTcpInput, 1), async (input) => {
    const { data } = await tcpExchange(server.grpcPort, input, { timeoutMs: HANG_UP_MS, end: true });
    assertNoInternals(data);
  }, deadline);

  const client = rawGrpcClient(server.grpcPort);
  const allowed = new Set([grpc.status.OK, grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT]);
  const grpcMessagesRan = await pool(sample(grpcMessage, 2), async (message) => {
    const { code, details } = await client.call(`/${GET_USER_RPC}`, message);
    assert.ok(allowed.has(code), `${grpc.status[code]} ${details} for message ${message.toString('hex')}`);
    assertNoInternals(details);
  }, deadline);
  client.close();

  const ran = httpRan + grpcTcpRan + grpcMessagesRan;
  t.diagnostic(`${ran} inputs; HTTP answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`);
  assert.ok(Date.now() <= deadline, `the fuzz took longer than ${DEADLINE_MS} ms`);
  assert.equal(ran, 3 * PER_KIND, `only ${ran} inputs in ${DEADLINE_MS} ms`);
  assert.ok(statuses.get('200') > 0 && statuses.get('400') > 0, `answers: ${JSON.stringify(Object.fromEntries(statuses))}`);

  assert.ok(!server.lines.some((l) => l.event === EVENT.WORKER_REPLACED || l.event === EVENT.WORKER_DIED_EARLY || l.level >= 50), 'a worker died or logged an error');
  const res = await httpRequest(server.httpPort);
  assert.equal(res.status, 200);
  assert.equal(JSON.parse(res.body).workerPid, workerPid);
  assert.equal((await grpcGetUser(server.grpcPort)).workerPid, workerPid);
});
