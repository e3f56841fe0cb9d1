// The HTTP side of the comparison: GET the payload as JSON (proto3 JSON mapping); or, for connect-node's Connect
// listener, the Connect protocol's unary call: a POST of the request message in the proto3 JSON mapping.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { rpcPath, SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, COMPRESSION, CONNECTIONS, isThePayload, OWN, ownShare, REQUEST_TIMEOUT, RUN_SHAPE, SAMPLE_EVERY, SCENARIO, summaryModeOr, TLS_CA,
} from './common.js';
import { HTTP_TIMED_OUT } from './settings.js';
import { summaryHandler } from './summary.js';

// COMPRESSION=gzip asks for a gzipped body; k6 counts the bytes as received and decompresses them.
// Without it and without REQUEST_TIMEOUT, no params at all for a GET: k6 converts the params of every request,
// which cost 7-10% of its RPS for a timeout alone (docs/profiling.md). A Connect POST needs its Content-Type.
const ASK_HEADERS = COMPRESSION === 'gzip' ? { 'Accept-Encoding': 'gzip' } : {};
const TIMEOUT = REQUEST_TIMEOUT === null ? {} : { timeout: REQUEST_TIMEOUT };
// https when TLS_CA is given; k6 then verifies against SSL_CERT_FILE (k6/common.js TLS_CA).
const SCHEME = TLS_CA ? 'https' : 'http';

/**
 * The request of a run: a GET of the scenario's path, or the Connect protocol's unary POST of its RPC; with RPC (the
 * user's own), a POST of each request sample in turn to `/package.Service/Method`, the same shape.
 * @param {string} host host:port
 * @param {'get'|'connect'} protocol
 * @returns {{url: string, post: boolean, bodies: string[]|null, params: object|undefined, sampled: import('k6/http').RefinedParams<'text'>,
 *   probe: import('k6/http').RefinedParams<'binary'>}} post: a POST, not a GET; bodies: the POST bodies, sent in turn (null: a
 *   GET, or the user's samples, which each VU takes on its first iteration); params: of
 *   every unsampled request (undefined: none); sampled: of a sampled one (its body kept); probe: of setup()'s
 */
function requestOf(host, protocol) {
  const post = OWN !== null || protocol === 'connect';
  const headers = post ? { 'Content-Type': 'application/json', ...ASK_HEADERS } : ASK_HEADERS;
  const ask = Object.keys(headers).length ? { headers } : {};
  const any = Object.keys(ask).length + Object.keys(TIMEOUT).length > 0;
  const { httpPath, rpc, request } = OWN ? { httpPath: '', rpc: '', request: null } : SCENARIOS[SCENARIO];
  return {
    post,
    url: OWN ? `${SCHEME}://${host}/${OWN.rpc}` : protocol === 'connect' ? `${SCHEME}://${host}/${rpcPath(rpc)}` : `${SCHEME}://${host}${httpPath}`,
    // The user's samples are each VU's share, taken on its first iteration (ownShare).
    bodies: OWN ? null : protocol === 'connect' ? [JSON.stringify(request)] : null,
    params: any ? { ...TIMEOUT, ...ask } : undefined,
    sampled: { responseType: 'text', ...TIMEOUT, ...ask },
    probe: { responseType: 'binary', timeout: '5s', ...ask },
  };
}

/**
 * Builds the exports of an HTTP k6 script. With CONNECTIONS=reuse (default) each
 * VU keeps one keep-alive connection; with per-request, k6's noConnectionReuse.
 * @param {{host: string, target: 'local'|'remote', mode?: string, protocol?: 'get'|'connect'}} run host:port of the
 *   server, and which script; mode: what its summary names (default 'http'; SUMMARY_MODE overrides it); protocol: 'get'
 *   (default) a GET of the scenario's path, 'connect' the Connect protocol's unary POST of its RPC with the request
 *   message in the proto3 JSON mapping
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function httpTest({ host, target, mode: own = 'http', protocol = 'get' }) {
  const mode = summaryModeOr(own);
  const request = requestOf(host, protocol);
  const { url, post, params, sampled, probe } = request;
  let { bodies } = request;
  // The request samples in turn: an index, not a generator (k6 runs this on every iteration).
  let count = bodies ? bodies.length : 0;
  let turn = 0;
  // A counter inline, not a sampler function: k6 runs this on every iteration (docs/profiling.md).
  const every = SAMPLE_EVERY;
  let calls = 0;
  // Closure copies of what every iteration reads: goja reads module-level bindings more slowly (docs/profiling.md).
  const client = http;
  const checkSampled = (res) => check(res, {
    'status is 200': (r) => r.status === 200,
    'body is the payload': (r) => isThePayload(r.json()),
  });
  // One iteration per request shape, chosen here once, so that the one k6 runs every time branches only on the
  // sampling counter: side by side with the general one, a GET without params read 1.027 (1.004-1.039) of its k6 CPU per
  // iteration (docs/profiling.md).
  const iterations = {
    // A GET with nothing to ask: no params argument at all.
    get() {
      if (calls++ % every !== 0) {
        client.get(url);
        return;
      }
      checkSampled(client.get(url, sampled));
    },
    getWithParams() {
      if (calls++ % every !== 0) {
        client.get(url, params);
        return;
      }
      checkSampled(client.get(url, sampled));
    },
    post() {
      if (bodies === null) {
        bodies = ownShare((message) => JSON.stringify(message));
        count = bodies.length;
      }
      const body = bodies[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      if (calls++ % every !== 0) {
        client.post(url, body, params);
        return;
      }
      checkSampled(client.post(url, body, sampled));
    },
  };
  return {
    options: {
      ...baseOptions,
      noConnectionReuse: CONNECTIONS === 'per-request',
      // Timed-out requests counted by k6 itself, from the error_code tag of every request, rather than by
      // reading each response in the iteration (4% of the script's RPS, docs/profiling.md). The threshold
      // only makes k6 keep the sub-metric for the summary; it cannot fail.
      thresholds: { [HTTP_TIMED_OUT]: ['count>=0'] },
    },
    // Fails fast, naming the host, when no server answers; returns the body's size for the report.
    setup() {
      const res = post ? http.post(url, OWN ? JSON.stringify(OWN.requests[0]) : bodies[0], probe) : http.get(url, probe);
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
    iteration: post ? iterations.post : params === undefined ? iterations.get : iterations.getWithParams,
    handleSummary: summaryHandler({ mode, target, host, ...RUN_SHAPE }),
  };
}
