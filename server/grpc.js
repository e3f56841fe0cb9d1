// The gRPC listener: @grpc/grpc-js serving the scenarios' unary RPCs, with server reflection
// and the standard health service (grpc.health.v1.Health).
import grpc from '@grpc/grpc-js';
// Not exported by grpc-js's index; requireWholeRequestMessages checks that it is there.
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors.js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import {
  loaderPackageDefinition, reflectionPackageDefinition, scenarioKey, scenarioKeyOf, scenarioPayloads, unknownRequestDetails,
  userServiceDefinition,
} from '../proto/index.js';
import { SCENARIOS, SERVICE_NAME } from '../proto/payload.js';
import { guardHttp2Server } from './h2-guard.js';
import { bindInsecure } from './grpc-bind.js';
import { gzipResponses } from './grpc-gzip.js';
import { GRPC_HEALTH_SERVICES } from './health.js';
import { servedRequests } from './served.js';

/**
 * grpc-js's Server, with the HTTP/2 bounds of server/h2-guard.js on each HTTP/2 server it builds.
 * grpc-js has no option for a session listener or the header-list size, and builds its
 * http2 servers in `createHttp2Server` (grpc-js 1.10 to 1.14 at least); startGrpc checks that
 * the override ran, so a grpc-js that stops calling it fails at start, not silently.
 */
function guardedServer(options, guardOptions, onHttp2Server = (http2Server) => void http2Server) {
  const guards = [];
  // @ts-expect-error grpc-js declares createHttp2Server private; overriding it is the only way in (see above).
  class GuardedServer extends grpc.Server {
    createHttp2Server(credentials) {
      // @ts-expect-error the same private method
      const http2Server = super.createHttp2Server(credentials);
      guards.push(guardHttp2Server(http2Server, guardOptions));
      onHttp2Server(http2Server);
      return http2Server;
    }
  }
  return { server: new GuardedServer(options), guards };
}

/**
 * The RPCs the scenarios use, each once, in the registry's order.
 * @param {Record<string, {rpc: string}>} scenarios proto/payload.js SCENARIOS
 * @returns {string[]}
 */
const rpcsOf = (scenarios) => [...new Set(Object.values(scenarios).map((s) => s.rpc))];

/**
 * The INVALID_ARGUMENT a request that selects no scenario gets, naming the allowed values.
 * @param {string} rpc
 * @param {Map<string, {rpc: string, request: object}>} payloads
 * @returns {{code: number, details: string}}
 */
const unknownRequest = (rpc, payloads) => ({ code: grpc.status.INVALID_ARGUMENT, details: unknownRequestDetails(rpc, payloads) });

// What grpc-js 1.10 to 1.14 (build/src/server.js, handleUnary and handleServerStreaming) answers a call of a
// one-message method whose request message never arrived whole: UNIMPLEMENTED with these details.
const NO_REQUEST_MESSAGE = 'Received no request message for ';
const MISSING = { code: grpc.status.INVALID_ARGUMENT, details: 'request message missing or truncated' };
// Marks the HTTP/2 servers whose calls get MISSING instead (the gRPC listener's; not the peer's, which is grpc-js as it comes).
const kWholeMessages = Symbol('wholeRequestMessages');
let wholeMessagesInstalled = false;

/**
 * Makes the calls of `http2Server` answer a call of a one-message method whose request message never arrived whole
 * (the stream ended inside the 5-byte prefix or the message) with INVALID_ARGUMENT. grpc-js's own answer is
 * UNIMPLEMENTED "Received no request message for ...", which reads as a server fault. grpc-js has no option for it, so
 * its call class (BaseServerInterceptingCall, grpc-js 1.10 to 1.14) gets a sendStatus that rewrites that one answer,
 * once per process: an interceptor that stored a sendStatus on every call cost 3–5% of the listener's RPS at h2load
 * -m1 (docs/profiling.md). Every other status, and every call of an unmarked server, passes unchanged.
 * @returns {(http2Server: import('node:http2').Http2Server) => void} marks one HTTP/2 server grpc-js built
 *   (createHttp2Server): its calls get INVALID_ARGUMENT
 * @throws {Error & {code: 'EGUARD'}} when this grpc-js's call class has no sendStatus to wrap
 */
export function requireWholeRequestMessages() {
  const mark = (http2Server) => { http2Server[kWholeMessages] = true; };
  if (wholeMessagesInstalled) return mark;
  const proto = BaseServerInterceptingCall?.prototype;
  const own = proto?.sendStatus;
  if (typeof own !== 'function') {
    throw Object.assign(new Error('this @grpc/grpc-js has no BaseServerInterceptingCall.sendStatus: a missing request message '
      + 'cannot be answered with INVALID_ARGUMENT'), { code: 'EGUARD' });
  }
  /** @this {{stream?: {session?: {server?: object}}}} the call (its stream is private in grpc-js's types; a server session has its server) */
  proto.sendStatus = function sendStatus(status) {
    if (status.code === grpc.status.UNIMPLEMENTED && status.details?.startsWith(NO_REQUEST_MESSAGE)
      && this.stream?.session?.server?.[kWholeMessages]) {
      own.call(this, { ...MISSING, metadata: new grpc.Metadata() });
    } else {
      own.call(this, status);
    }
  };
  wholeMessagesInstalled = true;
  return mark;
}

