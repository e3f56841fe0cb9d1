// A gRPC script's run as VU 0 decides it (k6/grpc.js): the settings read and checked, the options, setup() and the
// summary, and the plan that every iterating VU reads.
import exec from 'k6/execution';
import grpc from 'k6/net/grpc';
import { MESSAGE_ANSWER } from '../proto/checks.js';
import { PROTO_FILE, rpcPath, SCENARIOS } from '../proto/payload.js';
import {
  baseOptions, CONNECTIONS, DESCRIPTOR_SET, hostOf, OPEN_STREAMS, OWN, OWN_ONE_REQUEST, positiveIntEnv, REQUEST_TIMEOUT, RUN_SHAPE, SAMPLE_EVERY, SCENARIO, summaryModeOr,
  TLS_CA_PEM,
} from './common.js';
import { STREAM_METRICS } from './settings.js';
import { summaryHandler } from './summary.js';

/**
 * @typedef {object} GrpcPlan what an iterating VU of a gRPC script needs, as plain data (k6's SharedArray keeps JSON)
 * @property {string} host host:port
 * @property {{protoset: string}|{importPaths: string[], proto: string}} schema how k6's client loads the schema: a
 *   FileDescriptorSet (loadProtoset), or a .proto and its import paths (load)
 * @property {string} method `package.Service/Method`
 * @property {'server'|'client'|'bidi'|null} stream a streaming RPC (-e STREAM): each call a k6 Stream, a server stream read
 *   to its end, a client stream's messages (a request sample is then a stream of them) written then its answer read, a
 *   relay's messages written and its answers read
 * @property {object|null} request the request message: the demo's, or the user's one sample; null: the user's many
 *   samples, which each VU takes its share of on its first call (k6/own.js ownShare)
 * @property {number|null} vus -e VUS, for ownShare; null: the VUs this k6 process started
 * @property {import('../proto/checks.js').AnswerShape} answer what a sampled answer must be
 * @property {object} params of a sampled call (REQUEST_TIMEOUT's timeout, if given)
 * @property {object} unsampled of every other call: the same, and the answer not decoded
 * @property {boolean} reuse one connection per VU (CONNECTIONS=reuse), else one per call
 * @property {object} transport k6's connect params: cleartext (h2c), or TLS verified against TLS_CA's PEM only
 * @property {number} every one response in this many is decoded and checked (SAMPLE_EVERY)
 * @property {import('./common.js').OpenStreams|null} open STREAMS=N: each VU holds its share of N streams at once
 *   (k6/open-streams.js); null: one call per iteration
 */

/** The calls setup() makes: one, which the summary counts among the requests (withRequestsFailed). */
const SETUP_CALLS = 1;

/**
 * The run of a gRPC script, for VU 0. With CONNECTIONS=reuse (default) each VU opens one connection on its first
 * iteration and keeps it; with per-request it connects and closes every iteration. Its summary names the mode `grpc`,
 * or SUMMARY_MODE (the connect-grpc mode runs it too).
 * @param {{hostSetting: string, target: 'local'|'remote'}} run the server's host:port as config.js names it
 *   (LOCAL_GRPC_HOST, …), and which script
 * @returns {{plan: GrpcPlan, options: object, setupWith: (client: object, failures: {add: (n: number) => void}) => () => object,
 *   handleSummary: (data: object) => Record<string, string>}} setupWith: setup() over the VU's loaded client, counting
 *   a failed call in the script's counter
 * @throws {Error} one line, when a setting is not valid (k6 then stops at init with it)
 */
