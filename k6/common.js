// What VU 0 of the HTTP and gRPC scripts reads and checks (k6/http.js, k6/grpc.js): settings from -e, options, load
// model, response sampling. The VUs that iterate never load it: they read the plan VU 0 made.
import { SharedArray } from 'k6/data';
import * as hosts from '../config.js';
import { SCENARIOS } from '../proto/payload.js';
import { COMPRESSIONS } from '../server/compression.js';
import { OWN_FRAMES, OWN_REQUESTS } from './own.js';
import { CONNECTION_POLICIES, DEFAULT_REQUEST_TIMEOUT, K6_DURATION, STREAM_FRAMINGS, SYSTEM_TAGS } from './settings.js';

/**
 * A whole number of at least 1 from -e NAME, or fallback when unset.
 * @param {string} name
 * @param {number|null} fallback
 * @returns {number|null}
 * @throws {Error} one line naming the setting, when it is not one
 */
export function positiveIntEnv(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) throw new Error(`${name}=${JSON.stringify(raw)}: must be a whole number of at least 1`);
  return Number(raw);
}

function durationEnv(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  if (!K6_DURATION.test(raw)) throw new Error(`${name}=${JSON.stringify(raw)}: must be a k6 duration such as 5s or 500ms`);
  return raw;
}

function choiceEnv(name, choices, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  if (!choices.includes(raw)) throw new Error(`${name}=${JSON.stringify(raw)}: must be one of ${choices.join(', ')}`);
  return raw;
}

/**
 * One response in SAMPLE_EVERY (default 1000) per VU (its first, then every SAMPLE_EVERY-th) is decoded and checked; the others are only counted.
 * A decoded, checked response costs k6 several plain requests, and k6 sits on the measured path: one in 100
 * cost the HTTP script about 6% of its RPS in an interleaved A/B (docs/profiling.md). At 1000, a default run
 * still checks hundreds of responses per mode.
 */
export const SAMPLE_EVERY = positiveIntEnv('SAMPLE_EVERY', 1000);

/**
 * How long one request may take (-e REQUEST_TIMEOUT, a k6 duration), the same for both modes: HTTP's
 * `timeout` param, gRPC's `timeout` in invoke's params. A request past it ends as failed
 * (http_req_failed; grpc_req_failed with status DeadlineExceeded) and is counted in requests_timed_out.
 * null when not given: no params then, and k6's own default of 60 s applies to both
 * (DEFAULT_REQUEST_TIMEOUT), because k6 converts a params object on every HTTP request and a
 * per-request timeout alone cost the HTTP script 7-10% of its RPS (docs/profiling.md).
 */
export const REQUEST_TIMEOUT = durationEnv('REQUEST_TIMEOUT', null);

/**
 * The mode the summary names (-e SUMMARY_MODE, a name of bench/modes.js MODES), or the script's own: the jobs set it
 * for every run, so that a mode that runs another mode's scripts (connect-grpc runs the gRPC ones) is named as itself.
 * @param {string} own the script's own mode, e.g. 'grpc'
 * @returns {string}
 */
export function summaryModeOr(own) {
  const raw = __ENV.SUMMARY_MODE;
  if (raw === undefined || raw === '') return own;
  if (!/^[a-z][a-z0-9-]*$/.test(raw)) throw new Error(`SUMMARY_MODE=${JSON.stringify(raw)}: must be a mode's name, e.g. grpc`);
  return raw;
}

/** A FileDescriptorSet's names (k6's client.loadProtoset); any other PROTO is a .proto (client.load). */
export const DESCRIPTOR_SET = /\.(binpb|pb|protoset|desc)$/;

