// The HTTP/1.1 listener: fastify serving the User as its proto3 JSON mapping.
import Fastify from 'fastify';
import { HTTP_PATH } from '../proto/payload.js';
import { jsonSchemaOf, toProto3Json, User, userMessage } from '../proto/index.js';
import { logsRequests } from './log.js';

/**
 * Builds and starts the HTTP server of one worker.
 * @param {{host: string, port: number, log: import('pino').Logger}} options
 * @returns {Promise<{close: () => Promise<void>}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, EACCES, ...)
 */
export async function startHttp({ host, port, log }) {
  // fastify logs each request and its listen address at info; keep those for debug runs only.
  const fastifyLog = log.child({ listener: 'http' }, { level: logsRequests(log.level) ? log.level : 'warn' });
  const app = Fastify({ loggerInstance: fastifyLog });
  // Built once: the per-request cost is the schema-compiled serializer, as in a real service.
  const body = toProto3Json(User, userMessage({ port, workerPid: process.pid }));
  app.get(HTTP_PATH, { schema: { response: { 200: jsonSchemaOf(User) } } }, () => body);
  await app.listen({ host, port });
  return { close: () => app.close() };
}
