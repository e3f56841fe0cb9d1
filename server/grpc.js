// The gRPC listener: @grpc/grpc-js serving every method of the service (the demo's unary RPCs, and the user's own, RPC
// set: proto/methods.js), with server reflection and the standard health service (grpc.health.v1.Health).
import grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { reflectionPackageDefinition } from '../proto/index.js';
import { answerPicker, serviceMethods, streamPicker } from '../proto/methods.js';
import { DESCRIPTOR_SET } from '../proto/own/schema.js';
import { guardHttp2Server } from './h2-guard.js';
import { bindInsecure } from './grpc-bind.js';
import { gzipResponses } from './grpc-gzip.js';
import { GRPC_HEALTH_SERVICES } from './health.js';
import { countMessages, dropStream, endStream, openStream, reject, REJECTED, servedRequests } from './served.js';
import { admitAnswer, admitStream } from './memory-budget.js';
import { firstOf, sendStream } from './streams.js';
import { addLazily } from './grpc-lazy.js';

// The libraries loaded only when used: proto-loader with GRPC_CODEC=proto-loader, health and reflection on their first
// call (server/grpc-lazy.js).
const require = createRequire(import.meta.url);
/** The methods of grpc.health.v1.Health (grpc-health-check's health.proto). */
const HEALTH_METHODS = Object.freeze({
  '/grpc.health.v1.Health/Check': { requestStream: false, responseStream: false },
  '/grpc.health.v1.Health/Watch': { requestStream: false, responseStream: true },
  '/grpc.health.v1.Health/List': { requestStream: false, responseStream: false },
});
/** The methods of server reflection, both versions @grpc/reflection serves. */
const REFLECTION_METHODS = Object.freeze(Object.fromEntries(['v1', 'v1alpha'].map((v) => [
  `/grpc.reflection.${v}.ServerReflection/ServerReflectionInfo`, { requestStream: true, responseStream: true }])));

/**
 * grpc-js's Server, with the HTTP/2 bounds of server/h2-guard.js on each HTTP/2 server it builds.
 * grpc-js has no option for a session listener or the header-list size, and builds its
 * http2 servers in `createHttp2Server` (grpc-js 1.10 to 1.14 at least); startGrpc checks that
 * the override ran, so a grpc-js that stops calling it fails at start, not silently.
 */
function guardedServer(options, guardOptions, onHttp2Server = (http2Server) => void http2Server, tls = null) {
  const guards = [];
  // @ts-expect-error grpc-js declares createHttp2Server private; overriding it is the only way in (see above).
  class GuardedServer extends grpc.Server {
    createHttp2Server(credentials) {
      // @ts-expect-error the same private method
      const http2Server = super.createHttp2Server(credentials);
      // grpc-js's createSsl takes no minimum version or options: the context is set again with them (Node's http2 secure server
      // already offers `h2` in ALPN).
      if (tls) http2Server.setSecureContext({ cert: tls.cert, key: tls.key, minVersion: tls.minVersion, secureOptions: tls.secureOptions });
      guards.push(guardHttp2Server(http2Server, guardOptions));
      onHttp2Server(http2Server);
      return http2Server;
    }
  }
  return { server: new GuardedServer(options), guards };
}

// What grpc-js 1.10 to 1.14 (build/src/server.js, handleUnary and handleServerStreaming) answers a call of a
// one-message method whose request message never arrived whole: UNIMPLEMENTED with these details.
const NO_REQUEST_MESSAGE = 'Received no request message for ';
const MISSING = { code: grpc.status.INVALID_ARGUMENT, details: 'request message missing or truncated' };
// A large answer refused by the memory budget (server/memory-budget.js): a client may retry it, here or elsewhere.
const OVER_BUDGET = { code: grpc.status.RESOURCE_EXHAUSTED, details: 'the server is past its memory budget; retry later' };

/**
 * A call's sendStatus, as requireRequestMessage installs it: grpc-js's answer to a missing request message becomes
 * INVALID_ARGUMENT; every other status passes to the call's own sendStatus unchanged.
 * @this {import('@grpc/grpc-js').ServerInterceptingCallInterface}
 * @param {{code: number, details?: string, metadata?: import('@grpc/grpc-js').Metadata | null}} status
 * @returns {void}
 */
function sendStatusOfWholeMessages(status) {
  const own = Object.getPrototypeOf(this).sendStatus;
  if (status.code === grpc.status.UNIMPLEMENTED && status.details?.startsWith(NO_REQUEST_MESSAGE)) {
    own.call(this, { ...MISSING, metadata: new grpc.Metadata() });
  } else {
    own.call(this, status);
  }
}

