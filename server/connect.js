// The connect-node listeners: @connectrpc/connect-node serving the demo's RPCs (the scenarios' unary ones and the
// server stream StreamUsers) with the @bufbuild/protobuf code generated from user.proto (proto/gen/, `npm run
// gen:proto`), as a user who picks connect-node instead of grpc-js would write it. One handler, two listeners (server/listeners.js):
// - connect-grpc: the gRPC protocol over HTTP/2 without TLS (h2c), on node:http2;
// - connect-json: the Connect protocol over HTTP/1.1 on node:http, unary POST with a JSON (or binary) body, and GET
//   for the methods user.proto marks free of side effects (idempotency_level = NO_SIDE_EFFECTS).
// With RPC set, both serve the user's own RPC too (docs/own-message.md), from @bufbuild/protobuf descriptors of PROTO
// (proto/own/descriptors.js), answering the response samples in turn.
// Both carry the hardening of the project's other listeners of their transport (server/h2-guard.js, server/h1-guard.js),
// and answer the standard health check (grpc.health.v1.Health/Check, from the worker's state). connect-node has no
// health or reflection service of its own (connectrpc/connect-es#797, #507): Check is written here, Watch and List are
// left UNIMPLEMENTED (the protocol's way of saying so), and there is no reflection (grpcurl takes -proto user.proto).
import http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Code, ConnectError } from '@connectrpc/connect';
import { compressionGzip, connectNodeAdapter } from '@connectrpc/connect-node';
import { answerPicker, demoMethods, ownMethod, streamPicker } from '../proto/methods.js';
import { ownDescriptors } from '../proto/own/descriptors.js';
import { esMessageOf, esMessagesOf } from '../proto/own/json.js';
import { inTurn } from '../proto/own/service.js';
import { UserService } from '../proto/gen/user_pb.js';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '../proto/gen/health/v1/health_pb.js';
import { GRPC_HEALTH_SERVICES } from './health.js';
import { guardedHttp1Server } from './h1-guard.js';
import { guardHttp2Server, h2Settings } from './h2-guard.js';
import { countMessages, dropStream, endStream, openStream, refused, REJECTED, servedRequests } from './served.js';
import { admitAnswer, admitStream } from './memory-budget.js';

// The proto3 JSON the other listeners send: every field, its default value included (proto/index.js PROTO3_JSON).
const JSON_OPTIONS = Object.freeze({ alwaysEmitImplicit: true });

const OVER_BUDGET = 'the server is past its memory budget; retry later';


/** The listener each protocol of connect-node is served on, its refusals' label (server/served.js). */
const LISTENER_OF = { grpc: 'connect-grpc', connect: 'connect-json' };

/**
 * connect-node's implementation of user.v1.UserService for one listener: each of the demo's methods
 * (proto/methods.js demoMethods) answers the scenario its request selects with a message built once, from the same
 * proto3 JSON the other listeners serve; a request that selects none gets INVALID_ARGUMENT with the method's refusal
 * (e.g. 'count must be one of 100'); its server stream, StreamUsers, answers the stream of Users (serverStreamOf).
 * @param {{port: number, workerPid: number}} who the listener's port and the worker's pid, as the payload carries them
 * @param {string} [listener] the name its refusals are counted under (server/served.js); default 'connect-grpc'
 * @param {{intervalMs?: number}} [options] STREAM_INTERVAL, ms between a server stream's messages (default 0)
 * @returns {Record<string, (request: object, context?: object) => object>} by the method's local name (getUser,
 *   listUsers, getBlob, streamUsers)
 */
