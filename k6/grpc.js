// The gRPC side of the comparison: the unary GetUser over one HTTP/2 connection per VU.
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';
import { GET_USER_RPC, PROTO_FILE } from '../proto/payload.js';
import { baseOptions, isTheUser, sampler } from './common.js';
import { summaryHandler } from './summary.js';

// k6 counts HTTP failures in http_req_failed; this is its twin for gRPC, one sample per call.
const grpcReqFailed = new Rate('grpc_req_failed');
const SKIP_DECODE = { discardResponseMessage: true };

/**
 * Builds the exports of a gRPC k6 script. Must be called in the init context (it loads the .proto).
 * @param {{host: string, target: 'local'|'remote'}} run host:port of the server, and which script
 * @returns {{options: object, setup: Function, iteration: Function, handleSummary: Function}}
 */
export function grpcTest({ host, target }) {
  const client = new grpc.Client();
  client.load(['../proto'], PROTO_FILE);
  const sampled = sampler();
  let connected = false;
  return {
    options: baseOptions,
    // Fails fast, naming the host, when no server answers; returns one message for the report.
    setup() {
      try {
        client.connect(host, { plaintext: true, timeout: '5s' });
      } catch (err) {
        exec.test.abort(`cannot reach the gRPC server at ${host}: ${err.message || err}`);
      }
      const res = client.invoke(GET_USER_RPC, {});
      client.close();
      if (res.status !== grpc.StatusOK) {
        exec.test.abort(`gRPC server at ${host} answered ${GET_USER_RPC} with status ${res.status}: ${res.error && res.error.message}`);
      }
      return { mode: 'grpc', host, sample: res.message };
    },
    iteration() {
      // One connection per VU, opened on its first iteration and reused after.
      if (!connected) {
        client.connect(host, { plaintext: true });
        connected = true;
      }
      if (!sampled()) {
        grpcReqFailed.add(client.invoke(GET_USER_RPC, {}, SKIP_DECODE).status !== grpc.StatusOK);
        return;
      }
      const res = client.invoke(GET_USER_RPC, {});
      grpcReqFailed.add(res.status !== grpc.StatusOK);
      check(res, {
        'status is OK': (r) => r.status === grpc.StatusOK,
        'message is the User': (r) => isTheUser(r.message),
      });
    },
    handleSummary: summaryHandler({ mode: 'grpc', target, host }),
  };
}
