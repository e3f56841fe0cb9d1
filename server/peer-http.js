// Peer: a typical fastify app, as a user would write one to serve the same JSON, kept as an anchor beside the
// bare baseline (issue 24): logger off, a route per scenario returning the object through its response schema,
// fastify's defaults otherwise. None of the project's hardening, accounting or drain: "ours ÷ peer" in
// `npm run targets` is then what the project's own code costs on top of the library.
import Fastify from 'fastify';
import { jsonSchemaOf, responseTypeOf, scenarioKey, scenarioKeyOf, scenarioPayloads, scenarioRoutes } from '../proto/index.js';
import { toJsonText } from '../proto/own/samples.js';
import { inTurn } from '../proto/own/service.js';

/**
 * Starts the peer fastify app of one worker: GET of a scenario's path answers its proto3 JSON through fastify's
 * schema-compiled serializer; a parameter that selects no scenario gets 400. With `own`, the user's RPC as such an app
 * would serve it: `POST /package.Service/Method` read by fastify's own JSON parser (JSON.parse, no check against the
 * message), answered the response samples' proto3 JSON objects in turn, made once at start and serialized by fastify
 * per request (JSON.stringify: a schema of any message, maps and oneofs included, is more than such an app writes).
 * @param {{host: string, port: number, own?: import('../proto/own/service.js').OwnService|null}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startPeerHttp({ host, port, own = null }) {
  const app = Fastify({ logger: false });
  if (own) {
    const next = inTurn(own.responses.messages.map((m) => JSON.parse(toJsonText(own.rpc.responseType, m))));
    app.post(own.rpc.path, async () => next());
  }
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  for (const { path, rpc, param } of scenarioRoutes()) {
    const schema = { response: { 200: jsonSchemaOf(responseTypeOf(rpc)) } };
    if (!param) {
      const { json } = payloads.get(scenarioKey(rpc, {}));
      app.get(path, { schema }, async () => json);
      continue;
    }
    const keyOf = scenarioKeyOf(rpc);
    app.get(path, { schema }, async (request, reply) => {
      const payload = payloads.get(keyOf(/** @type {Record<string, string>} */ (request.query)));
      if (payload) return payload.json;
      reply.code(/** @type {any} */ (400));
      return { statusCode: 400, error: 'Bad Request', message: `unknown ${param}` };
    });
  }
  await app.listen({ host, port });
  return { close: () => app.close(), forceClose: () => app.server.closeAllConnections() };
}
