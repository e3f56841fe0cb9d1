// Server reflection describes the contract as user.proto writes it (issue 14, items 3 and 4):
// the .proto's own field names, and the health and reflection services listed beside UserService.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { startServer } from './helpers/server.js';

const require = createRequire(import.meta.url);
const REFLECTION_PROTO = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto');
const FileDescriptorProto = descriptor.lookupType('google.protobuf.FileDescriptorProto');

let server;
let client;
before(async () => {
  server = await startServer({ MODE: 'grpc' });
  const { grpc: { reflection: { v1: { ServerReflection } } } } = grpc.loadPackageDefinition(
    protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true }));
  client = new ServerReflection(`127.0.0.1:${server.grpcPort}`, grpc.credentials.createInsecure());
});
after(async () => {
  client?.close();
  await server?.stop();
});

/** One reflection request on its own stream, and its one response. */
function ask(request) {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo({ deadline: Date.now() + 5000 });
    call.on('data', (response) => { resolve(response); call.end(); });
    call.on('error', reject);
    call.write(request);
  });
}

test('reflection lists UserService, the health service and itself', async () => {
  const { list_services_response: listed } = await ask({ list_services: '' });
  const names = listed.service.map((s) => s.name).sort();
  assert.deepEqual(names, ['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection',
    'grpc.reflection.v1alpha.ServerReflection', 'user.v1.UserService']);
});

test('reflection gives the .proto field names (size_bytes, next_billing_date, worker_pid)', async () => {
  const { file_descriptor_response: found } = await ask({ file_containing_symbol: 'user.v1.UserService' });
  const files = found.file_descriptor_proto.map((bytes) => FileDescriptorProto.decode(bytes));
  const messages = Object.fromEntries(files.flatMap((f) => f.messageType).map((m) => [m.name, m.field.map((x) => x.name)]));
  assert.deepEqual(messages.GetBlobRequest, ['size_bytes']);
  assert.deepEqual(messages.User, ['username', 'premium', 'next_billing_date', 'country', 'port', 'worker_pid']);
  assert.deepEqual(messages.Blob, ['data', 'port', 'worker_pid']);
});

test('reflection describes the health service, so a client needs no local health.proto', async () => {
  const { file_descriptor_response: found, error_response: error } = await ask({ file_containing_symbol: 'grpc.health.v1.Health' });
  assert.equal(error, undefined, JSON.stringify(error));
  const [file] = found.file_descriptor_proto.map((bytes) => FileDescriptorProto.decode(bytes));
  assert.deepEqual(file.service.map((s) => s.name), ['Health']);
});

test('map fields are described as protoc does (HealthListResponse.statuses), so grpcurl can call Health/Check', async () => {
  const { file_descriptor_response: found } = await ask({ file_containing_symbol: 'grpc.health.v1.Health' });
  const [file] = found.file_descriptor_proto.map((bytes) => FileDescriptorProto.decode(bytes));
  const list = file.messageType.find((m) => m.name === 'HealthListResponse');
  const entry = list.nestedType.find((m) => m.options?.mapEntry);
  // protoc's rule: <FieldInCamelCase>Entry, and a fully qualified type name (descriptor.proto, map_entry).
  assert.equal(entry?.name, 'StatusesEntry');
  assert.equal(list.field.find((f) => f.name === 'statuses').typeName, '.grpc.health.v1.HealthListResponse.StatusesEntry');
});
