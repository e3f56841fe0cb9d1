// The fastify listeners: every method of the service (the demo's User and the other scenarios, the user's own RPC) as
// its proto3 JSON mapping over HTTP/1.1 or h2c (json-h2), or as protobuf over HTTP/1.1 (protobuf-h1), and the health route.
import Fastify from 'fastify';
import { guardHttp2Server } from './h2-guard.js';
import { HEALTH_PATH } from './health.js';
import { replyErrorsAsJson } from './http-errors.js';
import { logsRequests } from './log.js';
import { countMessages, dropStream, endStream, openStream, refused, reject, REJECTED, servedRequests } from './served.js';
import { guardedHttp1Server } from './h1-guard.js';
import { GZIP_LEVEL } from './compression.js';
import { admitAnswer, admitStream } from './memory-budget.js';
import { ownJson } from '../proto/own/json.js';
import { fromJson } from '../proto/own/samples.js';
import { requestOf } from '../proto/own/http-rule.js';
import { answerPicker, serviceMethods, streamPicker } from '../proto/methods.js';
import { firstOf, sendStream } from './streams.js';

/**
 * A large answer refused by the memory budget (server/memory-budget.js): 503 with Retry-After, and the connection
 * closed after it, so that the client's next try may reach another worker.
 * @param {import('fastify').FastifyReply} reply
 * @returns {import('fastify').FastifyReply}
 */
const overBudget = (reply) => reply.code(503).header('retry-after', '1').header('connection', 'close')
  .send({ statusCode: 503, error: 'Service Unavailable', message: 'the server is past its memory budget; retry later' });

/**
 * @fastify/compress as COMPRESSION=gzip uses it: gzip only, at the level gRPC's gzip uses (GZIP_LEVEL), every
 * response of every type however small (threshold 0: its default, 1024 bytes, would leave the `user` scenario raw),
 * always by zlib.gzipSync on the worker's thread (syncThreshold: its default streams larger payloads through the
 * threadpool; grpc-js's serializer, where the gRPC side compresses, is synchronous).
 * @type {import('@fastify/compress').FastifyCompressOptions}
 */
const GZIP_OPTIONS = {
  encodings: ['gzip'], threshold: 0, syncThreshold: Infinity, zlibOptions: { level: GZIP_LEVEL }, customTypes: () => true,
};

// Each method per encoding, made once per app: the content type of both bodies; how the request is decoded from the
// POST body (strictly: a bad one throws, naming the field) and from a google.api.http route's path, query and body (its
// proto3 JSON mapping); the answers the listener picks from, each with its size in the encoding; how an answer is
// encoded from its message on every request, on the POST route and on a google.api.http route. JSON: @bufbuild/protobuf's
// proto3 JSON mapping (proto/own/json.js), canonical on the POST route (Connect's unary call), every field on a
// google.api.http route (grpc-gateway's default marshaler); protobuf: protobufjs's binary encoding, as the gRPC twin's.
const CODECS = {
  json: (/** @type {import('../proto/methods.js').ServiceMethod} */ method) => {
    const json = ownJson(method);
    return {
      type: 'application/json', parseAs: /** @type {'string'} */ ('string'),
      decode: json.decodeRequest,
      decodeBound: json.decodeRequest,
      answers: json.responses,
      encode: json.encodeResponse,
      encodeBound: json.boundEncoder,
      // fastify's content type for JSON, which the demo's GET routes always sent (and the bare baseline sends)
      boundType: 'application/json; charset=utf-8',
    };
  },
  protobuf: (/** @type {import('../proto/methods.js').ServiceMethod} */ { rpc, responses }) => ({
    type: 'application/x-protobuf', parseAs: /** @type {'buffer'} */ ('buffer'),
    decode: (/** @type {Buffer} */ body) => rpc.requestType.decode(body),
    decodeBound: (/** @type {object} */ request) => fromJson(rpc.requestType, request),
    answers: responses.messages.map((message, i) => ({ message, bytes: responses.protobufBytes[i] })),
    encode: (/** @type {import('protobufjs').Message} */ message) => rpc.responseType.encode(message).finish(),
    // A response_body's field alone has no protobuf message of its own: such a route is served as JSON only.
    encodeBound: (/** @type {string} */ responseBody) => (responseBody ? null
      : (/** @type {import('protobufjs').Message} */ message) => rpc.responseType.encode(message).finish()),
    boundType: 'application/x-protobuf',
  }),
};

/** A request that does not decode: 400 with the reason in one line, naming the message (and the field, when one is). */
const badRequest = (/** @type {import('../proto/own/schema.js').Rpc} */ rpc, /** @type {string} */ why) => Object.assign(
  new Error(`the request is not a valid ${rpc.requestType.fullName.slice(1)}: ${why}`), { statusCode: 400, code: 'ERR_BAD_REQUEST_MESSAGE' });

