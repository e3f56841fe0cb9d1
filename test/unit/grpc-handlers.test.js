// The gRPC listener's handlers (server/grpc.js), called with fake calls, with no port and no server: each method's
// service (methodService) for the demo's RPCs and an own RPC, and the interceptor that turns a missing request message
// into INVALID_ARGUMENT (requireRequestMessage).
import assert from 'node:assert/strict';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import grpc from '@grpc/grpc-js';
import pino from 'pino';
import { methodService, requireRequestMessage } from '../../server/grpc.js';
import { demoMethods, ownMethod } from '../../proto/methods.js';
import { memoryState } from '../../server/memory-budget.js';
import { servedRequests } from '../../server/served.js';
import { loadOwnService } from '../../proto/own/service.js';
import { responseTypeOf, toProto3Json } from '../../proto/index.js';
import { SCENARIOS } from '../../proto/payload.js';
import { ROOT } from '../../bench/root.js';

const PORT = 4000;
const silent = pino({ level: 'silent' });

/**
 * Calls a unary handler as grpc-js would, with a fake call holding `request`.
 * @returns {Promise<{err: any, value: any}>} what the handler gave its callback
 */
/**
 * The demo's handlers as the gRPC listener adds them, by method name.
 * @param {{port: number, log: import('pino').Logger, loader?: boolean}} options
 * @returns {Record<string, Function>}
 */
const scenarioHandlers = ({ port, log, loader = false }) => Object.assign({}, ...demoMethods({ port, workerPid: process.pid })
  .map((method) => methodService(method, { log, loader }).implementation));

const callOf = (handler, request, peer = 'ipv4:127.0.0.1:5555') => new Promise((resolve) => {
  handler({ request, getPeer: () => peer }, (err, value) => resolve({ err, value }));
});

test('one handler per RPC the scenarios use, each answering its scenario\'s message; each call counted', async () => {
  const handlers = scenarioHandlers({ port: PORT, log: silent });
  assert.deepEqual(Object.keys(handlers).sort(), [...new Set(Object.values(SCENARIOS).map((s) => s.rpc))].sort());
  for (const [name, { rpc, request, check }] of Object.entries(SCENARIOS)) {
    const before = servedRequests.grpc;
    const { err, value } = await callOf(handlers[rpc], request);
    assert.equal(err, null, name);
    const type = responseTypeOf(rpc);
    assert.ok(value instanceof type.ctor, `${name}: a protobufjs message of ${type.name}`);
    const json = toProto3Json(type, value);
    assert.ok(check(json), `${name}: the scenario's check`);
    if ('workerPid' in json) assert.equal(json.workerPid, process.pid);
    assert.equal(servedRequests.grpc, before + 1, name);
  }
  assert.equal((await callOf(handlers.GetUser, {})).value.port, PORT);
});

test('GRPC_CODEC=proto-loader: plain objects, which proto-loader\'s codec converts, with the same content', async () => {
  const messages = scenarioHandlers({ port: PORT, log: silent });
  const objects = scenarioHandlers({ port: PORT, log: silent, loader: true });
  for (const [name, { rpc, request }] of Object.entries(SCENARIOS)) {
    const type = responseTypeOf(rpc);
    const { value } = await callOf(objects[rpc], request);
    assert.equal(Object.getPrototypeOf(value), Object.prototype, `${name}: a plain object`);
    const { value: message } = await callOf(messages[rpc], request);
    assert.deepEqual(type.encode(type.fromObject(value)).finish(), type.encode(message).finish(), name);
  }
});

test('INVALID_ARGUMENT naming the allowed values for a request that selects no scenario', async () => {
  const handlers = scenarioHandlers({ port: PORT, log: silent });
  for (const [rpc, request, details] of [['ListUsers', { count: 7 }, 'count must be one of 100'],
    ['GetBlob', {}, 'size_bytes must be one of 32768, 1048576']]) {
    const { err, value } = await callOf(handlers[rpc], request);
    assert.deepEqual(err, { code: grpc.status.INVALID_ARGUMENT, details }, rpc);
    assert.equal(value, undefined);
  }
});

