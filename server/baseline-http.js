// Baseline: bare node:http serving the very bytes the fastify listener sends
// for each scenario, serialized once. What fastify adds per request shows as
// the gap between the two in the main job's capacity pass.
import { promisify } from 'node:util';
import { scenarioKey, scenarioPayloads } from '../proto/index.js';
import { SCENARIOS } from '../proto/payload.js';
import { guardedHttp1Server } from './h1-guard.js';

/**
 * Starts the bare HTTP/1.1 server of one worker: GET of a scenario's path
 * (with its query) answers 200 with the JSON body; anything else 404.
 * @param {{host: string, port: number, settings: {MAX_CONNECTIONS: number}}} options
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startBaselineHttp({ host, port, settings }) {
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  const bodies = new Map(Object.values(SCENARIOS).map(({ httpPath, rpc, request }) => [
    httpPath, Buffer.from(JSON.stringify(payloads.get(scenarioKey(rpc, request)).json)),
  ]));
  const { server, drain } = guardedHttp1Server((req, res) => {
    const body = req.method === 'GET' ? bodies.get(req.url) : undefined;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  }, {}, { settings });
  // fastify's default, so both send the same Keep-Alive header.
  server.keepAliveTimeout = 72_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve(undefined));
  });
  const close = promisify(server.close.bind(server));
  return {
    close: () => { drain(); return close(); },
    forceClose: () => server.closeAllConnections(),
  };
}
