// A graceful drain for an HTTP/1.1 server, with no request lost on a keep-alive connection.
// node:http's close() destroys every connection idle at that instant (closeIdleConnections), but
// under load a busy keep-alive connection is "idle" for the moment between a response and the
// next request, which is often already on the wire: that request then dies with ECONNRESET
// (a reload under load lost several per worker this way). Instead, during a drain each
// connection is closed by its next response (Connection: close) or, once it has been idle for
// IDLE_CLOSE_GRACE_MS, by the server: a client that waits that long between requests is not in
// the middle of sending one, and is expected to retry an idempotent request on a closed idle
// connection (RFC 9112 9.3.1).

/** How long (ms) a connection must have been idle before a drain closes it. */
export const IDLE_CLOSE_GRACE_MS = 500;
// How often (ms) a drain looks for connections idle that long.
const SWEEP_MS = 50;
/** @this {import('node:net').Socket} */
function keep() { return this; }

/**
 * Tracks the connections of an HTTP/1.1 server so that it can be drained without losing a request.
 * Call before the server accepts connections.
 * @param {import('node:http').Server} server
 * @returns {{drain: () => void}} drain: from now on every response carries `Connection: close` and a
 *   connection idle for IDLE_CLOSE_GRACE_MS is closed, until the server's 'close'; call it right before
 *   server.close() (or the framework's close, which calls it)
 */
export function drainableHttp1(server) {
  /** @type {Map<import('node:net').Socket, number>} socket -> when its last request (or the connection) began (ms, performance.now) */
  const sockets = new Map();
  let draining = false;
  server.on('connection', (socket) => {
    sockets.set(socket, performance.now());
    socket.once('close', () => sockets.delete(socket));
  });
  // First in line, so that the header is set before any handler answers.
  server.prependListener('request', (req, res) => {
    sockets.set(req.socket, performance.now());
    if (draining) res.setHeader('connection', 'close');
  });
  // node:http's close() reaps idle connections itself; the drain below does it with a grace instead.
  const reapIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => { if (!draining) reapIdle(); };
  return {
    drain() {
      if (draining) return;
      draining = true;
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
    },
  };
}