/**
 * A server interceptor that answers a call of a one-message method whose request message never arrived whole (the
 * stream ended inside the 5-byte prefix or the message) with INVALID_ARGUMENT. grpc-js's own answer is
 * UNIMPLEMENTED "Received no request message for server streaming method", which reads as a server fault.
 * It wraps nothing: grpc-js's call is returned as it is, with its sendStatus rewriting that one answer, so a call
 * costs one property store (a ServerInterceptingCall around every call cost 3–8% of grpc-js's RPS, issue 24).
 * Calls of client-streaming methods pass untouched.
 * @type {import('@grpc/grpc-js').ServerInterceptor}
 */
export const requireRequestMessage = (method, call) => {
  if (!method.requestStream) call.sendStatus = sendStatusOfWholeMessages;
  // @ts-expect-error grpc-js types its argument as the interface, its return as the class; it takes either
  return call;
};

// A request message that did not decode: grpc-js would answer INTERNAL for a deserializer that throws.
const UNDECODABLE = Symbol('undecodable');

/**
 * The protobufjs codec of a method, as grpc-js's addService takes it: a request that does not decode is marked
 * (UNDECODABLE, with the decoder's reason) for the handler to answer, not thrown.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @returns {grpc.MethodDefinition<any, any>}
 */
function protobufjsDefinition({ rpc }) {
  const { requestType, responseType } = rpc;
  return {
    path: rpc.path, originalName: rpc.method, requestStream: rpc.requestStream, responseStream: rpc.responseStream,
    requestSerialize: (message) => /** @type {Buffer} */ (requestType.encode(message).finish()),
    requestDeserialize: (bytes) => {
      try {
        return requestType.decode(bytes);
      } catch (err) {
        return { [UNDECODABLE]: err.message };
      }
    },
    responseSerialize: (message) => /** @type {Buffer} */ (responseType.encode(message).finish()),
    responseDeserialize: (bytes) => responseType.decode(bytes),
  };
}

/**
 * A method as a grpc-js service (proto/methods.js): each request decoded, the answer it picks (the demo's scenario, or
 * the next response sample in turn) encoded from its message object. A request that does not decode is answered
 * INVALID_ARGUMENT with the decoder's reason; one that picks no answer INVALID_ARGUMENT with the method's refusal; a
 * large answer the memory budget refuses, RESOURCE_EXHAUSTED. An answered call counts in servedRequests.grpc, a refused
 * one in rejectedRequests under the listener and its reason (server/served.js), and is logged at debug with its code.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * A server-streaming method answers each call with the next response stream (serverStream); a client-streaming one
 * reads the request stream, then answers the next response sample (clientStream); a bidirectional one relays (relay).
 * @param {{log?: import('pino').Logger, loader?: boolean, listener?: string, intervalMs?: number}} [options] `intervalMs`:
 *   STREAM_INTERVAL, ms between a server stream's messages (default 0); `log`: each call's peer at debug,
 *   and each refusal; `listener`: the name refusals are counted under (default 'grpc'); `loader`
 *   (GRPC_CODEC=proto-loader): @grpc/proto-loader's definition, answering plain objects that its codec converts
 *   (fromObject) before encoding, instead of protobufjs messages (default false)
 * @returns {{definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation}} both keyed by the
 *   RPC's method name, as grpc-js's addService takes them
 * @throws {Error} with `loader`, when proto-loader cannot load the method's schema
 */