/** A request that decodes but selects no answer (a demo RPC's parameter outside its scenarios): 400 saying which it takes. */
const unanswerable = (/** @type {string} */ refusal) => Object.assign(new Error(refusal), { statusCode: 400, code: 'ERR_NO_ANSWER' });

/** The memory budget's 503, counted as a refusal of the listener. */
const refusedOverBudget = (/** @type {string} */ listener, /** @type {import('fastify').FastifyReply} */ reply) => {
  reject(listener, REJECTED.OVER_BUDGET);
  return overBudget(reply);
};

/**
 * A method's request parser, on its encapsulated scope: the POST body decoded strictly from the encoding's content type
 * (415 for another), a body that does not decode 400 naming the field, and counted as refused.
 * @param {import('fastify').FastifyInstance} scope
 * @param {{type: string, parseAs: 'string'|'buffer', decode: (body: any) => any}} codec
 * @param {import('../proto/own/schema.js').Rpc} rpc
 * @param {string} listener
 * @returns {void}
 */
function parseRequests(scope, { type, parseAs, decode }, rpc, listener) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(type, { parseAs }, (request, body, done) => {
    try {
      done(null, decode(/** @type {any} */ (body)));
    } catch (err) {
      reject(listener, REJECTED.INVALID_ARGUMENT);
      done(badRequest(rpc, err.message));
    }
  });
}

/**
 * Serves one method (proto/methods.js): `POST /package.Service/Method` (the shape of Connect's unary call), the request
 * decoded from the encoding's content type (400 naming the field when it does not decode; 415 for another content
 * type), and each of its google.api.http routes (serveHttpRules); the answer the one the request picks (400 with the
 * method's refusal when it picks none), encoded from its message; the memory budget's 503 (overBudget) for a large one.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {'json'|'protobuf'} encoding
 * @returns {Promise<void>}
 */
async function serveMethod(app, method, encoding, listener, intervalMs) {
  const { rpc, refusal } = method;
  const codec = CODECS[encoding](method);
  const { type, encode } = codec;
  // JSON only: a protobuf listener serves no stream (server/listeners.js), and never starts with one.
  if (rpc.requestStream && rpc.responseStream) {
    serveRelay(app, method, /** @type {ReturnType<typeof CODECS.json>} */ (codec), listener);
    return;
  }
  if (rpc.responseStream) {
    await serveServerStream(app, method, /** @type {ReturnType<typeof CODECS.json>} */ (codec), listener, intervalMs);
    return;
  }
  if (rpc.requestStream) {
    await serveClientStream(app, method, /** @type {ReturnType<typeof CODECS.json>} */ (codec), listener);
    return;
  }
  const pick = answerPicker(method, /** @type {Array<{message: any, bytes: number}>} */ (codec.answers));
  // Encapsulated: each method's parser is its own.
  await app.register(async (scope) => {
    parseRequests(scope, codec, rpc, listener);
    scope.post(rpc.path, (request, reply) => {
      const answer = pick(/** @type {any} */ (request.body));
      if (!answer) throw refused(listener, REJECTED.NO_ANSWER, unanswerable(refusal));
      if (!admitAnswer(answer.bytes)) return refusedOverBudget(listener, reply);
      servedRequests.http++;
      return reply.type(type).send(encode(/** @type {any} */ (answer.message)));
    });
  });
  if (rpc.bindings.length) await serveHttpRules(app, method, codec, pick, listener);
}

/**
 * The framings of a server stream over HTTP, each: the response's content type, and one message as the body's next
 * bytes. SSE (the WHATWG HTML standard's text/event-stream): an event a message, its `data:` line the message's JSON,
 * then a blank line; NDJSON: a line a message; grpc-gateway's mapping of a server stream (runtime.ForwardResponseStream):
 * a line a message, wrapped as `{"result": message}`.
 */
const STREAM_FRAMINGS = {
  sse: { type: 'text/event-stream', frame: (/** @type {string} */ json) => `data: ${json}\n\n` },
  ndjson: { type: 'application/x-ndjson', frame: (/** @type {string} */ json) => `${json}\n` },
  gateway: { type: 'application/json', frame: (/** @type {string} */ json) => `{"result":${json}}\n` },
};

/**
 * The framing a POST of a server-streaming method asks for by its Accept header: SSE for text/event-stream, else NDJSON
 * (application/x-ndjson, or no preference); null for an Accept that takes neither (406).
 * @param {string|undefined} accept
 * @returns {'sse'|'ndjson'|null}
 */
