// A server stream's samples (issue 48): a sample is one stream, a JSON array of messages; the file a JSON array of
// streams or NDJSON with one stream a line. A bad one is one line naming the file, the stream, the message and the field.
// And the pure parts of serving one: the RPC's kind, the framing an Accept header asks for, the listeners that serve it.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import { rpcKind } from '../../proto/own/schema.js';
import { loadOwnService } from '../../proto/own/service.js';
import { ROOT } from '../../bench/root.js';
import { streamlessListeners } from '../../server/listeners.js';
import { streamFramingOf } from '../../server/http.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test/fixtures/own');
const WATCH = {
  PROTO: path.join(OWN, 'a/shop/v1/shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`,
  RPC: 'shop.v1.ShopService/WatchOrders',
};

test('a streamed side reads streams: a JSON array of arrays, or NDJSON of arrays; each stream the indices of its messages', async (t) => {
  const dir = await tempDir(t, 'own-streams-');
  const streams = [[{ orderId: 'a' }, { orderId: 'b' }, {}], [{ orderId: 'c' }]];
  const json = path.join(dir, 'streams.json');
  writeFileSync(json, JSON.stringify(streams));
  const ndjson = path.join(dir, 'streams.ndjson');
  writeFileSync(ndjson, `${streams.map((s) => JSON.stringify(s)).join('\n')}\n`);
  for (const file of [json, ndjson]) {
    const { responses, requests, rpc } = loadOwnService({ ...WATCH, RESPONSE: file });
    assert.equal(rpc.kind, 'server streaming');
    assert.deepEqual(responses.streams, [[0, 1, 2], [3]], file);
    assert.deepEqual(responses.messages.map((m) => m.orderId), ['a', 'b', '', 'c']);
    assert.equal(responses.jsonBytes.length, 4);
    assert.equal(requests.streams, undefined, 'the request of a server stream is one message');
  }
  const unset = loadOwnService(WATCH).responses;
  assert.deepEqual(unset.streams, [[0]], 'unset: one stream of the empty message');
  // A client stream's are its request samples.
  const upload = loadOwnService({ ...WATCH, RPC: 'shop.v1.ShopService/ImportOrders', REQUEST: path.join(OWN, 'order-uploads.ndjson') });
  assert.equal(upload.rpc.kind, 'client streaming');
  assert.deepEqual(upload.requests.streams, [[0, 1], [2], [3, 4, 5]]);
  assert.equal(upload.responses.streams, undefined);
});

test('a bad stream sample is one line naming the file, the stream, the message and the field', async (t) => {
  const dir = await tempDir(t, 'own-streams-');
  const cases = [
    [[[{}], { orderId: 'x' }], /: stream 1: must be a JSON array of messages \(shop\.v1\.Order\), one stream a sample$/],
    [[[{}], []], /: stream 1: holds no message$/],
    [[[{}, {}], [{}, { items: [{ quantity: -1 }] }]], /: stream 1, message 1: items\[0\]\.quantity: /],
    [[[{}, 'x']], /: stream 0, message 1: must be a JSON object \(the message shop\.v1\.Order\)$/],
  ];
  const file = path.join(dir, 'streams.json');
  for (const [value, message] of cases) {
    writeFileSync(file, JSON.stringify(value));
    assert.throws(() => loadOwnService({ ...WATCH, RESPONSE: file }), (err) => {
      assert.equal(err.name, 'OwnServiceError');
      assert.doesNotMatch(err.message, /\n/);
      assert.ok(err.message.startsWith(`RESPONSE=${file}: `), err.message);
      assert.match(err.message, message, JSON.stringify(value));
      return true;
    });
  }
  // A binary file is one stream (ghz's -B): a length that runs past the end is named with the message's index.
  const binary = path.join(dir, 'broken.binpb');
  writeFileSync(binary, Buffer.from([0, 9, 1]));
  assert.throws(() => loadOwnService({ ...WATCH, RESPONSE: binary }), /broken\.binpb: sample 1: not a length-delimited shop\.v1\.Order \(the length 9 runs past the end of the file\)/);
});

test('a binary sample file on a streamed side is one stream, its length-delimited messages in order', async (t) => {
  const dir = await tempDir(t, 'own-stream-bin-');
  const json = loadOwnService({ ...WATCH, RESPONSE: path.join(OWN, 'order-streams.json') });
  const { responseType } = json.rpc;
  const first = json.responses.streams[0].map((i) => json.responses.messages[i]);
  const writer = protobuf.Writer.create();
  for (const m of first) writer.bytes(responseType.encode(m).finish());
  const file = path.join(dir, 'stream.binpb');
  writeFileSync(file, writer.finish());
  const { responses } = loadOwnService({ ...WATCH, RESPONSE: file });
  assert.deepEqual(responses.streams, [first.map((_, i) => i)]);
  const encoded = (ms) => ms.map((m) => Buffer.from(responseType.encode(m).finish()).toString('base64'));
  assert.deepEqual(encoded(responses.messages), encoded(first));
  assert.deepEqual(responses.protobufBytes, json.responses.streams[0].map((i) => json.responses.protobufBytes[i]));
});

test('an RPC\'s kind by its stream keywords; the listeners that cannot serve a stream', () => {
  assert.equal(rpcKind({}), 'unary');
  assert.equal(rpcKind({ responseStream: true }), 'server streaming');
  assert.equal(rpcKind({ requestStream: true }), 'client streaming');
  assert.equal(rpcKind({ requestStream: true, responseStream: true }), 'bidirectional streaming');
  const names = ['http', 'json-h2', 'grpc', 'protobuf-h1', 'baseline-grpc', 'peer-grpc', 'peer-http'];
  assert.deepEqual(streamlessListeners(names, { kind: 'server streaming' }), ['protobuf-h1', 'baseline-grpc']);
  assert.deepEqual(streamlessListeners(names, { kind: 'bidirectional streaming' }), ['json-h2', 'protobuf-h1', 'baseline-grpc']);
  assert.deepEqual(streamlessListeners(names, { kind: 'unary' }), []);
});

test('the framing a POST asks for: SSE for text/event-stream, NDJSON for x-ndjson or no preference, none for another type', () => {
  assert.equal(streamFramingOf('text/event-stream'), 'sse');
  assert.equal(streamFramingOf('text/event-stream, application/x-ndjson;q=0.5'), 'sse');
  assert.equal(streamFramingOf('application/x-ndjson'), 'ndjson');
  assert.equal(streamFramingOf(undefined), 'ndjson');
  assert.equal(streamFramingOf('*/*'), 'ndjson');
  assert.equal(streamFramingOf('text/html'), null);
});

test('a server stream\'s and a relay\'s figures from the scripts\' stream metrics; none in a unary run\'s summary', async () => {
  const { figuresOf } = await import('../../bench/records/summary.js');
  const { k6Summary } = await import('../helpers/k6-summary.js');
  const { STREAM_METRICS } = await import('../../k6/settings.js');
  const unary = k6Summary({ mode: 'http', target: 'local', host: 'h', model: 'closed' });
  const plain = figuresOf('u.json', unary);
  assert.equal(plain.messages, null);
  assert.equal(plain.first_message_ms, null);
  assert.equal(plain.server_cpu_us_per_message, null);
  // 1,000 streams in 10 s, 30,000 messages, 289 kB received; 600 µs of server CPU a stream.
  const streamed = { ...unary, metrics: { ...unary.metrics,
    [STREAM_METRICS.messages]: { values: { count: 30000 } },
    [STREAM_METRICS.firstMessage]: { values: { med: 2.5, 'p(99)': 9 } } },
  bench: { ...unary.bench, run: { server: undefined } } };
  const f = { ...figuresOf('s.json', streamed) };
  assert.equal(f.messages, 30000);
  assert.equal(f.messages_per_s, 3000);
  assert.equal(f.messages_per_stream, 30);
  assert.deepEqual(f.first_message_ms, { p50: 2.5, p99: 9 });
  assert.ok(Math.abs(f.received_per_message - 289000 / 30000) < 1e-9);
  assert.equal(f.server_cpu_us_per_message, null, 'no server accounting, no CPU per message');
  assert.equal(f.sent_per_message, null, 'a server stream sends one request, not a stream');
  // A relay: 30,000 answers to 30,000 messages sent; bytes per message each way.
  const relay = figuresOf('r.json', { ...streamed, metrics: { ...streamed.metrics, [STREAM_METRICS.sent]: { values: { count: 30000 } } } });
  assert.equal(relay.messages, 30000);
  assert.ok(Math.abs(relay.received_per_message - 289000 / 30000) < 1e-9);
  assert.ok(Math.abs(relay.sent_per_message - relay.data_sent_bytes / 30000) < 1e-9 && relay.sent_per_message > 0);
});
