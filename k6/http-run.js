// An HTTP script's run as VU 0 decides it (k6/http.js): the settings read and checked, the options, setup() and the
// summary, and the plan that every iterating VU reads.
import http from 'k6/http';
import exec from 'k6/execution';
import { b64decode } from 'k6/encoding';
import { WebSocket } from 'k6/websockets';
import { MESSAGE_ANSWER } from '../proto/checks.js';
import { rpcPath, SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, COMPRESSION, CONNECTIONS, hostOf, OPEN_STREAMS, OWN, OWN_ONE_REQUEST, positiveIntEnv, REQUEST_TIMEOUT, RUN_SHAPE, SAMPLE_EVERY, SCENARIO, summaryModeOr, TLS_CA,
} from './common.js';
import { HTTP_TIMED_OUT, STREAM_FRAMINGS, STREAM_METRICS } from './settings.js';
import { connectEnvelopes, connectMessages } from './connect.js';
import { summaryHandler } from './summary.js';

/**
 * @typedef {object} HttpPlan what an iterating VU of an HTTP script needs, as plain data (k6's SharedArray keeps JSON)
 * @property {string} url
 * @property {boolean} post a POST, not a GET
 * @property {string|null} body the one POST body (the Connect protocol's request, or the user's one request sample);
 *   null: a GET, or, for a POST, the user's many samples, which each VU takes its share of on its first iteration
 *   (k6/own.js ownShare)
 * @property {number|null} vus -e VUS, for ownShare; null: the VUs this k6 process started
 * @property {import('../proto/checks.js').AnswerShape} answer what a sampled answer must be
 * @property {object|null} params of every unsampled request (null: none, not even an empty object)
 * @property {object} sampled of a sampled one (its body kept as text)
 * @property {number} every one response in this many is decoded and checked (SAMPLE_EVERY)
 * @property {'server'|'client'|'bidi'|null} stream a streaming RPC (-e STREAM): a server stream's POST asks for SSE or
 *   NDJSON (`framing`) and reads its messages; a client stream's POSTs its sample, a stream of messages, as NDJSON; a
 *   relay's opens a WebSocket at `url` (ws: or wss:), sends its sample's messages as text frames and reads an answer to each
 * @property {boolean} binary a relay's frames are binary, protobuf (-e FRAMES): else text, the proto3 JSON mapping
 * @property {'sse'|'ndjson'|'connect'} framing how a server stream is asked for and its messages counted: -e
 *   STREAM_FRAMING, or the Connect protocol's envelopes on connect-json (a client stream's too)
 * @property {import('./common.js').OpenStreams|null} open STREAMS=N: each VU holds its share of N streams at once
 *   (k6/open-streams.js); null: one request per iteration
 */

/** k6's error code of a request that reached its timeout (https://grafana.com/docs/k6/latest/javascript-api/error-codes/). */
const HTTP_TIMEOUT_CODE = 1050;

/** The Connect protocol's content type of a stream in JSON. */
const CONNECT_STREAM_TYPE = 'application/connect+json';

/**
 * The POST body of a request sample: its JSON, or a client stream's messages as NDJSON, a line each.
 * @param {object|object[]} sample a request message, or a client stream's (an array of them)
 * @param {'server'|'client'|'bidi'|null} stream
 * @returns {string}
 */
export const bodyOf = (sample, stream) => (stream === 'client'
  ? /** @type {object[]} */ (sample).map((m) => `${JSON.stringify(m)}\n`).join('') : JSON.stringify(sample));

