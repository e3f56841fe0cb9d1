// The user's own service as both twins serve it and the job measures it: the schema, the RPC and its samples, loaded
// once per process from the settings PROTO, PROTO_PATH, RPC, REQUEST and RESPONSE (docs/own-message.md).
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
  // A settings reader may be strict about names it lacks (the server's has no REQUEST): read only what it holds.
  const [PROTO, PROTO_PATH, RPC, REQUEST, RESPONSE] = ['PROTO', 'PROTO_PATH', 'RPC', 'REQUEST', 'RESPONSE']
    .map((name) => (Object.hasOwn(settings, name) ? settings[name] : undefined));
  const protoPath = (PROTO_PATH ?? '').split(':').filter(Boolean);
  const schema = loadSchema({ proto: PROTO, protoPath });
  const rpc = resolveRpc(schema.root, RPC);
  return {
    proto: PROTO,
    protoPath,
    rpc,
    files: schema.files,
    requests: readSamples('REQUEST', REQUEST, rpc.requestType, undefined, { streamed: rpc.requestStream }),
    responses: readSamples('RESPONSE', RESPONSE, rpc.responseType, undefined, { streamed: rpc.responseStream }),
  };
}

/**
 * The response samples as a listener answers them, in turn: each message (made into the listener's own kind of message
 * by `as`, once) with its encoded size, for the memory budget (server/memory-budget.js admitAnswer).
 * @template T
 * @param {import('./samples.js').Samples} responses
 * @param {number[]} sizes each sample's size in the listener's encoding (responses.jsonBytes or protobufBytes), bytes
 * @param {(message: import('protobufjs').Message) => T} [as] default: the protobufjs message itself
 * @returns {() => {message: T, bytes: number}}
 */
export const answersInTurn = (responses, sizes, as = (m) => /** @type {any} */ (m)) => inTurn(
  responses.messages.map((m, i) => ({ message: as(m), bytes: sizes[i] })));

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
