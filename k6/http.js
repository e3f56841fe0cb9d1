// The HTTP side of the comparison: GET the payload as JSON (proto3 JSON mapping); or, for connect-node's Connect
// listener, the Connect protocol's unary call: a POST of the request message in the proto3 JSON mapping; or, with RPC,
// a POST of the user's request samples in turn.
//
// k6 runs a script's init code once in every VU, and each VU keeps what it evaluated: the project's settings, checks
// and summary cost every VU heap and k6's garbage collector time on every request. So VU 0 alone (k6's first init,
// where it reads the options, and the one that runs setup() and handleSummary) loads them (k6/http-run.js) and writes
// the plan; the VUs that iterate read the plan and evaluate only this module (docs/profiling.md).
import http from 'k6/http';
import { check } from 'k6';
import { SharedArray } from 'k6/data';

/**
 * Builds the exports of an HTTP k6 script; in the init context.
 * @param {{hostSetting: string, target: 'local'|'remote', mode?: string, protocol?: 'get'|'connect'}} run the server's
 *   host:port as config.js names it, which script, and what to ask (k6/http-run.js httpRun)
 * @returns {{options: object|undefined, setup: Function|undefined, iteration: () => void, handleSummary: Function|undefined}}
 *   options, setup and handleSummary in VU 0 only, where k6 reads and calls them
 */
