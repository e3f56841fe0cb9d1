// The demo's server stream, user.v1.UserService/StreamUsers (issue 48): `node server` serves it on the gRPC listener and
// as SSE on the JSON twin, the 100 Users of users-100 one message each, as Google's Python protobuf reads them; run as the
// built-in users-stream, the same RPC answers its sample stream instead, message for message; and the job measures it
// by name.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { BUILT_IN_SERVICES } from '../../proto/own/builtins.js';
import { USER_FIELDS, USERS_STREAM } from '../../proto/payload.js';
import { k6Bin } from '../helpers/k6.js';
import { pyproto } from '../helpers/pyproto.js';
import { sh } from '../helpers/run.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const RPC = 'user.v1.UserService/StreamUsers';
const inProto = (file) => path.join(ROOT, 'proto', file);
const BUILT_IN = BUILT_IN_SERVICES['users-stream'];
const SCHEMA = { protos: [inProto(BUILT_IN.proto)], includes: BUILT_IN.protoPath.map(inProto), type: 'user.v1.User' };
const REQUEST = JSON.stringify(USERS_STREAM.request);

/** One StreamUsers call from a grpc-js client with identity codecs, asking for `count` Users: each message's bytes, in order. */
function grpcStream(port, count = USERS_STREAM.request.count) {
  const identity = (bytes) => bytes;
  const Client = grpc.makeGenericClientConstructor({
    StreamUsers: { path: `/${RPC}`, requestStream: false, responseStream: true,
      requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  }, 'UserService');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  // ListUsersRequest{count}: field 1, a varint (one byte below 128).
  const call = client.StreamUsers(Buffer.from([0x08, count]), { deadline: Date.now() + 10000 });
  return new Promise((resolve, reject) => {
    const messages = [];
    call.on('data', (m) => messages.push(m));
    call.on('error', (err) => reject(new Error(`gRPC stream: ${err.code} ${err.details}`)));
    call.on('end', () => resolve(messages));
  }).finally(() => client.close());
}

/** One StreamUsers call as SSE on the JSON twin: each event's data, a JSON text. */
async function sseStream(port) {
  const res = await fetch(`http://127.0.0.1:${port}/${RPC}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: REQUEST,
  });
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 300));
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  return text.split('\n\n').filter(Boolean).map((event) => {
    assert.match(event, /^data: [^\n]*$/, 'one data line an event');
    return event.slice('data: '.length);
  });
}

/**
 * Python's reading of each answer against the expected stream's: canonical JSON and deterministic binary, message for
 * message. One Python call for all.
 * @param {Record<string, {answers: Array<Buffer|string>, expected: object[]}>} twins
 */
async function assertStreams(twins) {
  const inputs = Object.values(twins).flatMap(({ answers, expected }) => [
    ...expected.map((json) => ({ json })),
    ...answers.map((a) => (typeof a === 'string' ? { json_text: a } : { binary_b64: a.toString('base64') }))]);
  const read = await pyproto({ ...SCHEMA, inputs });
  let at = 0;
  for (const [twin, { answers, expected }] of Object.entries(twins)) {
    assert.equal(answers.length, expected.length, `${twin}: ${answers.length} messages, the stream has ${expected.length}`);
    const want = read.slice(at, (at += expected.length));
    const got = read.slice(at, (at += answers.length));
    for (const [i, p] of got.entries()) {
      assert.ok(!('error' in p), `${twin}: message ${i} is not a user.v1.User to Python: ${p.error}`);
      assert.deepEqual(p.json, want[i].json, `${twin}: message ${i} (canonical JSON, by Python)`);
      assert.equal(p.binary_b64, want[i].binary_b64, `${twin}: message ${i} (deterministic serialization, by Python)`);
    }
  }
}

test('node server: StreamUsers streams users-100\'s Users over gRPC and as SSE, each from its listener and worker', async (t) => {
  const server = await startServer({ MODE: 'http,grpc' });
  t.after(() => server.stop());
  const [overGrpc, overSse] = await Promise.all([grpcStream(server.grpcPort), sseStream(server.httpPort)]);
  const workerPid = JSON.parse(overSse[0]).workerPid;
  assert.ok(Number.isInteger(workerPid) && workerPid > 0, overSse[0]);
  const users = (port) => USERS_STREAM.messages({ port, workerPid });
  assert.equal(users(1).length, 100);
  assert.equal(users(1)[0].country, USER_FIELDS.country, 'the demo\'s User, its country at the enum\'s zero');
  await assertStreams({
    gRPC: { answers: overGrpc, expected: users(server.grpcPort) },
    SSE: { answers: overSse, expected: users(server.httpPort) },
  });
  // Another count is refused, as ListUsers refuses the counts it has no scenario of.
  await assert.rejects(grpcStream(server.grpcPort, 5), /^Error: gRPC stream: 3 count must be one of 100$/);
  const refused = await fetch(`http://127.0.0.1:${server.httpPort}/${RPC}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: '{"count":5}',
  });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).message, 'count must be one of 100');
});

test('SCENARIO=users-stream\'s settings: the same RPC answers its sample stream, message for message, on both twins', async (t) => {
  const env = { PROTO: inProto(BUILT_IN.proto), PROTO_PATH: BUILT_IN.protoPath.map(inProto).join(':'), RPC: BUILT_IN.rpc,
    REQUEST: inProto(BUILT_IN.request), RESPONSE: inProto(BUILT_IN.response) };
  const [sample] = JSON.parse(readFileSync(env.RESPONSE, 'utf8'));
  const server = await startServer({ MODE: 'http,grpc', ...env });
  t.after(() => server.stop());
  const [overGrpc, overSse] = await Promise.all([grpcStream(server.grpcPort), sseStream(server.httpPort)]);
  await assertStreams({ gRPC: { answers: overGrpc, expected: sample }, SSE: { answers: overSse, expected: sample } });
});

test('SCENARIO=users-stream bash bench.sh: the job measures the stream by name, 100 messages a stream in both modes', async (t) => {
  const dir = await tempDir(t, 'users-stream-job-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
    REPEATS: '1', DURATION: '2s', WARMUP: '0s', VUS: '4', SCENARIO: 'users-stream', RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 120_000);
  assert.equal(code, 0, stderr);
  assert.match(stderr, /StreamUsers: 1 request and 100 response sample\(s\); every sample went through the twins' codecs as the same message/);
  assert.match(stdout, /\| messages\/s\s+\|/);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  assert.equal(report.own.rpc, RPC);
  assert.equal(report.own.kind, 'server streaming');
  for (const [mode, m] of Object.entries(report.modes)) {
    assert.equal(m.failed, 0, mode);
    // Streams cut at the run's end count their messages so far.
    assert.ok(Math.abs(m.messages_per_stream - 100) < 2, `${mode}: ${m.messages_per_stream} messages a stream`);
  }
  assert.ok(report.modes.grpc.received_per_message < report.modes.http.received_per_message, 'protobuf messages are smaller than SSE events');
});