export function grpcRun({ hostSetting, target }) {
  const host = hostOf(hostSetting);
  const mode = summaryModeOr('grpc');
  // The user's schema (RPC): a FileDescriptorSet, or a .proto with its import paths; else the demo's, relative to k6/.
  const schema = OWN && DESCRIPTOR_SET.test(OWN.proto) ? { protoset: OWN.proto }
    : OWN ? { importPaths: OWN.importPaths, proto: OWN.proto } : { importPaths: ['../proto'], proto: PROTO_FILE };
  const { rpc, request } = OWN ? { rpc: OWN.rpc, request: null } : SCENARIOS[SCENARIO];
  const timeout = REQUEST_TIMEOUT === null ? {} : { timeout: REQUEST_TIMEOUT };
  /** @type {GrpcPlan} */
  const plan = {
    host,
    schema,
    method: OWN ? OWN.rpc : rpcPath(rpc),
    stream: OWN ? OWN.stream : null,
    request: OWN ? OWN_ONE_REQUEST : request,
    vus: positiveIntEnv('VUS', null),
    answer: OWN ? MESSAGE_ANSWER : SCENARIOS[SCENARIO].answer,
    params: timeout,
    unsampled: { discardResponseMessage: true, ...timeout },
    reuse: CONNECTIONS === 'reuse',
    // @types/k6 declares tls.cert and tls.key required; they are the client's certificate (mutual TLS), which k6 sends
    // only when given (k6 v1.8.1 runs this without them: test/integration/tls.test.js).
    transport: TLS_CA_PEM === null ? { plaintext: true } : { tls: { cacerts: [TLS_CA_PEM] } },
    every: SAMPLE_EVERY,
    open: OPEN_STREAMS,
  };
  return {
    plan,
    options: baseOptions,
    // Fails fast, naming the host, when no server answers; returns one message for the report.
    setupWith: (client, failures) => () => {
      try {
        client.connect(host, { ...plan.transport, timeout: '5s' });
      } catch (err) {
        exec.test.abort(`cannot reach the gRPC server at ${host}: ${err.message || err}`);
      }
      if (plan.stream) return streamSetup(client, plan, failures, { mode, host, rpc, own: true });
      const res = client.invoke(plan.method, plan.request ?? OWN.requests[0], { timeout: '5s' });
      client.close();
      // Counted like every call (SETUP_CALLS), as http_reqs counts setup()'s request too.
      if (res.status !== grpc.StatusOK) {
        failures.add(1);
        exec.test.abort(`gRPC server at ${host} answered ${plan.method} with status ${res.status}: ${res.error && res.error.message}`);
      }
      // An own service's message is the job's to measure (bench.run.own): the demo's types cannot encode it.
      return OWN ? { mode, host, rpc, own: true } : { mode, host, rpc, sample: res.message };
    },
    handleSummary: summaryHandler({ mode, target, host, ...RUN_SHAPE }, withRequestsFailed),
  };
}

/**
 * setup() of a streaming RPC: one call (a server stream read to its end, or with STREAMS to its first message; a client
 * stream's or a relay's first sample sent), which must bring at least one message and no error (else the test aborts, naming the host); counted like every call.
 * @param {object} client the VU's client, connected
 * @param {GrpcPlan} plan
 * @param {{add: (n: number) => void}} failures
 * @param {object} data what setup() returns
 * @returns {object} data
 */
function streamSetup(client, plan, failures, data) {
  let messages = 0;
  let failed = null;
  // STREAMS: a paced server stream may last a minute: its first message is answer enough, the connection then closed.
  const first = plan.open !== null && plan.stream === 'server';
  const stream = new grpc.Stream(client, plan.method, { timeout: '5s' });
  stream.on('data', () => {
    if (messages++ === 0 && first) client.close();
  });
  stream.on('error', (err) => {
    if (!(first && messages > 0)) failed = err;
  });
  stream.on('end', () => {
    client.close();
    if (failed || messages === 0) {
      failures.add(1);
      exec.test.abort(`gRPC server at ${plan.host} answered the stream ${plan.method} with `
        + `${failed ? `an error: ${failed.message}` : 'no message'}`);
    }
  });
  const request = plan.request ?? OWN.requests[0];
  for (const message of plan.stream === 'server' ? [request] : request) stream.write(message);
  stream.end();
  return data;
}

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
  // With STREAMS an iteration holds many calls: the script counts them (k6/open-streams.js).
  const calls = (metrics[STREAM_METRICS.opened]?.values.count ?? metrics.iterations?.values.count ?? 0) + SETUP_CALLS;
  const values = { rate: failed / calls, passes: failed, fails: calls - failed };
  return { ...data, metrics: { ...metrics, grpc_req_failed: { type: 'rate', contains: 'default', values } } };
}