export function userServiceImpl(who, listener = 'connect-grpc', { intervalMs = 0 } = {}) {
  /** @type {Record<string, (request: any, context?: any) => any>} */
  const impl = {};
  for (const method of demoMethods(who, { streams: true })) {
    const desc = UserService.methods.find((m) => m.name === method.rpc.method);
    const toMessage = esMessageOf(method.rpc, desc.output, undefined);
    const answers = method.responses.messages.map((m, i) => ({ message: toMessage(m), bytes: method.responses.protobufBytes[i] }));
    if (method.rpc.responseStream) {
      impl[desc.localName] = serverStreamOf(streamPicker(method, answers), listener, intervalMs, method.refusal);
      continue;
    }
    const pick = answerPicker(method, answers);
    impl[desc.localName] = (request) => {
      const hit = pick(request);
      if (!hit) throw refused(listener, REJECTED.NO_ANSWER, new ConnectError(method.refusal, Code.InvalidArgument));
      if (!admitAnswer(hit.bytes)) throw refused(listener, REJECTED.OVER_BUDGET, new ConnectError(OVER_BUDGET, Code.ResourceExhausted));
      servedRequests.connect++;
      return hit.message;
    };
  }
  return impl;
}

/**
 * A server stream's connect-node handler, an async generator: each call the response stream its request picks, paced
 * by `intervalMs`, stopped when the client goes away; its messages and how it ended counted (server/served.js). A
 * request that picks none is refused with INVALID_ARGUMENT and `refusal`.
 * @param {(request?: any) => Array<{message: any}>|null} nextStream the call's response stream (proto/methods.js
 *   streamPicker)
 * @param {string} listener the name its counts go under
 * @param {number} intervalMs ms between two messages
 * @param {string} [refusal] why a request picks no stream (the method's refusal)
 * @returns {(request: any, context: {signal: AbortSignal}) => AsyncGenerator<any>}
 */
function serverStreamOf(nextStream, listener, intervalMs, refusal = '') {
  return async function* serverStream(request, context) {
    const stream = nextStream(request);
    if (!stream) throw refused(listener, REJECTED.NO_ANSWER, new ConnectError(refusal, Code.InvalidArgument));
    if (!admitStream(stream)) throw refused(listener, REJECTED.OVER_BUDGET, new ConnectError(OVER_BUDGET, Code.ResourceExhausted));
    servedRequests.connect++;
    openStream();
    /** @type {'completed'|'cut'} */
    let how = 'cut';
    try {
      for (let i = 0; i < stream.length; i++) {
        if (i > 0 && intervalMs > 0) await sleep(intervalMs, undefined, { signal: context.signal }).catch(() => {});
        if (context.signal.aborted) return;
        countMessages(listener, 'sent');
        yield stream[i].message;
      }
      how = 'completed';
    } finally {
      endStream(listener, how);
    }
  };
}

/**
 * The user's own RPC for connect-node (docs/own-message.md), as a connect-node user serves a schema it has descriptors
 * of: the service's descriptor from @bufbuild/protobuf (proto/own/descriptors.js) and a handler that answers the next
 * response sample in turn. The samples become @bufbuild/protobuf messages once, through the proto3 JSON mapping the
 * JSON twin sends (so that connect-json's answer is that very JSON: a float keeps the digits it was written with);
 * connect-node encodes each answer from its message on every request, and decodes each request strictly; one that does
 * not decode gets connect-node's own answer (invalid_argument, HTTP 400, for JSON that is not the message; INTERNAL for
 * a gRPC message that does not parse, where the grpc listener answers INVALID_ARGUMENT).
 * A streaming RPC is served as the grpc listener serves it (server/grpc.js), in connect-node's way: a server stream an
 * async generator of the call's response stream, paced by STREAM_INTERVAL (connect-node pulls the next message when the
 * transport took the last: its back-pressure); a client stream read to its end, then answered; a relay answering each
 * request message with the next of its stream; a stream whose largest message the memory budget refuses is refused at
 * its start (RESOURCE_EXHAUSTED). Messages and streams are counted (server/served.js).
 * @param {import('../proto/own/service.js').OwnService} own
 * @param {string} proto the PROTO setting it was loaded from (a FileDescriptorSet is read again, as it is)
 * @param {'grpc'|'connect'} protocol the listener's: which encoding's sizes the memory budget weighs (protobuf, JSON)
 * @param {{intervalMs?: number}} [options] STREAM_INTERVAL, ms between a server stream's messages (default 0)
 * @returns {{service: import('@bufbuild/protobuf').DescService, impl: Partial<import('@connectrpc/connect').ServiceImpl<any>>,
 *   jsonOptions: {registry: import('@bufbuild/protobuf').Registry}}} impl: the RPC's handler by its local name;
 *   jsonOptions: the schema's types, for an Any
 */
