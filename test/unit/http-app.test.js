// The HTTP listener's app (server/http.js buildHttpApp), by fastify's inject(): every answer the listener gives, with no
// port and no cluster. startHttp serves this same app, behind its guards.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { buildHttpApp } from '../../server/http.js';
import { createHealth, HEALTH_PATH } from '../../server/health.js';
import { readSettings } from '../../server/settings.js';
import { memoryState } from '../../server/memory-budget.js';
import { loadOwnService } from '../../proto/own/service.js';
import { responseTypeOf, toProto3Json } from '../../proto/index.js';
import { SCENARIOS } from '../../proto/payload.js';
import { checkOf, MESSAGE_ANSWER } from '../../proto/checks.js';
import { ROOT } from '../../bench/root.js';
import { tempDir } from '../helpers/tmp.js';

const PORT = 3000;
const JSON_TYPE = 'application/json; charset=utf-8';
const SETTINGS = readSettings({});
const silent = pino({ level: 'silent' });
// The own service of test/integration/own-service-rest.test.js: CreateBook with two google.api.http bindings, answering
// two Books in turn (the second's int64 past 2^53), or the samples of another RESPONSE file.
const REST = path.join(ROOT, 'test/fixtures/own/rest');
const library = (response = path.join(REST, 'books.json')) => loadOwnService({
  PROTO: path.join(REST, 'library/v1/library.proto'), PROTO_PATH: REST, RPC: 'library.v1.LibraryService/CreateBook', RESPONSE: response,
});
const BOOKS = [{ name: 'shelves/1/books/1', title: 'One', pages: '100' }, { name: 'shelves/1/books/2', title: 'Two', pages: '9007199254740993' }];
const OWN_PATH = '/library.v1.LibraryService/CreateBook';

const apps = [];
/**
 * An app as a worker builds it, closed after the file's tests.
 * @param {object} [options] buildHttpApp's, over a port, a silent logger, a serving health and the default settings
 */
async function appOf(options = {}) {
  const health = createHealth();
  health.set(true);
  const app = await buildHttpApp({ port: PORT, log: silent, health, settings: SETTINGS, ...options });
  apps.push(app);
  return app;
}
after(() => Promise.all(apps.map((app) => app.close())));

/** What a scenario's answer must hold: the scenario's own check, and this worker's port and pid where it names them. */
function assertScenario(name, body) {
  assert.ok(SCENARIOS[name].check(body), `${name}: the scenario's check`);
  if ('workerPid' in body) assert.equal(body.workerPid, process.pid, name);
  if (name === 'user') assert.equal(body.port, PORT);
}

test('200: every scenario as its proto3 JSON mapping, through the route\'s serializer', async () => {
  const app = await appOf();
  for (const [name, { httpPath }] of Object.entries(SCENARIOS)) {
    const res = await app.inject({ method: 'GET', url: httpPath });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.headers['content-type'], JSON_TYPE, name);
    assert.equal(res.headers['content-length'], String(res.rawPayload.length), name);
    assertScenario(name, res.json());
  }
  // The demo's User, to the byte: enum by name, no field at its default missing.
  const user = await app.inject({ method: 'GET', url: '/' });
  assert.equal(user.body, `{"username":"Bob","premium":true,"nextBillingDate":"01-01-2023","country":"COUNTRY_KE","port":${PORT},"workerPid":${process.pid}}`);
});

test('200: protobuf over HTTP/1.1 (protobuf-h1) as application/x-protobuf, decodable to the scenario\'s message', async () => {
  const app = await appOf({ encoding: 'protobuf' });
  for (const [name, { httpPath, rpc }] of Object.entries(SCENARIOS)) {
    const res = await app.inject({ method: 'GET', url: httpPath });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.headers['content-type'], 'application/x-protobuf', name);
    const type = responseTypeOf(rpc);
    assertScenario(name, toProto3Json(type, type.decode(res.rawPayload)));
  }
});

test('400: a query that selects no scenario, naming the values it may take, as the gRPC listener does', async () => {
  for (const encoding of /** @type {const} */ (['json', 'protobuf'])) {
    const app = await appOf({ encoding });
    for (const [url, message] of [['/users?count=7', 'count must be one of 100'], ['/blob', 'size_bytes must be one of 32768, 1048576']]) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, `${encoding} ${url}`);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      assert.deepEqual(res.json(), { statusCode: 400, error: 'Bad Request', message, code: 'ERR_NO_ANSWER' });
    }
  }
});