export function streamFramingOf(accept) {
  if (!accept) return 'ndjson';
  if (accept.includes('text/event-stream')) return 'sse';
  return /application\/x-ndjson|\*\/\*|application\/\*/.test(accept) ? 'ndjson' : null;
}

/** An Accept header that takes none of a stream's framings. */
const notAcceptable = () => Object.assign(new Error('a server stream is answered as text/event-stream or application/x-ndjson; '
  + 'the Accept header takes neither'), { statusCode: 406, code: 'ERR_NOT_ACCEPTABLE' });

/**
 * How long an EventSource waits before it reconnects to a stream the drain ended (SSE's `retry:` field, ms): about
 * what a replacement worker takes to listen (a reload forks it first), rather than the browser's own default.
 */
export const SSE_RETRY_MS = 1000;

/**
 * The SSE streams open in this worker, by listener, each with what ends it cleanly: the drain's deadline ends them
 * (endSseStreams) rather than dropping their connections.
 * @type {Map<string, Set<() => Promise<void>>>}
 */
const openSse = new Map();

/**
 * Ends every SSE stream a listener still has open, cleanly: a `retry:` field (SSE_RETRY_MS) that tells an EventSource
 * when to come back, then the body's end, so the client sees the stream close rather than its connection fail. Each
 * counts as cut. Called at the drain's deadline (startHttp's forceClose), before the connections left are dropped.
 * @param {string} listener its name (e.g. 'http', 'json-h2')
 * @returns {Promise<number>} how many it ended, once each has been written out ('finish') or its connection closed
 */
export function endSseStreams(listener) {
  const ends = [...(openSse.get(listener) ?? [])];
  return Promise.all(ends.map((end) => end())).then(() => ends.length);
}

/**
 * How long the drain's deadline waits for the SSE streams it ended to leave before it drops their connections (ms): within
 * the worker's second between the deadline and its exit (server/worker.js FORCE_CLOSE_GRACE_MS).
 */
const SSE_END_WAIT_MS = 500;

/**
 * Sends one response stream on a fastify reply, framed: fastify hands the response over (hijack), the head goes out with
 * the first message (one write: the head's arrival is the first message's), and server/streams.js paces the rest with
 * back-pressure ('drain'), stopping when the client goes away ('close'), or when the drain's deadline ends an SSE
 * stream (endSseStreams).
 * @param {import('fastify').FastifyReply} reply
 * @param {Array<{message: any}>} stream the answers, in order
 * @param {{type: string, frame: (json: string) => string}} framing
 * @param {(message: any) => string} encode one message as JSON
 * @param {{listener: string, intervalMs: number}} options
 * @returns {Promise<'completed'|'cut'>}
 */
async function replyStream(reply, stream, framing, encode, options) {
  reply.hijack();
  const res = reply.raw;
  let gone = false;
  res.once('close', () => {
    gone = true;
  });
  const sse = framing === STREAM_FRAMINGS.sse;
  const endNow = () => {
    if (gone) return Promise.resolve();
    gone = true;
    // HTTP/2: the stream's close, once its END_STREAM went out (destroying the session at 'finish' could still reset it).
    const left = firstOf(res, /** @type {any} */ (res).stream ? ['close'] : ['finish', 'close']).then(() => {});
    if (!res.headersSent) res.writeHead(200, { 'content-type': framing.type, 'cache-control': 'no-cache' });
    res.end(`retry: ${SSE_RETRY_MS}\n\n`);
    return left;
  };
  if (sse) {
    if (!openSse.has(options.listener)) openSse.set(options.listener, new Set());
    openSse.get(options.listener).add(endNow);
  }
  try {
    return await sendStream(stream, {
      write: ({ message }, i) => {
        if (i === 0) res.writeHead(200, { 'content-type': framing.type, 'cache-control': 'no-cache' });
        return res.write(framing.frame(encode(message)));
      },
      drained: () => firstOf(res, ['drain', 'close']),
      gone: () => gone,
      end: () => {
        res.end();
        return res.writableFinished ? Promise.resolve(true) : firstOf(res, ['finish', 'close']).then((first) => first === 'finish');
      },
    }, options);
  } finally {
    openSse.get(options.listener)?.delete(endNow);
  }
}

/**
 * Serves a server-streaming method over HTTP (JSON only: a protobuf listener serves none, server/listeners.js):
 * `POST /package.Service/Method` answers the next response stream in turn as SSE (`Accept: text/event-stream`) or NDJSON;
 * each google.api.http route answers it as grpc-gateway does (`{"result": message}` a line, every field written), or as
 * SSE with `?alt=sse`, as Google's REST APIs stream (e.g. Gemini's streamGenerateContent). The request is decoded as a
 * unary method's is (400 naming the field); one that picks no stream (the demo's StreamUsers: another count) is a 400
 * with the method's refusal.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {ReturnType<typeof CODECS.json>} codec
 * @param {string} listener
 * @param {number} intervalMs STREAM_INTERVAL, ms between two messages
 * @returns {Promise<void>}
 */
