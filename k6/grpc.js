// The gRPC side of the comparison: one unary RPC per iteration, protobuf on the wire.
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { PROTO_FILE, rpcPath, SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, CONNECTIONS, DESCRIPTOR_SET, isThePayload, OWN, ownShare, REQUEST_TIMEOUT, requestsTimedOut, RUN_SHAPE, SAMPLE_EVERY, SCENARIO, summaryModeOr, TLS_CA_PEM,
} from './common.js';
import { summaryHandler } from './summary.js';

// k6 counts HTTP failures in http_req_failed; the summary's grpc_req_failed is its twin for gRPC, one call per sample
// (withRequestsFailed). Calls are counted as k6 counts iterations, one call each, and only failures as they happen: a
// Rate sampled on every call cost k6 about 5% of its throughput against a minimal script (docs/profiling.md).
const failures = new Counter('grpc_req_failures');
// Read once: a property of the module object costs goja a lookup on every call.
const OK = grpc.StatusOK;
const DEADLINE_EXCEEDED = grpc.StatusDeadlineExceeded;
const TIMEOUT = REQUEST_TIMEOUT === null ? {} : { timeout: REQUEST_TIMEOUT };
const PARAMS = TIMEOUT;
const SKIP_DECODE = { discardResponseMessage: true, ...TIMEOUT };

/**
 * Builds the exports of a gRPC k6 script. Must be called in the init context (it
 * loads the .proto). With CONNECTIONS=reuse (default) each VU opens one
 * connection on its first iteration and keeps it; with per-request it connects
 * and closes every iteration. Its summary names the mode `grpc`, or SUMMARY_MODE (the connect-grpc mode runs it too).
 * @param {{host: string, target: 'local'|'remote'}} run host:port of the server, and which script
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function grpcTest({ host, target }) {
  const client = new grpc.Client();
  // The user's schema (RPC): a FileDescriptorSet, or a .proto with its import paths; else the demo's.
  if (OWN && DESCRIPTOR_SET.test(OWN.proto)) client.loadProtoset(OWN.proto);
  else if (OWN) client.load(OWN.importPaths, OWN.proto);
  else client.load(['../proto'], PROTO_FILE);
  const { rpc, request } = OWN ? { rpc: OWN.rpc, request: null } : SCENARIOS[SCENARIO];
  const method = OWN ? OWN.rpc : rpcPath(rpc);
  // The requests sent in turn: the scenario's one request, or the VU's share of the user's samples (its first call).
  let requests = OWN ? null : [request];
  let count = 1;
  let turn = 0;
  const mode = summaryModeOr('grpc');
  // A counter inline, not a sampler function: k6 runs this on every iteration (docs/profiling.md).
  const every = SAMPLE_EVERY;
  let calls = 0;
  const reuse = CONNECTIONS === 'reuse';
  let connected = false;
  // Cleartext (h2c) unless TLS_CA is given: then TLS, verified against that CA only (k6/common.js).
  // @types/k6 declares tls.cert and tls.key required; they are the client's certificate (mutual TLS), which k6 sends
  // only when given (k6 v1.8.1 runs this without them: test/integration/tls.test.js).
  /** @type {import('k6/net/grpc').ConnectParams} */
  const transport = TLS_CA_PEM === null ? { plaintext: true }
    : /** @type {import('k6/net/grpc').ConnectParams} */ (/** @type {unknown} */ ({ tls: { cacerts: [TLS_CA_PEM] } }));

  return {
    options: baseOptions,
    // Fails fast, naming the host, when no server answers; returns one message for the report.
    setup() {
      try {
        client.connect(host, { ...transport, timeout: '5s' });
      } catch (err) {
        exec.test.abort(`cannot reach the gRPC server at ${host}: ${err.message || err}`);
      }
      const res = client.invoke(method, OWN ? OWN.requests[0] : requests[0], { timeout: '5s' });
      client.close();
      // Counted like every call (SETUP_CALLS), as http_reqs counts setup()'s request too.
      if (res.status !== OK) {
        failures.add(1);
        exec.test.abort(`gRPC server at ${host} answered ${method} with status ${res.status}: ${res.error && /** @type {{message?: string}} */ (res.error).message}`);
      }
      // An own service's message is the job's to measure (bench.run.own): the demo's types cannot encode it.
      return OWN ? { mode, host, rpc, own: true } : { mode, host, rpc, sample: res.message };
    },
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
          requests = ownShare((message) => message);
          count = requests.length;
        }
        res = client.invoke(method, requests[turn], sampled ? PARAMS : SKIP_DECODE);
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
        if (status === DEADLINE_EXCEEDED) requestsTimedOut.add(1);
      }
      if (sampled) {
        check(res, {
          'status is OK': (r) => r.status === OK,
          'message is the payload': (r) => isThePayload(r.message),
        });
      }
    },
    handleSummary: summaryHandler({ mode, target, host, ...RUN_SHAPE }, withRequestsFailed),
  };
}

/** The calls setup() makes: one, which the summary counts among the requests (withRequestsFailed). */
const SETUP_CALLS = 1;

/**
 * The summary with grpc_req_failed, k6's http_req_failed for gRPC: a rate whose samples are the calls (passes: those that
 * ended in a status other than OK, UNAVAILABLE for a refused connection, or could not be made), in place of the grpc_req_failures counter it is made from. The
 * calls are the iterations k6 counts (each makes one; k6 counts an iteration that threw, not one cut off at the end) and
 * setup()'s. k6's own grpc_req_duration cannot count them: it has no sample for a call that reached its deadline.
 * @param {{metrics: Record<string, {type: string, contains: string, values: Record<string, number>}>}} data k6's summary
 * @returns {object} the same summary, its metrics with grpc_req_failed and without grpc_req_failures
 */
export function withRequestsFailed(data) {
  const { grpc_req_failures: counted, ...metrics } = data.metrics;
  const failed = counted?.values.count ?? 0;
  const calls = (metrics.iterations?.values.count ?? 0) + SETUP_CALLS;
  const values = { rate: failed / calls, passes: failed, fails: calls - failed };
  return { ...data, metrics: { ...metrics, grpc_req_failed: { type: 'rate', contains: 'default', values } } };
}
