// What each protocol puts around one message of a stream, in bytes, from the protocols' own texts: the reading's split of
// a message's bytes on the wire into the payload, this framing, and the rest (the stream's head and end shared out, and
// whatever else the connection carried: HTTP/2 PINGs and WINDOW_UPDATEs, and over TLS the records' own bytes, which are
// per write, and writes queued under load share a record).
// Each part assumes a message is written on its own, as the servers here write them (server/streams.js: one write a
// message; grpc-js: one DATA frame a message), and k6's clients send a client stream's messages in one body (HTTP) or a
// message a DATA frame (gRPC).
import { MODES } from '../modes.js';
import { LISTENERS } from '../../server/listeners.js';

/** An HTTP/2 frame's header (RFC 9113 section 4.1). */
const H2_FRAME_HEADER = 9;
/** gRPC's length prefix: a compressed flag and a 4-byte length (gRPC over HTTP/2, "Length-Prefixed-Message"). */
const GRPC_PREFIX = 5;
/** The Connect protocol's envelope: flags and a 4-byte length (connectrpc.com/docs/protocol, "Streaming RPCs"). */
const CONNECT_ENVELOPE = 5;
/** A TLS 1.3 record's own bytes: its 5-byte header, the inner content type and AEAD's 16-byte tag (RFC 8446 section 5.2). */
export const TLS13_RECORD = 22;

/**
 * @typedef {{what: string, bytes: number}} Part one part of the framing around a message
 */

/**
 * An HTTP/1.1 chunk's framing around `size` bytes (RFC 9112 section 7.1): the size in hex, CRLF, and CRLF after the data.
 * @param {number} size bytes of the chunk's data
 * @returns {Part}
 */
const chunk = (size) => ({ what: 'the chunk\'s size line and CRLFs', bytes: Math.max(1, Math.round(size)).toString(16).length + 4 });

/**
 * A WebSocket frame's header (RFC 6455 section 5.2): 2 bytes, 2 more from 126 bytes of payload, 8 more from 65,536;
 * a client's frames add a 4-byte masking key.
 * @param {number} size payload bytes
 * @param {boolean} masked sent by the client
 * @returns {Part}
 */
const websocket = (size, masked) => ({
  what: `the WebSocket frame's header${masked ? ' and masking key' : ''}`,
  bytes: (size < 126 ? 2 : size < 65536 ? 4 : 10) + (masked ? 4 : 0),
});

/**
 * The framing one column's protocol puts around one streamed message, each way that carries a stream.
 * @param {{mode: string}} column a report column (its mode names the protocol)
 * @param {{kind: string, stream_framing?: string}} own the own service's record (bench/own-service.js): its RPC's kind and
 *   how HTTP asked for a server stream
 * @param {'received'|'sent'} way received: the server's messages (server streams, relays); sent: the client's (client
 *   streams, relays)
 * @param {number} size the message's payload, bytes (the median sample's, in the column's encoding)
 * @returns {Part[]|null} the parts, in wire order; null when the way carries no stream, or the mode is not known
 */
export function framingParts(column, own, way, size) {
  const mode = MODES[column.mode];
  if (!mode) return null;
  const relay = own.kind === 'bidirectional streaming';
  const streamed = way === 'received' ? relay || own.kind === 'server streaming' : relay || own.kind === 'client streaming';
  if (!streamed) return null;
  const h2 = LISTENERS[mode.listener]?.transport === 'HTTP/2';
  if (mode.payload === 'protobuf-message') {
    return [{ what: 'gRPC\'s length prefix', bytes: GRPC_PREFIX }, { what: 'an HTTP/2 DATA frame\'s header', bytes: H2_FRAME_HEADER }];
  }
  if (relay) return [websocket(size, way === 'sent')];
  if (mode.listener === 'connect-json') {
    const envelope = { what: 'the Connect envelope', bytes: CONNECT_ENVELOPE };
    // A client stream's messages go in one body (k6 sends it whole, with its length); the answer is chunked.
    return way === 'sent' ? [envelope] : [envelope, chunk(size + CONNECT_ENVELOPE)];
  }
  // NDJSON: a newline; SSE: `data: ` and the blank line after the event.
  const line = way === 'received' && (own.stream_framing ?? 'sse') === 'sse'
    ? { what: 'SSE\'s `data: ` and blank line', bytes: 8 } : { what: 'NDJSON\'s newline', bytes: 1 };
  if (way === 'sent') return [line];
  return [line, h2 ? { what: 'an HTTP/2 DATA frame\'s header', bytes: H2_FRAME_HEADER } : chunk(size + line.bytes)];
}

/**
 * The framing's parts in words, with their sum: e.g. "gRPC's length prefix 5 + an HTTP/2 DATA frame's header 9 = 14".
 * @param {Part[]} parts
 * @returns {string}
 */
export function framingText(parts) {
  const sum = parts.reduce((a, p) => a + p.bytes, 0);
  return `${parts.map((p) => `${p.what} ${p.bytes}`).join(' + ')}${parts.length > 1 ? ` = ${sum}` : ''}`;
}
