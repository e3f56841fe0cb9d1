// The least a k6 test of an own streaming RPC's JSON twin can do: per iteration, a server stream's POST of the first
// request sample read to its end (SSE, or NDJSON with STREAM_FRAMING=ndjson), a client stream's POST of the first
// sample's messages as NDJSON, or a relay's WebSocket sending the first sample's messages as text frames and closing at
// the last answer; no checks, no custom metrics, bodies discarded. The yardstick for the project's script with a
// stream (npm run targets).
import http from 'k6/http';
import { WebSocket } from 'k6/websockets';

const path = `${__ENV.LOCAL_HTTP_HOST}/${__ENV.RPC}`;
const request = JSON.parse(open(__ENV.REQUESTS))[0];
const accept = __ENV.STREAM_FRAMING === 'ndjson' ? 'application/x-ndjson' : 'text/event-stream';
const body = __ENV.STREAM === 'client' ? request.map((m) => `${JSON.stringify(m)}\n`).join('') : JSON.stringify(request);
const params = { headers: __ENV.STREAM === 'client' ? { 'Content-Type': 'application/x-ndjson' } : { 'Content-Type': 'application/json', Accept: accept } };
const frames = __ENV.STREAM === 'bidi' ? request.map((m) => JSON.stringify(m)) : null;

export const options = { discardResponseBodies: true };

export default function () {
  if (!frames) {
    http.post(`http://${path}`, body, params);
    return;
  }
  const ws = new WebSocket(`ws://${path}`);
  let answers = 0;
  ws.onopen = () => {
    for (const frame of frames) ws.send(frame);
  };
  ws.onmessage = () => {
    if (++answers === frames.length) ws.close();
  };
}
