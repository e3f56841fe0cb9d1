// Server settings, read once from the environment and validated before anything starts.
import os from 'node:os';
import { bool, host, makeValidator, port, str } from 'envalid';
import { positiveInt, readEnv, wholeNumber } from './env.js';
import { SettingsError } from './errors.js';
import { LISTENER_NAMES, LISTENERS } from './listeners.js';

// setTimeout fires at once for delays past 2^31-1 ms, so no duration may exceed it.
const durationMs = wholeNumber(1, 2 ** 31 - 1);

/**
 * Names of the listeners a mode opens.
 * @param {string} mode a value of MODE, validated by readSettings
 * @returns {string[]} names of listeners (server/listeners.js)
 */
export const listenersOf = (mode) => {
  if (mode === 'both') return ['http', 'grpc'];
  if (mode === 'all') return [...LISTENER_NAMES];
  return mode.split(',');
};

/**
 * The port a listener binds.
 * @param {ServerSettings} settings
 * @param {string} name a listener's name (server/listeners.js)
 * @returns {number}
 */
export const portOf = (settings, name) => settings[LISTENERS[name].portSetting];

const mode = makeValidator((input) => {
  const value = String(input);
  if (value === 'both' || value === 'all') return value;
  const names = value.split(',');
  if (names.every((n) => Object.hasOwn(LISTENERS, n)) && new Set(names).size === names.length) return value;
  throw new Error(`must be both, all, or a comma-separated list of ${LISTENER_NAMES.join(', ')}`);
});

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * @typedef {object} ServerSettings
 * @property {string} MODE which listeners each worker opens: both (default: http and grpc), all,
 *   or a comma-separated list of listener names (server/listeners.js)
 * @property {number} HTTP_PORT TCP port of the HTTP/1.1 listener (fastify)
 * @property {number} GRPC_PORT TCP port of the gRPC (HTTP/2 cleartext) listener
 * @property {number} JSON_H2_PORT, PROTOBUF_H1_PORT, BASELINE_HTTP_PORT, BASELINE_GRPC_PORT
 *   ports of the listeners that take the comparison apart (server/listeners.js)
 * @property {string} HOST bind address of every listener
 * @property {number} WORKERS cluster workers to fork
 * @property {string} LOG_LEVEL pino level; 'debug' or 'trace' also log every request
 * @property {number} SHUTDOWN_TIMEOUT_MS after SIGTERM or SIGINT, how long (ms) a worker lets
 *   in-flight requests finish before it closes the connections still open; default 10000
 * @property {number} MAX_CONNECTIONS open HTTP connections one worker keeps; a connection past
 *   it is closed at once, before any byte is read; default 4096 (the gRPC listener has no such cap)
 * @property {number} MAX_BODY_BYTES largest HTTP request body (413 past it) and largest gRPC
 *   request message (RESOURCE_EXHAUSTED past it), in bytes; default 65536
 * @property {number} HEADERS_TIMEOUT_MS how long (ms) an HTTP client may take to send a request's
 *   head before it gets 408 and the connection is closed (Slowloris guard); default 10000
 * @property {'protobufjs'|'proto-loader'} GRPC_CODEC how the gRPC listener encodes: protobufjs messages
 *   built once and encoded per call (default), or @grpc/proto-loader's codec, which converts a plain
 *   object (fromObject) before each encode; for measuring what that choice costs
 * @property {boolean} GRPC_CHANNELZ grpc-js's channelz statistics (its option grpc.enable_channelz, on in grpc-js);
 *   default false here: they cost the gRPC server about 15% of its capacity (README, Performance targets)
 * @property {number} REQUEST_TIMEOUT_MS how long (ms) an HTTP client may take to send a whole
 *   request, head and body; at least HEADERS_TIMEOUT_MS; default 30000
 * @property {number|undefined} ADMIN_PORT TCP port of the primary's admin endpoint (GET /metrics,
 *   Prometheus text: every worker's requests served, CPU time, memory, event-loop delay and GC
 *   pauses; server/accounting.js); unset (the default): no endpoint, and no accounting runs
 * @property {string} ADMIN_HOST bind address of the admin endpoint; default 127.0.0.1 (loopback only)
 * @property {number} H2_MAX_CONCURRENT_STREAMS streams one HTTP/2 connection may have open at once, announced in
 *   SETTINGS_MAX_CONCURRENT_STREAMS and enforced by nghttp2 (RST_STREAM REFUSED_STREAM past it), on every HTTP/2
 *   listener (grpc, json-h2, baseline-grpc); default 128, nginx's http2_max_concurrent_streams
 * @property {number} H2_MAX_HEADER_LIST_BYTES largest request header list (bytes, as RFC 9113 6.5.2 counts it: names,
 *   values and 32 per field), announced in SETTINGS_MAX_HEADER_LIST_SIZE; a larger one is reset with
 *   ENHANCE_YOUR_CALM by Node; default 16384, the size Node's HTTP/1.1 parser allows a request head
 *   (http.maxHeaderSize)
 * @property {number} H2_RESET_BURST streams that may end in RST_STREAM (the client's cancel, or the server's) on one
 *   HTTP/2 connection at once, refilled at H2_RESETS_PER_S; past it the server sends GOAWAY ENHANCE_YOUR_CALM and closes
 *   the connection (HTTP/2 rapid reset, CVE-2023-44487); default 200
 * @property {number} H2_RESETS_PER_S sustained resets per second tolerated per connection; default 30, below
 *   nghttp2's own limit (33/s, burst 1000), which sends GOAWAY but leaves the socket open in Node 20
 * @property {number} H2_IDLE_PING_MS how often (ms) the server PINGs each HTTP/2 connection that opened no stream
 *   since the last time; no PING ACK within H2_CLOSE_GRACE_MS and the connection is destroyed. This is what frees
 *   a connection nghttp2 itself sent GOAWAY on (a protocol error, a flood): Node 20 stops reading it but never
 *   closes it or tells JavaScript. Default 5000
 * @property {number} H2_CLOSE_GRACE_MS how long (ms) an idle PING may go unanswered before the connection is
 *   destroyed, and the longest wait for the PING that separates the two GOAWAYs of a graceful shutdown; default 1000
 */