/**
 * The user's own RPC (-e RPC=package.Service/Method; docs/own-message.md), or null for the demo's scenarios:
 * - proto: -e PROTO, the .proto file as a path relative to one of the import paths, or a FileDescriptorSet (.binpb, .pb);
 * - importPaths: -e PROTO_PATH, `:`-separated (k6's client.load resolves imports against them);
 * - stream: -e STREAM=server, the RPC is a server stream: each call reads its stream to the end, timing the first message;
 *   STREAM=client, a client stream: each call sends one request stream (the samples are streams), then reads the answer;
 *   STREAM=bidi, a relay: each call sends one request stream and reads an answer to each of its messages
 *   (k6/settings.js STREAM_METRICS);
 * - framing: -e STREAM_FRAMING, how the HTTP scripts ask for a server stream: `sse` (default) or `ndjson`;
 * - frames: -e FRAMES, a relay's request streams in protobuf (base64), which the HTTP script sends as binary WebSocket
 *   frames; null: text frames, the messages of REQUESTS in the proto3 JSON mapping;
 * - requests: -e REQUESTS, a JSON array of request messages in the proto3 JSON mapping, sent in turn (the job writes it
 *   from REQUEST, binary samples converted). k6's gRPC client marshals an object with Go's protojson, so the mapping's
 *   forms (64-bit integers as strings, bytes as base64) are what it expects.
 * With -e OWN_DIR (an absolute folder; Compose's /own, docs/docker.md), PROTO, PROTO_PATH and REQUESTS are relative to
 * it, as the server reads them from its working directory: PROTO_PATH unset is PROTO's directory.
 */
export const OWN = __ENV.RPC ? Object.freeze({
  rpc: __ENV.RPC,
  stream: streamOf(__ENV.STREAM),
  framing: framingOf(__ENV.STREAM_FRAMING),
  ...ownSchema(__ENV.OWN_DIR || '', __ENV.PROTO || '', (__ENV.PROTO_PATH || '').split(':').filter(Boolean)),
  requests: ownRequests(__ENV.REQUESTS && ownPath(__ENV.OWN_DIR || '', __ENV.REQUESTS)),
  frames: __ENV.FRAMES ? ownFrames(ownPath(__ENV.OWN_DIR || '', __ENV.FRAMES)) : null,
}) : null;

/**
 * The RPC's kind, as the job names it (-e STREAM, k6/settings.js STREAM_KINDS): `server`, `client` or `bidi` for a
 * stream, else a unary RPC.
 * @param {string|undefined} raw
 * @returns {'server'|'client'|'bidi'|null}
 * @throws {Error} one line, for another value
 */
function streamOf(raw) {
  if (raw === undefined || raw === '') return null;
  if (raw !== 'server' && raw !== 'client' && raw !== 'bidi') {
    throw new Error(`STREAM=${JSON.stringify(raw)}: must be server, client or bidi (a server-, client- or bidirectional streaming RPC), or unset (unary)`);
  }
  return raw;
}

/**
 * How an HTTP script asks for a server stream (-e STREAM_FRAMING, k6/settings.js STREAM_FRAMINGS): `sse` when unset.
 * @param {string|undefined} raw
 * @returns {'sse'|'ndjson'}
 * @throws {Error} one line, for another value
 */
function framingOf(raw) {
  if (raw === undefined || raw === '') return 'sse';
  if (!Object.hasOwn(STREAM_FRAMINGS, raw)) {
    throw new Error(`STREAM_FRAMING=${JSON.stringify(raw)}: must be one of ${Object.keys(STREAM_FRAMINGS).join(', ')} (how HTTP reads a server stream)`);
  }
  return /** @type {'sse'|'ndjson'} */ (raw);
}

/**
 * How k6's gRPC client loads PROTO: as given without OWN_DIR; with it, absolute paths in OWN_DIR, the .proto named
 * relative to the import directory that holds it (client.load joins the two), as bench/own-service.js k6Schema does.
 * @param {string} dir OWN_DIR, or ''
 * @param {string} proto
 * @param {string[]} dirs PROTO_PATH's directories
 * @returns {{proto: string, importPaths: string[]}}
 */
function ownSchema(dir, proto, dirs) {
  if (!dir || DESCRIPTOR_SET.test(proto)) return { proto: ownPath(dir, proto), importPaths: dirs.map((d) => ownPath(dir, d)) };
  const file = ownPath(dir, proto);
  const parent = file.slice(0, file.lastIndexOf('/'));
  const paths = dirs.length ? dirs.map((d) => ownPath(dir, d)) : [parent];
  const home = paths.find((d) => file.startsWith(`${d}/`));
  // A .proto outside every import directory: its own directory is searched first, as protoc does for its argument.
  return home ? { proto: file.slice(home.length + 1), importPaths: paths } : { proto: file.slice(parent.length + 1), importPaths: [parent, ...paths] };
}

/**
 * A path of OWN_DIR's, normalized (k6 resolves a relative path against the script, not the working directory).
 * @param {string} dir OWN_DIR, or '' (the path as given)
 * @param {string} file
 * @returns {string}
 */