async function serveServerStream(app, method, codec, listener, intervalMs) {
  const { rpc } = method;
  const { encode } = codec;
  const next = streamPicker(method, /** @type {Array<{message: any, bytes: number}>} */ (codec.answers));
  const options = { listener, intervalMs };
  await app.register(async (scope) => {
    parseRequests(scope, codec, rpc, listener);
    scope.post(rpc.path, (request, reply) => {
      const framing = streamFramingOf(request.headers.accept);
      if (!framing) throw notAcceptable();
      const stream = next(/** @type {any} */ (request.body));
      if (!stream) throw refused(listener, REJECTED.NO_ANSWER, unanswerable(method.refusal));
      if (!admitStream(stream)) return refusedOverBudget(listener, reply);
      servedRequests.http++;
      return replyStream(reply, stream, STREAM_FRAMINGS[framing], encode, options);
    });
  });
  if (!rpc.bindings.length) return;
  const encoders = new Map(rpc.bindings.map((b) => [b, codec.encodeBound(b.responseBody)]));
  await serveBindings(app, method, codec, listener, (binding, decoded, reply, query) => {
    const sse = query.get('alt') === 'sse';
    const stream = next(decoded);
    if (!stream) throw refused(listener, REJECTED.NO_ANSWER, unanswerable(method.refusal));
    if (!admitStream(stream)) return refusedOverBudget(listener, reply);
    servedRequests.http++;
    return replyStream(reply, stream, sse ? STREAM_FRAMINGS.sse : STREAM_FRAMINGS.gateway, sse ? encode : encoders.get(binding), options);
  });
}

/**
 * How much a WebSocket may hold unsent before the relay stops reading its client: 16 frames of the largest answer would
 * do, as grpc-js's object-mode writer takes 16 messages; in bytes, 1 MiB.
 */
const WEBSOCKET_HIGH_WATER_BYTES = 1024 * 1024;

/**
 * Serves a bidirectional method over HTTP/1.1 as a WebSocket (RFC 6455) at `GET /package.Service/Method` (@fastify/websocket
 * on ws), a relay as the gRPC twin's: each connection takes the next response stream in turn and answers each request
 * message with the stream's next message (round again past its last). A text frame is a message in the proto3 JSON
 * mapping and is answered in text, canonical JSON; a binary frame is a protobuf message and is answered in protobuf
 * (protobuf over WebSocket, as its users run it). A frame that does not decode closes the connection with 1007 and the
 * reason; the server's drain closes it with 1001 (buildHttpApp). While more than WEBSOCKET_HIGH_WATER_BYTES wait unsent,
 * the relay stops reading (ws's pause) and answers none of the frames already read until they are sent, so a client
 * that stops reading stops it. A relay whose largest answer the memory budget refuses (admitStream) is closed at once
 * with 1013 and counted as refused.
 * @param {import('fastify').FastifyInstance} app with @fastify/websocket registered
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {ReturnType<typeof CODECS.json>} codec
 * @param {string} listener
 * @returns {void}
 */
