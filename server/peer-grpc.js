// Peer: a typical grpc-js server, as grpc-node's examples write one, serving the same messages, kept as an anchor
// beside the bare baseline (issue 24): @grpc/proto-loader's loadSync with the usual options, grpc.Server's default
// options, handlers returning plain objects (which proto-loader's codec converts on every call). None of the
// project's hardening, interceptors or codec: "ours ÷ peer" in `npm run targets` is then what the project's own
// code costs on top of the library (or saves: its prebuilt protobufjs messages skip that conversion).
// The examples: https://github.com/grpc/grpc-node/blob/master/examples/helloworld/dynamic_codegen/greeter_server.js
import { readFileSync } from 'node:fs';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import { bindInsecure } from './grpc-bind.js';
import { answerPicker, serviceMethods } from '../proto/methods.js';
import { DESCRIPTOR_SET } from '../proto/own/schema.js';

/** The options grpc-node's examples pass to loadSync. */
const USUAL = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/**
 * Adds one method (proto/methods.js), as grpc-node's examples would serve it: proto-loader's definition of its schema
 * (a .proto with its import directories, or a FileDescriptorSet), answering plain objects: the scenario its request
 * selects (INVALID_ARGUMENT when none), or the response samples in turn.
 * @param {import('@grpc/grpc-js').Server} server
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {(options: object) => import('@grpc/proto-loader').PackageDefinition} load the method's schema, by proto-loader
 */
function addMethod(server, method, load) {
  const { rpc, responses, refusal } = method;
  const definition = /** @type {import('@grpc/grpc-js').ServiceDefinition} */ (/** @type {unknown} */ (load(USUAL)[rpc.service]));
  const loaded = definition[rpc.method];
  // The samples as the plain objects such a server's data layer hands it, through the loader's own decoder: the fields a
  // proto3 encoder leaves off at their zero value are left out (where the .proto can be loaded again so), so that the
  // same bytes go on the wire.
  const asObject = DESCRIPTOR_SET.test(method.proto) ? loaded : load({ ...USUAL, defaults: false })[rpc.service][rpc.method];
  const pick = answerPicker(method, responses.messages.map((m) => asObject.responseDeserialize(Buffer.from(rpc.responseType.encode(m).finish()))));
  server.addService({ [rpc.method]: loaded }, {
    [rpc.method]: (call, callback) => {
      const object = pick(call.request);
      if (object) callback(null, object);
      else callback({ code: grpc.status.INVALID_ARGUMENT, details: refusal });
    },
  });
}

/**
 * Starts the peer grpc-js server of one worker: every method the grpc-js listener serves (proto/methods.js), each as
 * such a server would serve it (addMethod): the demo's RPCs answering their request's scenario with a plain object, a
 * request that selects no scenario INVALID_ARGUMENT; with `own`, the user's RPC, its schema loaded by proto-loader's
 * loadSync (PROTO_PATH as includeDirs) or, for a FileDescriptorSet, loadFileDescriptorSetFromBuffer, and the response
 * samples as plain objects, in turn.
 * @param {{host: string, port: number, own?: import('../proto/own/service.js').OwnService|null}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {Error & {code?: string}} when the port cannot be bound (code: its errno, server/grpc-bind.js)
 */
export async function startPeerGrpc({ host, port, own = null }) {
  const server = new grpc.Server();
  const loads = new Map(); // each schema loaded once per set of options
  for (const method of serviceMethods({ port, workerPid: process.pid, own })) {
    const { proto, protoPath } = method;
    const load = (options) => {
      const key = `${proto} ${options.defaults}`;
      if (!loads.has(key)) {
        loads.set(key, DESCRIPTOR_SET.test(proto) ? protoLoader.loadFileDescriptorSetFromBuffer(readFileSync(proto), options)
          : protoLoader.loadSync(proto, { ...options, includeDirs: protoPath }));
      }
      return loads.get(key);
    };
    addMethod(server, method, load);
  }
  await bindInsecure(server, host, port);
  return {
    close: () => new Promise((resolve) => { server.tryShutdown(() => resolve()); }),
    forceClose: () => server.forceShutdown(),
  };
}
