// The gRPC side of the comparison: one unary RPC per iteration, protobuf on the wire.
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';
import { PROTO_FILE, rpcPath, SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, CONNECTIONS, DESCRIPTOR_SET, isThePayload, OWN, ownShare, REQUEST_TIMEOUT, requestsTimedOut, RUN_SHAPE, SAMPLE_EVERY, SCENARIO, summaryModeOr, TLS_CA_PEM,
} from './common.js';
import { summaryHandler } from './summary.js';

// k6 counts HTTP failures in http_req_failed; this is its twin for gRPC, one sample per call.
const grpcReqFailed = new Rate('grpc_req_failed');
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

  function call(params) {
    if (!connected) {
      client.connect(host, transport);
      connected = reuse;
    }
    if (requests === null) {
      requests = ownShare((message) => message);
      count = requests.length;
    }
    const res = client.invoke(method, requests[turn], params);
    turn = turn + 1 === count ? 0 : turn + 1;
    if (!reuse) client.close();
    grpcReqFailed.add(res.status !== grpc.StatusOK);
    if (res.status === grpc.StatusDeadlineExceeded) requestsTimedOut.add(1);
    return res;
  }

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
      // Counted like every call, so that grpc_req_failed's samples are the requests, as http_reqs counts setup()'s too.
      grpcReqFailed.add(res.status !== grpc.StatusOK);
      if (res.status !== grpc.StatusOK) {
        exec.test.abort(`gRPC server at ${host} answered ${method} with status ${res.status}: ${res.error && /** @type {{message?: string}} */ (res.error).message}`);
      }
      // An own service's message is the job's to measure (bench.run.own): the demo's types cannot encode it.
      return OWN ? { mode, host, rpc, own: true } : { mode, host, rpc, sample: res.message };
    },
    iteration() {
      if (calls++ % every !== 0) {
        call(SKIP_DECODE);
        return;
      }
      check(call(PARAMS), {
        'status is OK': (r) => r.status === grpc.StatusOK,
        'message is the payload': (r) => isThePayload(r.message),
      });
    },
    handleSummary: summaryHandler({ mode, target, host, ...RUN_SHAPE }),
  };
}
