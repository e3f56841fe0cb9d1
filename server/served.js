// Requests served and refused by this process's handlers: plain counters the handlers bump. Nothing else happens on
// the request path; server/accounting.js reads them when the admin endpoint is scraped.

/**
 * Requests a route or RPC handler of this process answered with a message since it started: `http` counts fastify's
 * routes (on every listener startHttp serves: http, json-h2, protobuf-h1), `grpc` the grpc-js RPCs, `connect`
 * connect-node's (connect-grpc, connect-json). A request a handler refuses is counted in rejectedRequests instead; health
 * checks, reflection, and requests refused before any handler (404, a body or message past MAX_BODY_BYTES, which fastify,
 * grpc-js and connect-node refuse themselves) are in neither. A listener of another kind adds its own key.
 * @type {Record<string, number>}
 */
export const servedRequests = { http: 0, grpc: 0, connect: 0 };

/**
 * Why a handler refused a request, the same on every listener: the request does not decode as the method's message or
 * holds a value its field cannot take (HTTP 400 ERR_BAD_REQUEST_MESSAGE, gRPC and Connect INVALID_ARGUMENT); it picks
 * none of the method's answers (HTTP 400 ERR_NO_ANSWER, INVALID_ARGUMENT); or the worker's memory budget refused the
 * answer, or a stream at its start (HTTP 503, RESOURCE_EXHAUSTED, a WebSocket's close 1013; server/memory-budget.js).
 */
export const REJECTED = Object.freeze({ INVALID_ARGUMENT: 'invalid_argument', NO_ANSWER: 'no_answer', OVER_BUDGET: 'over_budget' });

/**
 * Requests a handler refused since the process started, by listener and reason: `listener reason` → count.
 * @type {Map<string, number>}
 */
export const rejectedRequests = new Map();

/**
 * Counts one refused request.
 * @param {string} listener the listener's name (server/listeners.js), e.g. `json-h2`
 * @param {string} reason one of REJECTED
 * @returns {void}
 */
export function reject(listener, reason) {
  const key = `${listener} ${reason}`;
  rejectedRequests.set(key, (rejectedRequests.get(key) ?? 0) + 1);
}

/**
 * Counts one refused request and hands back the error the handler answers it with.
 * @template {Error} E
 * @param {string} listener
 * @param {string} reason one of REJECTED
 * @param {E} err
 * @returns {E}
 */
export function refused(listener, reason, err) {
  reject(listener, reason);
  return err;
}

/**
 * Messages of streams since the process started, by listener and direction: `listener sent` (a server stream's, by
 * server/streams.js) or `listener received` (a client stream's) → count.
 * @type {Map<string, number>}
 */
export const streamMessages = new Map();

/**
 * Server streams ended since the process started, by listener and how: `listener how` → count; `completed` (every
 * message sent and the stream ended), or `cut` (the client went away first). A refused stream is in rejectedRequests.
 * @type {Map<string, number>}
 */
export const streamsEnded = new Map();

/**
 * Streams open now in this process, every listener's, and the most open at once since the admin endpoint last read it
 * (server/accounting.js): the number of streams a worker holds, which `STREAMS=N` runs measure (docs/streaming.md). A
 * server stream, a relay; a client stream is a request until it ends and is not counted.
 * @type {{now: number, peak: number}}
 */
export const openStreams = { now: 0, peak: 0 };

/**
 * Counts a stream as open, until endStream or dropStream.
 * @returns {void}
 */
export function openStream() {
  if (++openStreams.now > openStreams.peak) openStreams.peak = openStreams.now;
}

/**
 * Counts an open stream as closed without counting its end: one refused after it opened (a relay's undecodable message).
 * @returns {void}
 */
export function dropStream() {
  openStreams.now--;
}

/**
 * Counts messages of a stream.
 * @param {string} listener
 * @param {'sent'|'received'} direction
 * @param {number} [count] default 1
 * @returns {void}
 */
export function countMessages(listener, direction, count = 1) {
  const key = `${listener} ${direction}`;
  streamMessages.set(key, (streamMessages.get(key) ?? 0) + count);
}

/**
 * Counts one stream's end (server stream or relay), and the stream as closed (openStream).
 * @template {'completed'|'cut'} H
 * @param {string} listener
 * @param {H} how
 * @returns {H}
 */
export function endStream(listener, how) {
  const key = `${listener} ${how}`;
  streamsEnded.set(key, (streamsEnded.get(key) ?? 0) + 1);
  openStreams.now--;
  return how;
}
