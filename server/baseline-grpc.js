// Baseline: bare node:http2 speaking gRPC's unary framing (a length-prefixed
// message, then a grpc-status trailer) with the very protobuf bytes grpc-js
// sends for each scenario, encoded once. What grpc-js adds per call shows as
// the gap between the two in the main job's capacity pass. Bare (issue 24): none of the HTTP/2 guard
// (server/h2-guard.js) and no drain on the request path, so "framework ÷ bare" means what it says; the
// hostile-client tests leave it out (server/listeners.js `hardened`). With TLS_CERT/TLS_KEY it serves TLS (ALPN h2) as
// the compared listeners do, for the client's ceiling under TLS=1 (bench/passes/calibrate.js).
// Source of the framing: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md
import http2 from 'node:http2';
import { grpcFrame } from '../proto/index.js';
import { answerPicker, serviceMethods } from '../proto/methods.js';

const GRPC_OK = '0';
const GRPC_INVALID_ARGUMENT = '3';
const GRPC_UNIMPLEMENTED = '12';

// A stream the client reset (or whose session died) can no longer be answered; respond() would throw.
const answerable = (stream) => !stream.destroyed && !stream.closed && !stream.headersSent;

const ignore = () => {};

const trailersOnly = (stream, grpcStatus) => {
  if (answerable(stream)) stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': grpcStatus }, { endStream: true });
};

/**
 * Starts the bare gRPC server of one worker, over the methods the grpc-js listener serves (proto/methods.js): a POST to
 * a method's path whose request selects a scenario answers with its framed message and grpc-status 0; an unknown method
 * gets UNIMPLEMENTED, an unknown request INVALID_ARGUMENT. A method that answers in turn (the user's RPC, `own`) is
 * answered its response samples' framed messages in turn, the request left undecoded. Every frame encoded once.
 * @param {{host: string, port: number, settings: {MAX_BODY_BYTES: number}, tls: ReturnType<typeof import('./tls.js').tlsServerOptions>,
 *   own?: import('../proto/own/service.js').OwnService|null}} options
 *   MAX_BODY_BYTES: the largest request message, as grpc-js's grpc.max_receive_message_length; tls: the worker's (TLS_CERT/TLS_KEY
 *   with ALPN h2), null for cleartext
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startBaselineGrpc({ host, port, settings, tls, own = null }) {
  // Each method's path to its answer's frame for a call's request bytes: the frame its request selects, or the next in turn.
  const answers = new Map();
  for (const method of serviceMethods({ port, workerPid: process.pid, own })) {
    const { rpc, responses, select } = method;
    const pick = answerPicker(method, responses.messages.map((m) => grpcFrame(rpc.responseType.encode(m).finish())));
    // Skip the 5-byte prefix (compressed flag, length) of the one request message; in turn, it is left undecoded.
    answers.set(rpc.path, select ? (body) => pick(rpc.requestType.decode(body.subarray(5))) : () => pick());
  }
  const server = tls ? http2.createSecureServer(tls) : http2.createServer();
  // Kept for a forced close only: node:http2 has no closeAllConnections.
  const sessions = new Set();
  server.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    // A peer's protocol error or a reset socket ends the session; without a listener it would end the worker.
    session.on('error', ignore);
  });
  server.on('stream', (stream, headers) => {
    // A reset or a broken session surfaces here; the stream is gone either way.
    stream.on('error', ignore);
    const answerOf = answers.get(headers[':path']);
    if (!answerOf) {
      trailersOnly(stream, GRPC_UNIMPLEMENTED);
      return;
    }
    const chunks = [];
    let size = 0;
    stream.on('data', (chunk) => {
      size += chunk.length;
      // Same bound as grpc-js's grpc.max_receive_message_length, plus the 5-byte prefix.
      if (size > settings.MAX_BODY_BYTES + 5) stream.close(http2.constants.NGHTTP2_CANCEL);
      else chunks.push(chunk);
    });
    stream.on('end', () => {
      if (!answerable(stream)) return;
      let frame;
      try {
        frame = answerOf(Buffer.concat(chunks));
      } catch { /* a malformed request is answered like an unknown one */ }
      if (!frame) {
        trailersOnly(stream, GRPC_INVALID_ARGUMENT);
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': GRPC_OK }));
      stream.end(frame);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve(undefined));
  });
  return {
    // Node's close() stops accepting and sends each session its GOAWAY; the sessions end as their streams do.
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.close();
    }),
    forceClose: () => { for (const session of sessions) session.destroy(); },
  };
}
