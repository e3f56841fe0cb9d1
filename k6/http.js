// The HTTP side of the comparison: GET the payload as JSON (proto3 JSON mapping).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, COMPRESSION, CONNECTIONS, isThePayload, REQUEST_TIMEOUT, RUN_SHAPE, SAMPLE_EVERY, SCENARIO,
} from './common.js';
import { HTTP_TIMED_OUT } from './settings.js';
import { summaryHandler } from './summary.js';

// COMPRESSION=gzip asks for a gzipped body; k6 counts the bytes as received and decompresses them.
// Without it and without REQUEST_TIMEOUT, no params at all: k6 converts the params of every request,
// which cost 7-10% of its RPS for a timeout alone (docs/profiling.md).
const ASK = COMPRESSION === 'gzip' ? { headers: { 'Accept-Encoding': 'gzip' } } : {};
const TIMEOUT = REQUEST_TIMEOUT === null ? {} : { timeout: REQUEST_TIMEOUT };
const PARAMS = COMPRESSION === 'gzip' || REQUEST_TIMEOUT !== null ? { ...TIMEOUT, ...ASK } : undefined;
/** @type {import('k6/http').RefinedParams<'text'>} */
const SAMPLED = { responseType: 'text', ...TIMEOUT, ...ASK };

/**
 * Builds the exports of an HTTP k6 script. With CONNECTIONS=reuse (default) each
 * VU keeps one keep-alive connection; with per-request, k6's noConnectionReuse.
 * @param {{host: string, target: 'local'|'remote'}} run host:port of the server, and which script
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function httpTest({ host, target }) {
  const url = `http://${host}${SCENARIOS[SCENARIO].httpPath}`;
  // A counter inline, not a sampler function: k6 runs this on every iteration (docs/profiling.md).
  const every = SAMPLE_EVERY;
  let calls = 0;
  // Closure copies of what every iteration reads: goja reads module-level bindings more slowly (docs/profiling.md).
  const client = http;
  const params = PARAMS;
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
      const res = http.get(url, { responseType: 'binary', timeout: '5s', ...ASK });
      if (res.status !== 200) {
        exec.test.abort(`cannot reach the HTTP server at ${host}: ${res.error || `status ${res.status}`}`);
      }
      // A server that ignores the ask would make the gzip column a raw one.
      const encoding = res.headers['Content-Encoding'] || 'identity';
      if (COMPRESSION === 'gzip' && encoding !== 'gzip') {
        exec.test.abort(`COMPRESSION=gzip: the HTTP server at ${host} answered Content-Encoding ${encoding}, not gzip (start it with COMPRESSION=gzip)`);
      }
      // The body as decoded: k6 has already decompressed a gzipped one.
      return { mode: 'http', host, sampleBytes: res.body.byteLength };
    },
    iteration() {
      if (calls++ % every !== 0) {
        client.get(url, params);
        return;
      }
      const res = client.get(url, SAMPLED);
      check(res, {
        'status is 200': (r) => r.status === 200,
        'body is the payload': (r) => isThePayload(r.json()),
      });
    },
    handleSummary: summaryHandler({ mode: 'http', target, host, ...RUN_SHAPE }),
  };
}