/**
 * Builds and starts the gRPC server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger,
 *   health: import('./health.js').Health, settings: import('./settings.js').ServerSettings}} options
 *   `settings` gives the limit MAX_BODY_BYTES (largest request message), GRPC_CODEC, GRPC_CHANNELZ,
 *   COMPRESSION (gzip: responses gzipped for clients that list gzip in grpc-accept-encoding, server/grpc-gzip.js)
 *   and the HTTP/2 bounds (H2_*)
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>} `close` announces the
 *   shutdown (GOAWAY with the largest stream id, a PING), then stops accepting and resolves once
 *   in-flight calls are answered; `forceClose` cancels the calls left
 * @throws {Error & {code: string}} EADDRINUSE (or the bind's reason) when the port cannot be bound; EGZIP when
 *   COMPRESSION=gzip and this grpc-js cannot be made to compress
 */
export async function startGrpc({ host, port, log, health, settings }) {
  // grpc-js compresses no response itself; with COMPRESSION=gzip its first interceptor does (server/grpc-gzip.js).
  const gzip = settings.COMPRESSION === 'gzip' ? gzipResponses() : null;
  const wholeMessages = requireWholeRequestMessages();
  // Larger messages are refused with RESOURCE_EXHAUSTED before they are decoded.
  // No 'grpc.max_connection_idle_ms': grpc-js would then do bookkeeping on every call.
  const { server, guards } = guardedServer({
    'grpc.max_receive_message_length': settings.MAX_BODY_BYTES,
    // channelz keeps per-call and per-socket statistics for debugging tools; off unless asked for.
    'grpc.enable_channelz': settings.GRPC_CHANNELZ ? 1 : 0,
    // Announced in SETTINGS; the guard announces it again, with the header-list size.
    'grpc.max_concurrent_streams': settings.H2_MAX_CONCURRENT_STREAMS,
    // Clients reconnect, and so spread over the workers (node:cluster balances connections, not calls).
    ...(settings.GRPC_MAX_CONNECTION_AGE_MS ? {
      'grpc.max_connection_age_ms': settings.GRPC_MAX_CONNECTION_AGE_MS,
      'grpc.max_connection_age_grace_ms': settings.SHUTDOWN_TIMEOUT_MS,
    } : {}),
    ...(gzip ? { interceptors: [gzip.interceptor] } : {}),
  }, { settings, log, listener: 'grpc' }, (http2Server) => {
    wholeMessages(http2Server);
    gzip?.watch(http2Server);
  });
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  // GRPC_CODEC=proto-loader answers plain objects through @grpc/proto-loader's codec, which
  // converts each one (fromObject) before encoding it: the common setup, kept to measure its cost.
  const loader = settings.GRPC_CODEC === 'proto-loader';
  const definition = loader
    ? /** @type {grpc.ServiceDefinition} */ (loaderPackageDefinition()[SERVICE_NAME]) : userServiceDefinition();
  const answer = loader ? (payload) => payload.object : (payload) => payload.message;
  const user = answer(payloads.get(scenarioKey('GetUser', {})));
  // Scenarios other than the demo's are found by their request's one parameter.
  const byRequest = (rpc) => {
    const refusal = unknownRequest(rpc, payloads);
    const keyOf = scenarioKeyOf(rpc);
    return (call, callback) => {
      servedRequests.grpc++;
      const hit = payloads.get(keyOf(call.request));
      if (hit) callback(null, answer(hit));
      else callback(refusal);
    };
  };
  server.addService(definition, {
    GetUser(call, callback) {
      servedRequests.grpc++;
      if (log.isLevelEnabled('debug')) log.debug({ peer: call.getPeer() }, 'GetUser');
      callback(null, user);
    },
    // Every other RPC a scenario uses (proto/payload.js), each answering by its request's one parameter.
    ...Object.fromEntries(rpcsOf(SCENARIOS).filter((rpc) => rpc !== 'GetUser').map((rpc) => [rpc, byRequest(rpc)])),
  });
  new ReflectionService(reflectionPackageDefinition()).addToServer(server);
  const healthService = new HealthImplementation();
  health.subscribe((serving) => {
    for (const name of GRPC_HEALTH_SERVICES) healthService.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
  });
  healthService.addToServer(server);
  // The errno of an address's failure is the error's code, for a clear error (server/worker.js).
  await bindInsecure(/** @type {grpc.Server} */ (/** @type {unknown} */ (server)), host, port);
  if (guards.length === 0) {
    server.forceShutdown();
    throw Object.assign(new Error('grpc-js built its HTTP/2 server without createHttp2Server: the HTTP/2 bounds '
      + '(server/h2-guard.js) cannot apply to this @grpc/grpc-js version'), { code: 'EGUARD' });
  }
  return {
    close: async () => {
      await Promise.all(guards.map((guard) => guard.announceShutdown()));
      await new Promise((resolve) => server.tryShutdown(() => resolve()));
    },
    forceClose: () => server.forceShutdown(),
  };
}
