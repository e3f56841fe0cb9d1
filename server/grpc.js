// The gRPC listener: @grpc/grpc-js serving the unary GetUser, with server reflection.
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { reflectionPackageDefinition, userMessage, userServiceDefinition } from '../proto/index.js';

/**
 * Builds and starts the gRPC server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger}} options
 * @returns {Promise<{close: () => Promise<void>}>}
 * @throws {Error & {code: string}} EADDRINUSE (or the bind's reason) when the port cannot be bound
 */
export async function startGrpc({ host, port, log }) {
  const server = new grpc.Server();
  const user = userMessage({ port, workerPid: process.pid });
  server.addService(userServiceDefinition(), {
    GetUser(call, callback) {
      if (log.isLevelEnabled('debug')) log.debug({ peer: call.getPeer() }, 'GetUser');
      callback(null, user);
    },
  });
  new ReflectionService(reflectionPackageDefinition()).addToServer(server);
  try {
    await promisify(server.bindAsync.bind(server))(`${host.includes(':') ? `[${host}]` : host}:${port}`,
      grpc.ServerCredentials.createInsecure());
  } catch (err) {
    // grpc-js reports bind failures as one message; recover the errno for a clear error.
    err.code = /EADDRINUSE/.test(err.message) ? 'EADDRINUSE' : (/EACCES/.test(err.message) ? 'EACCES' : 'EBIND');
    throw err;
  }
  return { close: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}