/**
 * The run of an HTTP script, for VU 0. With CONNECTIONS=reuse (default) each VU keeps one keep-alive connection; with
 * per-request, k6's noConnectionReuse.
 * @param {{hostSetting: string, target: 'local'|'remote', mode?: string, protocol?: 'get'|'connect'}} run hostSetting:
 *   the server's host:port as config.js names it (LOCAL_HTTP_HOST, …); target: which script; mode: what its summary names
 *   (default 'http'; SUMMARY_MODE overrides it); protocol: 'get' (default) a GET of the scenario's path, 'connect' the
 *   Connect protocol's unary POST of its RPC with the request message in the proto3 JSON mapping
 * @returns {{plan: HttpPlan, options: object, setup: () => object, handleSummary: (data: object) => Record<string, string>}}
 * @throws {Error} one line, when a setting is not valid (k6 then stops at init with it)
 */
export function httpRun({ hostSetting, target, mode: own = 'http', protocol = 'get' }) {
  const host = hostOf(hostSetting);
  const mode = summaryModeOr(own);
  const post = OWN !== null || protocol === 'connect';
  // COMPRESSION=gzip asks for a gzipped body; k6 counts the bytes as received and decompresses them.
  const ask = COMPRESSION === 'gzip' ? { 'Accept-Encoding': 'gzip' } : {};
  const stream = OWN ? OWN.stream : null;
  // A server stream as Server-Sent Events or NDJSON (server/http.js), each one read whole: its messages are counted. A
  // client stream as NDJSON, one request message a line.
  // connect-json: the Connect protocol's streams, every message in an envelope both ways (k6/connect.js).
  const connectStream = protocol === 'connect' && (stream === 'server' || stream === 'client');
  const framing = connectStream ? 'connect' : OWN ? OWN.framing : 'sse';
  const accept = stream === 'server' && !connectStream ? { Accept: STREAM_FRAMINGS[framing] } : {};
  const type = connectStream ? CONNECT_STREAM_TYPE : stream === 'client' ? 'application/x-ndjson' : 'application/json';
  const headers = post ? { 'Content-Type': type, ...accept, ...ask } : ask;
  const asked = Object.keys(headers).length ? { headers } : {};
  // Without REQUEST_TIMEOUT and headers, no params at all: k6 converts the params of every request, which cost 7-10% of
  // its RPS for a timeout alone (docs/profiling.md). A POST needs its Content-Type.
  const timeout = REQUEST_TIMEOUT === null ? {} : { timeout: REQUEST_TIMEOUT };
  const any = Object.keys(asked).length + Object.keys(timeout).length > 0;
  // https when TLS_CA is given; k6 then verifies against SSL_CERT_FILE (k6/common.js TLS_CA).
  const scheme = TLS_CA ? 'https' : 'http';
  const { httpPath, rpc, request } = OWN ? { httpPath: '', rpc: '', request: null } : SCENARIOS[SCENARIO];
  // A relay is a WebSocket at the RPC's path (server/http.js), one a call.
  const relay = stream === 'bidi';
  if (OPEN_STREAMS && connectStream) throw new Error('STREAMS: connect-json\'s streams cannot be held open yet (k6/open-streams.js)');
  /** @type {HttpPlan} */
  const plan = {
    url: relay ? `${TLS_CA ? 'wss' : 'ws'}://${host}/${OWN.rpc}`
      : OWN ? `${scheme}://${host}/${OWN.rpc}` : protocol === 'connect' ? `${scheme}://${host}/${rpcPath(rpc)}` : `${scheme}://${host}${httpPath}`,
    post,
    // A Connect stream's body is binary, which a SharedArray cannot hold: each VU makes its own.
    body: OWN ? (!connectStream && OWN_ONE_REQUEST && bodyOf(OWN_ONE_REQUEST, stream)) || null : protocol === 'connect' ? JSON.stringify(request) : null,
    vus: positiveIntEnv('VUS', null),
    answer: OWN ? MESSAGE_ANSWER : SCENARIOS[SCENARIO].answer,
    params: connectStream ? { responseType: 'binary', ...timeout, ...asked }
      : stream === 'server' ? { responseType: 'text', ...timeout, ...asked } : any && !relay ? { ...timeout, ...asked } : null,
    sampled: { responseType: 'text', ...timeout, ...asked },
    every: SAMPLE_EVERY,
    stream,
    framing,
    binary: relay && OWN.frames !== null,
    open: OPEN_STREAMS,
  };
  // STREAMS: a paced stream may last a minute; one still coming after 2 s is taken as answered (its twin was proven).
  const heldProbe = OPEN_STREAMS !== null && stream === 'server';
  const probe = /** @type {import('k6/http').RefinedParams<'binary'>} */ ({ responseType: 'binary', timeout: heldProbe ? '2s' : '5s', ...asked });
  return {
    plan,
    options: {
      ...baseOptions,
      noConnectionReuse: CONNECTIONS === 'per-request',
      // Timed-out requests counted by k6 itself, from the error_code tag of every request, rather than by
      // reading each response in the iteration (4% of the script's RPS, docs/profiling.md). The threshold
      // only makes k6 keep the sub-metric for the summary; it cannot fail.
      thresholds: { [HTTP_TIMED_OUT]: ['count>=0'] },
    },
    // Fails fast, naming the host, when no server answers; returns the body's size for the report.
    setup: relay ? () => relaySetup(plan, { mode, host }) : () => {
      // The demo's GET has no body; a POST's is the plan's, or the first request sample's.
      const body = !post ? null : connectStream ? connectEnvelopes(stream === 'client' ? OWN.requests[0] : [OWN.requests[0]])
        : plan.body ?? bodyOf(OWN.requests[0], stream);
      const res = post ? http.post(plan.url, body, probe) : http.get(plan.url, probe);
      if (heldProbe && res.error_code === HTTP_TIMEOUT_CODE) return { mode, host, sampleBytes: 0, own: true };
      const streamType = connectStream ? CONNECT_STREAM_TYPE : stream === 'server' ? STREAM_FRAMINGS[framing] : null;
      if (streamType && res.status === 200 && !String(res.headers['Content-Type']).startsWith(streamType)) {
        exec.test.abort(`the HTTP server at ${host} answered the stream ${OWN.rpc} as ${res.headers['Content-Type']}, not ${streamType}`);
      }
      if (connectStream && res.status === 200 && !connectMessages(res.body).ok) {
        exec.test.abort(`the Connect server at ${host} did not end the stream ${OWN.rpc} well: ${String.fromCharCode.apply(null, Array.from(new Uint8Array(res.body).subarray(-200)))}`);
      }
      if (res.status !== 200) {
        exec.test.abort(`cannot reach the HTTP server at ${host}: ${res.error || `status ${res.status}`}`);
      }
      // A server that ignores the ask would make the gzip column a raw one.
      const encoding = res.headers['Content-Encoding'] || 'identity';
      if (COMPRESSION === 'gzip' && encoding !== 'gzip') {
        exec.test.abort(`COMPRESSION=gzip: the HTTP server at ${host} answered Content-Encoding ${encoding}, not gzip (start it with COMPRESSION=gzip)`);
      }
      // The body as decoded: k6 has already decompressed a gzipped one.
      return { mode, host, sampleBytes: res.body.byteLength, ...(OWN ? { own: true } : {}) };
    },
    handleSummary: summaryHandler({ mode, target, host, ...RUN_SHAPE },
      relay ? withRelayRequests : connectStream ? withStreamFailures : OPEN_STREAMS ? withStreamsCut : undefined),
  };
}

