// Peer: a typical grpc-js server, as grpc-node's examples write one, serving the same messages, kept as an anchor
// beside the bare baseline (issue 24): @grpc/proto-loader's loadSync with the usual options, grpc.Server's default
// options, handlers returning plain objects (which proto-loader's codec converts on every call). None of the
// project's hardening, interceptors or codec: "ours ÷ peer" in `npm run targets` is then what the project's own
// code costs on top of the library (or saves: its prebuilt protobufjs messages skip that conversion).
// The examples: https://github.com/grpc/grpc-node/blob/master/examples/helloworld/dynamic_codegen/greeter_server.js
import { readFileSync } from 'node:fs';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { bindInsecure } from './grpc-bind.js';
import { answerPicker, serviceMethods, streamPicker } from '../proto/methods.js';
import { DESCRIPTOR_SET } from '../proto/own/schema.js';

/** The options grpc-node's examples pass to loadSync. */
const USUAL = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/**
 * A plain object's 64-bit map keys as the decimal strings a data layer hands: protobufjs's toObject (proto-loader's
 * decoder) keeps such a key as its 8-byte hash, which fromObject (its encoder) then reads as a number, 0, so that the
 * samples' keys would not survive the loader's round trip (a map<int64, string> sent {0: ...} for every entry; the
 * targets' equality check found it, issue 48).
 * @param {import('protobufjs').Type} type the object's message type (the project's)
 * @param {Record<string, any>} object changed in place
 * @returns {Record<string, any>} the object
 */
function decimalKeys(type, object) {
  for (const field of type.fieldsArray) {
    // The loader keeps the .proto's names (keepCase), the project's type may have them in camelCase.
    const name = Object.keys(object).find((k) => k === field.name || protobuf.util.camelCase(k) === field.name);
    const value = name === undefined ? null : object[name];
    if (value === null || value === undefined) continue;
    const { keyType } = /** @type {protobuf.MapField} */ (/** @type {unknown} */ (field));
    if (field.map && /64$/.test(keyType)) {
      const unsigned = /^(uint|fixed)64$/.test(keyType);
      object[name] = Object.fromEntries(Object.entries(value).map(([k, v]) => [String(protobuf.util.longFromHash(k, unsigned)), v]));
    }
    if (field.resolvedType instanceof protobuf.Type) {
      const nested = field.map ? Object.values(object[name]) : field.repeated ? value : [value];
      for (const v of nested) decimalKeys(field.resolvedType, v);
    }
  }
  return object;
}

/**
 * Adds one method (proto/methods.js), as grpc-node's examples would serve it: proto-loader's definition of its schema
 * (a .proto with its import directories, or a FileDescriptorSet), answering plain objects: the scenario its request
 * selects (INVALID_ARGUMENT when none), or the response samples in turn.
 * @param {import('@grpc/grpc-js').Server} server
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {(options: object) => import('@grpc/proto-loader').PackageDefinition} load the method's schema, by proto-loader
 * @param {number} intervalMs STREAM_INTERVAL, ms between a server stream's messages
 */
function addMethod(server, method, load, intervalMs) {
  const { rpc, responses, refusal } = method;
  const definition = /** @type {import('@grpc/grpc-js').ServiceDefinition} */ (/** @type {unknown} */ (load(USUAL)[rpc.service]));
  const loaded = definition[rpc.method];
  // The samples as the plain objects such a server's data layer hands it, through the loader's own decoder: the fields a
  // proto3 encoder leaves off at their zero value are left out (where the .proto can be loaded again so), so that the
  // same bytes go on the wire.
  const asObject = DESCRIPTOR_SET.test(method.proto) ? loaded : load({ ...USUAL, defaults: false })[rpc.service][rpc.method];
  const objects = responses.messages.map((m) => decimalKeys(rpc.responseType,
    asObject.responseDeserialize(Buffer.from(rpc.responseType.encode(m).finish()))));
  if (rpc.requestStream || rpc.responseStream) {
    server.addService({ [rpc.method]: loaded }, { [rpc.method]: streamHandler(method, objects, intervalMs) });
    return;
  }
  const pick = answerPicker(method, objects);
  server.addService({ [rpc.method]: loaded }, {
    [rpc.method]: (call, callback) => {
      const object = pick(call.request);
      if (object) callback(null, object);
      else callback({ code: grpc.status.INVALID_ARGUMENT, details: refusal });
    },
  });
}

/**
 * A streaming method's handler as grpc-node's route_guide example writes each kind
 * (https://github.com/grpc/grpc-node/blob/master/examples/routeguide/dynamic_codegen/route_guide_server.js): a server
 * stream `call.write`s each message of the next response stream, then `call.end()`s (listFeatures: no wait for 'drain',
 * as the example); paced by STREAM_INTERVAL, as a hand-written token stream would be, with a timer between two writes;
 * a client stream reads its messages on 'data' and answers the next response sample on 'end' (recordRoute); a relay
 * answers each message on 'data' with the call's stream's next message, and ends on 'end' (routeChat).
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {object[]} objects the response samples as plain objects, in the samples' order
 * @param {number} intervalMs ms between a server stream's messages (0: written in one loop)
 * @returns {import('@grpc/grpc-js').UntypedHandleCall}
 */
function streamHandler(method, objects, intervalMs) {
  const { rpc } = method;
  if (rpc.requestStream && rpc.responseStream) {
    const next = streamPicker(method, objects);
    return (call) => {
      const stream = next();
      let i = 0;
      call.on('data', () => call.write(stream[i++ % stream.length]));
      call.on('end', () => call.end());
    };
  }
  if (rpc.requestStream) {
    const pick = answerPicker(method, objects);
    return (call, callback) => {
      call.on('data', () => {}); // each message read (proto-loader decoded it), as recordRoute reads each point
      call.on('end', () => callback(null, pick()));
    };
  }
  const next = streamPicker(method, objects);
  return (call) => {
    const stream = next();
    if (!intervalMs) {
      for (const object of stream) call.write(object);
      call.end();
      return;
    }
    const send = (i) => {
      if (call.cancelled) return;
      call.write(stream[i]);
      if (i + 1 === stream.length) call.end();
      else setTimeout(send, intervalMs, i + 1);
    };
    send(0);
  };
}

/**
 * Starts the peer grpc-js server of one worker: every method the grpc-js listener serves (proto/methods.js), each as
 * such a server would serve it (addMethod): the demo's RPCs answering their request's scenario with a plain object, a
 * request that selects no scenario INVALID_ARGUMENT; with `own`, the user's RPC, its schema loaded by proto-loader's
 * loadSync (PROTO_PATH as includeDirs) or, for a FileDescriptorSet, loadFileDescriptorSetFromBuffer, and the response
 * samples as plain objects, in turn; a streaming RPC of any kind as route_guide serves its kind (streamHandler).
 * @param {{host: string, port: number, own?: import('../proto/own/service.js').OwnService|null, settings?: {STREAM_INTERVAL?: number}}} options
 *   settings: the server's; STREAM_INTERVAL paces a server stream (ms, default 0)
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {Error & {code?: string}} when the port cannot be bound (code: its errno, server/grpc-bind.js)
 */
export async function startPeerGrpc({ host, port, own = null, settings = {} }) {
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
    addMethod(server, method, load, settings.STREAM_INTERVAL ?? 0);
  }
  await bindInsecure(server, host, port);
  return {
    close: () => new Promise((resolve) => { server.tryShutdown(() => resolve()); }),
    forceClose: () => server.forceShutdown(),
  };
}
