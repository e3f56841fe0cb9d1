// The gRPC side of the comparison: one unary RPC per iteration, protobuf on the wire.
//
// As in k6/http.js, VU 0 alone (k6's first init, and the one that runs setup() and handleSummary) loads the project's
// settings, checks and summary (k6/grpc-run.js) and writes the plan; the VUs that iterate read the plan and evaluate
// only this module, since each VU keeps what its init evaluated (docs/profiling.md).
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import { SharedArray } from 'k6/data';
import { Counter, Trend } from 'k6/metrics';

/**
 * Builds the exports of a gRPC k6 script; in the init context, where k6 lets a client load the schema.
 * @param {{hostSetting: string, target: 'local'|'remote'}} run the server's host:port as config.js names it, and which
 *   script (k6/grpc-run.js grpcRun)
 * @returns {{options: object|undefined, setup: Function|undefined, iteration: () => void, handleSummary: Function|undefined}}
 *   options, setup and handleSummary in VU 0 only, where k6 reads and calls them
 */
export function grpcTest(run) {
  // The same five lines as k6/http.js's, not a module both import: every module costs each VU (docs/profiling.md).
  const control = __VU === 0 ? require('./grpc-run.js').grpcRun(run) : null;
  // Made once per k6 process, by VU 0; the others get its copy and never call this.
  const plan = new SharedArray('grpc plan', () => [control.plan])[0];
  // No request of its own: the user's many samples, and only then does a VU load k6/own.js.
  const own = plan.request === null ? require('./own.js') : null;
  const samples = own ? own.ownSamples() : null;
  const isThePayload = require('../proto/checks.js').checkOf(plan.answer);
  // k6 counts HTTP failures in http_req_failed; the summary's grpc_req_failed is its twin for gRPC (k6/grpc-run.js
  // withRequestsFailed), made from this counter of the calls that failed, as they happen: a Rate sampled on every call
  // cost k6 about 5% of its throughput against a minimal script (docs/profiling.md).
  const failures = new Counter('grpc_req_failures');
  // Requests that reached REQUEST_TIMEOUT (DeadlineExceeded; HTTP's are k6's error code 1050).
  const timedOut = new Counter('requests_timed_out');
  const client = new grpc.Client();
  const { schema } = plan;
  if ('protoset' in schema) client.loadProtoset(schema.protoset);
  else client.load(schema.importPaths, schema.proto);
  // Closure copies of what every call reads: goja reads module-level bindings and properties more slowly.
  const OK = grpc.StatusOK;
  const DEADLINE_EXCEEDED = grpc.StatusDeadlineExceeded;
  const { host, method, params, unsampled, reuse, every } = plan;
  const transport = /** @type {import('k6/net/grpc').ConnectParams} */ (plan.transport);
  // The requests sent in turn: the scenario's one request, or the VU's share of the user's samples (its first call).
  let requests = own ? null : [plan.request];
  let count = 1;
  let turn = 0;
  // A counter inline, not a sampler function: k6 runs this on every iteration (docs/profiling.md).
  let calls = 0;
  let connected = false;
  // STREAMS=N: the VU holds its share of N streams at once on its connection (k6/open-streams.js), loaded only then.
  if (plan.open) {
    const next = () => {
      if (requests === null) {
        requests = own.ownShare(samples, (message) => message, plan.vus);
        count = requests.length;
      }
      const request = requests[turn];
      turn = turn + 1 === count ? 0 : turn + 1;
      return request;
    };
    const iteration = require('./open-streams.js').grpcOpenStreams(plan.open, {
      Stream: grpc.Stream, client, connect: () => client.connect(host, transport), method, params: unsampled, relay: plan.stream === 'bidi',
      next, failures,
    });
    return { options: control?.options, setup: control?.setupWith(client, failures), iteration, handleSummary: control?.handleSummary };
  }
  if (plan.stream) {
    const { STREAM_METRICS } = require('./settings.js');
    const clientStream = plan.stream === 'client';
    // A relay sends its sample, a stream, as a client stream does, and reads its answers as a server stream does.
    const sends = plan.stream !== 'server';
    const reads = !clientStream;
    const messages = reads ? new Counter(STREAM_METRICS.messages) : null;
    const sentMessages = sends ? new Counter(STREAM_METRICS.sent) : null;
    const firstMessage = reads ? new Trend(STREAM_METRICS.firstMessage, true) : null;
    const largestGap = reads ? new Trend(STREAM_METRICS.largestGap, true) : null;
    const streamParams = { ...unsampled };
    return {
      options: control?.options,
      setup: control?.setupWith(client, failures),
      // One stream per iteration, read to its end (k6 ends the iteration once the stream's events are done). A server
      // stream's first message and the largest gap between two are timed here, with k6's JavaScript clock (Date.now, whole milliseconds: k6 has no finer
      // one); a client stream sends its sample's messages, then reads the answer; a relay sends its sample's messages and
      // reads an answer to each (the server ends the call once this side ended and it answered). The whole call is k6's
      // own grpc_req_duration.
      // The connection and the VU's share as the unary iteration below has them, written again: that one calls nothing of
      // the project's on its way to k6's (measured above).
      iteration() {
        if (!connected) {
          client.connect(host, transport);
          connected = reuse;
        }
        if (requests === null) {
          requests = own.ownShare(samples, (message) => message, plan.vus);
          count = requests.length;
        }
        const request = requests[turn];
        turn = turn + 1 === count ? 0 : turn + 1;
        const started = Date.now();
        let received = 0;
        let last = started;
        let largest = 0;
        const stream = new grpc.Stream(client, method, streamParams);
        // Each message's arrival, in whole milliseconds: the first's time, then the largest gap between two (a stall of
        // a token stream), one sample of each a stream so that k6 adds no metric sample per message.
        stream.on('data', () => {
          const now = Date.now();
          if (received++ === 0) {
            if (firstMessage) firstMessage.add(now - started);
          } else if (now - last > largest) largest = now - last;
          last = now;
        });
        stream.on('error', (err) => {
          failures.add(1);
          if (/** @type {{code?: number}} */ (err).code === DEADLINE_EXCEEDED) timedOut.add(1);
        });
        stream.on('end', () => {
          if (reads) {
            messages.add(received);
            if (received > 1) largestGap.add(largest);
          }
          if (!reuse) client.close();
        });
        if (sends) {
          // A client stream's or a relay's sample is the stream: its messages written one by one, as they would be sent.
          for (let i = 0; i < request.length; i++) stream.write(request[i]);
          sentMessages.add(request.length);
        } else {
          stream.write(request);
        }
        stream.end();
      },
      handleSummary: control?.handleSummary,
    };
  }
  return {
    options: control?.options,
    setup: control?.setupWith(client, failures),
    // One function, no call of the project's on the way to k6's: side by side with OTLP traces, it read 1.008
    // (0.987-1.026) of the call made through a function of its own, k6 CPU 1.006 (docs/profiling.md).
    iteration() {
      const sampled = calls++ % every === 0;
      let res;
      try {
        if (!connected) {
          client.connect(host, transport);
          connected = reuse;
        }
        if (requests === null) {
          requests = own.ownShare(samples, (message) => message, plan.vus);
          count = requests.length;
        }
        res = client.invoke(method, requests[turn], sampled ? params : unsampled);
      } catch (err) {
        // The iteration counts as a call: one that could not be made failed. (A refused connection is not this: k6 dials
        // without blocking, and the call ends UNAVAILABLE.)
        failures.add(1);
        throw err;
      }
      turn = turn + 1 === count ? 0 : turn + 1;
      if (!reuse) client.close();
      const status = res.status;
      if (status !== OK) {
        failures.add(1);
        if (status === DEADLINE_EXCEEDED) timedOut.add(1);
      }
      if (sampled) {
        check(res, {
          'status is OK': (r) => r.status === OK,
          'message is the payload': (r) => isThePayload(r.message),
        });
      }
    },
    handleSummary: control?.handleSummary,
  };
}
