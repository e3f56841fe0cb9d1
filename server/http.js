// The HTTP/1.1 listener: fastify serving the User as its proto3 JSON mapping, and its health.
import Fastify from 'fastify';
import { jsonSchemaOf, responseTypeOf, scenarioKey, scenarioPayloads, scenarioRoutes } from '../proto/index.js';
import { HEALTH_PATH } from './health.js';
import { replyErrorsAsJson } from './http-errors.js';
import { logsRequests } from './log.js';

/**
 * Builds and starts the HTTP server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger,
 *   health: import('./health.js').Health, settings: import('./settings.js').ServerSettings}} options
 *   `settings` gives the limits: MAX_BODY_BYTES, MAX_CONNECTIONS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>} `close` stops accepting
 *   and resolves once in-flight requests are answered; `forceClose` drops the connections left
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, EACCES, ...)
 */
export async function startHttp({ host, port, log, health, settings }) {
  // fastify logs each request and its listen address at info; keep those for debug runs only.
  const fastifyLog = log.child({ listener: 'http' }, { level: logsRequests(log.level) ? log.level : 'warn' });
  const app = Fastify({
    loggerInstance: fastifyLog,
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
  });
  // Not server.maxConnections: under cluster's round robin a connection a worker refuses goes
  // back to the primary, which hands it over again at once, and both spin (nodejs/node#54882).
  app.server.on('connection', function capConnections(socket) {
    if (this._connections > settings.MAX_CONNECTIONS) socket.destroy();
  });
  replyErrorsAsJson(app);
  // Bodies are built once: the per-request cost is the schema-compiled serializer, as in a real service.
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  for (const { path, rpc, param } of scenarioRoutes()) {
    const schema = { response: { 200: jsonSchemaOf(responseTypeOf(rpc)) } };
    if (!param) {
      const { json } = payloads.get(scenarioKey(rpc, {}));
      app.get(path, { schema }, () => json);
      continue;
    }
    const served = [...payloads.values()].filter((p) => p.rpc === rpc).map((p) => p.request[param]);
    app.get(path, { schema }, (request, reply) => {
      const hit = payloads.get(`${rpc}:${request.query[param]}`);
      if (hit) return hit.json;
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: `${param} must be one of ${served.join(', ')}` });
    });
  }
  app.get(HEALTH_PATH, (request, reply) => (health.serving
    ? reply.send({ status: 'SERVING' })
    : reply.code(503).send({ status: 'NOT_SERVING' })));
  await app.listen({ host, port });
  return { close: () => app.close(), forceClose: () => app.server.closeAllConnections() };
}