export function ownServiceImpl(own, proto, protocol, { intervalMs = 0 } = {}) {
  const { rpc, responses } = own;
  const { registry, service, method } = ownDescriptors(proto, rpc);
  const listener = LISTENER_OF[protocol];
  const sizes = protocol === 'grpc' ? responses.protobufBytes : responses.jsonBytes;
  const answers = esMessagesOf(rpc, responses, method.output, registry).map((message, i) => ({ message, bytes: sizes[i] }));
  const next = inTurn(answers);
  const overBudget = () => refused(listener, REJECTED.OVER_BUDGET, new ConnectError(OVER_BUDGET, Code.ResourceExhausted));
  const answer = () => {
    const picked = next();
    if (!admitAnswer(picked.bytes)) throw overBudget();
    servedRequests.connect++;
    return picked.message;
  };
  const nextStream = streamPicker(ownMethod(own), answers);
  /** A message of a request stream that connect-node could not decode: refused, naming its index in the stream. */
  const undecodable = (err, index) => refused(listener, REJECTED.INVALID_ARGUMENT,
    new ConnectError(`message ${index} of the stream: ${ConnectError.from(err).rawMessage}`, Code.InvalidArgument));
  const kinds = {
    unary: () => answer(),
    'server streaming': serverStreamOf(nextStream, listener, intervalMs),
    'client streaming': async (requests) => {
      let received = 0;
      try {
        for await (const request of requests) if (request) received++;
      } catch (err) {
        throw undecodable(err, received);
      } finally {
        countMessages(listener, 'received', received);
      }
      return answer();
    },
    'bidirectional streaming': async function* relay(requests) {
      const stream = nextStream();
      if (!admitStream(stream)) throw overBudget();
      servedRequests.connect++;
      openStream();
      let i = 0;
      /** @type {'completed'|'cut'|null} */
      let how = 'cut';
      try {
        for await (const request of requests) {
          if (!request) continue;
          countMessages(listener, 'received');
          countMessages(listener, 'sent');
          yield stream[i++ % stream.length].message;
        }
        how = 'completed';
      } catch (err) {
        how = null;
        throw undecodable(err, i);
      } finally {
        if (how) endStream(listener, how);
        else dropStream();
      }
    },
  };
  return { service, impl: { [method.localName]: kinds[rpc.kind] }, jsonOptions: { registry } };
}

/**
 * grpc.health.v1.Health's Check for connect-node, from a worker's serving state: SERVING or NOT_SERVING for the
 * server ('') and user.v1.UserService, NOT_FOUND for any other service, as grpc-health-check answers on the grpc listener.
 * @param {import('./health.js').Health} health
 * @returns {{check: (request: {service: string}) => {status: number}}}
 */
export function healthImpl(health) {
  const known = new Set(GRPC_HEALTH_SERVICES);
  return {
    check({ service }) {
      if (!known.has(service)) throw new ConnectError(`unknown service ${service}`, Code.NotFound);
      return { status: health.serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING };
    },
  };
}

/**
 * connect-node's request handler for one listener and protocol.
 * @param {'grpc'|'connect'} protocol which protocol it speaks (only that one)
 * @param {{port: number, health: import('./health.js').Health, settings: import('./settings.js').ServerSettings,
 *   own: import('../proto/own/service.js').OwnService|null}} options
 *   health: the worker's state, for the health check; settings: MAX_BODY_BYTES (largest request message, bytes),
 *   COMPRESSION (gzip: responses gzipped for clients that accept it), PROTO (with `own`); own: the user's RPC (RPC set)
 * @returns {ReturnType<typeof connectNodeAdapter>}
 */