export function methodService(method, { log, loader = false, listener = 'grpc', intervalMs = 0 } = {}) {
  const { rpc, responses, refusal } = method;
  const { requestType, responseType } = rpc;
  // GRPC_CODEC=proto-loader answers plain objects through @grpc/proto-loader's codec, which converts each one
  // (fromObject) before encoding it: the common setup, kept to measure its cost.
  const definition = { [rpc.method]: loader ? loaderDefinition(method) : protobufjsDefinition(method) };
  const answers = responses.messages.map((m, i) => ({ message: loader ? responseType.toObject(m) : m, bytes: responses.protobufBytes[i] }));
  const pick = answerPicker(method, answers);
  const invalid = (why) => ({ code: grpc.status.INVALID_ARGUMENT, details: `the request is not a valid ${requestType.fullName.slice(1)}: ${why}` });
  const unanswerable = { code: grpc.status.INVALID_ARGUMENT, details: refusal };
  // The level is fixed at start; pino's isLevelEnabled on every call was a lookup and a comparison more.
  const debug = log?.isLevelEnabled('debug') ? log : null;
  // Made once, not per call: a refusal counted, logged at debug with its code, and answered.
  const refuse = (call, callback, reason, status) => {
    reject(listener, reason);
    if (debug) debug.debug({ peer: call.getPeer(), code: status.code, details: status.details }, `${rpc.method} refused`);
    return callback(status);
  };
  if (rpc.requestStream && rpc.responseStream) return { definition, implementation: relay(method, answers, { refuse, invalid, debug, listener }) };
  if (rpc.responseStream) return { definition, implementation: serverStream(method, answers, { refuse, invalid, unanswerable, debug, listener, intervalMs }) };
  if (rpc.requestStream) return { definition, implementation: clientStream(method, pick, { refuse, invalid, debug, listener }) };
  const implementation = {
    [rpc.method](call, callback) {
      if (debug) debug.debug({ peer: call.getPeer() }, rpc.method);
      if (call.request[UNDECODABLE] !== undefined) return refuse(call, callback, REJECTED.INVALID_ARGUMENT, invalid(call.request[UNDECODABLE]));
      const answer = pick(call.request);
      if (!answer) return refuse(call, callback, REJECTED.NO_ANSWER, unanswerable);
      if (!admitAnswer(answer.bytes)) return refuse(call, callback, REJECTED.OVER_BUDGET, OVER_BUDGET);
      servedRequests.grpc++;
      return callback(null, answer.message);
    },
  };
  return { definition, implementation };
}

/**
 * A bidirectional method's grpc-js implementation, a relay: each call takes the next response stream in turn, and answers
 * each request message, as it arrives, with the stream's next message (round again past its last). The call reads no
 * further while grpc-js's writer is full (it resumes on 'drain'), so a client that stops reading stops the relay; the
 * call ends when the client ends its side. A message that does not decode ends the call with INVALID_ARGUMENT, naming
 * its index. A relay whose largest message the memory budget refuses is refused at its start, RESOURCE_EXHAUSTED.
 * Messages are counted both ways (server/served.js), and the stream as completed, cut or refused.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {Array<{message: any, bytes: number}>} answers
 * @param {{refuse: Function, invalid: (why: string) => object, debug: import('pino').Logger|null, listener: string}} how
 * @returns {grpc.UntypedServiceImplementation}
 */
function relay(method, answers, { refuse, invalid, debug, listener }) {
  const next = streamPicker(method, answers);
  const { rpc } = method;
  return {
    [rpc.method](call) {
      if (debug) debug.debug({ peer: call.getPeer() }, rpc.method);
      const stream = next();
      if (!admitStream(stream)) return refuse(call, (err) => call.emit('error', err), REJECTED.OVER_BUDGET, OVER_BUDGET);
      let i = 0;
      let ended = false;
      servedRequests.grpc++;
      openStream();
      call.on('data', (message) => {
        if (ended) return;
        if (message[UNDECODABLE] !== undefined) {
          ended = true;
          dropStream();
          reject(listener, REJECTED.INVALID_ARGUMENT);
          call.emit('error', invalid(`message ${i} of the stream: ${message[UNDECODABLE]}`));
          return;
        }
        countMessages(listener, 'received');
        const more = call.write(stream[i++ % stream.length].message);
        countMessages(listener, 'sent');
        if (!more) {
          call.pause();
          firstOf(call, ['drain', 'cancelled', 'close']).then(() => call.resume());
        }
      });
      call.on('end', () => {
        if (ended) return;
        ended = true;
        endStream(listener, 'completed');
        call.end();
      });
      call.on('cancelled', () => {
        if (ended) return;
        ended = true;
        endStream(listener, 'cut');
      });
    },
  };
}

/**
 * A client-streaming method's grpc-js implementation: each request message decoded as it arrives and counted
 * (server/served.js, received), then, once the client ends its stream, the next response sample. A message that does not
 * decode ends the call at once with INVALID_ARGUMENT, naming it by its index in the stream.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {(request?: object) => {message: any, bytes: number}|null} pick the answers, in turn
 * @param {{refuse: Function, invalid: (why: string) => object, debug: import('pino').Logger|null, listener: string}} how
 * @returns {grpc.UntypedServiceImplementation}
 */
