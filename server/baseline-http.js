// Baseline: bare node:http serving the very bytes the fastify listener sends
// for each scenario, serialized once. What fastify adds per request shows as
// the gap between the two in the main job's capacity pass. Bare (issue 24): none of the HTTP/1.1 guard
// (server/h1-guard.js), no drain on the request path, so "framework ÷ bare" means what it says. With TLS_CERT/TLS_KEY
// it serves TLS as the compared listeners do (server/tls.js), so that the client's ceiling under TLS=1 is k6's doing
// the same TLS work (bench/passes/calibrate.js).
import http from 'node:http';
import https from 'node:https';
import { toProto3Json } from '../proto/index.js';
import { toJsonText } from '../proto/own/samples.js';
import { answerPicker, serviceMethods } from '../proto/methods.js';

/**
 * The URL of a google.api.http GET route without variables for a request: its template, and the request's fields as
 * the query (their proto3 JSON mapping, as grpc-gateway reads a query), e.g. '/users?count=100'.
 * @param {import('../proto/own/http-rule.js').HttpBinding} binding
 * @param {import('protobufjs').Type} type the request's
 * @param {import('protobufjs').Message} request
 * @returns {string}
 */
const urlOf = (binding, type, request) => {
  const fields = /** @type {Record<string, unknown>} */ (JSON.parse(toJsonText(type, request)));
  const query = new URLSearchParams(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)]))).toString();
  return query ? `${binding.template}?${query}` : binding.template;
};

/**
 * Starts the bare HTTP/1.1 server of one worker, over the methods the fastify listener serves (proto/methods.js): a GET
 * of a method's google.api.http route without variables, with a request sample's query, answers 200 with the JSON body
 * the fastify listener sends for it (every field); a POST to a method that answers in turn (the user's RPC) answers its
 * response samples' JSON bodies in turn, the request read and left undecoded; anything else 404. Every body encoded once.
 * @param {{host: string, port: number, tls: ReturnType<typeof import('./tls.js').tlsServerOptions>,
 *   own?: import('../proto/own/service.js').OwnService|null}} options tls: the worker's (TLS_CERT/TLS_KEY with
 *   ALPN http/1.1), null for cleartext
 * @returns {Promise<{close: () => Promise<void>, forceClose: () => void}>}
 * @throws {NodeJS.ErrnoException} from listen (EADDRINUSE, ...)
 */
export async function startBaselineHttp({ host, port, tls, own = null }) {
  const bodies = new Map();
  const posts = new Map();
  for (const method of serviceMethods({ port, workerPid: process.pid, own })) {
    const { rpc, requests, responses, select } = method;
    if (!select) {
      posts.set(rpc.path, answerPicker(method, responses.messages.map((m) => Buffer.from(toJsonText(rpc.responseType, m)))));
      continue;
    }
    for (const binding of rpc.bindings.filter((b) => b.method === 'GET' && b.variables.length === 0)) {
      for (const request of requests.messages) {
        const answer = responses.messages[select(request)];
        if (answer) bodies.set(urlOf(binding, rpc.requestType, request), Buffer.from(JSON.stringify(toProto3Json(rpc.responseType, answer))));
      }
    }
  }
  /** @type {http.RequestListener} */
  const onRequest = (req, res) => {
    const next = req.method === 'POST' ? posts.get(req.url) : undefined;
    if (next) {
      req.resume(); // read the request off the wire, as the compared listener does
      req.once('end', () => {
        const answer = next();
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
