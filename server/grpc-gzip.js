// gzip-compressed gRPC responses for grpc-js, which has none of its own.
//
// @grpc/grpc-js 1.14 servers decompress requests but never compress a response: its server call
// frames every message with the compressed flag 0 ("response compression is currently not supported",
// build/src/server-interceptors.js, serializeMessage) and answers `grpc-encoding: identity`; the options
// grpc.default_compression_algorithm and grpc.default_compression_level are read only by client channels
// (compression-filter.js). Open upstream: grpc/grpc-node#1823. So with COMPRESSION=gzip the grpc listener
// does it here, the standard way (PROTOCOL-HTTP2.md, doc/compression.md): a call whose client listed gzip
// in `grpc-accept-encoding` gets `grpc-encoding: gzip` in its response headers and its message gzipped at
// GZIP_LEVEL with the compressed flag 1; any other call gets the raw message as before.
import zlib from 'node:zlib';
import grpc from '@grpc/grpc-js';
// Not part of grpc-js's public API (it has no "exports" map, so the file resolves): checked at start below.
import { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors.js';
import { acceptsGzip, GZIP_LEVEL } from './compression.js';

// Set on an HTTP/2 stream whose request listed gzip in grpc-accept-encoding (grpc-js drops that header
// from the call's metadata, so it is read off the stream's headers before grpc-js sees them).
const kGzip = Symbol('acceptsGzip');
const GZIP = { level: GZIP_LEVEL };

/**
 * The message framed as gRPC sends it, gzipped: flag 1, the compressed length, the compressed bytes.
 * Synchronous like grpc-js's own serializeMessage, which it replaces on the calls that asked for gzip.
 * @this {{handler: {serialize: (value: unknown) => Buffer}}}
 * @param {unknown} value the response message
 * @returns {Buffer}
 */
function serializeGzipped(value) {
  const compressed = zlib.gzipSync(this.handler.serialize(value), GZIP);
  const framed = Buffer.allocUnsafe(compressed.length + 5);
  framed.writeUInt8(1, 0);
  framed.writeUInt32BE(compressed.length, 1);
  compressed.copy(framed, 5);
  return framed;
}

// One responder for every gzipped call: it only names the encoding in the response headers.
const GZIP_RESPONDER = {
  sendMetadata: (metadata, next) => {
    metadata.set('grpc-encoding', 'gzip');
    next(metadata);
  },
};

/**
 * The pieces that make a grpc-js server gzip its responses.
 * @returns {{watch: (http2Server: import('node:http2').Http2Server) => void, interceptor: import('@grpc/grpc-js').ServerInterceptor}}
 *   watch: call on each HTTP/2 server grpc-js builds (GuardedServer's createHttp2Server): its stream listener
 *   goes before grpc-js's own, which builds the call; interceptor: must be the first of the server's interceptors,
 *   the one grpc-js hands its own call object
 * @throws {Error & {code: 'EGZIP'}} when this grpc-js has no serializeMessage to replace
 */
export function gzipResponses() {
  // @ts-expect-error private in grpc-js's types: the method this module replaces per call
  if (typeof BaseServerInterceptingCall?.prototype?.serializeMessage !== 'function') {
    throw Object.assign(new Error('@grpc/grpc-js has no BaseServerInterceptingCall.serializeMessage: COMPRESSION=gzip cannot '
      + 'compress gRPC responses with this version (server/grpc-gzip.js)'), { code: 'EGZIP' });
  }
  return {
    watch(http2Server) {
      http2Server.prependListener('stream', (stream, headers) => {
        if (acceptsGzip(headers['grpc-accept-encoding'])) stream[kGzip] = true;
      });
    },
    interceptor: gzipInterceptor,
  };
}

/**
 * The first interceptor of the server: a call whose stream asked for gzip gets gzipped messages and says so.
 * @type {import('@grpc/grpc-js').ServerInterceptor}
 */
function gzipInterceptor(method, call) {
  // grpc-js types the call as its interface; the first interceptor gets its own class, private fields and all.
  const base = /** @type {any} */ (call);
  // @ts-expect-error grpc-js types an interceptor's result as the class, and takes the interface it was given
  if (!(call instanceof BaseServerInterceptingCall) || !base.stream[kGzip]) return call;
  base.serializeMessage = serializeGzipped; // this one call's (see the top of the file)
  return new grpc.ServerInterceptingCall(call, GZIP_RESPONDER);
}
