// The HTTP side of the comparison: GET the User as JSON over a keep-alive connection.
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { HTTP_PATH } from '../proto/payload.js';
import { baseOptions, isTheUser, sampler } from './common.js';
import { summaryHandler } from './summary.js';

const SAMPLED = { responseType: 'text' };

/**
 * Builds the exports of an HTTP k6 script. k6 keeps one keep-alive connection per VU by default.
 * @param {{host: string, target: 'local'|'remote'}} run host:port of the server, and which script
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function httpTest({ host, target }) {
  const url = `http://${host}${HTTP_PATH}`;
  const sampled = sampler();
  return {
    options: baseOptions,
    // Fails fast, naming the host, when no server answers; returns one body for the report.
    setup() {
      const res = http.get(url, { ...SAMPLED, timeout: '5s' });
      if (res.status !== 200) {
        exec.test.abort(`cannot reach the HTTP server at ${host}: ${res.error || `status ${res.status}`}`);
      }
      return { mode: 'http', host, sample: res.body };
    },
    iteration() {
      if (!sampled()) {
        http.get(url);
        return;
      }
      const res = http.get(url, SAMPLED);
      check(res, {
        'status is 200': (r) => r.status === 200,
        'body is the User': (r) => isTheUser(r.json()),
      });
    },
    handleSummary: summaryHandler({ mode: 'http', target, host }),
  };
}
