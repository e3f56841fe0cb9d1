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

/**
 * How a slow stream reader's stream began: `answered` (the response's head and, for a relay, its first answer came),
 * `refused` (gRPC RESOURCE_EXHAUSTED, HTTP 503, WebSocket close 1013: the server's memory budget), `failed` (anything
 * else, or nothing within the wait).
 * @typedef {{answered: number, refused: number, failed: number}} StreamOutcomes
 */

// A WebSocket upgrade's fixed key (RFC 6455 4.1: any 16 bytes, base64): the server's accept is not checked here.
const WS_KEY = Buffer.from('slow-stream-read').toString('base64');

/** One client-to-server WebSocket text frame (RFC 6455 5.2; masked, as a client's must be; mask 0: the payload as is). */
function wsTextFrame(text) {
  const payload = Buffer.from(text);
  const length = payload.length < 126 ? Buffer.from([payload.length | 0x80])
    : payload.length < 65536 ? Buffer.from([126 | 0x80, payload.length >> 8, payload.length & 0xff])
      : Buffer.concat([Buffer.from([127 | 0x80]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(payload.length)); return b; })()]);
  return Buffer.concat([Buffer.from([0x81]), length, Buffer.alloc(4), payload]);
}

/**
 * Streams of a streaming RPC whose reader stops reading once its stream began, so the server can only hold what it
 * wrote or stop writing (back-pressure), or refuse the stream. gRPC: `streams` HTTP/2 streams, `perConnection` a
 * connection, the flow-control windows never reopened; HTTP/1.1: a connection a stream, a server stream asked for as
 * SSE (the head and the first bytes read, then nothing), a relay as a WebSocket that sends `sends` messages and then
 * reads nothing past the first answer; HTTP/2 GET-style ('h2', json-h2): SSE streams on `perConnection`-stream sessions.
 * A relay over gRPC sends `sends` messages and never ends its side. Only loopback.
 * @param {{port: number, protocol: FaultProtocol, path: string, streams: number, perConnection?: number, relay?: boolean,
 *   sends?: number, request: {protobuf: Uint8Array, json: string}, tls?: ClientTls, waitMs?: number}} options path: the
 *   RPC's `/package.Service/Method`; request: one request message in both encodings; waitMs: how long each stream's
 *   beginning is waited for (ms, default 5000)
 * @returns {Promise<StreamOutcomes & {opened: number, close: () => void}>} resolves once every stream began or its wait ended
 */
export async function slowStreamReaders({ port, protocol, path: rpcPathname, streams, perConnection = 100, relay = false, sends = 64,
  request, tls: tlsOptions = null, waitMs = 5000 }) {
  const outcomes = { answered: 0, refused: 0, failed: 0 };
  const closers = [];
  const began = [];
  /** A stream's beginning, classified once: the first outcome counts, and a stream that shows none within waitMs failed. */
  const beginning = () => {
    let settle;
    const p = new Promise((resolve) => { settle = resolve; });
    const timer = setTimeout(() => settle('failed'), waitMs);
    began.push(p.then((how) => { clearTimeout(timer); outcomes[how]++; }));
    return (/** @type {keyof StreamOutcomes} */ how) => settle(how);
  };
  if (protocol === 'http') {
    for (let i = 0; i < streams; i++) {
      const settle = beginning();
      const socket = await connect(port, protocol, tlsOptions).catch(() => null);
      if (!socket) {
        settle('failed');
        continue;
      }
      socket.on('error', () => settle('failed'));
      closers.push(() => socket.destroy());
      let head = Buffer.alloc(0);
      let upgraded = false;
      socket.on('data', (chunk) => {
        if (upgraded) {
          // A relay's first frame after the upgrade: its close (0x88) with 1013, or an answer.
          settle(chunk[0] === 0x88 && chunk.length >= 4 && chunk.readUInt16BE(2) === 1013 ? 'refused' : 'answered');
          socket.pause();
          return;
        }
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head.toString('latin1', 0, 16))?.[1]);
        if (relay && status === 101) {
          upgraded = true;
          const rest = head.subarray(end + 4);
          for (let s = 0; s < sends; s++) socket.write(wsTextFrame(request.json));
          if (rest.length) socket.emit('data', rest);
          return;
        }
        settle(status === 200 ? 'answered' : status === 503 ? 'refused' : 'failed');
        socket.pause(); // never read again
      });
      socket.write(relay
        ? `GET ${rpcPathname} HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${WS_KEY}\r\n`
          + 'Sec-WebSocket-Version: 13\r\n\r\n'
        : `POST ${rpcPathname} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n`
          + `Content-Length: ${Buffer.byteLength(request.json)}\r\n\r\n${request.json}`);
    }
  } else {
    const grpc = protocol === 'grpc';
    const headers = grpc ? { ':method': 'POST', ':path': rpcPathname, 'content-type': 'application/grpc', te: 'trailers' }
      : { ':method': 'POST', ':path': rpcPathname, 'content-type': 'application/json', accept: 'text/event-stream' };
    const body = grpc ? grpcFrame(request.protobuf) : Buffer.from(request.json);
    for (let opened = 0; opened < streams; opened += perConnection) {
      const session = h2Session(port, tlsOptions);
      session.on('error', () => {});
      closers.push(() => session.destroy());
      for (let s = opened; s < Math.min(streams, opened + perConnection); s++) {
        const settle = beginning();
        const stream = session.request(headers);
        stream.on('error', () => settle('failed'));
        stream.on('response', (h) => {
          if (!grpc) return settle(h[':status'] === 200 ? 'answered' : h[':status'] === 503 ? 'refused' : 'failed');
          // grpc-js refuses trailers-only (grpc-status in the head); connect-node sends its head before the handler's
          // first message, so its refusal comes in the trailers: a stream is begun once a message's bytes arrive.
          const code = h['grpc-status'];
          if (code !== undefined) return settle(code === '8' ? 'refused' : 'failed');
          stream.once('trailers', (trailers) => settle(trailers['grpc-status'] === '8' ? 'refused' : 'failed'));
          stream.once('readable', () => { if (stream.readableLength > 0) settle('answered'); });
          return undefined;
        });
        if (relay) for (let m = 0; m < sends; m++) stream.write(body);
        else stream.end(body);
        stream.pause(); // never read: Node sends no WINDOW_UPDATE past what it buffers
      }
    }
  }
  await Promise.all(began);
  return { opened: streams, ...outcomes, close: () => { for (const close of closers) close(); } };
}
