// The same User both ways: the HTTP body deep-equals the decoded gRPC response.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { methodOf, responseTypeOf, toProto3Json, User, userServiceDefinition } from '../../proto/index.js';
import { SCENARIOS, USER_FIELDS } from '../../proto/payload.js';
import { payloadBytesOf } from '../../bench/records/summary.js';
import { startServer } from '../helpers/server.js';

let server;
before(async () => { server = await startServer({ MODE: 'both' }); });
after(() => server.stop());

function grpcCall(port, rpc, request, deserialize) {
  const definition = userServiceDefinition();
  if (deserialize) definition[rpc] = { ...definition[rpc], responseDeserialize: deserialize };
  const Client = grpc.makeGenericClientConstructor(definition, 'UserService');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  const type = methodOf(rpc).resolvedRequestType;
  return new Promise((resolve, reject) => client[rpc](type.fromObject(request), (err, res) => {
    client.close();
    err ? reject(err) : resolve(res);
  }));
}

const grpcGetUser = (port, deserialize) => grpcCall(port, 'GetUser', {}, deserialize);

test('the HTTP body and the decoded gRPC message are the same User but for the port', async () => {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  const fromHttp = await res.json();
  const fromGrpc = toProto3Json(User, await grpcGetUser(server.grpcPort));

  assert.equal(fromHttp.port, server.httpPort);
  assert.equal(fromGrpc.port, server.grpcPort);
  assert.deepEqual({ ...fromHttp, port: 0 }, { ...fromGrpc, port: 0 });
  assert.deepEqual(fromHttp, { ...USER_FIELDS, port: server.httpPort, workerPid: fromHttp.workerPid });
  assert.ok(fromHttp.workerPid > 0 && fromHttp.workerPid !== server.proc.pid, 'a worker, not the primary, served it');
});

test('country KE, the zero value, is in the JSON but off the protobuf wire', async () => {
  const raw = await grpcGetUser(server.grpcPort, (bytes) => bytes);
  const fieldNumbers = [];
  for (let i = 0; i < raw.length;) {
    const key = raw[i++];
    fieldNumbers.push(key >> 3);
    const wireType = key & 7;
    if (wireType === 0) { while (raw[i++] & 0x80); } else if (wireType === 2) { i += raw[i] + 1; }
  }
  assert.deepEqual(fieldNumbers, [1, 2, 3, 5, 6], 'field 4 (country) holds its zero value, so proto3 leaves it out');
  const body = await (await fetch(`http://127.0.0.1:${server.httpPort}/`)).text();
  assert.match(body, /"country":"COUNTRY_KE"/);
});

for (const [name, { httpPath, rpc, request }] of Object.entries(SCENARIOS)) {
  test(`scenario ${name}: the HTTP body is the proto3 JSON mapping of the gRPC message, every field`, async () => {
    const res = await fetch(`http://127.0.0.1:${server.httpPort}${httpPath}`);
    assert.equal(res.status, 200);
    const fromHttp = await res.json();
    const type = responseTypeOf(rpc);
    const fromGrpc = toProto3Json(type, await grpcCall(server.grpcPort, rpc, request));
    const samePort = (body, port) => JSON.parse(JSON.stringify(body).replaceAll(`"port":${port}`, '"port":0'));
    assert.deepEqual(samePort(fromHttp, server.httpPort), samePort(fromGrpc, server.grpcPort));
    // The payload size the report gives for gRPC (re-encoded from the decoded message) is the size on the wire.
    const raw = await grpcCall(server.grpcPort, rpc, request, (bytes) => bytes);
    assert.equal(payloadBytesOf('grpc', { rpc, sample: fromGrpc }), raw.length);
  });
}

test('a scenario parameter the server does not serve is a clear 400 / INVALID_ARGUMENT', async () => {
  const res = await fetch(`http://127.0.0.1:${server.httpPort}/users?count=7`);
  assert.equal(res.status, 400);
  assert.match((await res.json()).message, /count must be one of 100/);
  await assert.rejects(grpcCall(server.grpcPort, 'ListUsers', { count: 7 }), { code: grpc.status.INVALID_ARGUMENT });
});
