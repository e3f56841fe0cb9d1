// Peer: a typical fastify app, as a user would write one to serve the same JSON, kept as an anchor beside the
// bare baseline (issue 24): logger off, a route per scenario returning the object through its response schema,
// fastify's defaults otherwise. None of the project's hardening, accounting or drain: "ours ÷ peer" in
// `npm run targets` is then what the project's own code costs on top of the library.
// With the user's own RPC (issue 37) it does the work every real service of that RPC must do, as a protobuf-es user's
// fastify handler does it: the request, read by fastify's JSON parser, decoded into its message with
// @bufbuild/protobuf (`fromJson(RequestSchema, request.body)`; 400 when it fails), and the next response sample's
// message encoded per request with `toJson`, which fastify serializes. So "twin ÷ peer" measures what the project's
// code costs, not the decoding every real service pays. (The descriptors a user would get from protoc-gen-es are built
// from the schema at start, proto/own/descriptors.js; the response samples become messages once, at start.)
import Fastify from 'fastify';
import { fromJson, toJson } from '@bufbuild/protobuf';
import { jsonSchemaOf, toProto3Json } from '../proto/index.js';
import { ownDescriptors } from '../proto/own/descriptors.js';
import { esMessagesOf } from '../proto/own/json.js';
import { inTurn } from '../proto/own/service.js';
import { demoMethods, ownMethod, streamPicker } from '../proto/methods.js';

/**
 * Starts the peer fastify app of one worker: GET of a scenario's path (the demo's methods' GET routes, proto/methods.js)
 * answers its proto3 JSON through fastify's schema-compiled serializer; a parameter that selects no scenario gets 400. With `own`, the user's RPC as a
 * protobuf-es user's fastify app serves it, doing the work every real service must do: `POST /package.Service/Method`
 * read by fastify's own JSON parser, then decoded into the request message by protobuf-es
 * (`fromJson(RequestSchema, request.body)`; 400 with its reason when that fails), and answered the next response
 * sample's message in turn (the samples made protobuf-es messages once, at start), encoded per request with
 * `toJson` and serialized by fastify (JSON.stringify: a schema of any message, maps and oneofs included, is more than
 * such an app writes). "Twin ÷ peer" then measures what the project's code costs, not the decoding every real service
 * pays. A streaming RPC is served as such an app writes its kind by hand (serveStream).
 * @param {{host: string, port: number, own?: import('../proto/own/service.js').OwnService|null, settings?: {STREAM_INTERVAL?: number}}} options
 *   settings: the server's; STREAM_INTERVAL paces a server stream (ms, default 0)
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startPeerHttp({ host, port, own = null, settings = {} }) {
  const app = Fastify({ logger: false });
  if (own && (own.rpc.requestStream || own.rpc.responseStream)) {
    await serveStream(app, own, settings.STREAM_INTERVAL ?? 0);
  } else if (own) {
    const { registry, method } = ownDescriptors(own.proto, own.rpc);
    const next = inTurn(esMessagesOf(own.rpc, own.responses, method.output, registry));
    const options = { registry }; // made once, as a service keeps its options
    app.post(own.rpc.path, async (request, reply) => {
      try {
        fromJson(method.input, /** @type {any} */ (request.body), options);
      } catch (err) {
        reply.code(/** @type {any} */ (400));
        return { statusCode: 400, error: 'Bad Request', message: err.message };
      }
      return toJson(method.output, next(), options);
    });
  }
  // The demo's GET routes, as such an app writes them: the query through a schema (fastify coerces its numbers), the
  // answer through its response schema.
  for (const { rpc, responses, select, refusal } of demoMethods({ port, workerPid: process.pid })) {
    const answers = responses.messages.map((m) => toProto3Json(rpc.responseType, m));
    const schema = {
      querystring: { type: 'object', properties: jsonSchemaOf(rpc.requestType).properties },
      response: { 200: jsonSchemaOf(rpc.responseType) },
    };
    for (const { template } of rpc.bindings) {
      app.get(template, { schema }, async (request, reply) => {
        const answer = answers[select(/** @type {Record<string, number>} */ (request.query))];
        if (answer) return answer;
        reply.code(/** @type {any} */ (400));
        return { statusCode: 400, error: 'Bad Request', message: refusal };
      });
    }
  }
  await app.listen({ host, port });
  return { close: () => app.close(), forceClose: () => app.server.closeAllConnections() };
}

/**
 * A streaming RPC as a fastify user writes it by hand, with the same decoding and encoding as the unary route above:
 * - a server stream: `POST` of the JSON request, decoded, answered with the next response stream as Server-Sent Events,
 *   written on `reply.raw` (`data: <json>\n\n` an event, no wait for 'drain', as such routes are written), paced by
 *   STREAM_INTERVAL with a timer between two events;
 * - a client stream: `POST` of NDJSON (a body parser that keeps the text), each line decoded, then the next response sample;
 * - a relay: a `ws` WebSocketServer on the app's HTTP server at the RPC's path, each text frame decoded and answered
 *   with the call's (connection's) response stream's next message as a text frame, round again past its last.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../proto/own/service.js').OwnService} own
 * @param {number} intervalMs ms between a server stream's events (0: written in one loop)
 * @returns {Promise<void>}
 */
async function serveStream(app, own, intervalMs) {
  const { rpc } = own;
  const { registry, method } = ownDescriptors(own.proto, own.rpc);
  const messages = esMessagesOf(rpc, own.responses, method.output, registry);
  const options = { registry };
  const json = (message) => JSON.stringify(toJson(method.output, message, options));
  if (rpc.requestStream && rpc.responseStream) {
    const next = streamPicker(ownMethod(own), messages);
    const { WebSocketServer } = await import('ws');
    const wss = new WebSocketServer({ server: app.server, path: rpc.path });
    wss.on('connection', (ws) => {
      const stream = next();
      let i = 0;
      ws.on('message', (data) => {
        try {
          fromJson(method.input, JSON.parse(String(data)), options);
        } catch (err) {
          ws.close(1007, String(err.message).slice(0, 120));
          return;
        }
        ws.send(json(stream[i++ % stream.length]));
      });
    });
    app.addHook('onClose', (_, done) => {
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => done());
    });
    return;
  }
  if (rpc.requestStream) {
    const next = inTurn(messages);
    app.addContentTypeParser('application/x-ndjson', { parseAs: 'string' }, (request, body, done) => done(null, body));
    app.post(rpc.path, async (request, reply) => {
      try {
        for (const line of String(request.body).split('\n')) if (line.trim()) fromJson(method.input, JSON.parse(line), options);
      } catch (err) {
        reply.code(/** @type {any} */ (400));
        return { statusCode: 400, error: 'Bad Request', message: err.message };
      }
      return toJson(method.output, next(), options);
    });
    return;
  }
  const next = streamPicker(ownMethod(own), messages);
  app.post(rpc.path, (request, reply) => {
    try {
      fromJson(method.input, /** @type {any} */ (request.body), options);
    } catch (err) {
      reply.code(/** @type {any} */ (400)).send({ statusCode: 400, error: 'Bad Request', message: err.message });
      return;
    }
    const stream = next();
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (!intervalMs) {
      for (const message of stream) res.write(`data: ${json(message)}\n\n`);
      res.end();
      return;
    }
    const send = (i) => {
      if (res.destroyed) return;
      res.write(`data: ${json(stream[i])}\n\n`);
      if (i + 1 === stream.length) res.end();
      else setTimeout(send, intervalMs, i + 1);
    };
    send(0);
  });
}
