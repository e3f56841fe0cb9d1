// The connect-node listeners serve an own service (PROTO, PROTO_PATH, RPC, RESPONSE) as a connect-node user would, from
// @bufbuild/protobuf descriptors of PROTO (proto/own/descriptors.js): connect-grpc called by grpc-js, connect-json by
// the Connect protocol's unary POST with JSON, once per response sample, each answer the very message of its sample;
// connect-json's JSON that of the project's own JSON twin. Once from the .proto (protobufjs's schema, converted), once
// from a FileDescriptorSet that Google's protoc wrote (taken as it is).
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { loadOwnService } from '../../proto/own/service.js';
import { firstDifference, fromJson, toJsonText } from '../../proto/own/samples.js';
import { descriptorSet } from '../helpers/pyproto.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const INCLUDES = [path.join(OWN, 'a'), path.join(OWN, 'b')];
const PROTO = path.join(OWN, 'a', 'shop', 'v1', 'shop.proto');
const RPC = 'shop.v1.ShopService/GetOrder';
const SETTINGS = { PROTO, PROTO_PATH: INCLUDES.join(':'), RPC, REQUEST: path.join(OWN, 'requests.ndjson'), RESPONSE: path.join(OWN, 'responses.json') };

/** The service as the test sees it: protobufjs's types, the request samples and the response samples. */
let own;
before(() => {
  own = loadOwnService(SETTINGS);
  assert.ok(own.responses.messages.length >= 3, 'at least 3 samples');
});

/** N unary calls in a row on one grpc-js channel, encoded and decoded with the RPC's protobufjs types. */
async function grpcAnswers(port, count) {
  const { rpc, requests } = own;
  const Client = grpc.makeGenericClientConstructor({
    [rpc.method]: { path: rpc.path, requestStream: false, responseStream: false, originalName: rpc.method,
      requestSerialize: (m) => Buffer.from(rpc.requestType.encode(m).finish()), requestDeserialize: (b) => rpc.requestType.decode(b),
      responseSerialize: (m) => Buffer.from(rpc.responseType.encode(m).finish()), responseDeserialize: (b) => rpc.responseType.decode(b) },
  }, rpc.service);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  try {
    const answers = [];
    for (let i = 0; i < count; i++) {
      answers.push(await new Promise((resolve, reject) => client[rpc.method](requests.messages[i % requests.messages.length],
        { deadline: Date.now() + 5000 }, (err, m) => (err ? reject(new Error(`gRPC call ${i}: ${err.code} ${err.details}`)) : resolve(m)))));
    }
    return answers;
  } finally {
    client.close();
  }
}

/** A POST of the RPC's route with a JSON body: the status, content type and body text. */
async function post(port, body) {
  const res = await fetch(`http://127.0.0.1:${port}${own.rpc.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** N POSTs in a row, each the next request sample in the proto3 JSON mapping: each answer's JSON, checked to be a 200. */
async function jsonAnswers(port, count) {
  const { rpc, requests } = own;
  const answers = [];
  for (let i = 0; i < count; i++) {
    const { status, type, text } = await post(port, toJsonText(rpc.requestType, requests.messages[i % requests.messages.length]));
    assert.equal(status, 200, `POST ${rpc.path} (call ${i}): ${status} ${text.slice(0, 300)}`);
    assert.match(type, /^application\/json/, `call ${i}`);
    answers.push(JSON.parse(text));
  }
  return answers;
}

/**
 * Starts the own service with `env` on fastify's JSON listener and both connect-node listeners, calls each once per
 * response sample, and checks answer i of each to be sample i (as protobuf messages: firstDifference), and connect-json's
 * JSON to be the JSON twin's.
 */
async function checkConnect(t, env) {
  const server = await startServer({ MODE: 'http,connect-grpc,connect-json', WORKERS: '1', RPC, RESPONSE: SETTINGS.RESPONSE, ...env });
  t.after(() => server.stop());
  const { rpc, responses } = own;
  const count = responses.messages.length;
  const fromGrpc = await grpcAnswers(server.ports['connect-grpc'], count);
  const fromConnect = await jsonAnswers(server.ports['connect-json'], count);
  const fromHttp = await jsonAnswers(server.ports.http, count);
  for (let i = 0; i < count; i++) {
    const sample = responses.messages[i];
    assert.equal(firstDifference(rpc.responseType, fromGrpc[i], sample), null, `connect-grpc answer ${i} is not sample ${i}`);
    assert.equal(firstDifference(rpc.responseType, fromJson(rpc.responseType, fromConnect[i]), sample), null,
      `connect-json answer ${i} is not sample ${i}`);
    assert.deepEqual(fromConnect[i], fromHttp[i], `connect-json answer ${i} is not the JSON twin's answer ${i}`);
  }
  // A request that is not a GetOrderRequest: connect-node's own refusal, the worker unharmed.
  const bad = await post(server.ports['connect-json'], '{"orderId":5}');
  assert.equal(bad.status, 400, bad.text);
  assert.equal(JSON.parse(bad.text).code, 'invalid_argument');
  assert.equal((await post(server.ports['connect-json'], '{"orderId":"1"}')).status, 200);
}

test('PROTO as a .proto with imports in two PROTO_PATH directories: connect-grpc and connect-json answer sample i at call i',
  async (t) => {
    await checkConnect(t, { PROTO, PROTO_PATH: SETTINGS.PROTO_PATH });
  });

test('PROTO as a FileDescriptorSet written by protoc (--include_imports): the same answers', async (t) => {
  const dir = await tempDir(t, 'own-connect-');
  const set = await descriptorSet({ protos: [PROTO], includes: INCLUDES, out: path.join(dir, 'shop.binpb') });
  await checkConnect(t, { PROTO: set });
});

