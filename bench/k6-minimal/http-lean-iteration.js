// Between the minimal HTTP script and the project's (docs/findings/2026-11-23-frameworks-issue-13.md, "The k6 scripts made lean"): the project's
// lean iteration, one response in 100 decoded and checked, with nothing imported from the project.
import http from 'k6/http';
import { check } from 'k6';

function make(host) {
  const url = `http://${host}/`;
  const sampledParams = /** @type {import('k6/http').RefinedParams<'text'>} */ ({ responseType: 'text' });
  let calls = 0;
  return {
    iteration() {
      if (calls++ % 100 !== 0) {
        http.get(url, undefined);
        return;
      }
      const res = http.get(url, sampledParams);
      check(res, { 'status is 200': (r) => r.status === 200, 'body is the user': (r) => r.json('username') === 'Bob' });
    },
  };
}

const test = make(__ENV.LOCAL_HTTP_HOST);
export const options = { discardResponseBodies: true };
export default test.iteration;
