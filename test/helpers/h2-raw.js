// A raw HTTP/2 client on node:net for the hostile-client tests: it writes any frame sequence,
// valid or not, and parses what the server sends back. Frame layout: RFC 9113 section 4.1;
// header blocks use HPACK literals without indexing or Huffman (RFC 7541 section 6.2.2).
import net from 'node:net';

/** Frame types (RFC 9113 section 6). */
export const TYPE = Object.freeze({
  DATA: 0, HEADERS: 1, PRIORITY: 2, RST_STREAM: 3, SETTINGS: 4, PUSH_PROMISE: 5, PING: 6, GOAWAY: 7,
  WINDOW_UPDATE: 8, CONTINUATION: 9,
});
/** Flags. */
export const FLAG = Object.freeze({ END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 });
/** Error codes (RFC 9113 section 7). */
export const CODE = Object.freeze({
  NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, FLOW_CONTROL_ERROR: 3, STREAM_CLOSED: 5, REFUSED_STREAM: 7,
  CANCEL: 8, ENHANCE_YOUR_CALM: 11,
});
/** SETTINGS identifiers (RFC 9113 section 6.5.2). */
export const SETTING = Object.freeze({ MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4, MAX_HEADER_LIST_SIZE: 6 });

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * One frame: the 9-byte header, then the payload.
 * @param {number} type
 * @param {number} flags
 * @param {number} streamId
 * @param {Buffer} [payload]
 * @returns {Buffer}
 */
export function frame(type, flags, streamId, payload = Buffer.alloc(0)) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId >>> 0 & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

const u32 = (value) => { const b = Buffer.alloc(4); b.writeUInt32BE(value >>> 0); return b; };

/** An HPACK integer with an n-bit prefix (RFC 7541 section 5.1). */
function hpackInt(value, prefixBits, firstByte = 0) {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const bytes = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) { bytes.push((rest % 128) + 128); rest = Math.floor(rest / 128); }
  bytes.push(rest);
  return bytes;
}

/**
 * A header block of literal fields without indexing, names and values as given (not checked,
 * so a test can send what a valid client never would).
 * @param {Array<[string, string]>} headers
 * @returns {Buffer}
 */
export function headerBlock(headers) {
  return Buffer.concat(headers.map(([name, value]) => {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    return Buffer.concat([Buffer.from([0x00, ...hpackInt(n.length, 7)]), n, Buffer.from(hpackInt(v.length, 7)), v]);
  }));
}

/** Request headers of a gRPC call (POST, content-type application/grpc, te: trailers). */
export const grpcRequestHeaders = (path) => [
  [':method', 'POST'], [':scheme', 'http'], [':path', path], [':authority', 'test'],
  ['content-type', 'application/grpc'], ['te', 'trailers'],
];

/** Request headers of a GET. */
export const getRequestHeaders = (path) => [[':method', 'GET'], [':scheme', 'http'], [':path', path], [':authority', 'test']];

export const settingsFrame = (pairs = []) => {
  const payload = Buffer.alloc(6 * pairs.length);
  pairs.forEach(([id, value], i) => { payload.writeUInt16BE(id, 6 * i); payload.writeUInt32BE(value, 6 * i + 2); });
  return frame(TYPE.SETTINGS, 0, 0, payload);
};
export const settingsAck = () => frame(TYPE.SETTINGS, FLAG.ACK, 0);
export const headersFrame = (streamId, block, flags = FLAG.END_HEADERS) => frame(TYPE.HEADERS, flags, streamId, block);
export const continuationFrame = (streamId, block, flags = 0) => frame(TYPE.CONTINUATION, flags, streamId, block);
export const dataFrame = (streamId, payload, flags = 0) => frame(TYPE.DATA, flags, streamId, payload);
export const rstStreamFrame = (streamId, code = CODE.CANCEL) => frame(TYPE.RST_STREAM, 0, streamId, u32(code));
export const windowUpdateFrame = (streamId, increment) => frame(TYPE.WINDOW_UPDATE, 0, streamId, u32(increment));
export const pingFrame = (opaque = Buffer.alloc(8), flags = 0) => frame(TYPE.PING, flags, 0, opaque);

/**
 * @typedef {object} ParsedFrame
 * @property {number} type
 * @property {number} flags
 * @property {number} streamId
 * @property {Buffer} payload
 * @property {{lastStreamId: number, code: number, debug: string}} [goaway] for GOAWAY (debug: its opaque data as text)
 * @property {number} [code] for RST_STREAM
 * @property {Record<number, number>} [settings] for SETTINGS without ACK, by identifier
 */

function parse(type, flags, streamId, payload) {
  const parsed = { type, flags, streamId, payload };
  if (type === TYPE.GOAWAY) {
    parsed.goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4), debug: payload.subarray(8).toString() };
  }
  if (type === TYPE.RST_STREAM) parsed.code = payload.readUInt32BE(0);
  if (type === TYPE.SETTINGS && !(flags & FLAG.ACK)) {
    parsed.settings = {};
    for (let i = 0; i + 6 <= payload.length; i += 6) parsed.settings[payload.readUInt16BE(i)] = payload.readUInt32BE(i + 2);
  }
  return parsed;
}

