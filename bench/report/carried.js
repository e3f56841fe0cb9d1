// What each direction of a request carries, for the sentences that speak of bytes (the verdict's, the reading's): a
// direction carries a payload to speak of when its payload is at least PAYLOAD_SHARE of the bytes it moves per request
// in a column. The response's payload is k6's measure (the payload row); the request's is an own service's request
// samples (their median, in the column's encoding): the demo's requests select a scenario and carry nothing else. So the
// demo speaks of received bytes, an export (OTLP: 578 bytes of JSON in, an empty message out) of sent bytes, a
// catalog's page of both.
import { MODES } from '../modes.js';

/** The share of a direction's bytes per request its payload must reach to be spoken of. */
export const PAYLOAD_SHARE = 0.25;

/**
 * The encoding a column's requests and responses are in, by its mode's k6 payload (bench/modes.js).
 * @param {{mode: string}} column
 * @returns {'json'|'protobuf'}
 */
const encodingOf = (column) => (MODES[column.mode]?.payload === 'protobuf-message' ? 'protobuf' : 'json');

/**
 * @typedef {object} Direction
 * @property {[number, number]|null} payload each column's payload per request, bytes ([base, compared]); null when not known
 * @property {boolean} carries whether the payload is one to speak of in either column (PAYLOAD_SHARE); a response whose
 *   payload is not known is taken to carry one, a request whose payload is not known (the demo's) not
 */

/**
 * What the requests and the responses of two columns carry.
 * @param {object} report its `own` (an own service's record, bench/own-service.js; null or absent for the demo) gives the
 *   request samples' sizes
 * @param {{mode: string, sent_per_request: number, received_per_request: number, payload_bytes?: number}} a the base column
 * @param {{mode: string, sent_per_request: number, received_per_request: number, payload_bytes?: number}} b the compared one
 * @returns {{sent: Direction, received: Direction}}
 */
export function carriedBy(report, a, b) {
  const share = (payload, bytes) => Number.isFinite(payload) && Number.isFinite(bytes) && bytes > 0 && payload / bytes >= PAYLOAD_SHARE;
  /** @type {Record<'json'|'protobuf', {median: number}>|undefined} */
  const request = /** @type {any} */ (report).own?.sizes?.request;
  // A relay in binary frames (RELAY_FRAMES=binary) sends protobuf over its WebSocket too.
  const binary = /** @type {any} */ (report).own?.relay_frames === 'binary';
  const sent = request ? /** @type {[number, number]} */ ([a, b].map((m) => request[binary ? 'protobuf' : encodingOf(m)].median)) : null;
  const received = [a, b].every((m) => Number.isFinite(m.payload_bytes)) ? /** @type {[number, number]} */ ([a.payload_bytes, b.payload_bytes]) : null;
  return {
    sent: { payload: sent, carries: sent !== null && (share(sent[0], a.sent_per_request) || share(sent[1], b.sent_per_request)) },
    received: {
      payload: received,
      carries: received === null || share(received[0], a.received_per_request) || share(received[1], b.received_per_request),
    },
  };
}
