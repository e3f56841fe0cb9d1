// The same User both ways: the HTTP body deep-equals the decoded gRPC response.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { toProto3Json, User, userServiceDefinition } from '../proto/index.js';
import { USER_FIELDS } from '../proto/payload.js';
import { startServer } from './helpers/server.js';

let server;
before(async () => { server = await startServer({ MODE: 'both' }); });
after(() => server.stop());

function grpcGetUser(port, deserialize) {
  const definition = userServiceDefinition();
  if (deserialize) definition.GetUser = { ...definition.GetUser, responseDeserialize: deserialize };
  const Client = grpc.makeGenericClientConstructor(definition, 'UserService');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => client.GetUser({}, (err, res) => {
    client.close();
    err ? reject(err) : resolve(res);
  }));
}

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
