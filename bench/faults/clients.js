// Misbehaving clients for the fault matrix (bench/faults/registry.js): readers that never read a 1 MiB
// response, connections that send nothing, and bursts of malformed requests. Each works on
// HTTP/1.1 ('http': GET), HTTP/2 gRPC ('grpc') or HTTP/2 GET ('h2'), in cleartext or, given a CA, over TLS (a client
// of a TLS port must finish the handshake before it can misbehave in HTTP), and every one is closed by the handle it
// returns. Only loopback addresses are used.
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { grpcFrame, methodOf } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';

const HOST = '127.0.0.1';
// HTTP/2's connection preface, then an empty SETTINGS frame (RFC 9113 3.4, 6.5).
const H2_PREFACE = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
// A DATA frame on stream 0: a connection error (RFC 9113 6.1), GOAWAY PROTOCOL_ERROR.
const DATA_ON_STREAM_0 = Buffer.from([0, 0, 1, 0, 0, 0, 0, 0, 0, 0x78]);

/**
 * How a fault's clients speak to the port: HTTP/1.1 GET, gRPC over HTTP/2, or GET over HTTP/2.
 * @typedef {'http'|'grpc'|'h2'} FaultProtocol
 */

/**
 * TLS for the clients: the CA they verify the server against (PEM). Null: cleartext.
 * @typedef {{ca: string|Buffer}|null} ClientTls
 */

/** Whether the protocol speaks HTTP/2 (the preface first, frames after). */
const isH2 = (/** @type {FaultProtocol} */ protocol) => protocol !== 'http';

/**
 * Reads an HTTP/2 connection's frames as they come and answers each PING, as a live client's
 * HTTP/2 stack does (else the server's idle PING closes it as dead: server/h2-guard.js).
 * @param {net.Socket} socket
 */
function answerPings(socket) {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const [type, flags] = [buffered[3], buffered[4]];
      if (type === 6 && (flags & 1) === 0) socket.write(Buffer.concat([Buffer.from([0, 0, 8, 6, 1, 0, 0, 0, 0]), buffered.subarray(9, 17)]));
      buffered = buffered.subarray(9 + length);
    }
  });
}

/**
 * A connection to the port, resolved once it can carry HTTP: at TCP's connect in cleartext, at the end of the TLS
 * handshake (ALPN offering the protocol's one) with `tlsOptions`.
 * @param {number} port
 * @param {FaultProtocol} protocol
 * @param {ClientTls} tlsOptions
 * @returns {Promise<net.Socket>} rejects with the connect's or the handshake's error
 */
const connect = (port, protocol, tlsOptions) => new Promise((resolve, reject) => {
  const socket = tlsOptions
    ? tls.connect({ host: HOST, port, ca: tlsOptions.ca, ALPNProtocols: [isH2(protocol) ? 'h2' : 'http/1.1'] }, () => resolve(socket))
    : net.connect({ host: HOST, port }, () => resolve(socket));
  socket.once('error', reject);
});

/** An HTTP/2 session to the port, over TLS with `tlsOptions`. */
const h2Session = (port, tlsOptions) => (tlsOptions
  ? http2.connect(`https://${HOST}:${port}`, { ca: tlsOptions.ca })
  : http2.connect(`http://${HOST}:${port}`));

/**
 * Connections that ask for the 1 MiB blob and never read the answer, so the server can only
 * hold it or stop producing (backpressure). HTTP/1.1: requests pipelined on each connection; HTTP/2 (gRPC or GET):
 * streams on each connection, the client's flow-control window never reopened.
 * @param {{port: number, protocol: FaultProtocol, connections: number, requestsEach: number, tls?: ClientTls}} options
 * @returns {Promise<{opened: number, close: () => void}>}
 * @throws {Error} when an HTTP/1.1 connection or its TLS handshake fails
 */
