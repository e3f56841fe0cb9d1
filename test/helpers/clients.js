// Clients the server tests talk with: plain HTTP/1.1, raw TCP, gRPC (grpc-js and raw
// HTTP/2), each on 127.0.0.1 and each closing its connection when done.
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { toProto3Json, User, userServiceDefinition } from '../../proto/index.js';
import { GET_USER_RPC } from '../../proto/payload.js';
import { ROOT } from './server.js';

const HOST = '127.0.0.1';

/** What would show a stack trace or an internal path to a client. */
const INTERNALS = [/\n\s+at /, /node_modules/, /\.js:\d+/, /\/internal\//];

/**
 * Asserts that a text a client received shows no stack trace and no path of the server.
 * @param {string|Buffer} received
 */
export function assertNoInternals(received) {
  const text = String(received);
  for (const pattern of INTERNALS) assert.doesNotMatch(text, pattern, `a client got internals: ${text.slice(0, 300)}`);
  assert.ok(!text.includes(ROOT.replace(/\/$/, '')), `a client got a server path: ${text.slice(0, 300)}`);
}

/**
 * One HTTP/1.1 request on its own connection (no agent, `Connection: close`).
 * @param {number} port
 * @param {{method?: string, path?: string, headers?: object, body?: string|Buffer, timeoutMs?: number}} [options]
 * @returns {Promise<{status: number, headers: object, body: string, raw: Buffer}>} body: the bytes as UTF-8 text; raw: as received
 *   (still compressed when the server compressed them)
 */
export function httpRequest(port, { method = 'GET', path = '/', headers = {}, body, timeoutMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: HOST, port, method, path, agent: false, headers: { connection: 'close', ...headers }, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode, headers: res.headers, body: raw.toString('utf8'), raw });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Opens a TCP connection, writes `chunks` (waiting `gapMs` between them), and
 * collects what comes back until the server closes or `timeoutMs` passes.
 * @param {number} port
 * @param {Array<string|Buffer>|string|Buffer} chunks
 * @param {{timeoutMs?: number, gapMs?: number, end?: boolean}} [options] `end` half-closes after the last chunk
 * @returns {Promise<{data: Buffer, closed: boolean, error: string|undefined, elapsedMs: number}>}
 *   `closed` is true when the server closed (or reset) the connection in time
 */
export function tcpExchange(port, chunks, { timeoutMs = 3000, gapMs = 0, end = false } = {}) {
  const started = Date.now();
  const parts = [chunks].flat();
  return new Promise((resolve) => {
    const socket = net.connect(port, HOST);
    const received = [];
    let error;
    let timer;
    const finish = (closed) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(received), closed, error, elapsedMs: Date.now() - started });
    };
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', (err) => { error = err.code; });
    socket.on('close', () => finish(true));
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (socket.destroyed) return;
        if (i > 0 && gapMs) await new Promise((r) => setTimeout(r, gapMs));
        if (!socket.destroyed) socket.write(part);
      }
      if (end && !socket.destroyed) socket.end();
    });
    timer = setTimeout(() => finish(false), timeoutMs);
  });
}

/**
 * Opens `count` keep-alive connections, each with one GET answered, and keeps them open.
 * @param {number} port
 * @param {number} count
 * @returns {Promise<net.Socket[]>}
 */
export async function openKeptConnections(port, count) {
  const sockets = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect(port, HOST);
    sockets.push(socket);
    const head = await new Promise((resolve, reject) => {
      let data = '';
      socket.on('error', reject);
      socket.on('data', (chunk) => { data += chunk; if (data.includes('\r\n\r\n')) resolve(data); });
      socket.write('GET / HTTP/1.1\r\nHost: test\r\n\r\n');
    });
    assert.match(head, /^HTTP\/1\.1 200 /);
  }
  return sockets;
}

/**
 * A request whose head is sent but for its last CRLF: in flight until `finish` sends it.
 * @param {number} port
 * @param {string} path
 * @returns {{finish: () => Promise<string>, socket: net.Socket}} `finish` resolves with all the
 *   server sent until it closed the connection
 */
export function partialHttpRequest(port, path) {
  const socket = net.connect(port, HOST);
  let data = '';
  socket.on('data', (chunk) => { data += chunk; });
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('error', () => {});
  socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n`);
  return { socket, finish: async () => { socket.write('\r\n'); await closed; return data; } };
}

/**
 * A GetUser call over raw HTTP/2 whose 5-byte message frame is sent but for its last
 * byte: in flight until `finish` sends it.
 * @param {number} port
 * @returns {{finish: () => Promise<{grpcStatus: string|undefined, user: object|undefined}>, close: () => void}}
 */
export function partialGrpcCall(port) {
  const session = http2.connect(`http://${HOST}:${port}`);
  session.on('error', () => {});
  const stream = session.request({
    ':method': 'POST', ':path': `/${GET_USER_RPC}`, 'content-type': 'application/grpc', te: 'trailers',
  });
  const chunks = [];
  let grpcStatus;
  stream.on('data', (chunk) => chunks.push(chunk));
  stream.on('trailers', (trailers) => { grpcStatus = trailers['grpc-status']; });
  stream.on('error', () => {});
  const ended = new Promise((resolve) => stream.on('close', resolve));
  // An empty GetUserRequest: flag 0, length 0; the last byte is held back.
  stream.write(Buffer.from([0, 0, 0, 0]));
  return {
    close: () => session.destroy(),
    finish: async () => {
      stream.end(Buffer.from([0]));
      await ended;
      session.close();
      const body = Buffer.concat(chunks);
      return { grpcStatus, user: body.length >= 5 ? toProto3Json(User, User.decode(body.subarray(5))) : undefined };
    },
  };
}

