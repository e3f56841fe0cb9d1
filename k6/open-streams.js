// STREAMS=N (docs/streaming.md, "Open streams"): k6 holds N streams open at once against the server, each VU its share
// on the VU's one iteration, re-opening each stream as it ends, until the run's end cuts those still open. A VU loads
// this module only then: every module costs each VU (docs/profiling.md), and the normal path never needs it.
// - gRPC: the VU's streams are grpc.Stream calls on its one connection, which HTTP/2 multiplexes (the job keeps a VU's
//   share under the server's H2_MAX_CONCURRENT_STREAMS); the run's end closes the connection;
// - SSE or NDJSON: each stream an http.asyncRequest, an HTTP/1.1 connection of its own while it lasts; k6's client returns
//   a body whole, so the run's end is each request's timeout and a stream cut there has its messages uncounted by k6
//   (the server counts them: the report's server-count rows);
// - WebSocket relay: a k6/websockets socket each, the client sending its sample's messages in turn, one every
//   STREAM_INTERVAL ms, as a paced server stream sends them; the run's end closes the sockets.
// The scripts hand in their own k6 modules (grpc.Stream, http), so that this one imports no more of them.
import exec from 'k6/execution';
import { sleep } from 'k6';
import { clearInterval, setInterval, setTimeout } from 'k6/timers';
import { Counter, Trend } from 'k6/metrics';
import { STREAM_METRICS } from './settings.js';

/**
 * How many of the N streams this VU holds: N spread over the VUs, the first N mod VUs one more.
 * @param {import('./common.js').OpenStreams} open
 * @returns {number} 0 or more
 */
const shareOf = (open) => Math.floor(open.streams / open.vus) + (exec.vu.idInTest - 1 < open.streams % open.vus ? 1 : 0);

/**
 * When the run ends: its scenario's start plus its duration (ms since the epoch).
 * @param {import('./common.js').OpenStreams} open
 * @returns {number}
 */
const deadlineOf = (open) => exec.scenario.startTime + open.durationMs;

/**
 * The metrics every protocol's streams add (k6/settings.js STREAM_METRICS).
 * @param {boolean} relay the client sends too
 */
function metricsOf(relay) {
  return {
    messages: new Counter(STREAM_METRICS.messages),
    sent: relay ? new Counter(STREAM_METRICS.sent) : null,
    firstMessage: new Trend(STREAM_METRICS.firstMessage, true),
    largestGap: new Trend(STREAM_METRICS.largestGap, true),
    cut: new Counter(STREAM_METRICS.cut),
  };
}

/**
 * Times a stream's messages as the scripts' one-stream iterations do: the first from the stream's start, then the largest
 * gap between two, in whole milliseconds (k6's JavaScript clock), one sample of each a stream.
 * @param {ReturnType<typeof metricsOf>} m
 * @returns {{seen: () => void, done: () => number}} seen: a message arrived; done: the stream ended, its count added
 */
function timing(m) {
  const started = Date.now();
  let received = 0;
  let last = started;
  let largest = 0;
  return {
    seen() {
      const now = Date.now();
      if (received++ === 0) m.firstMessage.add(now - started);
      else if (now - last > largest) largest = now - last;
      last = now;
    },
    done() {
      m.messages.add(received);
      if (received > 1) m.largestGap.add(largest);
      return received;
    },
  };
}

/**
 * The VU's iteration of a gRPC script with STREAMS: its share of the streams on its one connection, each re-opened as it
 * ends, the connection closed at the run's end (which ends the streams still open, counted as cut, not failed).
 * @param {import('./common.js').OpenStreams} open
 * @param {{Stream: typeof import('k6/net/grpc').Stream, client: import('k6/net/grpc').Client, connect: () => void, method: string, params: object, relay: boolean, next: () => any,
 *   failures: {add: (n: number) => void}}} grpcRun Stream: k6's grpc.Stream; connect: opens the VU's connection;
 *   next: the VU's next request sample (a relay's: its stream of messages); failures: the script's counter of failed calls
 * @returns {() => void}
 */