function ownPath(dir, file) {
  if (!dir || file.startsWith('/')) return file;
  if (!dir.startsWith('/')) throw new Error(`OWN_DIR=${dir}: must be an absolute path`);
  const parts = [];
  for (const part of `${dir}/${file}`.split('/')) {
    if (part === '..') parts.pop();
    else if (part && part !== '.') parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/**
 * The user's one request sample, which the plan carries to every VU; null: the demo's scenarios, or many samples, of
 * which each VU takes its share on its first iteration (k6/own.js ownShare).
 * @type {object|null}
 */
export const OWN_ONE_REQUEST = OWN && OWN.requests.length === 1 ? OWN.requests[0] : null;

// One copy of the samples for the whole k6 process (SharedArray), not one per VU: with a copy each, 10,000 OTLP samples
// (5.6 MB of JSON) at 32 VUs took k6 5.1–6.1 GB and 36–64 s to start (docs/own-message.md).
function ownRequests(file) {
  if (!file) throw new Error('RPC needs -e REQUESTS=<a JSON array of request messages>');
  return new SharedArray(OWN_REQUESTS, () => {
    const requests = JSON.parse(open(file));
    if (!Array.isArray(requests) || requests.length === 0) throw new Error(`REQUESTS=${file}: must be a JSON array of at least one request message`);
    return requests;
  });
}

/**
 * A relay's request streams in protobuf (-e FRAMES: a JSON array of streams, each an array of base64 messages, in the
 * order of REQUESTS; the job writes it for RELAY_FRAMES=binary): the HTTP script sends them as binary WebSocket frames.
 * @param {string} file
 * @returns {string[][]}
 * @throws {Error} one line, for a file that is not such an array
 */
function ownFrames(file) {
  return new SharedArray(OWN_FRAMES, () => {
    const frames = JSON.parse(open(file));
    if (!Array.isArray(frames) || frames.length === 0 || !frames.every((s) => Array.isArray(s) && s.length > 0 && s.every((f) => typeof f === 'string'))) {
      throw new Error(`FRAMES=${file}: must be a JSON array of request streams, each an array of base64 messages`);
    }
    return frames;
  });
}

/**
 * The payload scenario (-e SCENARIO=user|users-100|blob-32k|blob-1m; default user). With RPC, the name the job gives
 * the user's RPC, for the summary.
 */
export const SCENARIO = OWN ? (__ENV.SCENARIO || OWN.rpc) : choiceEnv('SCENARIO', Object.keys(SCENARIOS), 'user');

/**
 * Connection policy, the same for both modes (-e CONNECTIONS): `reuse` keeps one
 * connection per VU (HTTP keep-alive; one gRPC channel), `per-request` opens a
 * new one every iteration.
 */
export const CONNECTIONS = choiceEnv('CONNECTIONS', CONNECTION_POLICIES, 'reuse');

/**
 * Response compression asked of the server (-e COMPRESSION=off|gzip; default off). gzip: the HTTP script
 * sends `Accept-Encoding: gzip` (k6 sends none of its own and decompresses what comes); the gRPC script
 * sends nothing more, as k6's gRPC client lists gzip in `grpc-accept-encoding` on every call anyway
 * (docs/compression.md): whether gRPC responses come compressed is the server's COMPRESSION.
 */
export const COMPRESSION = choiceEnv('COMPRESSION', COMPRESSIONS, 'off');

/**
 * TLS (-e TLS_CA=<path of the run's CA certificate, PEM>; default unset: cleartext, HTTP/1.1 and h2c). Set, the HTTP
 * scripts ask https:// and the gRPC scripts connect over TLS, both verifying the server against that CA only:
 * - gRPC: k6's `client.connect(addr, {tls: {cacerts: [pem]}})`, the PEM read here (init context);
 * - HTTP: k6's HTTP client takes no CA option; Go reads the trust store from SSL_CERT_FILE on Linux, so k6 must run
 *   with SSL_CERT_FILE=<the same path> in its environment (bench/tls.js makes the CA). Without it the system store is
 *   used and the run's CA is unknown: setup() aborts with x509's "certificate signed by unknown authority", never skips.
 */
export const TLS_CA = __ENV.TLS_CA || '';
/** The CA's PEM text when TLS_CA is set, else null. */
export const TLS_CA_PEM = TLS_CA ? open(TLS_CA) : null;

// Open model when RATE is set: k6 starts RATE iterations a second whatever the
// latency (constant-arrival-rate), instead of VUs looping as fast as answers come.
const RATE = positiveIntEnv('RATE', null);

function loadModel() {
  if (RATE === null) return {};
  if (!__ENV.DURATION) throw new Error('RATE needs -e DURATION=<k6 duration> (and no --vus/--duration flags, which would replace the open model)');
  const vus = positiveIntEnv('VUS', 32);
  return {
    scenarios: {
      open: {
        executor: 'constant-arrival-rate',
        rate: RATE,
        timeUnit: '1s',
        duration: __ENV.DURATION,
        preAllocatedVUs: vus,
        maxVUs: positiveIntEnv('MAX_VUS', vus * 4),
      },
    },
  };
}

/**
 * A k6 duration in milliseconds.
 * @param {string} text e.g. `1m30s`, `500ms` (K6_DURATION)
 * @returns {number}
 */
function durationMs(text) {
  const unit = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  let ms = 0;
  for (const [, n, u] of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) ms += Number(n) * unit[u];
  return ms;
}

/**
 * @typedef {object} OpenStreams STREAMS=N (docs/streaming.md, "Open streams"): k6 holds N streams open at once, each VU
 *   its share, re-opening each as it ends, until the run's end cuts those still open (k6/open-streams.js)
 * @property {number} streams N, over all the VUs (-e STREAMS)
 * @property {number} vus the VUs they are spread over (-e VUS): VU i (1-based) holds ⌊N ÷ vus⌋, one more for i ≤ N mod vus
 * @property {number} durationMs how long the run holds them (-e DURATION, the run's k6 duration), ms
 * @property {number} intervalMs ms between two messages a relay's client sends (-e STREAM_INTERVAL; a server stream's are
 *   paced by the server's own STREAM_INTERVAL)
 */

/**
 * STREAMS=N as the scripts read it, or null when unset (one stream per iteration, the closed model's).
 * @type {OpenStreams|null}
 */
export const OPEN_STREAMS = openStreamsOf();

function openStreamsOf() {
  const streams = positiveIntEnv('STREAMS', null);
  if (streams === null) return null;
  if (!OWN?.stream || OWN.stream === 'client') throw new Error('STREAMS needs -e STREAM=server or bidi: a server stream or a relay held open');
  const vus = positiveIntEnv('VUS', null);
  if (vus === null || !__ENV.DURATION) throw new Error('STREAMS needs -e VUS and -e DURATION (the run\'s, as --vus and --duration)');
  return { streams, vus, durationMs: durationMs(durationEnv('DURATION', null)), intervalMs: positiveIntEnv('STREAM_INTERVAL', 1000) };
}

/** How this run loads the server, recorded in the summary so reports can tell runs apart. */
export const RUN_SHAPE = Object.freeze({
  scenario: SCENARIO,
  connections: CONNECTIONS,
  model: RATE === null ? 'closed' : 'open',
  rate: RATE,
  request_timeout: REQUEST_TIMEOUT ?? DEFAULT_REQUEST_TIMEOUT,
  compression: COMPRESSION,
  tls: TLS_CA !== '', // verified against TLS_CA: the run's bytes are TLS records
  ...(OPEN_STREAMS ? { streams: OPEN_STREAMS.streams } : {}),
});

/**
 * Options common to all four scripts. In the closed model (default) VUs and
 * duration come from the command line (--vus, --duration).
 */
export const baseOptions = {
  // count gives the number of requests for gRPC, which has no grpc_reqs counter.
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  // Bodies are read off the wire (data_received counts them) but not kept, except on sampled requests.
  discardResponseBodies: true,
  systemTags: [...SYSTEM_TAGS],
  // The servers set no cookies: no new, empty cookie jar for every iteration.
  noCookiesReset: true,
  setupTimeout: '15s',
  ...loadModel(),
};

/**
 * The host:port config.js gives a setting (its default, or -e NAME).
 * @param {string} setting e.g. 'LOCAL_HTTP_HOST'
 * @returns {string}
 * @throws {Error} when config.js has no such host
 */
export function hostOf(setting) {
  const host = hosts[setting];
  if (typeof host !== 'string' || !/_HOST$/.test(setting)) throw new Error(`${setting}: not a host of config.js`);
  return host;
}