function serveRelay(app, method, codec, listener) {
  const { rpc, responses } = method;
  const { decode, encode } = codec;
  // Each answer in both encodings, picked together: a stream of indices into the samples.
  const next = streamPicker(method, responses.messages.map((_, i) => i));
  const json = /** @type {Array<{message: any, bytes: number}>} */ (codec.answers);
  const jsonBytes = (/** @type {number} */ at) => json[at].bytes;
  app.get(rpc.path, { websocket: true }, (socket) => {
    const stream = next();
    // Weighed by its JSON answers, the larger encoding; refused after the upgrade, as @fastify/websocket hands the
    // socket over only then: 1013 is RFC 6455's "try again later".
    if (!admitStream(stream, jsonBytes)) {
      reject(listener, REJECTED.OVER_BUDGET);
      socket.close(1013, 'the server is past its memory budget; retry later');
      return;
    }
    let i = 0;
    let paused = false;
    let refused = false;
    // Frames ws had already read when the relay paused (a read holds many): answered once the client reads again,
    // not at once, so that a client that stops reading holds their small requests, not their large answers.
    /** @type {Array<[Buffer, boolean]>} */
    const waiting = [];
    servedRequests.http++;
    openStream();
    /** Answers one request frame, and pauses the relay when its answers wait unsent past the mark. */
    const answer = (/** @type {Buffer} */ frame, /** @type {boolean} */ isBinary) => {
      try {
        if (isBinary) rpc.requestType.decode(frame);
        else decode(frame.toString('utf8'));
      } catch (err) {
        refused = true;
        reject(listener, REJECTED.INVALID_ARGUMENT);
        // A close reason is at most 123 bytes (RFC 6455 section 5.5).
        socket.close(1007, Buffer.from(`message ${i}: ${err.message}`).subarray(0, 123).toString('utf8'));
        return;
      }
      countMessages(listener, 'received');
      const at = stream[i++ % stream.length];
      socket.send(isBinary ? rpc.responseType.encode(responses.messages[at]).finish() : encode(json[at].message), { binary: isBinary }, resume);
      countMessages(listener, 'sent');
      if (!paused && socket.bufferedAmount >= WEBSOCKET_HIGH_WATER_BYTES) {
        paused = true;
        socket.pause();
      }
    };
    const resume = () => {
      if (!paused || socket.bufferedAmount >= WEBSOCKET_HIGH_WATER_BYTES) return;
      paused = false;
      while (!paused && !refused && waiting.length) answer(...waiting.shift());
      if (!paused) socket.resume();
    };
    socket.on('message', (data, isBinary) => {
      if (refused) return;
      const frame = /** @type {Buffer} */ (Array.isArray(data) ? Buffer.concat(data) : data);
      if (paused) waiting.push([frame, isBinary]);
      else answer(frame, isBinary);
    });
    socket.on('close', (code) => {
      if (refused) dropStream();
      else endStream(listener, code === 1000 || code === 1005 ? 'completed' : 'cut');
    });
  });
}

/** A request stream's message past the body limit: 413, as fastify answers a unary body past it. */
const messageTooLarge = (/** @type {number} */ index, /** @type {number} */ limit) => Object.assign(
  new Error(`message ${index} of the request stream is over ${limit} bytes (MAX_BODY_BYTES)`), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' });

/**
 * Serves a client-streaming method over HTTP: `POST /package.Service/Method` with `Content-Type: application/x-ndjson`,
 * one request message a line in the proto3 JSON mapping, each decoded strictly as its line arrives (400 naming the
 * message's index and field at the first that does not, 413 for a line past MAX_BODY_BYTES: a limit per message, as
 * gRPC's maximum receive message size is) and counted (server/served.js, received); once the body ends, the answer is
 * the next response sample in turn, encoded from its message.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {ReturnType<typeof CODECS.json>} codec
 * @param {string} listener
 * @returns {Promise<void>}
 */
async function serveClientStream(app, method, codec, listener) {
  const { rpc } = method;
  const { decode, encode, type } = codec;
  const pick = answerPicker(method, /** @type {Array<{message: any, bytes: number}>} */ (codec.answers));
  const limit = app.initialConfig.bodyLimit ?? Infinity;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // fastify hands this parser the body as a stream and applies no limit of its own to it: each line is bounded here.
    scope.addContentTypeParser('application/x-ndjson', (request, payload, done) => {
      let rest = '';
      let received = 0;
      let over = false;
      const fail = (err) => {
        over = true;
        countMessages(listener, 'received', received);
        payload.resume();
        done(err);
      };
      const line = (text) => {
        if (text.trim() === '') return;
        if (text.length > limit / 4 && Buffer.byteLength(text) > limit) {
          fail(messageTooLarge(received, limit));
          return;
        }
        try {
          decode(text);
          received++;
        } catch (err) {
          reject(listener, REJECTED.INVALID_ARGUMENT);
          fail(badRequest(rpc, `message ${received} of the stream: ${err.message}`));
        }
      };
      payload.setEncoding('utf8');
      payload.on('data', (chunk) => {
        if (over) return;
        rest += chunk;
        let start = 0;
        for (let nl = rest.indexOf('\n'); nl >= 0 && !over; nl = rest.indexOf('\n', start)) {
          line(rest.slice(start, nl));
          start = nl + 1;
        }
        rest = rest.slice(start);
        if (!over && Buffer.byteLength(rest) > limit) fail(messageTooLarge(received, limit));
      });
      payload.on('end', () => {
        if (over) return;
        line(rest);
        if (over) return;
        countMessages(listener, 'received', received);
        done(null, { received });
      });
      payload.on('error', (err) => {
        if (!over) fail(err);
      });
    });
    scope.post(rpc.path, (request, reply) => {
      const answer = pick();
      if (!admitAnswer(answer.bytes)) return refusedOverBudget(listener, reply);
      servedRequests.http++;
      return reply.type(type).send(encode(answer.message));
    });
  });
}

