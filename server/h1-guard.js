// What every HTTP/1.1 listener shares (http, protobuf-h1, baseline-http), whoever built its
// handler: a cap on connections per worker, pipelined requests answered one at a time, and a
// drain that loses no request on a keep-alive connection.
//
// One at a time: node:http answers pipelined requests in order but hands each to the handler as
// soon as it is parsed, so a client that pipelines requests and never reads had the worker build
// every answer at once (16 connections × 8 unread GETs of the 1 MiB blob: +196 MiB, docs/faults.md;
// one 64 KiB write of such GETs asks for about a thousand). Here a pipelined request reaches the
// handler only when the answers before it have gone out to the socket, as nginx reads a
// connection's next request only after answering the last: a client that does not read holds one
// answer per connection, not one per request.
//
// The drain: node:http's close() destroys every connection idle at that instant
// (closeIdleConnections), but under load a busy keep-alive connection is "idle" for the moment
// between a response and the next request, which is often already on the wire: that request then
// dies with ECONNRESET (a reload under load lost several per worker this way). Instead, during a
// drain each connection is closed by its next response (Connection: close) or, once it has been
// idle for IDLE_CLOSE_GRACE_MS, by the server: a client that waits that long between requests is
// not in the middle of sending one, and is expected to retry an idempotent request on a closed
// idle connection (RFC 9112 9.3.1).
import https from 'node:https';
import { countHandshakes } from './tls.js';

// node:http as CommonJS exports it: an ESM import of it builds the module's namespace, whose lazy getters (WebSocket and
// the other fetch globals) load Node's bundled undici, 50 ms of a worker's start (docs/findings/2026-11-28-worker-start.md).
const http = process.getBuiltinModule('node:http');

/** How long (ms) a connection must have been idle before a drain closes it. */
const IDLE_CLOSE_GRACE_MS = 500;
// How often (ms) a drain looks for connections idle that long.
const SWEEP_MS = 50;
/** @this {import('node:net').Socket} */
function keep() { return this; }

/**
 * A node:http server whose requests reach `handler` under the HTTP/1.1 bounds, and can be drained
 * without losing a request. fastify takes it as its serverFactory.
 * @param {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void} handler
 * @param {import('node:http').ServerOptions} serverOptions node:http's options (headersTimeout, ...)
 * @param {{settings: {MAX_CONNECTIONS: number}, tls?: object|null}} options tls: tls.createServer's options
 *   (server/tls.js tlsServerOptions) to serve HTTPS, null for cleartext; MAX_CONNECTIONS: open connections one worker
 *   keeps; a connection past it is closed at once, before any byte is read
 * @returns {{server: import('node:http').Server, drain: () => void, drained: DrainCounts}} drain: from now on every response
 *   carries `Connection: close` and a connection idle for IDLE_CLOSE_GRACE_MS is closed, until the server's
 *   'close'; call it right before server.close() (or the framework's close, which calls it). drained: how the
 *   requests in flight when the drain began, and those that came during it, ended
 */
export function guardedHttp1Server(handler, serverOptions, { settings, tls = null }) {
  /** @type {Map<import('node:net').Socket, number>} socket -> when its last request (or the connection) began (ms, performance.now) */
  const sockets = new Map();
  let draining = false;
  /** @type {DrainCounts} */
  const drained = { answered: 0, lost: 0 };
  // Counted once it ends: answered when its response went out whole, lost when its connection closed first.
  const count = (res) => res.once('close', () => { if (res.writableFinished) drained.answered++; else drained.lost++; });
  // TLS (server/tls.js): https.Server is an http.Server over TLS sockets; everything below applies alike.
  /** @type {import('node:http').RequestListener} */
  const onRequest = (req, res) => {
    sockets.set(req.socket, performance.now());
    if (draining) {
      res.setHeader('connection', 'close');
      count(res);
    }
    // node:http gives a pipelined request's response the socket once the answers before it are out.
    if (res.socket === null) res.once('socket', () => handler(req, res));
    else handler(req, res);
  };
  /** @type {import('node:http').Server} */
  const server = tls ? https.createServer({ ...serverOptions, ...tls }, onRequest) : http.createServer(serverOptions, onRequest);
  countHandshakes(server);
  // Not server.maxConnections: under cluster's round robin a connection a worker refuses goes
  // back to the primary, which hands it over again at once, and both spin (nodejs/node#54882).
  server.on('connection', function capConnections(socket) {
    if (this._connections > settings.MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    sockets.set(socket, performance.now());
    socket.once('close', () => sockets.delete(socket));
  });
  // node:http's close() reaps idle connections itself; the drain below does it with a grace instead.
  const reapIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => { if (!draining) reapIdle(); };
  const drain = () => {
    if (draining) return;
    draining = true;
    // The responses under way now (node:http's socket._httpMessage: the one a connection is answering).
    for (const socket of sockets.keys()) {
      const res = /** @type {any} */ (socket)._httpMessage;
      if (res && !res.writableFinished) count(res);
    }
    const sweep = setInterval(() => {
      const now = performance.now();
      // node:http knows which connections are idle (no request arriving, no response unfinished); this map
      // knows how long ago each last began a request. Only a connection idle by both is closed: node's
      // reaper runs with the others' destroy() stubbed out for the length of the call.
      const young = [...sockets].filter(([, since]) => now - since < IDLE_CLOSE_GRACE_MS);
      for (const [socket] of young) socket.destroy = keep;
      try {
        reapIdle();
      } finally {
        for (const [socket] of young) delete socket.destroy;
      }
    }, SWEEP_MS);
    server.once('close', () => clearInterval(sweep));
  };
  return { server, drain, drained };
}

/**
 * @typedef {object} DrainCounts how the requests (HTTP/2: streams) a drain found in flight or that came during it ended
 * @property {number} answered their response went out whole (HTTP/2: the stream closed with NO_ERROR)
 * @property {number} lost their connection closed first, or the stream was reset (by either side: Node does not say)
 */
