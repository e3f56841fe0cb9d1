// The own streaming RPC whose streams the fault matrix's slow-stream-readers fault opens (docs/faults.md): loaded from
// the matrix's settings (RPC, PROTO, PROTO_PATH, REQUEST, RESPONSE), checked before anything starts, and served by each
// cell's server beside the demo that k6 loads.
import { BenchError } from '../errors.js';
import { scenariosOf } from '../own-service.js';
import { toJsonText } from '../../proto/own/samples.js';
import { loadOwnService } from '../../proto/own/service.js';

/**
 * The server settings that make a cell's server serve the matrix's own RPC (paths absolute: the server runs in the
 * repository), or none without RPC.
 * @param {{RPC?: string, PROTO?: string, PROTO_PATH?: string, REQUEST?: string, RESPONSE?: string}} settings the matrix's
 * @returns {Record<string, string>}
 */
export function ownServerSettings(settings) {
  if (!settings.RPC) return {};
  const [{ source }] = scenariosOf({ SCENARIO: [], ...settings });
  return Object.fromEntries(Object.entries({ PROTO: source.PROTO, PROTO_PATH: source.PROTO_PATH, RPC: source.RPC, RESPONSE: source.RESPONSE })
    .filter(([, v]) => v));
}

/**
 * The matrix's own RPC as slow-stream-readers opens it: its path, whether it is a relay (bidirectional), and one request
 * message (its first sample) in both encodings.
 * @param {{RPC?: string, PROTO?: string, PROTO_PATH?: string, REQUEST?: string, RESPONSE?: string}} settings the matrix's
 * @returns {{rpc: string, kind: string, path: string, relay: boolean, request: {protobuf: Uint8Array, json: string}}} kind:
 *   'server streaming' or 'bidirectional streaming'
 * @throws {BenchError} one line: no RPC, one that is unary or client-streaming, or a schema or sample that does not load
 */
export function ownStreamOf(settings) {
  if (!settings.RPC) throw new BenchError('slow-stream-readers opens streams of an own streaming RPC: set RPC (and PROTO, RESPONSE)');
  const [{ source }] = scenariosOf({ SCENARIO: [], ...settings });
  let service;
  try {
    service = loadOwnService(source);
  } catch (err) {
    throw new BenchError(err.message);
  }
  const { rpc, requests } = service;
  if (!rpc.responseStream) {
    throw new BenchError(`RPC=${settings.RPC} is a ${rpc.kind} RPC: slow-stream-readers opens streams of a server-streaming or `
      + 'bidirectional RPC, whose answers a reader can stop reading');
  }
  const [message] = requests.messages;
  return {
    rpc: settings.RPC, kind: rpc.kind, path: rpc.path, relay: rpc.requestStream,
    request: { protobuf: rpc.requestType.encode(message).finish(), json: toJsonText(rpc.requestType, message) },
  };
}
