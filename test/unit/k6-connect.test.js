// The Connect protocol's envelopes as the k6 scripts write and read them (k6/connect.js), against Node's own UTF-8 and
// the protocol's framing (https://connectrpc.com/docs/protocol/#streaming-rpcs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectEnvelopes, connectMessages } from '../../k6/connect.js';

/** An envelope as the protocol writes one: flags, a 4-byte big-endian length, the bytes. */
const envelope = (flags, text) => {
  const body = Buffer.from(text, 'utf8');
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
};
const arrayBuffer = (buf) => buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);

test('connectEnvelopes: each message\'s JSON in UTF-8 (astral characters too), in an envelope', () => {
  const messages = [{ orderId: 'Bestellung-ÄÖÜß-№42-注文-🎉' }, {}, { note: 'a\nb "q" \\ €' }];
  const got = Buffer.from(connectEnvelopes(messages));
  assert.deepEqual(got, Buffer.concat(messages.map((m) => envelope(0, JSON.stringify(m)))));
});

test('connectMessages: counts the messages; a stream ends well only with an end-of-stream envelope without an error', () => {
  const two = [envelope(0, '{"a":1}'), envelope(0, '{"b":"ü"}')];
  assert.deepEqual(connectMessages(arrayBuffer(Buffer.concat([...two, envelope(2, '{}')]))), { messages: 2, ok: true });
  assert.deepEqual(connectMessages(arrayBuffer(Buffer.concat([...two, envelope(2, '{"metadata":{"x":["error"]}}')]))), { messages: 2, ok: true });
  assert.deepEqual(connectMessages(arrayBuffer(Buffer.concat([two[0], envelope(2, '{"error":{"code":"internal","message":"boom"}}')]))), { messages: 1, ok: false });
  assert.deepEqual(connectMessages(arrayBuffer(Buffer.concat(two))), { messages: 2, ok: false }, 'no end of stream: cut');
  assert.deepEqual(connectMessages(arrayBuffer(Buffer.concat([...two, envelope(2, '{}'), envelope(0, '{}')]))).ok, false, 'bytes past the end');
  assert.deepEqual(connectMessages(null), { messages: 0, ok: false });
  assert.deepEqual(connectMessages('text'), { messages: 0, ok: false });
});
