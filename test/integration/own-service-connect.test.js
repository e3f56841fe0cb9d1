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
