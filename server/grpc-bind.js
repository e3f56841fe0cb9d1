// Binding a grpc-js server, shared by the gRPC listener and its peer (server/grpc.js, server/peer-grpc.js).
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';

/**
 * Binds a grpc-js server to host:port, without TLS unless given credentials.
 * @param {import('@grpc/grpc-js').Server} server
 * @param {string} host an IPv4 or IPv6 address (an IPv6 one is bracketed here)
 * @param {number} port
 * @param {import('@grpc/grpc-js').ServerCredentials} [credentials] default: insecure (h2c)
 * @returns {Promise<void>}
 * @throws {Error & {code?: string}} grpc-js reports every failure of bindAsync as one message, its own defects included;
 *   the errno of an address's failure (EADDRINUSE, EACCES, ...) is recovered into `code`, anything else has none
 */
export async function bindInsecure(server, host, port, credentials = grpc.ServerCredentials.createInsecure()) {
  try {
    await promisify(server.bindAsync.bind(server))(`${host.includes(':') ? `[${host}]` : host}:${port}`,
      credentials);
  } catch (err) {
    const errno = /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL|EAFNOSUPPORT|EINVAL|ENOTFOUND)\b/.exec(err.message)?.[1];
    if (errno) err.code = errno;
    throw err;
  }
}