/**
 * setup() of a relay: one WebSocket, the first request sample's first message sent, which must bring an answer (else the
 * test aborts, naming the host).
 * @param {HttpPlan} plan
 * @param {{mode: string, host: string}} data
 * @returns {Promise<object>} what setup() returns
 */
async function relaySetup(plan, data) {
  const sample = plan.body === null ? OWN.requests[0] : JSON.parse(plan.body);
  const first = plan.binary ? b64decode(OWN.frames[0][0], 'std') : JSON.stringify(sample[0]);
  const answer = await new Promise((resolve) => {
    /** @type {number|null} */
    let got = null;
    const ws = new WebSocket(plan.url);
    if (plan.binary) ws.binaryType = 'arraybuffer';
    ws.onopen = () => ws.send(first);
    ws.onmessage = (event) => {
      // A text frame's length in UTF-16 units is its JSON's bytes but for non-ASCII text, as the HTTP scripts count a body.
      got = plan.binary ? /** @type {ArrayBuffer} */ (event.data).byteLength : String(event.data).length;
      ws.close();
    };
    ws.onerror = (event) => resolve({ error: String(event.error) });
    ws.onclose = () => resolve(got === null ? { error: 'the connection closed with no answer' } : { bytes: got });
  });
  if (answer.error) exec.test.abort(`cannot reach the WebSocket relay at ${plan.url}: ${answer.error}`);
  return { ...data, sampleBytes: answer.bytes, own: true };
}

