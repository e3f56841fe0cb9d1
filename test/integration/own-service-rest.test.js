// An own RPC's google.api.http routes (proto/own/http-rule.js): the JSON twin serves each binding as grpc-gateway maps it
// (path variables, the query, `body: "field"` and `body: "*"`), parses the request it makes strictly, and answers the
// response samples in turn, beside the RPC's own POST route.
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadOwnService } from '../../proto/own/service.js';
import { descriptorSet } from '../helpers/pyproto.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const DIR = path.join(ROOT, 'test/fixtures/own/rest');
let server;
let base;
before(async () => {
  server = await startServer({
    MODE: 'http', PROTO: path.join(DIR, 'library/v1/library.proto'), PROTO_PATH: DIR, RPC: 'library.v1.LibraryService/CreateBook',
    RESPONSE: path.join(DIR, 'books.json'),
  });
  base = `http://127.0.0.1:${server.ports.http}`;
});
after(() => server?.stop());

const post = (url, body) => fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('each binding and the RPC\'s own route answer the samples in turn; a bad request is a 400 naming the field', async () => {
  const answers = [];
  // body: "book", the parent from the path.
  let res = await post('/v1/shelves/7/books?requestId=r1', { title: 'New', pages: '12' });
  assert.equal(res.status, 200);
  answers.push(await res.json());
  // The additional binding, body: "*".
  res = await post('/v1/books:create', { parent: 'shelves/7', book: { title: 'New' } });
  assert.equal(res.status, 200);
  answers.push(await res.json());
  // The RPC's own route (Connect's shape) takes the same turn.
  res = await post('/library.v1.LibraryService/CreateBook', { parent: 'shelves/7' });
  answers.push(await res.json());
  assert.deepEqual(answers.map((a) => a.title), ['One', 'Two', 'One']);
  assert.equal(answers[1].pages, '9007199254740993'); // int64 as a string, past 2^53

  for (const [url, body, field] of [['/v1/shelves/7/books', { pages: 'many' }, /library\.v1\.Book\.pages/],
    ['/v1/books:create', { parent: 'shelves/7', nope: 1 }, /key "nope" is unknown/],
    ['/v1/shelves/7/books?request_id=a&request_id=b', {}, /too many values for field "request_id": a, b/]]) {
    res = await post(url, body);
    assert.equal(res.status, 400, url);
    assert.match((await res.json()).message, field);
  }
  // A query key that names no field is ignored, as grpc-gateway does (test/unit/http-query.test.js has its cases).
  assert.equal((await post('/v1/shelves/7/books?nope=1', {})).status, 200);
  // Not a binding's path: 404, as any unknown path.
  assert.equal((await post('/v1/shelves/7/nope', {})).status, 404);
});

test('a FileDescriptorSet written by protoc keeps the rules: the same bindings, response_body included, served', async (t) => {
  const dir = await tempDir(t, 'own-rest-set-');
  // googleapis' google/api/http.proto has HttpRule.response_body (field 12); protobufjs's copy predates it, so the test
  // compiles against that copy with the field added, as a user's googleapis checkout has it.
  const api = path.join(dir, 'google/api');
  await mkdir(api, { recursive: true });
  const shipped = path.join(ROOT, 'node_modules/protobufjs/google/api');
  await writeFile(path.join(api, 'annotations.proto'), await readFile(path.join(shipped, 'annotations.proto')));
  await writeFile(path.join(api, 'http.proto'), (await readFile(path.join(shipped, 'http.proto'), 'utf8'))
    .replace('string body = 7;', 'string body = 7;\n    string response_body = 12;'));
  const set = await descriptorSet({ protos: ['library/v1/library.proto'], includes: [DIR, dir], out: path.join(dir, 'library.binpb') });
  const fromProto = (rpc) => loadOwnService({ PROTO: path.join(DIR, 'library/v1/library.proto'), PROTO_PATH: DIR, RPC: rpc }).rpc.bindings;
  const fromSet = (rpc) => loadOwnService({ PROTO: set, RPC: rpc }).rpc.bindings;
  for (const method of ['GetBook', 'CreateBook', 'ListBooks']) {
    const rpc = `library.v1.LibraryService/${method}`;
    assert.deepEqual(fromSet(rpc).map((b) => [b.method, b.template, b.body, b.responseBody]),
      fromProto(rpc).map((b) => [b.method, b.template, b.body, b.responseBody]), method);
  }
  const pages = path.join(dir, 'pages.json');
  await writeFile(pages, JSON.stringify([{ books: [{ name: 'shelves/1/books/1', title: 'One' }] }]));
  const listing = await startServer({ MODE: 'http', PROTO: set, RPC: 'library.v1.LibraryService/ListBooks', RESPONSE: pages });
  try {
    const res = await fetch(`http://127.0.0.1:${listing.ports.http}/v1/shelves/1/books`);
    assert.equal(res.status, 200);
    // Every field, pages at its default too, as grpc-gateway's default marshaler writes it (EmitUnpopulated).
    assert.deepEqual(await res.json(), [{ name: 'shelves/1/books/1', title: 'One', pages: '0' }]);
  } finally {
    await listing.stop();
  }
});
