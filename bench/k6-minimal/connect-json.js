// The least a k6 Connect test can do: one unary POST of the request message in the proto3 JSON mapping per
// iteration, no checks, no custom metrics, bodies discarded. The yardstick for the project's own script (npm run targets).
import http from 'k6/http';

const url = `http://${__ENV.LOCAL_CONNECT_JSON_HOST}/user.v1.UserService/GetUser`;
const params = { headers: { 'Content-Type': 'application/json' } };

export const options = { discardResponseBodies: true };

export default function () {
  http.post(url, '{}', params);
}