export function httpTest(run) {
  const control = __VU === 0 ? require('./http-run.js').httpRun(run) : null;
  // Made once per k6 process, by VU 0; the others get its copy and never call this.
  // Its one element by index: destructuring would set up Sobek's iterators in every VU (docs/profiling.md).
  const plan = new SharedArray('http plan', () => [control.plan])[0];
  // A POST with no body of its own sends the user's many samples: only then does a VU load k6/own.js.
  // A relay's binary frames are the job's FRAMES file, however many samples.
  const own = (plan.post && plan.body === null) || plan.binary ? require('./own.js') : null;
  const samples = own ? own.ownSamples() : null;
  const isThePayload = require('../proto/checks.js').checkOf(plan.answer);
  // Closure copies of what every iteration reads: goja reads module-level bindings and properties more slowly
  // (docs/profiling.md).
  const { url, sampled, every } = plan;
  const params = plan.params ?? undefined;
  // Text, or a Connect stream's binary envelopes (k6/connect.js).
  /** @type {Array<string|ArrayBuffer>|null} */
  let bodies = plan.body === null ? null : [plan.body];
  // The request samples in turn: an index, not a generator (k6 runs this on every iteration).
  let count = bodies ? bodies.length : 0;
  let turn = 0;
  // A counter inline, not a sampler function: k6 runs this on every iteration (docs/profiling.md).
  let calls = 0;
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
        bodies = own.ownShare(samples, (message) => JSON.stringify(message), plan.vus);
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
  // STREAMS=N: the VU holds its share of N streams at once (k6/open-streams.js), loaded only then.
  if (plan.open) {
    const openStreams = require('./open-streams.js');
    // The VU's samples in turn, as the one-stream iterations below take them: a relay's each a stream of text frames.
    let share = null;
    const next = () => {
      if (share === null) {
        share = plan.stream === 'bidi'
          ? (bodies ? bodies.map((body) => JSON.parse(String(body)).map((m) => JSON.stringify(m)))
            : own.ownShare(samples, (stream) => stream.map((m) => JSON.stringify(m)), plan.vus))
          : bodies ?? own.ownShare(samples, (message) => JSON.stringify(message), plan.vus);
        count = share.length;
      }
      const sample = share[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      return sample;
    };
    const end = plan.framing === 'ndjson' ? '\n' : '\n\n';
    const messagesIn = (text) => {
      let n = 0;
      for (let at = text.indexOf(end); at >= 0; at = text.indexOf(end, at + end.length)) n++;
      return n;
    };
    const iteration = plan.stream === 'bidi' ? openStreams.wsOpenStreams(plan.open, { url, next })
      : openStreams.httpOpenStreams(plan.open, { http, url, params, next, count: messagesIn });
    return { options: control?.options, setup: control?.setup, iteration, handleSummary: control?.handleSummary };
  }
  // Loaded only for a streaming RPC: every module costs each VU (docs/profiling.md).
  const metrics = plan.stream ? require('k6/metrics') : null;
  const STREAM_METRICS = plan.stream ? require('./settings.js').STREAM_METRICS : null;
  // connect-json's streams: the Connect protocol's envelopes both ways, and its errors in the last envelope (k6/connect.js).
  const connect = plan.framing === 'connect' ? require('./connect.js') : null;
  const failedStreams = connect ? new metrics.Counter(STREAM_METRICS.failed) : null;
  if (plan.stream === 'server' && connect) {
    const messages = new metrics.Counter(STREAM_METRICS.messages);
    const firstMessage = new metrics.Trend(STREAM_METRICS.firstMessage, true);
    // As the SSE iteration below; connect-node sends the response's head with the first message too.
    iterations.stream = () => {
      if (bodies === null) {
        bodies = own.ownShare(samples, (message) => connect.connectEnvelopes([message]), plan.vus);
        count = bodies.length;
      }
      const body = bodies[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      const res = client.post(url, body, params);
      if (res.status !== 200) return;
      const read = connect.connectMessages(res.body);
      if (!read.ok) failedStreams.add(1);
      firstMessage.add(res.timings.sending + res.timings.waiting);
      messages.add(read.messages);
    };
  } else if (plan.stream === 'server') {
    const { Counter, Trend } = metrics;
    const messages = new Counter(STREAM_METRICS.messages);
    const firstMessage = new Trend(STREAM_METRICS.firstMessage, true);
    // One server stream per iteration, as SSE or NDJSON, read whole (k6's HTTP client returns the body at its end). Its
    // head leaves the server with the first message (test/integration/own-service-stream.test.js), so the first message
    // arrived when the head did: sending + waiting. Its messages are counted by what ends each, SSE's blank line or
    // NDJSON's newline: a message's JSON has no raw newline (proto3 JSON is written compact, a newline in a string escaped).
    const end = plan.framing === 'ndjson' ? '\n' : '\n\n';
    const step = end.length;
    iterations.stream = () => {
      if (bodies === null) {
        bodies = own.ownShare(samples, (message) => JSON.stringify(message), plan.vus);
        count = bodies.length;
      }
      const body = bodies[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      const res = client.post(url, body, params);
      const text = res.body;
      if (res.status !== 200 || typeof text !== 'string') return;
      const { timings } = res;
      firstMessage.add(timings.sending + timings.waiting);
      let received = 0;
      for (let at = text.indexOf(end); at >= 0; at = text.indexOf(end, at + step)) received++;
      messages.add(received);
    };
  }
  if (plan.stream === 'client') {
    const sent = new metrics.Counter(STREAM_METRICS.sent);
    // One client stream per iteration: the VU's next sample, a stream of messages, POSTed as NDJSON (k6 sends a body
    // whole); each body's messages (its lines) counted once, on the VU's first iteration.
    // On connect-json, the messages in envelopes, and the answer's last envelope read for an error.
    let lengths = null;
    iterations.stream = () => {
      if (lengths === null) {
        if (connect) {
          const streams = own.ownShare(samples, (stream) => stream, plan.vus);
          bodies = streams.map((stream) => connect.connectEnvelopes(stream));
          lengths = streams.map((stream) => stream.length);
        } else {
          if (bodies === null) bodies = own.ownShare(samples, (stream) => stream.map((m) => `${JSON.stringify(m)}\n`).join(''), plan.vus);
          lengths = bodies.map((body) => String(body).split('\n').length - 1);
        }
        count = bodies.length;
      }
      const at = turn;
      turn = turn + 1 === count ? 0 : turn + 1;
      const res = client.post(url, bodies[at], params);
      if (connect && res.status === 200 && !connect.connectMessages(res.body).ok) failedStreams.add(1);
      sent.add(lengths[at]);
    };
  }
  if (plan.stream === 'bidi') {
    const { Counter, Trend } = metrics;
    const { WebSocket } = require('k6/websockets');
    const messages = new Counter(STREAM_METRICS.messages);
    const sentMessages = new Counter(STREAM_METRICS.sent);
    const firstMessage = new Trend(STREAM_METRICS.firstMessage, true);
    const largestGap = new Trend(STREAM_METRICS.largestGap, true);
    const failedSessions = new Counter(STREAM_METRICS.failed);
    // One relay per iteration, a WebSocket (server/http.js): the VU's next sample, a stream, sent as text frames (or
    // binary ones, RELAY_FRAMES=binary) once the connection is open; closed once each message has its answer. The first answer is timed from the connection's
    // start, and the largest gap between two answers, with k6's JavaScript clock (whole milliseconds). k6 ends the iteration when the socket has closed.
    // RELAY_FRAMES=binary: the streams in protobuf, decoded from base64 once, sent as binary frames (ArrayBuffers).
    const binary = plan.binary ? { b64decode: require('k6/encoding').b64decode, frames: own.ownFrames() } : null;
    /** @type {Array<Array<string|ArrayBuffer>>|null} */
    let frames = null;
    iterations.stream = () => {
      if (frames === null) {
        frames = binary ? own.ownShare(binary.frames, (stream) => stream.map((b64) => binary.b64decode(b64, 'std')), plan.vus)
          : bodies ? bodies.map((body) => JSON.parse(String(body)).map((m) => JSON.stringify(m)))
            : own.ownShare(samples, (stream) => stream.map((m) => JSON.stringify(m)), plan.vus);
        count = frames.length;
      }
      const stream = frames[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      const started = Date.now();
      let received = 0;
      let last = started;
      let largest = 0;
      let failed = false;
      const ws = new WebSocket(url);
      if (binary) ws.binaryType = 'arraybuffer';
      ws.onopen = () => {
        for (let i = 0; i < stream.length; i++) ws.send(stream[i]);
        sentMessages.add(stream.length);
      };
      ws.onmessage = () => {
        const now = Date.now();
        if (received++ === 0) firstMessage.add(now - started);
        else if (now - last > largest) largest = now - last;
        last = now;
        if (received === stream.length) ws.close();
      };
      ws.onerror = () => {
        failed = true;
      };
      ws.onclose = () => {
        messages.add(received);
        if (received > 1) largestGap.add(largest);
        if (failed || received < stream.length) failedSessions.add(1);
      };
    };
  }
  return {
    options: control?.options,
    setup: control?.setup,
    iteration: plan.stream ? iterations.stream : plan.post ? iterations.post : params === undefined ? iterations.get : iterations.getWithParams,
    handleSummary: control?.handleSummary,
  };
}
