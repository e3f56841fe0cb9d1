// The least a k6 HTTP test can do: one GET per iteration, no checks, no custom
// metrics, bodies discarded. The yardstick for the project's own script (npm run targets).
import http from 'k6/http';

const url = `http://${__ENV.LOCAL_HTTP_HOST}/`;

export const options = { discardResponseBodies: true };

export default function () {
  http.get(url);
}