/**
 * @typedef {object} RawH2Connection
 * @property {ParsedFrame[]} frames every frame received so far, in order
 * @property {(...buffers: Buffer[]) => void} send writes frames (ignored once the socket is gone)
 * @property {(match: (f: ParsedFrame) => boolean, timeoutMs?: number) => Promise<ParsedFrame|null>} waitFor
 *   the first received frame that matches, or null after timeoutMs (default 3000) or when the connection closes
 * @property {Promise<void>} closed resolves when the socket closes (either side)
 * @property {() => boolean} isClosed
 * @property {() => void} destroy
 */

/**
 * Connects to 127.0.0.1:port, sends the client preface and an empty SETTINGS, and acknowledges
 * the server's SETTINGS and answers its PINGs (unless told not to).
 * @param {number} port
 * @param {{ackSettings?: boolean, answerPings?: boolean}} [options]
 * @returns {Promise<RawH2Connection>}
 */
export async function rawH2Connect(port, { ackSettings = true, answerPings = true } = {}) {
  const socket = net.connect(port, '127.0.0.1');
  const frames = [];
  const waiters = new Set();
  let buffered = Buffer.alloc(0);
  let isClosed = false;
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.on('close', () => {
    isClosed = true;
    for (const check of waiters) check();
    resolve();
  }));
  socket.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const f = parse(buffered[3], buffered[4], buffered.readUInt32BE(5) & 0x7fffffff, buffered.subarray(9, 9 + length));
      buffered = buffered.subarray(9 + length);
      frames.push(f);
      if (ackSettings && f.type === TYPE.SETTINGS && !(f.flags & FLAG.ACK)) send(settingsAck());
      if (answerPings && f.type === TYPE.PING && !(f.flags & FLAG.ACK)) send(pingFrame(f.payload, FLAG.ACK));
    }
    for (const check of waiters) check();
  });
  const send = (...buffers) => { if (!socket.destroyed && socket.writable) socket.write(Buffer.concat(buffers)); };
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  send(PREFACE, settingsFrame());
  const waitFor = (match, timeoutMs = 3000) => new Promise((resolve) => {
    const check = () => {
      const found = frames.find(match);
      if (found || isClosed) { waiters.delete(check); clearTimeout(timer); resolve(found ?? null); }
    };
    const timer = setTimeout(() => { waiters.delete(check); resolve(frames.find(match) ?? null); }, timeoutMs);
    waiters.add(check);
    check();
  });
  return { frames, send, waitFor, closed, isClosed: () => isClosed, destroy: () => socket.destroy() };
}

/**
 * An HTTP/2 rapid-reset flood: `connections` connections at once, each opening streams (HEADERS
 * without END_STREAM) and resetting each at once (RST_STREAM CANCEL), in bursts of `burst`, as
 * fast as the socket takes them; a connection the server closes is replaced at once.
 * @param {number} port
 * @param {{durationMs: number, connections?: number, burst?: number, headers: Array<[string, string]>}} options
 * @returns {Promise<{connections: number, streams: number, goaways: Record<number, number>}>} connections
 *   opened, streams sent, and GOAWAYs received by error code
 */
export function rapidResetFlood(port, { durationMs, connections = 4, burst = 100, headers }) {
  const block = headerBlock(headers);
  const end = Date.now() + durationMs;
  const stats = { connections: 0, streams: 0, goaways: {} };
  const one = () => new Promise((resolve) => {
    if (Date.now() >= end) { resolve(); return; }
    stats.connections++;
    const socket = net.connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('close', () => resolve(one()));
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) break;
        if (buffered[3] === TYPE.GOAWAY) {
          const code = buffered.readUInt32BE(13);
          stats.goaways[code] = (stats.goaways[code] ?? 0) + 1;
        }
        buffered = buffered.subarray(9 + length);
      }
    });
    const stop = setTimeout(() => socket.destroy(), Math.max(0, end - Date.now()));
    socket.on('close', () => clearTimeout(stop));
    socket.on('connect', () => {
      socket.write(Buffer.concat([PREFACE, settingsFrame()]));
      let id = 1;
      const write = () => {
        if (socket.destroyed || Date.now() >= end) { socket.destroy(); return; }
        const parts = [];
        for (let i = 0; i < burst; i++, id += 2) parts.push(headersFrame(id, block), rstStreamFrame(id, CODE.CANCEL));
        stats.streams += burst;
        if (socket.write(Buffer.concat(parts))) setImmediate(write);
        else socket.once('drain', write);
      };
      write();
    });
  });
  return Promise.all(Array.from({ length: connections }, one)).then(() => stats);
}