test('streams on connect-node: connect-grpc serves all three kinds to grpc-js, connect-json server and client streams to '
  + 'connect-node\'s Connect client over HTTP/1.1, each as the samples have it', async (t) => {
  const { createClient } = await import('@connectrpc/connect');
  const { createConnectTransport } = await import('@connectrpc/connect-node');
  const { ownDescriptors } = await import('../../proto/own/descriptors.js');
  const { fromBinary, toBinary } = await import('@bufbuild/protobuf');
  const shop = (method) => ({ ...SETTINGS, RPC: `shop.v1.ShopService/${method}`, REQUEST: '' });
  const WATCH = { ...shop('WatchOrders'), RESPONSE: path.join(OWN, 'order-streams.json') };
  const IMPORT = { ...shop('ImportOrders'), RESPONSE: path.join(OWN, 'requests.ndjson') };
  const SYNC = { ...shop('SyncOrders'), RESPONSE: path.join(OWN, 'order-streams.json') };
  const uploads = loadOwnService({ ...IMPORT, REQUEST: path.join(OWN, 'order-uploads.ndjson') }).requests;
  /** A server of one RPC on both connect-node listeners (or the one given), and the RPC as the test sees it. */
  const serve = async (settings, MODE = 'connect-grpc,connect-json') => {
    const { REQUEST, ...serving } = settings;
    void REQUEST;
    const server = await startServer({ MODE, ...serving });
    t.after(() => server.stop());
    return { server, service: loadOwnService(settings) };
  };
  const same = (type, want, got, what) => assert.equal(firstDifference(type, want, got), null, what);
  const raw = (port, rpc) => {
    const identity = (b) => b;
    const Client = grpc.makeGenericClientConstructor({ [rpc.method]: { path: rpc.path, requestStream: rpc.requestStream,
      responseStream: rpc.responseStream, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } }, rpc.service);
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    t.after(() => client.close());
    return (...args) => client[rpc.method](...args);
  };

  // Server streams: call i gets sample stream i on both.
  {
    const { server, service } = await serve(WATCH);
    const { rpc, responses } = service;
    const want = responses.streams.map((s) => s.map((i) => responses.messages[i]));
    const call = raw(server.ports['connect-grpc'], rpc);
    for (const [i, stream] of want.entries()) {
      const got = await new Promise((resolve, reject) => {
        const messages = [];
        const c = call(Buffer.alloc(0), { deadline: Date.now() + 5000 });
        c.on('data', (b) => messages.push(rpc.responseType.decode(b)));
        c.on('error', reject);
        c.on('end', () => resolve(messages));
      });
      assert.equal(got.length, stream.length, `connect-grpc stream ${i}`);
      stream.forEach((m, j) => same(rpc.responseType, m, got[j], `connect-grpc stream ${i}, message ${j}`));
    }
    const { service: desc, method } = ownDescriptors(WATCH.PROTO, rpc);
    const client = createClient(desc, createConnectTransport({ baseUrl: `http://127.0.0.1:${server.ports['connect-json']}`, httpVersion: '1.1' }));
    for (const [i, stream] of want.entries()) {
      const got = [];
      for await (const m of client[method.localName]({})) got.push(rpc.responseType.decode(toBinary(method.output, m)));
      assert.equal(got.length, stream.length, `connect-json stream ${i}`);
      stream.forEach((m, j) => same(rpc.responseType, m, got[j], `connect-json stream ${i}, message ${j}`));
    }
  }

  // Client streams: each request stream read to its end, then response sample i.
  {
    const { server, service } = await serve(IMPORT);
    const { rpc, responses } = service;
    const call = raw(server.ports['connect-grpc'], rpc);
    const streams = uploads.streams.map((s) => s.map((i) => uploads.messages[i]));
    for (const [i, stream] of streams.slice(0, 2).entries()) {
      const got = await new Promise((resolve, reject) => {
        const c = call({ deadline: Date.now() + 5000 }, (err, b) => (err ? reject(err) : resolve(rpc.responseType.decode(b))));
        for (const m of stream) c.write(Buffer.from(rpc.requestType.encode(m).finish()));
        c.end();
      });
      same(rpc.responseType, responses.messages[i], got, `connect-grpc answer ${i}`);
    }
    const { service: desc, method } = ownDescriptors(IMPORT.PROTO, rpc);
    const client = createClient(desc, createConnectTransport({ baseUrl: `http://127.0.0.1:${server.ports['connect-json']}`, httpVersion: '1.1' }));
    async function* messages(stream) {
      for (const m of stream) yield fromBinary(method.input, rpc.requestType.encode(m).finish());
    }
    const got = await client[method.localName](messages(streams[0]));
    same(rpc.responseType, responses.messages[0], rpc.responseType.decode(toBinary(method.output, got)), 'connect-json answer 0');
  }

  // A relay on connect-grpc (the Connect protocol's bidirectional streams need HTTP/2): each request message answered
  // with the next of the call's stream, round again.
  {
    const { server, service } = await serve(SYNC, 'connect-grpc');
    const { rpc, responses } = service;
    const stream = responses.streams[0].map((i) => responses.messages[i]);
    const count = stream.length + 2;
    const got = await new Promise((resolve, reject) => {
      const messages = [];
      const c = raw(server.ports['connect-grpc'], rpc)({ deadline: Date.now() + 5000 });
      c.on('data', (b) => {
        messages.push(rpc.responseType.decode(b));
        if (messages.length < count) c.write(Buffer.alloc(0));
        else c.end();
      });
      c.on('error', reject);
      c.on('end', () => resolve(messages));
      c.write(Buffer.alloc(0));
    });
    assert.equal(got.length, count);
    got.forEach((m, j) => same(rpc.responseType, stream[j % stream.length], m, `relay answer ${j}`));
  }
});
