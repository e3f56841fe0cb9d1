// Baseline: bare node:http serving the very bytes the fastify listener sends
// for each scenario, serialized once. What fastify adds per request shows as
// the gap between the two in the main job's capacity pass. Bare (issue 24): none of the HTTP/1.1 guard
// (server/h1-guard.js), no drain on the request path, so "framework ÷ bare" means what it says. With TLS_CERT/TLS_KEY
// it serves TLS as the compared listeners do (server/tls.js), so that the client's ceiling under TLS=1 is k6's doing
// the same TLS work (bench/passes/calibrate.js).
import http from 'node:http';
import https from 'node:https';
import { scenarioKey, scenarioPayloads } from '../proto/index.js';
import { SCENARIOS } from '../proto/payload.js';
import { toJsonText } from '../proto/own/samples.js';
import { inTurn } from '../proto/own/service.js';

/**
 * Starts the bare HTTP/1.1 server of one worker: GET of a scenario's path
 * (with its query) answers 200 with the JSON body; with `own`, a POST to the user's RPC answers its response samples'
 * JSON bodies in turn, encoded once, the request read and left undecoded; anything else 404.
 * @param {{host: string, port: number, tls: ReturnType<typeof import('./tls.js').tlsServerOptions>,
 *   own?: import('../proto/own/service.js').OwnService|null}} options tls: the worker's (TLS_CERT/TLS_KEY with
 *   ALPN http/1.1), null for cleartext
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startBaselineHttp({ host, port, tls, own = null }) {
  const payloads = scenarioPayloads({ port, workerPid: process.pid });
  const bodies = new Map(Object.values(SCENARIOS).map(({ httpPath, rpc, request }) => [
    httpPath, Buffer.from(JSON.stringify(payloads.get(scenarioKey(rpc, request)).json)),
  ]));
  const ownPath = own?.rpc.path;
  const nextOwn = own ? inTurn(own.responses.messages.map((m) => Buffer.from(toJsonText(own.rpc.responseType, m)))) : null;
  /** @type {http.RequestListener} */
  const onRequest = (req, res) => {
    if (req.method === 'POST' && req.url === ownPath) {
      req.resume(); // read the request off the wire, as the compared listener does
      req.once('end', () => {
        const answer = nextOwn();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      });
      return;
    }
    const body = req.method === 'GET' ? bodies.get(req.url) : undefined;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  };
  const server = tls ? https.createServer(tls, onRequest) : http.createServer(onRequest);
  // fastify's default, so both send the same Keep-Alive header.
  server.keepAliveTimeout = 72_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve(undefined));
  });
  return {
    // node:http's close() ends the idle connections, then the rest as their responses end.
    close: () => new Promise((resolve) => { server.close(() => resolve()); }),
    forceClose: () => server.closeAllConnections(),
  };
}