/**
 * Reads and validates the server's settings.
 * @param {Record<string, string|undefined>} [env] environment, default `process.env`
 * @returns {ServerSettings}
 * @throws {SettingsError} naming every invalid variable and why
 */
export function readSettings(env = process.env) {
  const settings = readEnv(env, {
    MODE: mode({ default: 'both' }),
    ...Object.fromEntries(Object.values(LISTENERS).map((l) => [l.portSetting, port({ default: l.defaultPort })])),
    HOST: host({ default: '0.0.0.0' }),
    WORKERS: positiveInt({ default: os.availableParallelism() }),
    LOG_LEVEL: str({ choices: LOG_LEVELS, default: 'info' }),
    SHUTDOWN_TIMEOUT_MS: durationMs({ default: 10000 }),
    MAX_CONNECTIONS: wholeNumber(1, 1_000_000)({ default: 4096 }),
    // grpc-js takes a signed 32-bit length.
    MAX_BODY_BYTES: wholeNumber(1, 2 ** 31 - 1)({ default: 65536 }),
    HEADERS_TIMEOUT_MS: durationMs({ default: 10000 }),
    REQUEST_TIMEOUT_MS: durationMs({ default: 30000 }),
    GRPC_CODEC: str({ choices: ['protobufjs', 'proto-loader'], default: 'protobufjs' }),
    GRPC_CHANNELZ: bool({ default: false }),
    // The admin endpoint (accounting, issue 6): off unless a port is given; loopback unless told otherwise.
    ADMIN_PORT: port({ default: undefined }),
    ADMIN_HOST: host({ default: '127.0.0.1' }),
    // Bounds of every HTTP/2 listener (server/h2-guard.js); sources of the defaults in ServerSettings above.
    H2_MAX_CONCURRENT_STREAMS: wholeNumber(1, 2 ** 31 - 1)({ default: 128 }),
    H2_MAX_HEADER_LIST_BYTES: wholeNumber(1024, 2 ** 31 - 1)({ default: 16384 }),
    H2_RESET_BURST: wholeNumber(1, 1_000_000)({ default: 200 }),
    H2_RESETS_PER_S: wholeNumber(1, 1_000_000)({ default: 30 }),
    H2_IDLE_PING_MS: durationMs({ default: 5000 }),
    H2_CLOSE_GRACE_MS: durationMs({ default: 1000 }),
  }, SettingsError);
  // Node's http.Server refuses a head deadline past the whole request's (ERR_OUT_OF_RANGE):
  // say so here, in one line, before any worker starts.
  if (settings.HEADERS_TIMEOUT_MS > settings.REQUEST_TIMEOUT_MS) {
    throw new SettingsError(`invalid setting HEADERS_TIMEOUT_MS="${settings.HEADERS_TIMEOUT_MS}": `
      + `must not exceed REQUEST_TIMEOUT_MS (${settings.REQUEST_TIMEOUT_MS})`);
  }
  return settings;
}