test('RESOURCE_EXHAUSTED for a large answer past the memory budget; small answers still served', async (t) => {
  const handlers = scenarioHandlers({ port: PORT, log: silent });
  const before = memoryState.refusedAnswers;
  memoryState.budgetBytes = 1;
  t.after(() => { memoryState.budgetBytes = 0; });
  const large = await callOf(handlers.GetBlob, SCENARIOS['blob-1m'].request);
  assert.deepEqual(large.err, { code: grpc.status.RESOURCE_EXHAUSTED, details: 'the server is past its memory budget; retry later' });
  assert.equal(memoryState.refusedAnswers, before + 1);
  assert.equal((await callOf(handlers.GetBlob, SCENARIOS['blob-32k'].request)).err, null);
  assert.equal((await callOf(handlers.GetUser, {})).err, null);
});

test('GetUser logs its caller\'s peer at debug, and nothing at info', async () => {
  const lines = [];
  const sink = new Writable({ write(chunk, encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  await callOf(scenarioHandlers({ port: PORT, log: pino({ level: 'info' }, sink) }).GetUser, {});
  assert.equal(lines.length, 0);
  await callOf(scenarioHandlers({ port: PORT, log: pino({ level: 'debug' }, sink) }).GetUser, {}, 'ipv4:10.0.0.9:1234');
  assert.equal(lines.length, 1);
  assert.equal(lines[0].peer, 'ipv4:10.0.0.9:1234');
  assert.equal(lines[0].msg, 'GetUser');
});

test('the own RPC: the samples in turn through its definition\'s codec; INVALID_ARGUMENT for a request that does not decode', async () => {
  const REST = path.join(ROOT, 'test/fixtures/own/rest');
  const own = loadOwnService({
    PROTO: path.join(REST, 'library/v1/library.proto'), PROTO_PATH: REST, RPC: 'library.v1.LibraryService/CreateBook',
    RESPONSE: path.join(REST, 'books.json'),
  });
  const { definition, implementation } = methodService(ownMethod(own));
  assert.deepEqual(Object.keys(definition), ['CreateBook']);
  assert.deepEqual(Object.keys(implementation), ['CreateBook']);
  const method = definition.CreateBook;
  assert.equal(method.path, '/library.v1.LibraryService/CreateBook');
  assert.equal(method.requestStream || method.responseStream, false);
  // What grpc-js does with a call: the bytes through requestDeserialize, the handler, the answer through responseSerialize.
  const handle = async (bytes) => {
    const { err, value } = await callOf(implementation.CreateBook, method.requestDeserialize(bytes));
    return { err, book: value && own.rpc.responseType.toObject(own.rpc.responseType.decode(method.responseSerialize(value)), { longs: String }) };
  };
  const good = method.requestSerialize({ parent: 'shelves/7' });
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await handle(good));
  assert.deepEqual(answers.map((a) => a.err), [null, null, null]);
  assert.deepEqual(answers.map((a) => a.book.title), ['One', 'Two', 'One']);
  assert.equal(answers[1].book.pages, '9007199254740993');
  // Field 1 (parent, a string) said to be 5 bytes long, with 3 there.
  const bad = await handle(Buffer.from([0x0a, 0x05, 0x61, 0x62, 0x63]));
  assert.equal(bad.err.code, grpc.status.INVALID_ARGUMENT);
  assert.match(bad.err.details, /^the request is not a valid library\.v1\.CreateBookRequest: \S/);
  // The refused request took no turn.
  assert.equal((await handle(good)).book.title, 'Two');
});

test('requireRequestMessage: grpc-js\'s UNIMPLEMENTED for a missing request message becomes INVALID_ARGUMENT; nothing else changes', () => {
  const sent = [];
  const makeCall = () => Object.create({ sendStatus(status) { sent.push(status); } });
  const call = requireRequestMessage(/** @type {any} */ ({ requestStream: false }), makeCall());
  call.sendStatus({ code: grpc.status.UNIMPLEMENTED, details: 'Received no request message for unary call' });
  assert.equal(sent[0].code, grpc.status.INVALID_ARGUMENT);
  assert.equal(sent[0].details, 'request message missing or truncated');
  assert.ok(sent[0].metadata instanceof grpc.Metadata);
  const other = { code: grpc.status.UNIMPLEMENTED, details: 'The server does not implement the method /x/Y' };
  call.sendStatus(other);
  assert.equal(sent[1], other);
  // A client-streaming method's call is left as grpc-js made it.
  const streaming = makeCall();
  assert.equal(requireRequestMessage(/** @type {any} */ ({ requestStream: true }), streaming), streaming);
  assert.equal(Object.hasOwn(streaming, 'sendStatus'), false);
});