/**
 * The summary of a Connect stream's run with the streams that ended in an error among the failed requests: the Connect
 * protocol answers a stream's error with status 200 and the error in its last envelope, which k6's http_req_failed
 * does not see (k6/http.js counts them).
 * @param {any} data k6's summary
 * @returns {any}
 */
function withStreamFailures(data) {
  const failed = data.metrics[STREAM_METRICS.failed]?.values?.count ?? 0;
  const was = data.metrics.http_req_failed?.values;
  if (!failed || !was) return data;
  const passes = was.passes + failed;
  const fails = Math.max(0, was.fails - failed);
  const metrics = { ...data.metrics, http_req_failed: { ...data.metrics.http_req_failed, values: { rate: passes / (passes + fails), passes, fails } } };
  return { ...data, metrics };
}

/**
 * The summary of a server stream's run with STREAMS (k6/open-streams.js), whose run's end is each request's timeout: the
 * requests it ended are the streams it cut (STREAM_METRICS.cut), not failed or timed-out ones. Any other timeout is
 * impossible there, each request's being the time left in the run.
 * @param {any} data k6's summary
 * @returns {any}
 */
function withStreamsCut(data) {
  const { [HTTP_TIMED_OUT]: timedOut, ...rest } = data.metrics;
  const cut = timedOut?.values?.count ?? 0;
  const was = rest.http_req_failed?.values;
  if (!was) return data;
  const passes = Math.max(0, was.passes - cut);
  const fails = was.fails + cut;
  const metrics = {
    ...rest,
    http_req_failed: { ...rest.http_req_failed, values: { rate: passes / (passes + fails || 1), passes, fails } },
    [STREAM_METRICS.cut]: { type: 'counter', contains: 'default', values: { count: cut, rate: timedOut?.values?.rate ?? 0 } },
  };
  return { ...data, metrics };
}

/**
 * The summary of a relay's run with the rows every HTTP summary has, from k6's WebSocket metrics (no HTTP request is
 * made but the upgrade): http_reqs the sessions (one a call), http_req_duration each session's duration (connect,
 * upgrade, every message, close), http_req_failed the sessions that failed or ended before an answer to each message.
 * @param {any} data k6's summary
 * @returns {any}
 */
function withRelayRequests(data) {
  const sessions = data.metrics.ws_sessions?.values?.count ?? 0;
  const failed = data.metrics[STREAM_METRICS.failed]?.values?.count ?? 0;
  const metrics = {
    ...data.metrics,
    http_reqs: { type: 'counter', contains: 'default', values: { count: sessions, rate: data.metrics.ws_sessions?.values?.rate ?? 0 } },
    http_req_failed: { type: 'rate', contains: 'default', values: { rate: sessions ? failed / sessions : 0, passes: failed, fails: sessions - failed } },
    ...(data.metrics.ws_session_duration ? { http_req_duration: data.metrics.ws_session_duration } : {}),
  };
  return { ...data, metrics };
}
