// Baseline: bare node:http2 speaking gRPC's unary framing (a length-prefixed
// message, then a grpc-status trailer) with the very protobuf bytes grpc-js
// sends for each scenario, encoded once. What grpc-js adds per call shows as
// the gap between the two in the main job's capacity pass.
// Source of the framing: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md
import http2 from 'node:http2';
import { grpcFrame, methodOf, scenarioKey, scenarioPayloads } from '../proto/index.js';
import { SERVICE_NAME } from '../proto/payload.js';

const GRPC_OK = '0';
const GRPC_INVALID_ARGUMENT = '3';
const GRPC_UNIMPLEMENTED = '12';

/**
 * Starts the bare gRPC server of one worker: a POST to `/<service>/<method>`
 * whose request selects a scenario answers with its framed message and
 * grpc-status 0; an unknown method gets UNIMPLEMENTED, an unknown request INVALID_ARGUMENT.
 * @param {{host: string, port: number}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startBaselineGrpc({ host, port }) {
  const frames = new Map();
  const requestTypes = new Map();
  for (const [key, { rpc, type, message }] of scenarioPayloads({ port, workerPid: process.pid })) {
    frames.set(key, grpcFrame(type.encode(message).finish()));
    requestTypes.set(`/${SERVICE_NAME}/${rpc}`, { rpc, type: methodOf(rpc).resolvedRequestType });
  }
  const sessions = new Set();
  const server = http2.createServer();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const method = requestTypes.get(headers[':path']);
    if (!method) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': GRPC_UNIMPLEMENTED }, { endStream: true });
      return;
    }
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      let frame;
      try {
        // Skip the 5-byte prefix (compressed flag, length) of the one request message.
        frame = frames.get(scenarioKey(method.rpc, method.type.decode(Buffer.concat(chunks).subarray(5))));
      } catch { /* a malformed request is answered like an unknown one */ }
      if (!frame) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': GRPC_INVALID_ARGUMENT }, { endStream: true });
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': GRPC_OK }));
      stream.end(frame);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, resolve);
  });
  return {
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.close();
    }),
    forceClose: () => { for (const session of sessions) session.destroy(); },
  };
}
