// The gRPC listener: @grpc/grpc-js serving the scenarios' unary RPCs, with server reflection
// and the standard health service (grpc.health.v1.Health).
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { loaderPackageDefinition, scenarioKey, scenarioPayloads, userServiceDefinition } from '../proto/index.js';
import { SERVICE_NAME } from '../proto/payload.js';
import { GRPC_HEALTH_SERVICES } from './health.js';
import { servedRequests } from './served.js';

/**
 * Builds and starts the gRPC server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger,
 *   health: import('./health.js').Health, settings: import('./settings.js').ServerSettings}} options
 *   `settings` gives the limit MAX_BODY_BYTES (largest request message), GRPC_CODEC and GRPC_CHANNELZ
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>} `close` stops accepting
 *   and resolves once in-flight calls are answered; `forceClose` cancels the calls left
 * @throws {Error & {code: string}} EADDRINUSE (or the bind's reason) when the port cannot be bound
 */
export async function startGrpc({ host, port, log, health, settings }) {
  // Larger messages are refused with RESOURCE_EXHAUSTED before they are decoded.
  // No 'grpc.max_connection_idle_ms': grpc-js would then do bookkeeping on every call.
  const server = new grpc.Server({
    'grpc.max_receive_message_length': settings.MAX_BODY_BYTES,
    // channelz keeps per-call and per-socket statistics for debugging tools; off unless asked for.
    'grpc.enable_channelz': settings.GRPC_CHANNELZ ? 1 : 0,
  });
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  // GRPC_CODEC=proto-loader answers plain objects through @grpc/proto-loader's codec, which
  // converts each one (fromObject) before encoding it: the common setup, kept to measure its cost.
  const loader = settings.GRPC_CODEC === 'proto-loader';
  const definition = loader ? loaderPackageDefinition()[SERVICE_NAME] : userServiceDefinition();
  const answer = loader ? (payload) => payload.object : (payload) => payload.message;
  const user = answer(payloads.get(scenarioKey('GetUser', {})));
  // Scenarios other than the demo's are found by their request's one parameter.
  const byRequest = (rpc) => (call, callback) => {
    servedRequests.grpc++;
    const hit = payloads.get(scenarioKey(rpc, call.request));
    if (hit) callback(null, answer(hit));
    else callback({ code: grpc.status.INVALID_ARGUMENT, details: `no ${rpc} payload for that request; see SCENARIOS in proto/payload.js` });
  };
  server.addService(definition, {
    GetUser(call, callback) {
      servedRequests.grpc++;
      if (log.isLevelEnabled('debug')) log.debug({ peer: call.getPeer() }, 'GetUser');
      callback(null, user);
    },
    ListUsers: byRequest('ListUsers'),
    GetBlob: byRequest('GetBlob'),
  });
  new ReflectionService(loaderPackageDefinition()).addToServer(server);
  const healthService = new HealthImplementation();
  health.subscribe((serving) => {
    for (const name of GRPC_HEALTH_SERVICES) healthService.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
  });
  healthService.addToServer(server);
  try {
    await promisify(server.bindAsync.bind(server))(`${host.includes(':') ? `[${host}]` : host}:${port}`,
      grpc.ServerCredentials.createInsecure());
  } catch (err) {
    // grpc-js reports bind failures as one message; recover the errno for a clear error.
    err.code = /EADDRINUSE/.test(err.message) ? 'EADDRINUSE' : (/EACCES/.test(err.message) ? 'EACCES' : 'EBIND');
    throw err;
  }
  return {
    close: () => new Promise((resolve) => server.tryShutdown(() => resolve())),
    forceClose: () => server.forceShutdown(),
  };
}
