// The HTTP side of the comparison: GET the payload as JSON (proto3 JSON mapping).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, COMPRESSION, CONNECTIONS, isThePayload, REQUEST_TIMEOUT, requestsTimedOut, RUN_SHAPE, sampler, SCENARIO,
} from './common.js';
import { summaryHandler } from './summary.js';

// COMPRESSION=gzip asks for a gzipped body; k6 counts the bytes as received and decompresses them.
// Without it no headers param at all: k6 converts every param of every request (docs/profiling.md).
const ASK = COMPRESSION === 'gzip' ? { headers: { 'Accept-Encoding': 'gzip' } } : {};
const PARAMS = { timeout: REQUEST_TIMEOUT, ...ASK };
const SAMPLED = { responseType: 'text', timeout: REQUEST_TIMEOUT, ...ASK };
// k6's error code of a request that reached its timeout.
const TIMEOUT_ERROR_CODE = 1050;

function get(url, params) {
  const res = http.get(url, params);
  if (res.error_code === TIMEOUT_ERROR_CODE) requestsTimedOut.add(1);
  return res;
}

/**
 * Builds the exports of an HTTP k6 script. With CONNECTIONS=reuse (default) each
 * VU keeps one keep-alive connection; with per-request, k6's noConnectionReuse.
 * @param {{host: string, target: 'local'|'remote'}} run host:port of the server, and which script
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function httpTest({ host, target }) {
  const url = `http://${host}${SCENARIOS[SCENARIO].httpPath}`;
  const sampled = sampler();
  return {
    options: { ...baseOptions, noConnectionReuse: CONNECTIONS === 'per-request' },
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
      if (!sampled()) {
        get(url, PARAMS);
        return;
      }
      const res = get(url, SAMPLED);
      check(res, {
        'status is 200': (r) => r.status === 200,
        'body is the payload': (r) => isThePayload(r.json()),
      });
    },
    handleSummary: summaryHandler({ mode: 'http', target, host, ...RUN_SHAPE }),
  };
}