function clientStream(method, pick, { refuse, invalid, debug, listener }) {
  const { rpc } = method;
  return {
    [rpc.method](call, callback) {
      if (debug) debug.debug({ peer: call.getPeer() }, rpc.method);
      let received = 0;
      let refused = false;
      call.on('data', (message) => {
        if (refused) return;
        if (message[UNDECODABLE] !== undefined) {
          refused = true;
          countMessages(listener, 'received', received);
          refuse(call, callback, REJECTED.INVALID_ARGUMENT, invalid(`message ${received} of the stream: ${message[UNDECODABLE]}`));
          return;
        }
        received++;
      });
      call.on('end', () => {
        if (refused) return;
        countMessages(listener, 'received', received);
        const answer = pick();
        if (!admitAnswer(answer.bytes)) return refuse(call, callback, REJECTED.OVER_BUDGET, OVER_BUDGET);
        servedRequests.grpc++;
        return callback(null, answer.message);
      });
    },
  };
}

/**
 * A server-streaming method's grpc-js implementation: each call answered with the next response stream in turn, its
 * messages sent by server/streams.js (paced, with back-pressure: grpc-js's server stream is an object-mode Writable, so
 * `write` returns false past 16 queued messages), then the OK status. A request that does not decode is answered
 * INVALID_ARGUMENT before any message, and so is one that picks no stream (the demo's StreamUsers: another count), with
 * the method's refusal; one whose largest message the memory budget refuses (admitStream), RESOURCE_EXHAUSTED before any
 * message; a call the client cancels stops at the next message and counts as cut.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {Array<{message: any, bytes: number}>} answers the response samples as the listener answers them
 * @param {{refuse: Function, invalid: (why: string) => object, unanswerable: object, debug: import('pino').Logger|null,
 *   listener: string, intervalMs: number}} how methodService's refusals, and where the stream's counts go
 * @returns {grpc.UntypedServiceImplementation}
 */
function serverStream(method, answers, { refuse, invalid, unanswerable, debug, listener, intervalMs }) {
  const next = streamPicker(method, answers);
  const { rpc } = method;
  // A streaming call has no callback: its refusal is an 'error' it emits (grpc-js sends it as the status).
  const refuseStream = (call, reason, status) => refuse(call, (err) => call.emit('error', err), reason, status);
  return {
    async [rpc.method](call) {
      if (debug) debug.debug({ peer: call.getPeer() }, rpc.method);
      if (call.request[UNDECODABLE] !== undefined) return refuseStream(call, REJECTED.INVALID_ARGUMENT, invalid(call.request[UNDECODABLE]));
      const stream = next(call.request);
      if (!stream) return refuseStream(call, REJECTED.NO_ANSWER, unanswerable);
      if (!admitStream(stream)) return refuseStream(call, REJECTED.OVER_BUDGET, OVER_BUDGET);
      servedRequests.grpc++;
      await sendStream(stream, {
        write: (answer) => call.write(answer.message),
        drained: () => firstOf(call, ['drain', 'cancelled', 'close']),
        gone: () => call.cancelled || call.destroyed,
        // 'finish': every message handed out and the status sent (grpc-js's _final); 'cancelled' first if the client left
        // before (grpc-js emits it after 'finish' too, in the same turn, as the HTTP/2 stream closes).
        end: () => {
          call.end();
          return firstOf(call, ['finish', 'cancelled', 'close']).then((first) => first === 'finish');
        },
      }, { listener, intervalMs });
    },
  };
}

/**
 * A method's definition as @grpc/proto-loader makes it (plain objects, its default options) from the method's schema:
 * a .proto with its import directories, or a FileDescriptorSet.
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @returns {grpc.MethodDefinition<any, any>}
 */
function loaderDefinition({ proto, protoPath, rpc }) {
  /** @type {typeof import('@grpc/proto-loader')} */
  const protoLoader = require('@grpc/proto-loader');
  const packageDefinition = DESCRIPTOR_SET.test(proto) ? protoLoader.loadFileDescriptorSetFromBuffer(readFileSync(proto))
    : protoLoader.loadSync(proto, { includeDirs: protoPath.length ? protoPath : [path.dirname(proto)] });
  return /** @type {grpc.MethodDefinition<any, any>} */ (/** @type {grpc.ServiceDefinition} */ (packageDefinition[rpc.service])[rpc.method]);
}

