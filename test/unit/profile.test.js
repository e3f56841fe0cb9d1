// PROFILE=1's arithmetic (bench/records/profile.js): the classification of profile frames by package, and self time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { packageOf, profileTotals } from '../../bench/records/profile.js';
import { ROOT } from '../../bench/root.js';

test('a frame\'s package comes from its script URL', () => {
  assert.equal(packageOf('file:///app/node_modules/@grpc/grpc-js/build/src/server.js'), '@grpc/grpc-js');
  assert.equal(packageOf('file:///app/node_modules/fastify/node_modules/find-my-way/index.js'), 'find-my-way');
  assert.equal(packageOf('node:internal/http2/core'), 'node http2');
  assert.equal(packageOf('node:_http_server'), 'node http');
  assert.equal(packageOf('node:internal/stream_base_commons'), 'node net');
  assert.equal(packageOf('node:internal/streams/writable'), 'node stream');
  assert.equal(packageOf('node:events'), 'node (other)');
  assert.equal(packageOf(`file://${ROOT}server/grpc.js`), 'this project');
  assert.equal(packageOf(''), null);
});


test('self time: each sample gets the time to the next; a native frame counts to its caller; idle is left out', () => {
  const frame = (id, functionName, url, children = []) => ({ id, callFrame: { functionName, url, lineNumber: 0 }, children });
  const profile = {
    nodes: [
      frame(1, '(root)', '', [2, 4, 5]),
      frame(2, 'handler', 'file:///x/node_modules/fastify/lib/route.js', [3]),
      frame(3, 'writev', ''), // native, called by fastify's frame
      frame(4, '(idle)', ''),
      frame(5, '(garbage collector)', ''),
    ],
    samples: [2, 3, 4, 5, 2],
    timeDeltas: [0, 100, 200, 300, 400],
  };
  const t = profileTotals(profile, 1000);
  // Sample i lasts timeDeltas[i + 1]; the last one the interval.
  assert.deepEqual(t.by_package, { fastify: 100 + 200 + 1000, GC: 400 });
  assert.equal(t.idle_us, 300);
  assert.equal(t.sampled_us, 100 + 200 + 300 + 400 + 1000);
  assert.deepEqual(t.functions.map((f) => [f.name, f.self_us]), [['handler', 1100], ['(garbage collector)', 400], ['writev', 200]]);
});

