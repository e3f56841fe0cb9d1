// The peer fastify app with an own RPC (server/peer-http.js): what a protobuf-es user's handler does, the request
// decoded into its message (400 when it does not decode) and the response samples' messages answered in turn.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { startPeerHttp } from '../../server/peer-http.js';
import { loadOwnService } from '../../proto/own/service.js';
import { freePort } from '../../bench/processes.js';
import { ROOT } from '../../bench/root.js';

const REST = path.join(ROOT, 'test/fixtures/own/rest');

test('the peer decodes each request into its message (400 when it does not) and answers the samples in turn', async (t) => {
  const own = loadOwnService({
    PROTO: path.join(REST, 'library/v1/library.proto'), PROTO_PATH: REST, RPC: 'library.v1.LibraryService/CreateBook',
    RESPONSE: path.join(REST, 'books.json'),
  });
  const port = await freePort();
  const peer = await startPeerHttp({ host: '127.0.0.1', port, own });
  t.after(() => peer.close());
  const post = (body) => fetch(`http://127.0.0.1:${port}${own.rpc.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answers = [];
  for (let i = 0; i < 3; i++) {
    const res = await post('{"parent":"shelves/7","book":{"title":"New","pages":"12"}}');
    assert.equal(res.status, 200);
    answers.push(await res.json());
  }
  const [one, two] = [{ name: 'shelves/1/books/1', title: 'One', pages: '100' }, { name: 'shelves/1/books/2', title: 'Two', pages: '9007199254740993' }];
  assert.deepEqual(answers, [one, two, one]);
  for (const [body, reason] of [['{"nope":1}', /key "nope" is unknown/], ['{"book":{"pages":"many"}}', /library\.v1\.Book\.pages/]]) {
    const res = await post(body);
    assert.equal(res.status, 400, body);
    assert.match((await res.json()).message, reason);
  }
  // The turn goes on from where the answers left it: a refused request takes none.
  assert.deepEqual(await (await post('{}')).json(), two);
});
