// An own RPC's google.api.http routes (proto/own/http-rule.js): the JSON twin serves each binding as grpc-gateway maps it
// (path variables, the query, `body: "field"` and `body: "*"`), parses the request it makes strictly, and answers the
// response samples in turn, beside the RPC's own POST route.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startServer } from '../helpers/server.js';

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

  for (const [url, body, field] of [['/v1/shelves/7/books', { pages: 'many' }, /\.library\.v1\.Book\.pages/],
    ['/v1/books:create', { parent: 'shelves/7', nope: 1 }, /unknown field: "nope"/],
    ['/v1/shelves/7/books?nope=1', {}, /unknown field: "nope"/]]) {
    res = await post(url, body);
    assert.equal(res.status, 400, url);
    assert.match((await res.json()).message, field);
  }
  // Not a binding's path: 404, as any unknown path.
  assert.equal((await post('/v1/shelves/7/nope', {})).status, 404);
});
