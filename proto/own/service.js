// The user's own service as both twins serve it and the job measures it: the schema, the RPC and its samples, loaded
// once per process from the settings PROTO, PROTO_PATH, RPC, REQUEST and RESPONSE (docs/own-message.md).
import { ownDescriptors } from './descriptors.js';
import { loadSchema, resolveRpc } from './schema.js';
import { readSamples } from './samples.js';

export { OwnServiceError } from './schema.js';

/**
 * @typedef {object} OwnService
 * @property {string} proto the PROTO setting it was loaded from: what protobuf-es's descriptors of the schema are
 *   built from (proto/own/descriptors.js ownDescriptors reads a FileDescriptorSet again)
 * @property {string[]} protoPath the PROTO_PATH setting's import directories ([]: the .proto's own)
 * @property {import('./schema.js').Rpc} rpc
 * @property {Array<{path: string, sha256: string}>} files the schema's files with their SHA-256
 * @property {import('./samples.js').Samples} responses what the twins answer, in turn (a server stream's: its streams, in turn)
 * @property {import('./samples.js').Samples} requests what the clients send, in turn (the empty message when no
 *   REQUEST is given; the servers never read it)
 */

/**
 * Loads the user's service from its settings.
 * @param {{PROTO: string, PROTO_PATH?: string, RPC: string, REQUEST?: string, RESPONSE?: string}} settings PROTO_PATH:
 *   import directories, `:`-separated (protoc's -I); REQUEST, RESPONSE: sample files (unset: one empty message)
 * @returns {OwnService}
 * @throws {import('./schema.js').OwnServiceError} one line for any of the bad inputs of issue 37
 */
export function loadOwnService(settings) {
  const { proto, protoPath, rpc, files } = loadOwnRpc(settings);
  const [REQUEST, RESPONSE] = ['REQUEST', 'RESPONSE'].map((name) => setting(settings, name));
  // The JSON samples are read by @bufbuild/protobuf where its descriptors of the schema build (the JSON twins' library).
  let es = null;
  try {
    es = ownDescriptors(proto, rpc);
  } catch { /* read by protobufjs alone: the JSON twins name the descriptor that does not build when they start */ }
  const { registry, method } = es ?? {};
  return {
    proto,
    protoPath,
    rpc,
    files,
    requests: readSamples('REQUEST', REQUEST, rpc.requestType, undefined, { streamed: rpc.requestStream, es: es && { desc: method.input, registry } }),
    responses: readSamples('RESPONSE', RESPONSE, rpc.responseType, undefined, { streamed: rpc.responseStream, es: es && { desc: method.output, registry } }),
  };
}

// A settings reader may be strict about names it lacks (the server's has no REQUEST): read only what it holds.
const setting = (settings, name) => (Object.hasOwn(settings, name) ? settings[name] : undefined);

/**
 * Loads the user's schema and resolves its RPC, without the samples: what the cluster's primary checks before it forks
 * the workers (each reads the samples for itself, and a bad one stops it before it listens).
 * @param {{PROTO: string, PROTO_PATH?: string, RPC: string}} settings
 * @returns {Pick<OwnService, 'proto'|'protoPath'|'rpc'|'files'>}
 * @throws {import('./schema.js').OwnServiceError} for a bad schema or an RPC it lacks, in one line
 */
export function loadOwnRpc(settings) {
  const [PROTO, PROTO_PATH, RPC] = ['PROTO', 'PROTO_PATH', 'RPC'].map((name) => setting(settings, name));
  const protoPath = (PROTO_PATH ?? '').split(':').filter(Boolean);
  const schema = loadSchema({ proto: PROTO, protoPath });
  return { proto: PROTO, protoPath, rpc: resolveRpc(schema.root, RPC), files: schema.files };
}

/**
 * A turn-taker over samples: each call returns the next, from the first, round and round (ghz's data array, in turn).
 * @template T
 * @param {T[]} items at least one
 * @returns {() => T}
 */
export function inTurn(items) {
  let i = 0;
  const n = items.length;
  return n === 1 ? () => items[0] : () => {
    const item = items[i];
    i = i + 1 === n ? 0 : i + 1;
    return item;
  };
}