export async function slowReaders({ port, protocol, connections, requestsEach, tls: tlsOptions = null }) {
  const { httpPath, rpc, request } = SCENARIOS['blob-1m'];
  const grpc = protocol === 'grpc';
  const body = grpc ? grpcFrame(methodOf(rpc).resolvedRequestType.encode(request).finish()) : undefined;
  const headers = grpc ? { ':method': 'POST', ':path': `/${rpcPath(rpc)}`, 'content-type': 'application/grpc', te: 'trailers' }
    : { ':method': 'GET', ':path': httpPath };
  const closers = [];
  for (let i = 0; i < connections; i++) {
    if (protocol === 'http') {
      const socket = await connect(port, protocol, tlsOptions);
      socket.on('error', () => {});
      socket.pause();
      socket.write(`GET ${httpPath} HTTP/1.1\r\nHost: bench\r\n\r\n`.repeat(requestsEach));
      closers.push(() => socket.destroy());
    } else {
      const session = h2Session(port, tlsOptions);
      session.on('error', () => {});
      for (let s = 0; s < requestsEach; s++) {
        const stream = session.request(headers);
        stream.on('error', () => {});
        stream.end(body);
        stream.pause(); // never read: Node sends no WINDOW_UPDATE past what it buffers
      }
      closers.push(() => session.destroy());
    }
  }
  return { opened: connections, close: () => { for (const close of closers) close(); } };
}

/**
 * Connections that are opened and then send nothing (HTTP/2: the preface and SETTINGS, then only PING ACKs). Over TLS
 * each finishes its handshake first: a connection the server holds, as an idle client's pool does. Opening stops after
 * `withinMs`: a loaded server can take longer than the load to finish thousands of handshakes, and a connection that
 * completes later (or after close) is closed at once.
 * @param {{port: number, protocol: FaultProtocol, count: number, tls?: ClientTls, withinMs?: number}} options withinMs:
 *   how long opening may take (ms; default no limit)
 * @returns {Promise<{opened: number, refused: number, not_opened: number, open: () => number, close: () => void}>}
 *   refused: connects (or handshakes) that failed; not_opened: those not made or not complete within withinMs; open: how
 *   many are still open
 */
export async function idleConnections({ port, protocol, count, tls: tlsOptions = null, withinMs = Infinity }) {
  const sockets = [];
  let failed = 0;
  let closed = false;
  const started = performance.now();
  const timeLeft = () => withinMs - (performance.now() - started);
  const attempt = () => connect(port, protocol, tlsOptions).then((socket) => {
    socket.on('error', () => {});
    if (closed || timeLeft() <= 0) {
      socket.destroy();
      return;
    }
    if (isH2(protocol)) {
      socket.write(H2_PREFACE);
      answerPings(socket);
    } else {
      socket.resume(); // read (and drop) what the server sends: a 408, say
    }
    sockets.push(socket);
  }, () => { if (timeLeft() > 0) failed++; });
  // In batches, so that the listen backlog is not the limit being measured.
  for (let i = 0; i < count && timeLeft() > 0; i += 200) {
    const batch = Promise.all(Array.from({ length: Math.min(200, count - i) }, attempt));
    if (!Number.isFinite(withinMs)) {
      await batch;
      continue;
    }
    let timer;
    await Promise.race([batch, new Promise((resolve) => { timer = setTimeout(resolve, timeLeft()); })]);
    clearTimeout(timer);
  }
  const opened = sockets.length;
  return {
    opened,
    refused: failed,
    not_opened: count - opened - failed,
    open: () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length,
    close: () => {
      closed = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * A burst of malformed requests, each on a connection of its own (over TLS: after the handshake): HTTP/1.1, bytes that
 * are no request line; HTTP/2, the preface then DATA on stream 0. Resolves when the server has closed each connection
 * (or after timeoutMs).
 * @param {{port: number, protocol: FaultProtocol, count: number, timeoutMs?: number, tls?: ClientTls}} options timeoutMs: ms
 * @returns {Promise<{sent: number, closed_by_server: number}>}
 */
export async function malformedBurst({ port, protocol, count, timeoutMs = 5000, tls: tlsOptions = null }) {
  const payload = isH2(protocol) ? Buffer.concat([H2_PREFACE, DATA_ON_STREAM_0]) : Buffer.from('\x16\x03\x01 not http at all\r\n\r\n');
  const results = await Promise.all(Array.from({ length: count }, async () => {
    let socket;
    try {
      socket = await connect(port, protocol, tlsOptions);
    } catch {
      return false;
    }
    socket.on('error', () => {});
    socket.resume();
    socket.write(payload);
    const closed = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      socket.once('close', () => { clearTimeout(timer); resolve(true); });
    });
    socket.destroy();
    return closed;
  }));
  return { sent: count, closed_by_server: results.filter(Boolean).length };
}