/** Identity codecs, so a test sends and receives raw message bytes. */
const rawMethod = (path) => ({
  path, requestStream: false, responseStream: false,
  requestSerialize: (bytes) => bytes, requestDeserialize: (bytes) => bytes,
  responseSerialize: (bytes) => bytes, responseDeserialize: (bytes) => bytes,
});

/**
 * A grpc-js client that sends raw bytes to any method path.
 * @param {number} port
 * @returns {{call: (path: string, bytes: Buffer, deadlineMs?: number) => Promise<{code: number, details: string, response?: Buffer}>, close: () => void}}
 */
export function rawGrpcClient(port) {
  const Client = grpc.makeGenericClientConstructor({}, 'Raw');
  const client = new Client(`${HOST}:${port}`, grpc.credentials.createInsecure());
  return {
    close: () => client.close(),
    call: (path, bytes, deadlineMs = 5000) => new Promise((resolve) => {
      const { requestSerialize, responseDeserialize } = rawMethod(path);
      client.makeUnaryRequest(path, requestSerialize, responseDeserialize, bytes, { deadline: Date.now() + deadlineMs },
        (err, response) => resolve(err ? { code: err.code, details: err.details } : { code: 0, details: 'OK', response }));
    }),
  };
}

/**
 * GetUser with the service's own codecs, on a fresh channel.
 * @param {number} port
 * @returns {Promise<object>} the User in its proto3 JSON mapping
 * @throws {Error & {code: number}} the call's gRPC error
 */
export function grpcGetUser(port) {
  const Client = grpc.makeGenericClientConstructor(userServiceDefinition(), 'UserService');
  const client = new Client(`${HOST}:${port}`, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => client.GetUser({}, { deadline: Date.now() + 5000 }, (err, user) => {
    client.close();
    err ? reject(err) : resolve(toProto3Json(User, user));
  }));
}

/**
 * A client of the standard health service.
 * @param {number} port
 * @returns {{check: (service: string) => Promise<string>, watch: (service: string) => {statuses: string[],
 *   next: () => Promise<string>, cancel: () => void}, close: () => void}}
 *   `check` resolves with the status name or rejects with the gRPC error; `watch`
 *   collects each status the stream sends, `next` waits for the next one
 */
export function grpcHealthClient(port) {
  const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
  const client = new Health(`${HOST}:${port}`, grpc.credentials.createInsecure());
  return {
    close: () => client.close(),
    check: (service) => new Promise((resolve, reject) => client.Check({ service }, { deadline: Date.now() + 5000 },
      (err, res) => (err ? reject(err) : resolve(res.status)))),
    watch: (service) => {
      const call = client.Watch({ service });
      const statuses = [];
      const waiting = [];
      call.on('data', ({ status }) => { statuses.push(status); waiting.shift()?.(status); });
      call.on('error', () => {});
      let seen = 0;
      return {
        statuses,
        cancel: () => call.cancel(),
        next: () => (seen < statuses.length ? Promise.resolve(statuses[seen++])
          : new Promise((resolve) => waiting.push((status) => { seen++; resolve(status); }))),
      };
    },
  };
}

/**
 * A multiplexing grpc-js client: `channels` channels, each its own connection (a local subchannel pool), each with
 * `inFlight` GetUser calls in flight at all times, back to back, until `durationMs` has passed (calls then in flight
 * finish). Calls carry a 5 s deadline.
 * @param {number} port
 * @param {{channels?: number, inFlight?: number, durationMs: number}} options
 * @returns {Promise<{ok: number, failed: Array<{at: number, code: number, details: string}>}>} ok: calls answered;
 *   failed: each failed call, with its time (ms since the epoch), gRPC status code and details
 */
export async function grpcMuxLoad(port, { channels = 4, inFlight = 4, durationMs }) {
  const Client = grpc.makeGenericClientConstructor(userServiceDefinition(), 'UserService');
  const clients = Array.from({ length: channels }, () => new Client(`${HOST}:${port}`, grpc.credentials.createInsecure(),
    { 'grpc.use_local_subchannel_pool': 1 }));
  const until = Date.now() + durationMs;
  const result = { ok: 0, failed: [] };
  const call = (client) => new Promise((resolve) => client.GetUser({}, { deadline: Date.now() + 5000 }, (err) => {
    if (err) result.failed.push({ at: Date.now(), code: err.code, details: err.details });
    else result.ok++;
    resolve();
  }));
  const loop = async (client) => { while (Date.now() < until) await call(client); };
  try {
    await Promise.all(clients.flatMap((client) => Array.from({ length: inFlight }, () => loop(client))));
  } finally {
    for (const client of clients) client.close();
  }
  return result;
}