// What a request without a query, or a route without variables, hands requestOf.
const NO_QUERY = new URLSearchParams();
const NO_VARIABLES = /** @type {RegExpMatchArray} */ (/** @type {unknown} */ ({ groups: {} }));

/**
 * A unary method's google.api.http routes (serveBindings): the answer the one the request picks, as on the method's
 * POST route (the same turn), every field written (grpc-gateway's default marshaler).
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {ReturnType<typeof CODECS.json>|ReturnType<typeof CODECS.protobuf>} codec the listener's
 * @param {(request: object) => {message: any, bytes: number}|null} pick the answers
 * @param {string} listener
 * @returns {Promise<void>}
 */
async function serveHttpRules(app, method, codec, pick, listener) {
  const { boundType } = codec;
  // Each binding's encoder, made once; a binding the encoding cannot answer (null) is not served.
  const encoders = new Map();
  for (const b of method.rpc.bindings) {
    const encode = codec.encodeBound(b.responseBody);
    if (encode) encoders.set(b, encode);
  }
  await serveBindings(app, method, codec, listener, (binding, decoded, reply) => {
    const answer = pick(decoded);
    if (!answer) throw refused(listener, REJECTED.NO_ANSWER, unanswerable(method.refusal));
    if (!admitAnswer(answer.bytes)) return refusedOverBudget(listener, reply);
    servedRequests.http++;
    return reply.type(boundType).send(encoders.get(binding)(answer.message));
  }, encoders.keys());
}

/**
 * A method's google.api.http routes, as grpc-gateway maps them (proto/own/http-rule.js): the request message made from
 * the path's variables, the query and the body, then decoded strictly (400 naming the field), and handed to `answer`.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/methods.js').ServiceMethod} method
 * @param {{decodeBound: (request: object) => any}} codec the listener's
 * @param {string} listener
 * @param {(binding: import('../proto/own/http-rule.js').HttpBinding, decoded: any, reply: import('fastify').FastifyReply,
 *   query: URLSearchParams) => any} answer the route's handler, once the request decoded, with the query it was made from
 * @param {Iterable<import('../proto/own/http-rule.js').HttpBinding>} [bindings] those served; default all of the method's
 * @returns {Promise<void>}
 */
async function serveBindings(app, { rpc }, { decodeBound }, listener, answer, bindings = rpc.bindings) {
  const routes = new Map(); // method and route, to the bindings that share it, tried in order
  for (const b of bindings) routes.set(`${b.method} ${b.route}`, [...(routes.get(`${b.method} ${b.route}`) ?? []), b]);
  await app.register(async (scope) => {
    // The body is JSON, but not always the request message (`body: "field"`): parsed as JSON here, strictly below.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      try {
        done(null, body === '' ? undefined : JSON.parse(/** @type {string} */ (body)));
      } catch (err) {
        reject(listener, REJECTED.INVALID_ARGUMENT);
        done(badRequest(rpc, err.message));
      }
    });
    for (const [key, sharing] of routes) {
      const [method, url] = key.split(' ');
      // fastify reads a ':' as a parameter's start, so a verb (`/v1/books:create`) is matched by the pattern.
      const [only] = sharing;
      const exact = sharing.length === 1 && only.route === only.template && !only.template.includes(':') ? only : null;
      scope.route({
        method, url,
        handler: (request, reply) => {
          const { url } = request;
          const q = url.indexOf('?');
          let binding = exact;
          let match = NO_VARIABLES;
          // A route of one binding with neither variable, wildcard nor verb: fastify matched the whole path already.
          if (!exact) {
            const pathname = q < 0 ? url : url.slice(0, q);
            for (binding of sharing) if ((match = pathname.match(binding.pattern))) break;
            if (!match) return reply.callNotFound();
          }
          let decoded;
          const query = q < 0 ? NO_QUERY : new URLSearchParams(url.slice(q + 1));
          try {
            decoded = decodeBound(/** @type {any} */ (requestOf(binding, match, query, request.body, rpc.requestType, decodeBound)));
          } catch (err) {
            throw refused(listener, REJECTED.INVALID_ARGUMENT, badRequest(rpc, err.message));
          }
          return answer(binding, decoded, reply, query);
        },
      });
    }
  });
}