/**
 * Builds and starts the gRPC server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger,
 *   health: import('./health.js').Health, settings: import('./settings.js').ServerSettings, tls: ReturnType<typeof import('./tls.js').tlsServerOptions>,
 *   own?: import('../proto/own/service.js').OwnService|null, listener?: string}} options `own` (RPC set): the user's RPC
 *   is served too (methodService); `listener` the name its refusals are counted under (default 'grpc')
 *   `tls` (the worker's: TLS_CERT/TLS_KEY with ALPN h2) serves TLS, null h2c; `settings` gives the limit MAX_BODY_BYTES (largest request message), GRPC_CODEC, GRPC_CHANNELZ,
 *   COMPRESSION (gzip: responses gzipped for clients that list gzip in grpc-accept-encoding, server/grpc-gzip.js)
 *   and the HTTP/2 bounds (H2_*)
 * @returns {Promise<{close: () => Promise<import('./h1-guard.js').DrainCounts>, forceClose: () => void}>} `close` announces
 *   the shutdown (GOAWAY with the largest stream id, a PING), then stops accepting and resolves, with how the calls
 *   in flight and those that came meanwhile ended, once they are answered; `forceClose` cancels the calls left
 * @throws {Error & {code: string}} EADDRINUSE (or the bind's reason) when the port cannot be bound; EGZIP when
 *   COMPRESSION=gzip and this grpc-js cannot be made to compress
 */
export async function startGrpc({ host, port, log, health, settings, tls, own = null, listener = 'grpc' }) {
  // grpc-js compresses no response itself; with COMPRESSION=gzip its first interceptor does (server/grpc-gzip.js).
  const gzip = settings.COMPRESSION === 'gzip' ? gzipResponses() : null;
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
    interceptors: gzip ? [gzip.interceptor, requireRequestMessage] : [requireRequestMessage],
  }, { settings, log, listener: 'grpc' }, gzip?.watch, tls);
  const loader = settings.GRPC_CODEC === 'proto-loader';
  // One service per method: grpc-js routes on the method's path, whichever service it adds it with.
  for (const method of serviceMethods({ port, workerPid: process.pid, own, streams: true })) {
    const { definition, implementation } = methodService(method, { log, loader, listener, intervalMs: settings.STREAM_INTERVAL });
    server.addService(definition, implementation);
  }
  // One reflection service for the demo's files and the user's: @grpc/reflection reads only the fileDescriptorProtos of
  // each entry (hence the cast to proto-loader's type), and a server takes the reflection service once. The user's files
  // are described now, so that a schema they cannot describe stops the start.
  let ownFiles = null;
  if (own) {
    const { ownDescriptors, reflectedFiles } = await import('../proto/own/descriptors.js');
    ownFiles = reflectedFiles(ownDescriptors(own.proto, own.rpc).registry);
  }
  addLazily(server, REFLECTION_METHODS, (target) => {
    const reflected = reflectionPackageDefinition();
    if (own) {
      reflected[own.rpc.service] = /** @type {import('@grpc/proto-loader').MessageTypeDefinition} */ (/** @type {unknown} */ (
        { fileDescriptorProtos: ownFiles }));
    }
    /** @type {typeof import('@grpc/reflection')} */
    const { ReflectionService } = require('@grpc/reflection');
    new ReflectionService(reflected).addToServer(/** @type {grpc.Server} */ (/** @type {unknown} */ (target)));
  }, log);
  addLazily(server, HEALTH_METHODS, (target) => {
    /** @type {typeof import('grpc-health-check')} */
    const { HealthImplementation } = require('grpc-health-check');
    const healthService = new HealthImplementation();
    health.subscribe((serving) => {
      for (const name of GRPC_HEALTH_SERVICES) healthService.setStatus(name, serving ? 'SERVING' : 'NOT_SERVING');
    });
    healthService.addToServer(/** @type {any} */ (target));
  }, log);
  // The errno of an address's failure is the error's code, for a clear error (server/worker.js).
  await bindInsecure(/** @type {grpc.Server} */ (/** @type {unknown} */ (server)), host, port,
    tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false) : undefined);
  if (guards.length === 0) {
    server.forceShutdown();
    throw Object.assign(new Error('grpc-js built its HTTP/2 server without createHttp2Server: the HTTP/2 bounds '
      + '(server/h2-guard.js) cannot apply to this @grpc/grpc-js version'), { code: 'EGUARD' });
  }
  return {
    close: async () => {
      await Promise.all(guards.map((guard) => guard.announceShutdown()));
      await new Promise((resolve) => server.tryShutdown(() => resolve()));
      return {
        answered: guards.reduce((sum, g) => sum + g.drained.answered, 0),
        lost: guards.reduce((sum, g) => sum + g.drained.lost, 0),
      };
    },
    forceClose: () => server.forceShutdown(),
  };
}