test('the demo\'s RPCs at their own paths, as any own RPC: canonical JSON (no field at its default), or protobuf', async () => {
  const app = await appOf();
  const user = await app.inject({ method: 'POST', url: '/user.v1.UserService/GetUser', headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(user.statusCode, 200);
  assert.equal(user.body, `{"username":"Bob","premium":true,"nextBillingDate":"01-01-2023","port":${PORT},"workerPid":${process.pid}}`);
  const blob = await app.inject({ method: 'POST', url: '/user.v1.UserService/GetBlob', headers: { 'content-type': 'application/json' }, payload: '{"sizeBytes":32768}' });
  assertScenario('blob-32k', blob.json());
  const none = await app.inject({ method: 'POST', url: '/user.v1.UserService/ListUsers', headers: { 'content-type': 'application/json' }, payload: '{"count":7}' });
  assert.deepEqual(none.json(), { statusCode: 400, error: 'Bad Request', message: 'count must be one of 100', code: 'ERR_NO_ANSWER' });
  const binary = await appOf({ encoding: 'protobuf' });
  const type = responseTypeOf('ListUsers');
  const users = await binary.inject({ method: 'POST', url: '/user.v1.UserService/ListUsers', headers: { 'content-type': 'application/x-protobuf' },
    payload: Buffer.from([0x08, 100]) });
  assertScenario('users-100', toProto3Json(type, type.decode(users.rawPayload)));
});

test('404 for an unknown path, 405 with Allow for a known path asked with another method', async () => {
  const app = await appOf();
  const missing = await app.inject({ method: 'GET', url: '/nowhere?x=1' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['content-type'], JSON_TYPE);
  assert.deepEqual(missing.json(), { statusCode: 404, error: 'Not Found', message: 'no route GET /nowhere' });
  for (const url of ['/', '/users', HEALTH_PATH]) {
    const wrong = await app.inject({ method: 'POST', url });
    assert.equal(wrong.statusCode, 405, url);
    assert.equal(wrong.headers.allow, 'GET, HEAD', url);
    assert.deepEqual(wrong.json(), { statusCode: 405, error: 'Method Not Allowed', message: `POST is not allowed on ${url}; use GET or HEAD` });
  }
});

test('the health route: 200 SERVING while the worker serves, 503 NOT_SERVING before and from the start of a drain', async () => {
  const health = createHealth();
  const app = await appOf({ health });
  const ask = () => app.inject({ method: 'GET', url: HEALTH_PATH });
  for (const [serving, status, body] of [[false, 503, 'NOT_SERVING'], [true, 200, 'SERVING'], [false, 503, 'NOT_SERVING']]) {
    health.set(serving);
    const res = await ask();
    assert.equal(res.statusCode, status, body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.deepEqual(res.json(), { status: body });
  }
});

test('the memory budget: a large answer refused with 503, Retry-After and Connection: close; a small one still served', async (t) => {
  const app = await appOf();
  const before = memoryState.refusedAnswers;
  memoryState.budgetBytes = 1; // any RSS is past it
  t.after(() => { memoryState.budgetBytes = 0; });
  const large = await app.inject({ method: 'GET', url: SCENARIOS['blob-1m'].httpPath });
  assert.equal(large.statusCode, 503);
  assert.equal(large.headers['retry-after'], '1');
  assert.equal(large.headers.connection, 'close');
  assert.deepEqual(large.json(), { statusCode: 503, error: 'Service Unavailable', message: 'the server is past its memory budget; retry later' });
  assert.equal(memoryState.refusedAnswers, before + 1);
  const small = await app.inject({ method: 'GET', url: SCENARIOS['blob-32k'].httpPath });
  assert.equal(small.statusCode, 200);
  assertScenario('blob-32k', small.json());
  memoryState.budgetBytes = 0; // no budget (a process that is no worker): the large one is built
  assert.equal((await app.inject({ method: 'GET', url: SCENARIOS['blob-1m'].httpPath })).statusCode, 200);
});

test('413 for a body past MAX_BODY_BYTES; gzip for a client that asks when COMPRESSION=gzip, raw bytes for one that does not', async () => {
  const own = library();
  const small = await appOf({ own, settings: { ...SETTINGS, MAX_BODY_BYTES: 64 } });
  const big = await small.inject({ method: 'POST', url: OWN_PATH, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ parent: 'x'.repeat(100) }) });
  assert.equal(big.statusCode, 413);
  assert.equal(big.json().code, 'FST_ERR_CTP_BODY_TOO_LARGE');

  const gzip = await appOf({ settings: { ...SETTINGS, COMPRESSION: 'gzip' } });
  const zipped = await gzip.inject({ method: 'GET', url: '/', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(zipped.statusCode, 200);
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.equal(zipped.headers.vary, 'accept-encoding');
  assertScenario('user', JSON.parse(gunzipSync(zipped.rawPayload).toString()));
  const plain = await gzip.inject({ method: 'GET', url: '/' });
  assert.equal(plain.headers['content-encoding'], undefined);
  assertScenario('user', plain.json());
  // COMPRESSION=off (the default): raw even for a client that asks.
  const off = await (await appOf()).inject({ method: 'GET', url: '/', headers: { 'accept-encoding': 'gzip' } });
  assert.equal(off.headers['content-encoding'], undefined);
  assertScenario('user', off.json());
});

test('an own RPC in JSON: its POST route and google.api.http bindings answer the samples in turn; 400 names the field; 415 another type', async () => {
  const app = await appOf({ own: library() });
  const post = (url, body, type = 'application/json') => app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload: body });
  const answers = [];
  // A query key that names no field is ignored, and one under the body's field left to the body, as grpc-gateway does.
  for (const [url, body] of [[OWN_PATH, '{"parent":"shelves/7"}'], ['/v1/shelves/7/books?requestId=r1&nope=1&book.pages=many', '{"title":"New","pages":"12"}'],
    ['/v1/books:create', '{"parent":"shelves/7","book":{"title":"New"}}']]) {
    const res = await post(url, body);
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers['content-type'], JSON_TYPE, url);
    answers.push(res.json());
  }
  assert.deepEqual(answers, [BOOKS[0], BOOKS[1], BOOKS[0]]);
  // The k6 scripts' sampled check of an own answer: a message (a JSON object), not an error's array or a bare value.
  const isMessage = checkOf(MESSAGE_ANSWER);
  assert.ok(answers.every(isMessage));
  for (const notOne of [null, [], 'Bob', 1]) assert.equal(isMessage(notOne), false, JSON.stringify(notOne));

  for (const [url, body, message] of [
    [OWN_PATH, '{"parent":"shelves/7","nope":1}', /^the request is not a valid library\.v1\.CreateBookRequest: key "nope" is unknown/],
    [OWN_PATH, '{"parent":', /^the request is not a valid library\.v1\.CreateBookRequest: /],
    [OWN_PATH, '{"parent":"shelves/7","parent":"shelves/8"}', /^the request is not a valid library\.v1\.CreateBookRequest: duplicate object key "parent"/],
    ['/v1/shelves/7/books', '{"pages":"many"}', /^the request is not a valid library\.v1\.CreateBookRequest: .*library\.v1\.Book\.pages/],
    ['/v1/books:create', '{bad', /^the request is not a valid library\.v1\.CreateBookRequest: /],
  ]) {
    const res = await post(url, body);
    assert.equal(res.statusCode, 400, `${url} ${body}`);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const answer = res.json();
    assert.equal(answer.error, 'Bad Request');
    assert.equal(answer.code, 'ERR_BAD_REQUEST_MESSAGE');
    assert.match(answer.message, message);
  }
  const wrongType = await post(OWN_PATH, 'parent', 'text/plain');
  assert.equal(wrongType.statusCode, 415);
  assert.equal(wrongType.json().code, 'FST_ERR_CTP_INVALID_MEDIA_TYPE');
  // A binding's method on another path, and another method on a binding's path.
  assert.equal((await post('/v1/shelves/7/nope', '{}')).statusCode, 404);
  const get = await app.inject({ method: 'GET', url: '/v1/books:create' });
  assert.equal(get.statusCode, 405);
  assert.equal(get.headers.allow, 'POST');
});

test('an own RPC in protobuf: application/x-protobuf both ways, 400 naming the message for a body that does not decode', async () => {
  const own = library();
  const app = await appOf({ own, encoding: 'protobuf' });
  const { requestType, responseType } = own.rpc;
  const post = (payload, type = 'application/x-protobuf') => app.inject({ method: 'POST', url: OWN_PATH, headers: { 'content-type': type }, payload });
  const answers = [];
  for (let i = 0; i < 3; i++) {
    const res = await post(Buffer.from(requestType.encode(requestType.fromObject({ parent: 'shelves/7' })).finish()));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-protobuf');
    answers.push(responseType.toObject(responseType.decode(res.rawPayload), { longs: String }));
  }
  assert.deepEqual(answers, [BOOKS[0], BOOKS[1], BOOKS[0]]);
  // Field 1 (parent, a string) said to be 5 bytes long, with 3 there.
  const bad = await post(Buffer.from([0x0a, 0x05, 0x61, 0x62, 0x63]));
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().code, 'ERR_BAD_REQUEST_MESSAGE');
  assert.match(bad.json().message, /^the request is not a valid library\.v1\.CreateBookRequest: /);
  assert.equal((await post('{}', 'application/json')).statusCode, 415);
  // A google.api.http binding reads its request from the path, query and JSON body, and answers in the listener's encoding
  // (grpc-gateway with a protobuf marshaler), the same turn.
  const bound = await app.inject({ method: 'POST', url: '/v1/books:create', headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(bound.statusCode, 200);
  assert.equal(bound.headers['content-type'], 'application/x-protobuf');
  assert.deepEqual(responseType.toObject(responseType.decode(bound.rawPayload), { longs: String }), BOOKS[1]);
});

test('the memory budget on an own RPC: a large sample refused with the same 503 on its route and its bindings, in both encodings', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'http-app-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const response = path.join(dir, 'large.json');
  writeFileSync(response, JSON.stringify([{ title: 'x'.repeat(100 * 1024) }]));
  const own = library(response);
  memoryState.budgetBytes = 1;
  t.after(() => { memoryState.budgetBytes = 0; });
  const json = await appOf({ own });
  const protobuf = await appOf({ own, encoding: 'protobuf' });
  for (const [app, url, type, payload] of [[json, OWN_PATH, 'application/json', '{}'], [json, '/v1/books:create', 'application/json', '{}'],
    [protobuf, OWN_PATH, 'application/x-protobuf', Buffer.alloc(0)]]) {
    const res = await app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
    assert.equal(res.statusCode, 503, `${type} ${url}`);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers.connection, 'close');
    assert.deepEqual(res.json(), { statusCode: 503, error: 'Service Unavailable', message: 'the server is past its memory budget; retry later' });
  }
  memoryState.budgetBytes = 0;
  const served = await json.inject({ method: 'POST', url: OWN_PATH, headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.equal(served.statusCode, 200);
  assert.equal(served.json().title.length, 100 * 1024);
});

test('json-h2: the same routes on an HTTP/2 app', async () => {
  const app = await appOf({ http2: true });
  const res = await app.inject({ method: 'GET', url: '/' });
  assert.equal(res.statusCode, 200);
  assertScenario('user', res.json());
  assert.equal((await app.inject({ method: 'GET', url: '/users?count=7' })).statusCode, 400);
});

test('google.api.http response_body: the HTTP body is that field of the answer alone, or its default; a field the response lacks stops the start', async (t) => {
  const dir = await tempDir(t, 'http-app-');
  const pages = path.join(dir, 'pages.json');
  // Two answers in turn: a page of books, then an empty page (the field at its default).
  await writeFile(pages, JSON.stringify([{ books: BOOKS, nextPageToken: 'p2' }, {}]));
  const own = loadOwnService({ PROTO: path.join(REST, 'library/v1/library.proto'), PROTO_PATH: REST, RPC: 'library.v1.LibraryService/ListBooks', RESPONSE: pages });
  const app = await appOf({ own });
  const first = await app.inject({ method: 'GET', url: '/v1/shelves/1/books' });
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(first.json(), BOOKS);
  const second = await app.inject({ method: 'GET', url: '/v1/shelves/1/books' });
  assert.equal(second.body, '[]');
  // The RPC's own route answers the whole message, as gRPC does.
  const whole = await app.inject({ method: 'POST', url: '/library.v1.LibraryService/ListBooks', headers: { 'content-type': 'application/json' }, payload: '{}' });
  assert.deepEqual(whole.json(), { books: BOOKS, nextPageToken: 'p2' });
  const proto = path.join(dir, 'bad.proto');
  await writeFile(proto, (await readFile(path.join(REST, 'library/v1/library.proto'), 'utf8')).replace('response_body: "books"', 'response_body: "shelves"'));
  assert.throws(() => loadOwnService({ PROTO: proto, PROTO_PATH: `${dir}:${REST}`, RPC: 'library.v1.LibraryService/ListBooks' }),
    { message: 'RPC=library.v1.LibraryService/ListBooks: google.api.http response_body "shelves" is not a field of library.v1.ListBooksResponse' });
});