/**
 * The listener's routes, as a fastify plugin: every method of the service (proto/methods.js serviceMethods: the
 * demo's RPCs, whose google.api.http routes are the demo's GET routes, its server stream StreamUsers on a JSON
 * listener, and the user's own RPC when there is one),
 * each by serveMethod, and HEALTH_PATH: 200 `{"status":"SERVING"}` while `health.serving`, else 503
 * `{"status":"NOT_SERVING"}`. The 404, 405 and 5xx come from the app's handlers (server/http-errors.js), set before this
 * plugin is registered.
 * @param {import('fastify').FastifyInstance} app
 * @param {{port: number, health: import('./health.js').Health, encoding?: 'json'|'protobuf',
 *   own?: import('../proto/own/service.js').OwnService|null, listener?: string, intervalMs?: number}} options `port`: the
 *   one the answers name (the User's `port` field); `encoding` default 'json'; `own` default null; `listener` the name its
 *   refusals are counted under (server/served.js), default 'http'; `intervalMs` STREAM_INTERVAL, default 0
 * @returns {Promise<void>}
 */
export async function httpRoutes(app, { port, health, encoding = 'json', own = null, listener = 'http', intervalMs = 0 }) {
  // A protobuf listener serves no stream (server/listeners.js): the demo's StreamUsers only where JSON is served.
  const streams = encoding === 'json';
  for (const method of serviceMethods({ port, workerPid: process.pid, own, streams })) await serveMethod(app, method, encoding, listener, intervalMs);
  app.get(HEALTH_PATH, (request, reply) => (health.serving
    ? reply.send({ status: 'SERVING' })
    : reply.code(503).send({ status: 'NOT_SERVING' })));
}

/**
 * @typedef {object} HttpAppOptions
 * @property {number} port the listener's port: the one the answers name (startHttp also listens on it)
 * @property {import('pino').Logger} log the worker's logger (a child named `listener: http` is fastify's, at debug and
 *   trace only; a 5xx's cause is logged through it)
 * @property {import('./health.js').Health} health what HEALTH_PATH answers
 * @property {import('./settings.js').ServerSettings} settings the limits: MAX_BODY_BYTES (fastify's bodyLimit: 413
 *   past it), REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS; COMPRESSION (gzip: responses gzipped for clients that send
 *   `Accept-Encoding: gzip`)
 * @property {ReturnType<typeof import('./tls.js').tlsServerOptions>} [tls] with `http2`: HTTP/2 over TLS (h2, no
 *   HTTP/1.1 fallback); for HTTP/1.1 TLS is the serverFactory's (startHttp)
 * @property {boolean} [http2] HTTP/2 (h2c with prior knowledge, or h2 over TLS) instead of HTTP/1.1; default false
 * @property {'json'|'protobuf'} [encoding] 'protobuf' serves the protobuf message as application/x-protobuf instead of
 *   its proto3 JSON mapping; default 'json'
 * @property {import('../proto/own/service.js').OwnService|null} [own] the user's RPC, served too (serveOwnRpc)
 * @property {string} [listener] the listener's name (server/listeners.js), its refusals' label (server/served.js);
 *   default 'http'
 * @property {import('fastify').FastifyServerFactory} [serverFactory] HTTP/1.1 only: builds the node server (startHttp's
 *   guarded one); default fastify's own
 */

/**
 * Builds the HTTP app of one worker, not listening: fastify with the listener's limits, its error replies
 * (server/http-errors.js), gzip when COMPRESSION=gzip, and its routes (httpRoutes). `app.inject()` answers as the
 * listener does; startHttp adds the listen, the guards and the drain.
 * @param {HttpAppOptions} options
 * @returns {Promise<import('fastify').FastifyInstance>} its plugins registered, not yet ready (inject and listen make
 *   it so)
 * @throws {Error} from a plugin's registration (fastify's FST_ERR_* codes)
 */
