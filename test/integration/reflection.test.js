// Server reflection describes the contract as user.proto writes it (issue 14, items 3 and 4):
// the .proto's own field names, and the health and reflection services listed beside UserService.
// It describes the files as protoc does (json_name on every field, each file named by its import
// path), so a reflection client prints the names of the HTTP API (grpcurl is the client here).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { ensureTool } from '../../bench/tools.js';
import { protocJsonName } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';
import { startServer } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const REFLECTION_PROTO = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')),
  'build/proto/grpc/reflection/v1/reflection.proto');
const FileDescriptorProto = descriptor.lookupType('google.protobuf.FileDescriptorProto');

let server;
let client;
before(async () => {
  // Both listeners: grpcurl's output is compared with the HTTP body of the same scenario.
  server = await startServer({ MODE: 'both' });
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

/** Every file reflection serves (the files of each service it lists, and their dependencies), decoded. */
async function servedFiles() {
  const { list_services_response: listed } = await ask({ list_services: '' });
  const files = new Map();
  for (const { name } of listed.service) {
    const { file_descriptor_response: found } = await ask({ file_containing_symbol: name });
    for (const bytes of found.file_descriptor_proto) {
      const file = FileDescriptorProto.decode(bytes);
      files.set(file.name, file);
    }
  }
  return [...files.values()];
}

/** Every field of a file (its messages', their nested messages', map entries included, and its extensions). */
function fieldsOf(file) {
  const fields = [...file.extension];
  const visit = (message) => {
    fields.push(...message.field, ...message.extension);
    message.nestedType.forEach(visit);
  };
  file.messageType.forEach(visit);
  return fields;
}

test('protocJsonName follows protoc (descriptor.cc ToJsonName): each underscore dropped, the next character upper-cased', () => {
  assert.equal(protocJsonName('next_billing_date'), 'nextBillingDate');
  assert.equal(protocJsonName('username'), 'username');
  assert.equal(protocJsonName('foo__bar'), 'fooBar');
  assert.equal(protocJsonName('foo_1bar'), 'foo1bar');
  assert.equal(protocJsonName('_foo'), 'Foo');
  assert.equal(protocJsonName('foo_'), 'foo');
  assert.equal(protocJsonName('fooBar'), 'fooBar');
});

test('every field of every served file carries json_name, as protoc writes it', async () => {
  const files = await servedFiles();
  assert.deepEqual(files.map((f) => f.name).sort(), ['grpc/reflection/v1/reflection.proto',
    'grpc/reflection/v1alpha/reflection.proto', 'health/v1/health.proto', 'user.proto']);
  for (const file of files) {
    const fields = fieldsOf(file);
    assert.ok(fields.length > 0, `${file.name} has no fields`);
    for (const field of fields) {
      assert.equal(field.jsonName, protocJsonName(field.name), `${file.name}: ${field.name} has json_name "${field.jsonName}"`);
    }
  }
  const user = files.find((f) => f.name === 'user.proto').messageType.find((m) => m.name === 'User');
  assert.deepEqual(user.field.map((f) => f.jsonName), ['username', 'premium', 'nextBillingDate', 'country', 'port', 'workerPid']);
});

test('user.proto is served under its import path (as protoc -I proto names it), by symbol and by file name', async () => {
  const bySymbol = await ask({ file_containing_symbol: 'user.v1.UserService' });
  const [file] = bySymbol.file_descriptor_response.file_descriptor_proto.map((bytes) => FileDescriptorProto.decode(bytes));
  assert.equal(file.name, 'user.proto');
  assert.equal(file.package, 'user.v1');
  const byName = await ask({ file_by_filename: 'user.proto' });
  assert.equal(byName.error_response, undefined, JSON.stringify(byName.error_response));
  assert.equal(FileDescriptorProto.decode(byName.file_descriptor_response.file_descriptor_proto[0]).name, 'user.proto');
});

/**
 * A response body with the two fields that name who answered replaced by placeholders: `port`
 * (each listener says its own, so it must be that listener's) and `workerPid` (any worker may answer).
 */
const withoutWho = (body, listenerPort) => JSON.parse(JSON.stringify(body, (key, value) => {
  if (key === 'port') return value === listenerPort ? '<listener port>' : value;
  if (key === 'workerPid') return Number.isInteger(value) && value > 0 ? '<worker pid>' : value;
  return value;
}));

for (const [name, { rpc, request, httpPath }] of Object.entries(SCENARIOS)) {
  test(`grpcurl by reflection prints the HTTP body of ${name} (${rpc}, GET ${httpPath}) field for field`, async () => {
    const grpcurl = ensureTool('grpcurl');
    // -emit-defaults: the HTTP body has every field, zeros included (country COUNTRY_KE is 0).
    const { stdout } = await promisify(execFile)(grpcurl, ['-plaintext', '-emit-defaults', '-d', JSON.stringify(request),
      `127.0.0.1:${server.grpcPort}`, rpcPath(rpc)], { maxBuffer: 64 * 1024 * 1024, timeout: 15000 });
    const printed = JSON.parse(stdout);
    const response = await fetch(`http://127.0.0.1:${server.httpPort}${httpPath}`);
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(withoutWho(printed, server.grpcPort), withoutWho(body, server.httpPort));
  });
}
