// Peer: a typical grpc-js server, as grpc-node's examples write one, serving the same messages, kept as an anchor
// beside the bare baseline (issue 24): @grpc/proto-loader's loadSync with the usual options, grpc.Server's default
// options, handlers returning plain objects (which proto-loader's codec converts on every call). None of the
// project's hardening, interceptors or codec: "ours ÷ peer" in `npm run targets` is then what the project's own
// code costs on top of the library (or saves: its prebuilt protobufjs messages skip that conversion).
// The examples: https://github.com/grpc/grpc-node/blob/master/examples/helloworld/dynamic_codegen/greeter_server.js
import { readFileSync } from 'node:fs';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { PROTO_PATH, scenarioKey, scenarioPayloads } from '../proto/index.js';
import { SCENARIOS, SERVICE_NAME } from '../proto/payload.js';
import { bindInsecure } from './grpc-bind.js';
import { inTurn } from '../proto/own/service.js';
import { DESCRIPTOR_SET } from '../proto/own/schema.js';

/**
 * Adds the user's RPC, as grpc-node's examples would serve it: proto-loader's definition, plain objects in turn.
 * @param {import('@grpc/grpc-js').Server} server
 * @param {import('../proto/own/service.js').OwnService} own
 * @param {{PROTO?: string, PROTO_PATH?: string}} settings where the schema is
 */
function addOwnService(server, own, { PROTO, PROTO_PATH }) {
  const set = DESCRIPTOR_SET.test(PROTO);
  const includeDirs = (PROTO_PATH ?? '').split(':').filter(Boolean);
  const load = (options) => (set ? protoLoader.loadFileDescriptorSetFromBuffer(readFileSync(PROTO), options)
    : protoLoader.loadSync(PROTO, { ...options, includeDirs }));
  const definition = /** @type {import('@grpc/grpc-js').ServiceDefinition} */ (/** @type {unknown} */ (load(USUAL)[own.rpc.service]));
  const method = definition[own.rpc.method];
  // The samples as the plain objects such a server's data layer hands it, through the loader's own decoder (without the
  // fields at their default, where the .proto can be loaded again so).
  const asObject = set ? method : load({ ...USUAL, defaults: false })[own.rpc.service][own.rpc.method];
  const next = inTurn(own.responses.messages.map((m) => asObject.responseDeserialize(Buffer.from(own.rpc.responseType.encode(m).finish()))));
  server.addService(definition, { [own.rpc.method]: (call, callback) => callback(null, next()) });
}

/** The options grpc-node's examples pass to loadSync. */
const USUAL = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/**
 * Starts the peer grpc-js server of one worker: every RPC a scenario uses, answering its request's scenario with a
 * plain object; a request that selects no scenario gets INVALID_ARGUMENT. With `own`, the user's RPC as such a server
 * would serve it: its schema loaded by proto-loader's loadSync (PROTO_PATH as includeDirs) or, for a FileDescriptorSet,
 * loadFileDescriptorSetFromBuffer, and the response samples as plain objects, in turn.
 * @param {{host: string, port: number, settings?: {PROTO?: string, PROTO_PATH?: string},
 *   own?: import('../proto/own/service.js').OwnService|null}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {Error & {code?: string}} when the port cannot be bound (code: its errno, server/grpc-bind.js)
 */
export async function startPeerGrpc({ host, port, settings = {}, own = null }) {
  const definition = /** @type {any} */ (grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_PATH, USUAL)));
  const { service } = SERVICE_NAME.split('.').reduce((pkg, name) => pkg[name], definition);
  // The very messages the other listeners send, as the plain objects such a server's data layer would hand it: the
  // fields a proto3 encoder leaves off at their zero value are left out, so that the same bytes go on the wire.
  const asObject = protoLoader.loadSync(PROTO_PATH, { ...USUAL, defaults: false });
  const objects = new Map([...scenarioPayloads({ port, workerPid: process.pid })].map(([key, { rpc, type, message }]) => [
    key, asObject[SERVICE_NAME][rpc].responseDeserialize(Buffer.from(type.encode(message).finish()))]));
  /** @type {import('@grpc/grpc-js').UntypedServiceImplementation} */
  const handlers = {};
  for (const { rpc, request } of Object.values(SCENARIOS)) {
    // keepCase: the request's one field arrives under its .proto name (size_bytes, not sizeBytes).
    const field = Object.keys(request)[0]?.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    handlers[rpc] = (call, callback) => {
      const object = objects.get(`${rpc}:${call.request[field] ?? ''}`);
      if (object) callback(null, object);
      else callback({ code: grpc.status.INVALID_ARGUMENT, details: 'unknown request' });
    };
  }
  // GetUser takes no parameter: its one answer, looked up once.
  const user = objects.get(scenarioKey('GetUser', {}));
  handlers.GetUser = (call, callback) => callback(null, user);
  const server = new grpc.Server();
  server.addService(service, handlers);
  if (own) addOwnService(server, own, settings);
  await bindInsecure(server, host, port);
  return {
    close: () => new Promise((resolve) => { server.tryShutdown(() => resolve()); }),
    forceClose: () => server.forceShutdown(),
  };
}
