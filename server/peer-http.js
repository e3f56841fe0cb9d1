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
import { demoMethods } from '../proto/methods.js';
import { ownDescriptors } from '../proto/own/descriptors.js';
import { esMessagesOf } from '../proto/own/json.js';
import { inTurn } from '../proto/own/service.js';

/**
 * Starts the peer fastify app of one worker: GET of a scenario's path (the demo's methods' GET routes, proto/methods.js)
 * answers its proto3 JSON through fastify's schema-compiled serializer; a parameter that selects no scenario gets 400. With `own`, the user's RPC as a
 * protobuf-es user's fastify app serves it, doing the work every real service must do: `POST /package.Service/Method`
 * read by fastify's own JSON parser, then decoded into the request message by protobuf-es
 * (`fromJson(RequestSchema, request.body)`; 400 with its reason when that fails), and answered the next response
 * sample's message in turn (the samples made protobuf-es messages once, at start), encoded per request with
 * `toJson` and serialized by fastify (JSON.stringify: a schema of any message, maps and oneofs included, is more than
 * such an app writes). "Twin ÷ peer" then measures what the project's code costs, not the decoding every real service
 * pays.
 * @param {{host: string, port: number, own?: import('../proto/own/service.js').OwnService|null}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startPeerHttp({ host, port, own = null }) {
  const app = Fastify({ logger: false });
  if (own) {
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