export async function buildHttpApp({ port, log, health, settings, tls = null, http2 = false, encoding = 'json', own = null, listener = 'http', serverFactory }) {
  // fastify logs each request and its listen address at info; keep those for debug runs only.
  const requestLogging = logsRequests(log.level);
  const fastifyLog = log.child({ listener: 'http' }, { level: requestLogging ? log.level : 'warn' });
  // One factory for HTTP/1.1 and h2c: fastify's types pick the server type from a literal `http2`, which this is not.
  const app = /** @type {import('fastify').FastifyInstance} */ (/** @type {unknown} */ (Fastify(/** @type {any} */ ({
    // With request logging off (LOG_LEVEL info or above) fastify gets no logger at all. Given one, it builds a child
    // logger per request and, per request, reads the clock twice and puts a 'finish' and an 'error' listener on the
    // response (lib/reply.js setupResponseListeners), for a log line that is off: about 4,000 instructions per request
    // under callgrind, 6% of the listener's (docs/findings/2026-11-25-profiling.md, "Counting instructions"). What it would still have
    // logged at warn: a 5xx, which the error handler logs through the listener's logger (server/http-errors.js), and
    // its warnings about a route that replies twice, which none here does (its LogController's disableRequestLogging
    // silenced the rest before). LOG_LEVEL=debug brings back its logger, a child per request with fastify's reqId.
    ...(requestLogging ? { loggerInstance: fastifyLog } : { logger: false }),
    http2, // HTTP/2 (h2c with prior knowledge, or h2 over TLS), for JSON over the transport gRPC uses
    ...(http2 && tls ? { https: tls } : {}),
    bodyLimit: settings.MAX_BODY_BYTES,
    requestTimeout: settings.REQUEST_TIMEOUT_MS,
    // Node checks the head and request deadlines on this interval (30 s by default).
    http: {
      headersTimeout: settings.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, settings.HEADERS_TIMEOUT_MS),
    },
    // A request whose head was still arriving when the drain began is served, not refused:
    // the drain exists to let such requests finish.
    return503OnClosing: false,
    // HTTP/2 idle connections are PINGed by startHttp's guard instead of closed after fastify's 72 s.
    ...(http2 ? { http2SessionTimeout: 0 } : serverFactory ? { serverFactory } : {}),
  }))));
  replyErrorsAsJson(app, requestLogging ? null : fastifyLog);
  // Before the routes: the plugin adds its onSend hook to each route as it is declared.
  // Loaded only where it serves (40 ms of a worker's start on this VM).
  if (settings.COMPRESSION === 'gzip') await app.register((await import('@fastify/compress')).default, GZIP_OPTIONS);
  // A bidirectional RPC's twin is a WebSocket (serveRelay): loaded only then. Its messages are bounded as a body is; the
  // drain closes each connection with 1001, going away.
  if (own?.rpc.requestStream && own.rpc.responseStream && !http2) {
    await app.register((await import('@fastify/websocket')).default, {
      options: { maxPayload: settings.MAX_BODY_BYTES },
      preClose(done) {
        for (const client of this.websocketServer.clients) client.close(1001, 'the server is going away');
        done();
      },
    });
  }
  await app.register(httpRoutes, { port, health, encoding, own, listener, intervalMs: settings.STREAM_INTERVAL });
  return app;
}

/**
 * Builds and starts the HTTP server of one worker: buildHttpApp, on the server every listener of its transport shares
 * (HTTP/1.1: server/h1-guard.js; HTTP/2: server/h2-guard.js), listening.
 * @param {HttpAppOptions & {host: string}} options as buildHttpApp's (its `serverFactory` is this function's own), and
 *   the address to listen on; `tls` (the worker's, from the listener's ALPN protocol) serves HTTPS, or HTTP/2 over TLS
 * @returns {Promise<{close: () => Promise<import('./h1-guard.js').DrainCounts>, forceClose: () => Promise<void>}>} `close`
 *   stops accepting and resolves once in-flight requests are answered, with how they ended; `forceClose` ends the SSE
 *   streams left cleanly (endSseStreams, waiting SSE_END_WAIT_MS at most), then drops the connections left
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, EACCES, ...)
 */
export async function startHttp({ host, port, log, health, settings, tls = null, http2 = false, encoding = 'json', own = null, listener = 'http' }) {
  let h1Drain = null; // the HTTP/1.1 guard's drain, set by the serverFactory below
  let h1Drained = null; // and its counts
  // HTTP/1.1: the server is built by the guard every HTTP/1.1 listener shares, with what fastify would set.
  const serverFactory = (handler, options) => {
    const { server, drain, drained } = guardedHttp1Server(handler, options.http, { settings, tls });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    h1Drain = drain;
    h1Drained = drained;
    return server;
  };
  const app = await buildHttpApp({ port, log, health, settings, tls, http2, encoding, own, listener, serverFactory });
  // The HTTP/2 bounds and defences every HTTP/2 listener shares.
  const guard = http2 ? guardHttp2Server(/** @type {any} */ (app.server), { settings, log, listener: 'json-h2' }) : null;
  await app.listen({ host, port });
  return {
    close: async () => {
      if (guard) {
        await guard.announceShutdown();
        guard.closeSessions();
      }
      h1Drain?.();
      await app.close();
      return guard ? guard.drained : h1Drained;
    },
    // The SSE streams left end cleanly first (their last bytes written before the connections go); an HTTP/2 server has
    // no closeAllConnections: its sessions are destroyed instead, once the streams' ends are on their way.
    forceClose: () => {
      const drop = () => (guard ? guard.destroySessions() : app.server.closeAllConnections());
      const wait = new Promise((resolve) => { setTimeout(resolve, SSE_END_WAIT_MS).unref(); });
      return Promise.race([endSseStreams(listener), wait]).then(drop);
    },
  };
}
