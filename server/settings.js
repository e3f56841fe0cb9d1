// Server settings, read once from the environment and validated before anything starts.
import os from 'node:os';
import { bool, host, makeValidator, port, str } from 'envalid';
import { positiveInt, readEnv, wholeNumber, withDefaultText } from './env.js';
import { SettingsError } from './errors.js';
import { LISTENER_NAMES, LISTENERS } from './listeners.js';
import { COMPRESSIONS, GZIP_LEVEL } from './compression.js';
import { tlsMaterial } from './tls.js';

// setTimeout fires at once for delays past 2^31-1 ms, so no duration may exceed it.
const durationMs = wholeNumber(1, 2 ** 31 - 1);

/** MAX_BODY_BYTES of the demo: its requests are a few bytes, so a small bound is the hardened one (bytes). */
export const DEMO_MAX_BODY_BYTES = 65536;
/**
 * MAX_BODY_BYTES of an own service: gRPC's default maximum receive message size (grpc-js and grpc-go
 * `grpc.max_receive_message_length`, 4 × 1024 × 1024 bytes), which an OTLP collector's export batches live within.
 */
export const OWN_MAX_BODY_BYTES = 4 * 1024 * 1024;

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
 * The server's settings, by variable name. What each one means, its unit, default and the
 * source of that default are in serverSettingSpecs (each spec's `desc`); docs/server.md's
 * table is generated from them (npm run docs).
 * @typedef {object} ServerSettings
 * @property {string} MODE
 * @property {number} HTTP_PORT
 * @property {number} GRPC_PORT
 * @property {number} JSON_H2_PORT
 * @property {number} PROTOBUF_H1_PORT
 * @property {number} BASELINE_HTTP_PORT
 * @property {number} BASELINE_GRPC_PORT
 * @property {string} HOST
 * @property {number} WORKERS
 * @property {string} LOG_LEVEL
 * @property {number} SHUTDOWN_TIMEOUT_MS ms
 * @property {number} MAX_CONNECTIONS
 * @property {number} WORKER_INITIAL_HEAP_MB
 * @property {boolean} WORKER_PRETENURING
 * @property {number} WORKER_MEMORY_MB MiB
 * @property {number} MAX_BODY_BYTES bytes
 * @property {number} HEADERS_TIMEOUT_MS ms
 * @property {number} REQUEST_TIMEOUT_MS ms
 * @property {'protobufjs'|'proto-loader'} GRPC_CODEC
 * @property {boolean} GRPC_CHANNELZ
 * @property {'off'|'gzip'} COMPRESSION
 * @property {number|undefined} ADMIN_PORT
 * @property {string} ADMIN_HOST
 * @property {number} H2_MAX_CONCURRENT_STREAMS
 * @property {number} H2_MAX_HEADER_LIST_BYTES bytes
 * @property {number} H2_RESET_BURST
 * @property {number} H2_RESETS_PER_S per second
 * @property {number} H2_IDLE_PING_MS ms
 * @property {number} H2_CLOSE_GRACE_MS ms
 * @property {number} STREAM_INTERVAL ms
 * @property {number} H2_IDLE_TIMEOUT_MS ms
 * @property {number|undefined} GRPC_MAX_CONNECTION_AGE_MS ms
 * @property {number} H2_MIN_PING_INTERVAL_MS ms
 * @property {number} H2_MAX_PING_STRIKES
 * @property {string|undefined} TLS_CERT path
 * @property {string|undefined} TLS_KEY path
 * @property {'TLSv1.2'|'TLSv1.3'} TLS_MIN_VERSION
 * @property {boolean} TLS_SESSION_TICKETS
 * @property {string|undefined} PROTO path
 * @property {string|undefined} PROTO_PATH directories, `:`-separated
 * @property {string|undefined} RPC `package.Service/Method`
 * @property {string|undefined} RESPONSE path
 */

/**
 * The server's settings as envalid specs, by variable name, in the order docs/server.md lists them.
 * Each spec has a `desc` (what it does, its unit, where its default comes from), maybe an `example`,
 * and, where the default depends on the machine or its absence means something, a `defaultText` the docs
 * show instead of it (withDefaultText).
 * Reading them needs no environment: scripts/gen-docs.js renders docs/server.md's table from them.
 * @param {number} [cores] cores of the machine, the default of WORKERS (default `os.availableParallelism()`)
 * @returns {Record<string, object>} envalid validators by variable name
 */
export function serverSettingSpecs(cores = os.availableParallelism()) {
  return {
    MODE: mode({
      default: 'both',
      desc: 'which listeners each worker opens: `both` (`http` and `grpc`), `all`, or a comma-separated list of '
        + `listener names (${LISTENER_NAMES.map((n) => `\`${n}\``).join(', ')}; server/listeners.js)`,
      example: 'http,json-h2',
    }),
    ...Object.fromEntries(Object.entries(LISTENERS).map(([name, l]) => [l.portSetting, port({
      default: l.defaultPort,
      desc: `TCP port of the \`${name}\` listener: ${l.label}`,
    })])),
    HOST: host({ default: '0.0.0.0', desc: 'bind address of every listener', example: '127.0.0.1' }),
    WORKERS: withDefaultText(positiveInt({ default: cores, desc: 'cluster workers to fork' }),
      'one per core (`os.availableParallelism()`)'),
    LOG_LEVEL: str({ choices: LOG_LEVELS, default: 'info', desc: 'pino level; `debug` or `trace` also log every request' }),
    // V8 flag --initial-heap-size; docs/findings/2026-11-25-profiling.md, "Why ours ÷ peer swung", has the runs that chose it.
    WORKER_INITIAL_HEAP_MB: wholeNumber(0, 65536)({
      default: 0,
      desc: 'initial V8 heap size of each worker, in MiB (V8\'s --initial-heap-size); 0 leaves V8\'s default. With the default, '
        + 'a gRPC worker under load settles in one of two garbage-collection regimes, 20–30% apart in RPS; 512 kept 12 of 12 runs '
        + 'of test/manual/gc-regimes.js in the fast one (docs/profiling.md)',
    }),
    // V8 flag --no-allocation-site-pretenuring; docs/findings/2026-11-25-profiling.md, "The slow regime is V8's pretenuring", has the runs.
    WORKER_PRETENURING: bool({
      default: true,
      desc: 'V8\'s allocation-site pretenuring in each worker; `false` passes --no-allocation-site-pretenuring. With it a gRPC '
        + 'worker may start allocating per-call objects in the old generation during its first seconds of load, which then keep '
        + 'each call\'s young objects alive through every scavenge: 11–20 ms of GC per 1000 calls against 1.5, and 10–30% of its RPS '
        + '(docs/profiling.md); `npm run targets` and the decomposition set it `false` for every listener',
    }),
    WORKER_MEMORY_MB: wholeNumber(0, 16_777_216)({
      default: 0,
      desc: 'memory budget of each worker, in MiB of RSS, held by back-pressure (server/memory-budget.js): past 85% a large answer '
        + '(64 KiB or more), or a new stream whose largest message is one, is refused (gRPC RESOURCE_EXHAUSTED, HTTP 503, '
        + 'WebSocket close 1013), and a worker past '
        + 'the budget for 2 s is replaced as a reload replaces it. 0: 80% of the memory the container (cgroup) or machine gives, '
        + 'divided among WORKERS; the primary logs the value in use',
    }),
    SHUTDOWN_TIMEOUT_MS: durationMs({
      default: 10000,
      desc: 'after SIGTERM or SIGINT, how long (ms) a worker lets in-flight requests finish before it closes the connections still open',
    }),
    MAX_CONNECTIONS: wholeNumber(1, 1_000_000)({
      default: 4096,
      desc: 'open connections one worker keeps on each listener, HTTP/1.1 and HTTP/2 (gRPC) alike (1 to 1,000,000); '
        + 'a connection past it is closed at once, before any byte is read',
    }),
    // grpc-js takes a signed 32-bit length. Unset, it follows what is served (readSettings).
    MAX_BODY_BYTES: withDefaultText(wholeNumber(1, 2 ** 31 - 1)({
      default: undefined,
      desc: 'largest HTTP request body (413 past it) and largest gRPC request message (RESOURCE_EXHAUSTED past it), in bytes, '
        + 'on every listener',
      example: '1048576',
    }), `unset: ${DEMO_MAX_BODY_BYTES} (64 KiB) for the demo; ${OWN_MAX_BODY_BYTES} (4 MiB, gRPC's default maximum receive message `
      + 'size) with RPC, an own service'),
    HEADERS_TIMEOUT_MS: durationMs({
      default: 10000,
      desc: 'how long (ms) an HTTP client may take to send a request\'s head before it gets 408 and the connection is closed '
        + '(Slowloris guard); at most REQUEST_TIMEOUT_MS',
    }),
    REQUEST_TIMEOUT_MS: durationMs({
      default: 30000,
      desc: 'how long (ms) an HTTP client may take to send a whole request, head and body (408 past it); at least HEADERS_TIMEOUT_MS',
    }),
    GRPC_CODEC: str({
      choices: ['protobufjs', 'proto-loader'],
      default: 'protobufjs',
      desc: 'how the gRPC listener encodes: `protobufjs`, messages built once and encoded per call; `proto-loader`, '
        + '@grpc/proto-loader\'s codec, which converts a plain object (fromObject) before each encode; for measuring what that choice costs',
    }),
    GRPC_CHANNELZ: bool({
      default: false,
      desc: 'grpc-js\'s channelz statistics (its option `grpc.enable_channelz`, on by default in grpc-js); off here because '
        + 'they cost the gRPC server about 15% of its capacity (docs/decomposition.md, Performance targets)',
    }),
    COMPRESSION: str({
      choices: [...COMPRESSIONS],
      default: 'off',
      desc: `response compression of the fastify listeners and the grpc listener: \`gzip\` compresses every response, at zlib level ${GZIP_LEVEL}, `
        + 'for a client that asks (HTTP: `Accept-Encoding: gzip`, by @fastify/compress; gRPC: `gzip` in `grpc-accept-encoding`, '
        + 'by server/grpc-gzip.js, as grpc-js compresses no response itself), and sends the raw bytes to any other; `off` never compresses. '
        + 'The baselines never do (docs/compression.md)',
      example: 'gzip',
    }),
    GRPC_MAX_CONNECTION_AGE_MS: withDefaultText(durationMs({
      default: undefined,
      desc: 'a gRPC connection older than this (ms) gets GOAWAY, its calls in flight get SHUTDOWN_TIMEOUT_MS to finish, and the '
        + 'client reconnects (grpc-js `grpc.max_connection_age_ms`, `grpc.max_connection_age_grace_ms`). node:cluster hands out '
        + 'connections, not requests: a client with one long-lived connection loads one worker; reconnecting spreads it',
      example: '1000',
    }), 'unset: a connection lives as long as the client keeps it'),
    // The admin endpoint (accounting, issue 6): off unless a port is given; loopback unless told otherwise.
    ADMIN_PORT: withDefaultText(port({
      default: undefined,
      desc: 'TCP port of the primary\'s admin endpoint, `GET /metrics`: Prometheus text (prom-client) of every worker\'s '
        + 'requests served and refused (`server_requests_rejected_total{listener,reason}`: invalid_argument, no_answer, '
        + 'over_budget; server/served.js), CPU time, memory, event-loop delay and GC pauses, labelled by pid (server/accounting.js); '
        + '`POST /profile/start` and `POST /profile/stop`: every worker\'s V8 CPU profile in between (server/profiling.js)',
      example: '9100',
    }), 'unset: no endpoint, and no accounting runs'),
    ADMIN_HOST: host({ default: '127.0.0.1', desc: 'bind address of the admin endpoint; the default keeps it on loopback' }),
    // Bounds of every HTTP/2 listener (server/h2-guard.js); each desc gives the source of its default.
    H2_MAX_CONCURRENT_STREAMS: wholeNumber(1, 2 ** 31 - 1)({
      default: 128,
      desc: 'streams one HTTP/2 connection may have open at once, announced in SETTINGS_MAX_CONCURRENT_STREAMS and enforced '
        + 'by nghttp2 (RST_STREAM REFUSED_STREAM past it), on every HTTP/2 listener (grpc, json-h2, baseline-grpc); '
        + 'the default is nginx\'s http2_max_concurrent_streams',
    }),
    H2_MAX_HEADER_LIST_BYTES: wholeNumber(1024, 2 ** 31 - 1)({
      default: 16384,
      desc: 'largest request header list (bytes, at least 1024, as RFC 9113 6.5.2 counts it: names, values and 32 per field), '
        + 'announced in SETTINGS_MAX_HEADER_LIST_SIZE; a larger one is reset with ENHANCE_YOUR_CALM by Node; the default is '
        + 'the size Node\'s HTTP/1.1 parser allows a request head (http.maxHeaderSize)',
    }),
    H2_RESET_BURST: wholeNumber(1, 1_000_000)({
      default: 200,
      desc: 'streams that may end in RST_STREAM (the client\'s cancel, or the server\'s) on one HTTP/2 connection at once, '
        + 'refilled at H2_RESETS_PER_S; past it the server sends GOAWAY ENHANCE_YOUR_CALM and closes the connection '
        + '(HTTP/2 rapid reset, CVE-2023-44487)',
    }),
    H2_RESETS_PER_S: wholeNumber(1, 1_000_000)({
      default: 30,
      desc: 'sustained resets per second tolerated per HTTP/2 connection; the default is below nghttp2\'s own limit '
        + '(33/s, burst 1000), which sends GOAWAY but leaves the socket open in Node 20',
    }),
    H2_IDLE_PING_MS: durationMs({
      default: 5000,
      desc: 'how often (ms) the server PINGs each HTTP/2 connection that opened no stream since the last time; no PING ACK '
        + 'within H2_CLOSE_GRACE_MS and the connection is destroyed. This frees a connection nghttp2 itself sent GOAWAY on '
        + '(a protocol error, a flood): Node 20 stops reading it but never closes it or tells JavaScript',
    }),
    H2_IDLE_TIMEOUT_MS: durationMs({
      default: 72000,
      desc: 'an HTTP/2 connection with no stream open for this long (ms) is closed gracefully (GOAWAY NO_ERROR), as '
        + 'grpc.max_connection_idle_ms does; checked every H2_IDLE_PING_MS. Default 72000, the HTTP listener\'s keep-alive '
        + 'timeout (fastify\'s), so that both modes keep idle connections alike',
    }),
    H2_MIN_PING_INTERVAL_MS: durationMs({
      default: 300000,
      desc: 'keepalive enforcement: a client PING that comes sooner than this (ms) after the previous one, with no stream '
        + 'opened in between and none open, is a strike; default 300000, gRPC core\'s '
        + 'GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS (doc/keepalive.md)',
    }),
    H2_MAX_PING_STRIKES: wholeNumber(0, 1000)({
      default: 2,
      desc: 'strikes tolerated; one more and the connection gets GOAWAY ENHANCE_YOUR_CALM with debug data `too_many_pings` '
        + '(which gRPC clients read as: ping less often) and is closed; default 2, gRPC core\'s GRPC_ARG_HTTP2_MAX_PING_STRIKES',
    }),
    TLS_CERT: withDefaultText(str({
      default: undefined,
      desc: 'PEM certificate (chain, the leaf first) of every listener compared; with TLS_KEY, they all serve TLS with ALPN '
        + '(`http/1.1` on the HTTP/1.1 listeners, `h2` on the HTTP/2 ones; server/listeners.js `alpn`). Checked at start: '
        + 'readable, the key\'s, not expired. The bare baselines serve it too (the client\'s ceiling under TLS); the peers stay '
        + 'cleartext: a MODE that opens one with TLS is refused',
      example: '/run/secrets/server.crt',
    }), 'unset: cleartext (HTTP/1.1, h2c)'),
    TLS_KEY: withDefaultText(str({
      default: undefined,
      desc: 'PEM private key of TLS_CERT\'s certificate; set with TLS_CERT or not at all',
      example: '/run/secrets/server.key',
    }), 'unset: cleartext'),
    TLS_MIN_VERSION: str({
      choices: ['TLSv1.3', 'TLSv1.2'],
      default: 'TLSv1.3',
      desc: 'lowest TLS version the listeners accept when TLS_CERT is set',
    }),
    TLS_SESSION_TICKETS: bool({
      default: true,
      desc: 'with TLS_CERT: the listeners issue session tickets (Node\'s default), with which a client that keeps them resumes a '
        + 'session in a shorter handshake, without the certificate and its signature; `false` sends no stateless ticket (OpenSSL\'s '
        + 'SSL_OP_NO_TICKET; in TLS 1.3 OpenSSL then sends a stateful one, which names a server-side session cache that Node does '
        + 'not keep), so no session resumes and every handshake is a full one (docs/tls.md)',
      example: 'false',
    }),
    // The user's own service (issue 37, docs/own-message.md): loaded and checked once in the primary before any worker starts.
    PROTO: withDefaultText(str({
      default: undefined,
      desc: 'the user\'s schema: a .proto file (its imports searched in PROTO_PATH), or a FileDescriptorSet (`.binpb`, `.pb`: '
        + '`buf build -o`, `protoc --include_imports --descriptor_set_out`); with RPC, the listeners serve that RPC beside the demo\'s',
      example: 'proto/otlp/opentelemetry/proto/collector/trace/v1/trace_service.proto',
    }), 'unset: the demo\'s scenarios only'),
    PROTO_PATH: withDefaultText(str({
      default: undefined,
      desc: 'import directories of PROTO, `:`-separated, searched in order as protoc\'s `-I`; `google/protobuf/*.proto` are always there',
      example: 'proto/otlp',
    }), 'unset: the directory of PROTO'),
    RPC: withDefaultText(str({
      default: undefined,
      desc: 'the RPC of PROTO to serve, `package.Service/Method`, unary or server streaming: gRPC at that path, and JSON over '
        + 'HTTP as `POST /package.Service/Method` in the proto3 JSON mapping (the shape of Connect\'s unary JSON call; a server '
        + 'stream as SSE or NDJSON, docs/streaming.md); every listener of MODE serves it (docs/own-message.md)',
      example: 'opentelemetry.proto.collector.trace.v1.TraceService/Export',
    }), 'unset'),
    RESPONSE: withDefaultText(str({
      default: undefined,
      desc: 'the answers to RPC, served in turn: a file in the proto3 JSON mapping (one object, a JSON array of objects, '
        + 'or NDJSON) or binary (`.binpb`: length-delimited messages); for a server stream, streams: a JSON array of arrays '
        + 'of messages, or NDJSON with one array a line',
      example: 'responses.ndjson',
    }), 'unset: the empty response message'),
    STREAM_INTERVAL: wholeNumber(0, 2 ** 31 - 1)({
      default: 0,
      desc: 'milliseconds between two messages of a server stream (a paced stream, as an LLM\'s tokens are), as ghz\'s '
        + '`--stream-interval` paces a client\'s; 0: as fast as the connection takes them (docs/streaming.md)',
      example: '20',
    }),
    H2_CLOSE_GRACE_MS: durationMs({
      default: 1000,
      desc: 'how long (ms) an idle PING may go unanswered before the connection is destroyed, and the longest wait for the '
        + 'PING that separates the two GOAWAYs of a graceful shutdown',
    }),
  };
}

