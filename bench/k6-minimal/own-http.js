// The least a k6 test of an own RPC's JSON twin can do: one POST of the first request sample in the proto3 JSON
// mapping per iteration, no checks, no custom metrics, bodies discarded. The yardstick for the project's script with
// an own service (npm run targets). Its host: the mode's host variable (the HTTP or the Connect JSON one).
import http from 'k6/http';

const url = `http://${__ENV.LOCAL_HTTP_HOST || __ENV.LOCAL_CONNECT_JSON_HOST}/${__ENV.RPC}`;
const body = JSON.stringify(JSON.parse(open(__ENV.REQUESTS))[0]);
const params = { headers: { 'Content-Type': 'application/json' } };

export const options = { discardResponseBodies: true };

export default function () {
  http.post(url, body, params);
}