export function grpcOpenStreams(open, { Stream, client, connect, method, params, relay, next, failures }) {
  const m = metricsOf(relay);
  // The calls, which k6/grpc-run.js counts as an iteration's otherwise (withRequestsFailed).
  const opened = new Counter(STREAM_METRICS.opened);
  // Past the run's end no stream is begun: a new iteration k6 starts meanwhile waits out the moment (no busy loop).
  const streamParams = { ...params, timeout: `${open.durationMs + 60000}ms` };
  return () => {
    const deadline = deadlineOf(open);
    if (Date.now() >= deadline) return sleep(0.1);
    connect();
    let closing = false;
    // A relay's pacers, cleared at the run's end too: a timer left behind would keep the iteration, and k6, waiting.
    const pacers = new Set();
    const begin = () => {
      if (closing || Date.now() >= deadline) return;
      const request = next();
      const time = timing(m);
      const stream = new Stream(client, method, streamParams);
      opened.add(1);
      let ended = false;
      let pacer = null;
      const end = (failed) => {
        if (ended) return;
        ended = true;
        if (pacer !== null) {
          clearInterval(pacer);
          pacers.delete(pacer);
        }
        time.done();
        if (closing) m.cut.add(1);
        else if (failed) failures.add(1);
        begin();
      };
      stream.on('data', time.seen);
      stream.on('error', () => end(true));
      stream.on('end', () => end(false));
      if (!relay) {
        stream.write(request);
        stream.end();
        return;
      }
      // A relay is held open: its sample's messages in turn, one every STREAM_INTERVAL ms, until the run's end.
      let i = 0;
      const send = () => {
        if (closing) return; // the connection is closing: the stream's end is on its way
        stream.write(request[i++ % request.length]);
        m.sent.add(1);
      };
      send();
      pacer = setInterval(send, open.intervalMs);
      pacers.add(pacer);
    };
    for (let i = shareOf(open); i > 0; i--) begin();
    setTimeout(() => {
      closing = true;
      for (const pacer of pacers) clearInterval(pacer);
      client.close();
    }, Math.max(0, deadline - Date.now()));
  };
}

/**
 * The VU's iteration of an HTTP script with STREAMS, a server stream: its share of the streams, each a POST of its own
 * (http.asyncRequest: an HTTP/1.1 connection each while it lasts), re-opened as it ends; each request's timeout is the
 * run's end, so that the run's end cuts the streams still open (k6/http-run.js counts those as cut, not failed).
 * @param {import('./common.js').OpenStreams} open
 * @param {{http: object, url: string, params: object, next: () => string, count: (body: string) => number}} httpRun http:
 *   k6's k6/http; next: the VU's next request body; count: the messages of a body read whole
 * @returns {() => void}
 */
export function httpOpenStreams(open, { http, url, params, next, count }) {
  const m = metricsOf(false);
  return () => {
    const deadline = deadlineOf(open);
    if (Date.now() >= deadline) return sleep(0.1);
    const begin = () => {
      const left = deadline - Date.now();
      if (left <= 0) return;
      http.asyncRequest('POST', url, next(), { ...params, timeout: `${left}ms` }).then((res) => {
        if (res.status === 200 && typeof res.body === 'string') {
          m.firstMessage.add(res.timings.sending + res.timings.waiting);
          m.messages.add(count(res.body));
        }
        begin();
      });
    };
    for (let i = shareOf(open); i > 0; i--) begin();
  };
}

/**
 * The VU's iteration of an HTTP script with STREAMS, a relay: its share of the streams, each a WebSocket sending its
 * sample's messages in turn, one every STREAM_INTERVAL ms, re-opened if it closes; the run's end closes them (cut, not
 * failed).
 * @param {import('./common.js').OpenStreams} open
 * @param {{url: string, next: () => string[]}} wsRun next: the VU's next sample, a stream of text frames
 * @returns {() => void}
 */
export function wsOpenStreams(open, { url, next }) {
  const { WebSocket } = require('k6/websockets');
  const m = metricsOf(true);
  // The sessions that failed before the run's end, which k6/http-run.js withRelayRequests counts as failed requests.
  const failed = new Counter(STREAM_METRICS.failed);
  return () => {
    const deadline = deadlineOf(open);
    if (Date.now() >= deadline) return sleep(0.1);
    let closing = false;
    // Each socket with its pacer: the run's end closes the one and clears the other, since a socket that never opened
    // may never close either, and a timer left behind would keep the iteration, and k6, waiting.
    const sockets = new Map();
    const begin = () => {
      if (closing || Date.now() >= deadline) return;
      const frames = next();
      const time = timing(m);
      const ws = new WebSocket(url);
      let i = 0;
      let opened = false;
      let ended = false;
      let error = false;
      const send = () => {
        if (closing) return; // the socket is closing: its close is on its way
        ws.send(frames[i++ % frames.length]);
        m.sent.add(1);
      };
      const end = () => {
        if (ended) return;
        ended = true;
        const pacer = sockets.get(ws);
        if (pacer) clearInterval(pacer);
        sockets.delete(ws);
        time.done();
        if (closing) m.cut.add(1);
        else if (error) failed.add(1);
        begin();
      };
      sockets.set(ws, null);
      ws.onopen = () => {
        opened = true;
        send();
        sockets.set(ws, setInterval(send, open.intervalMs));
      };
      ws.onmessage = time.seen;
      ws.onerror = () => {
        error = true;
        // A socket that failed to open may not close: it ends here.
        if (!opened) end();
      };
      ws.onclose = end;
    };
    for (let i = shareOf(open); i > 0; i--) begin();
    setTimeout(() => {
      closing = true;
      for (const [ws, pacer] of sockets) {
        if (pacer) clearInterval(pacer);
        ws.close();
      }
    }, Math.max(0, deadline - Date.now()));
  };
}