function handlerOf(protocol, { port, health, settings, own }) {
  const impl = userServiceImpl({ port, workerPid: process.pid }, LISTENER_OF[protocol], { intervalMs: settings.STREAM_INTERVAL });
  const options = {
    grpc: protocol === 'grpc',
    grpcWeb: false,
    connect: protocol === 'connect',
    readMaxBytes: settings.MAX_BODY_BYTES,
    // COMPRESSION=gzip: every response, however small, as the other listeners do (connect-node's gzip is zlib's
    // default level, GZIP_LEVEL); off: none offered.
    acceptCompression: settings.COMPRESSION === 'gzip' ? [compressionGzip] : [],
    compressMinBytes: 0,
    jsonOptions: JSON_OPTIONS,
  };
  const ownRpc = own ? ownServiceImpl(own, settings.PROTO, protocol, { intervalMs: settings.STREAM_INTERVAL }) : null;
  return connectNodeAdapter({
    routes: (router) => {
      router.service(UserService, impl).service(Health, healthImpl(health));
      // Its own options in full (connect-node enables every protocol a service's options do not turn off), with the JSON
      // of the other own twins: fields at their default left out, the schema's types for an Any. Added last, it is the
      // one served should its path be one of the demo's.
      if (ownRpc) router.service(ownRpc.service, ownRpc.impl, { ...options, jsonOptions: ownRpc.jsonOptions });
    },
    ...options,
  });
}

const listen = (server, host, port) => new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen({ host, port }, () => resolve(undefined));
});

/**
 * Starts the connect-grpc listener of one worker: the gRPC protocol over h2c, under the HTTP/2 bounds of
 * server/h2-guard.js.
 * @param {{host: string, port: number, log: import('pino').Logger, health: import('./health.js').Health,
 *   settings: import('./settings.js').ServerSettings, tls: ReturnType<typeof import('./tls.js').tlsServerOptions>,
 *   own?: import('../proto/own/service.js').OwnService|null}} options tls: the worker's (ALPN h2), null: h2c; `own` (RPC
 *   set): the user's RPC is served too (ownServiceImpl)
 * @returns {Promise<{close: () => Promise<import('./h1-guard.js').DrainCounts>, forceClose: () => void}>} `close` announces the
 *   shutdown (GOAWAY with the largest stream id, a PING), then stops accepting and resolves once in-flight calls are
 *   answered, with how they ended; `forceClose` ends
 *   the sessions left
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startConnectGrpc({ host, port, log, health, settings, tls, own = null }) {
  const handler = handlerOf('grpc', { port, health, settings, own });
  const server = tls ? http2.createSecureServer({ ...tls, settings: h2Settings(settings) }, handler)
    : http2.createServer({ settings: h2Settings(settings) }, handler);
  const guard = guardHttp2Server(server, { settings, log, listener: 'connect-grpc' });
  await listen(server, host, port);
  return {
    close: async () => {
      await guard.announceShutdown();
      await new Promise((resolve) => {
        server.close(() => resolve());
        guard.closeSessions();
      });
      return guard.drained;
    },
    forceClose: guard.destroySessions,
  };
}

/**
 * Starts the connect-json listener of one worker: the Connect protocol over HTTP/1.1 (POST, and GET for the methods
 * free of side effects), under the HTTP/1.1 bounds of server/h1-guard.js.
 * @param {{host: string, port: number, health: import('./health.js').Health, settings: import('./settings.js').ServerSettings,
 *   tls: ReturnType<typeof import('./tls.js').tlsServerOptions>, own?: import('../proto/own/service.js').OwnService|null}} options
 *   tls: the worker's (TLS_CERT/TLS_KEY with ALPN http/1.1), null for cleartext; `own` (RPC set): the user's RPC is
 *   served too (ownServiceImpl)
 * @returns {Promise<{close: () => Promise<import('./h1-guard.js').DrainCounts>, forceClose: () => void}>} `close` drains the keep-alive
 *   connections and resolves once they are closed, with how the requests in flight ended; `forceClose` closes every connection at once
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startConnectJson({ host, port, health, settings, tls, own = null }) {
  const { server, drain, drained } = guardedHttp1Server(handlerOf('connect', { port, health, settings, own }), {},
    { settings, tls });
  // fastify's default, so that the HTTP/1.1 listeners keep connections alive alike.
  server.keepAliveTimeout = 72_000;
  await listen(server, host, port);
  const close = promisify(server.close.bind(server));
  return {
    close: async () => {
      drain();
      await close();
      return drained;
    },
    forceClose: () => server.closeAllConnections(),
  };
}
