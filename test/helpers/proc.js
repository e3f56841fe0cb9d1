// What the kernel says about the server under test (Linux /proc): its sockets and its memory.
import fs from 'node:fs';
import http2 from 'node:http2';
import { grpcFrame } from '../../proto/index.js';

export { rssMib } from '../../bench/passes/memory.js';

/**
 * Local ports of the TCP sockets in one state, a port per socket, from /proc/net/tcp and tcp6.
 * @param {string} state the kernel's hex code: '01' ESTABLISHED, '0A' LISTEN
 * @returns {number[]}
 */
function localPortsIn(state) {
  const ports = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === state) ports.push(parseInt(cols[1].split(':').at(-1), 16));
    }
  }
  return ports;
}

/**
 * Server-side TCP connections in ESTABLISHED state on a local port.
 * @param {number} port the listener's port
 * @returns {number}
 */
export const establishedOn = (port) => localPortsIn('01').filter((p) => p === port).length;

/**
 * Local ports in LISTEN state, any process's.
 * @returns {Set<number>}
 */
export const listeningPorts = () => new Set(localPortsIn('0A'));

/**
 * Polls until `check()` is true or `timeoutMs` passes.
 * @param {() => boolean} check
 * @param {number} timeoutMs
 * @returns {Promise<boolean>} the last result of `check()`
 */
export async function eventually(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/**
 * One request on a fresh node:http2 connection to 127.0.0.1.
 * @param {number} port
 * @param {{path?: string, method?: string, headers?: object, body?: Buffer, timeoutMs?: number}} [options]
 * @returns {Promise<{status: number, grpcStatus: string|undefined, headers: object, body: Buffer}>} headers: the response's
 * @throws {Error} when the connection or the stream fails or nothing comes in time
 */
export function h2Request(port, { path = '/', method = 'GET', headers = {}, body, timeoutMs = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const fail = (err) => { session.destroy(); reject(err); };
    session.on('error', fail);
    const timer = setTimeout(() => fail(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
    const stream = session.request({ ':method': method, ':path': path, ...headers }, { endStream: !body });
    const chunks = [];
    let status;
    let grpcStatus;
    let responseHeaders;
    stream.on('response', (h) => { status = h[':status']; grpcStatus = h['grpc-status']; responseHeaders = h; });
    stream.on('trailers', (t) => { grpcStatus = t['grpc-status']; });
    stream.on('data', (c) => chunks.push(c));
    stream.on('error', fail);
    stream.on('end', () => { clearTimeout(timer); session.close(); resolve({ status, grpcStatus, headers: responseHeaders, body: Buffer.concat(chunks) }); });
    if (body) stream.end(body);
  });
}

/**
 * A GetUser call over bare node:http2 (gRPC framing by hand), as a client of any gRPC listener.
 * @param {number} port
 * @returns {Promise<{status: number, grpcStatus: string|undefined, body: Buffer}>}
 */
export const h2GetUser = (port) => h2Request(port, {
  method: 'POST', path: '/user.v1.UserService/GetUser',
  headers: { 'content-type': 'application/grpc', te: 'trailers' }, body: grpcFrame(new Uint8Array(0)),
});