/**
 * Reads and validates the server's settings.
 * @param {Record<string, string|undefined>} [env] environment, default `process.env`
 * @returns {ServerSettings}
 * @throws {SettingsError} naming every invalid variable and why
 */
export function readSettings(env = process.env) {
  const settings = readEnv(env, serverSettingSpecs(), SettingsError);
  // Node's http.Server refuses a head deadline past the whole request's (ERR_OUT_OF_RANGE):
  // say so here, in one line, before any worker starts.
  if (settings.HEADERS_TIMEOUT_MS > settings.REQUEST_TIMEOUT_MS) {
    throw new SettingsError(`invalid setting HEADERS_TIMEOUT_MS="${settings.HEADERS_TIMEOUT_MS}": `
      + `must not exceed REQUEST_TIMEOUT_MS (${settings.REQUEST_TIMEOUT_MS})`);
  }
  if (Boolean(settings.RPC) !== Boolean(settings.PROTO)) {
    throw new SettingsError(settings.RPC ? `invalid setting RPC="${settings.RPC}": needs PROTO, the schema that defines it`
      : `invalid setting PROTO="${settings.PROTO}": needs RPC, the method of it to serve (package.Service/Method)`);
  }
  if (!settings.RPC && (settings.RESPONSE || settings.PROTO_PATH)) {
    throw new SettingsError(`invalid setting ${settings.RESPONSE ? 'RESPONSE' : 'PROTO_PATH'}: needs PROTO and RPC`);
  }
  // Read and checked here, once per process, so that a bad certificate stops the server before any worker starts.
  if (tlsMaterial(settings)) {
    const cleartextOnly = listenersOf(settings.MODE).filter((n) => !LISTENERS[n].alpn);
    if (cleartextOnly.length) {
      throw new SettingsError(`invalid setting MODE="${settings.MODE}": ${cleartextOnly.join(', ')} serve${cleartextOnly.length > 1 ? '' : 's'} `
        + 'no TLS (the peers stay as their library\'s users run them); leave TLS_CERT/TLS_KEY unset or drop them from MODE');
    }
  }
  // Unset, the body limit follows what is served: envalid's settings are read-only, so the one derived value is added here.
  return Object.freeze({ ...settings, MAX_BODY_BYTES: settings.MAX_BODY_BYTES ?? (settings.RPC ? OWN_MAX_BODY_BYTES : DEMO_MAX_BODY_BYTES) });
}
