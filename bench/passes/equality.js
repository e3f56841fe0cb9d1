// Equality proven before an own service is measured (issues 37, 49): every sample through the twins' codecs in this
// process, then each twin called on the wire a bounded number of times, its answers decoded, and each compared with
// the sample it should be. A comparison of two servers that answer different messages would measure nothing; the job
// refuses it, naming the sample and the field.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { STREAM_FRAMINGS } from '../../k6/settings.js';
import { BenchError } from '../errors.js';
import { MODES } from '../modes.js';
import { LISTENERS } from '../../server/listeners.js';
import { fromJsonString as esFromJsonString, toBinary, toJsonString } from '@bufbuild/protobuf';
import { ownDescriptors } from '../../proto/own/descriptors.js';
import { esMessagesOf } from '../../proto/own/json.js';
import { firstDifference, fromJson, toJsonText } from '../../proto/own/samples.js';

/** How long one call may take before the check gives up on the twin. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * The calls made on the wire to each twin, at most: the first samples, in turn (every sample is proven through the
 * codecs first, proveCodecs). Enough to see a server answer its samples in turn, few enough that 10,000 samples take
 * seconds, not the minute one call each took.
 */
export const WIRE_CALLS = 64;

/**
 * Proves every sample through the codecs the twins answer and read with, in this process: each response sample's
 * proto3 JSON as @bufbuild/protobuf writes it (the JSON twins: fastify and connect-node), read back strictly by
 * protobufjs's protojson (another implementation: the job's own check of an answer), and its binary encoding as
 * @bufbuild/protobuf writes it (connect-node's gRPC), decoded by protobufjs, must each be the sample, as protobufjs
 * encodes it for grpc-js; each request sample's JSON as the job's clients send it must be read by
 * @bufbuild/protobuf, strictly, as the same message. The servers make these messages from the files as the job does
 * (proto/own/samples.js readSamples), so what this proves for every sample the wire calls then show of the servers.
 * @param {import('../../proto/own/service.js').OwnService} service
 * @returns {void}
 * @throws {BenchError} naming the sample (or stream and message), the codec and the first field that differs
 */
export function proveCodecs(service) {
  const { rpc, responses, requests } = service;
  const { registry, method } = ownDescriptors(service.proto, rpc);
  const options = { registry };
  const label = (samples, i) => {
    const s = samples.streams?.findIndex((stream) => stream.includes(i)) ?? -1;
    return s < 0 ? `sample ${i}` : `stream ${s}, message ${samples.streams[s].indexOf(i)}`;
  };
  const type = rpc.responseType;
  const refuse = (what, i, detail) => {
    throw new BenchError(`${rpc.name}: RESPONSE ${label(responses, i)}: ${what} ${detail}; the twins must serve the same messages before they are compared`);
  };
  const esMessages = esMessagesOf(rpc, responses, method.output, registry);
  // Samples readSamples made through @bufbuild/protobuf's binary encoding are that encoding, decoded: only the others
  // (read by protobufjs: a float or an Any, binary files) are checked through it.
  const binaryMade = esMessages === responses.esMessages;
  esMessages.forEach((esMessage, i) => {
    const want = responses.messages[i];
    const wanted = type.encode(want).finish();
    // Byte-equal encodings are the same message; firstDifference, slower, is asked only where they are not (map order).
    const same = (got) => (Buffer.compare(wanted, type.encode(got).finish()) === 0 ? null : firstDifference(type, want, got));
    let read;
    try {
      read = fromJson(type, toJsonString(method.output, esMessage, options));
    } catch (err) {
      refuse('the JSON twins\' proto3 JSON of it (@bufbuild/protobuf) is refused by protobufjs:', i, err.message);
    }
    const json = same(read);
    if (json !== null) refuse('the JSON twins\' proto3 JSON of it (@bufbuild/protobuf) reads back as another message:', i, `first difference at ${json}`);
    const binary = binaryMade ? null : same(type.decode(toBinary(method.output, esMessage)));
    if (binary !== null) refuse('connect-node\'s binary encoding of it (@bufbuild/protobuf) is another message:', i, `first difference at ${binary}`);
  });
  requests.messages.forEach((m, i) => {
    try {
      const read = esFromJsonString(method.input, toJsonText(rpc.requestType, m), options);
      const back = rpc.requestType.decode(toBinary(method.input, read));
      const where = Buffer.compare(rpc.requestType.encode(m).finish(), rpc.requestType.encode(back).finish()) === 0 ? null : firstDifference(rpc.requestType, m, back);
      if (where !== null) throw new Error(`it is read as another message (first difference at ${where})`);
    } catch (err) {
      throw new BenchError(`${rpc.name}: REQUEST ${label(requests, i)}: the JSON twins do not read it as the job sends it: ${err.message}`);
    }
  });
}

/**
 * Calls the twin a mode loads `count` times over one connection (so one worker answers, in turn) and decodes each answer:
 * a unary call's one message, or a server stream's messages (gRPC's, or the SSE events of the HTTP twin), in order.
 * @param {string} mode a name of MODES
 * @param {{host: string, tls: {caCert: string}|null}} cell where the mode's server is (placement.start)
 * @param {import('../own-service.js').OwnRun} own
 * @param {number} count calls
 * @returns {Promise<import('protobufjs').Message[][]>} each call's messages
 * @throws {Error} when a call fails or an answer does not decode
 */
async function callTwin(mode, cell, own, count) {
  const { rpc, requests } = own.service;
  const ca = cell.tls ? readFileSync(cell.tls.caCert) : null;
  // Each call's request: a message, or a client stream's messages (its sample is a stream).
  const calls = requests.streams ? requests.streams.map((stream) => stream.map((i) => requests.messages[i])) : requests.messages.map((m) => [m]);
  const bodies = calls.map((ms) => (rpc.requestStream ? ms.map((m) => `${toJsonText(rpc.requestType, m)}\n`).join('') : toJsonText(rpc.requestType, ms[0])));
  const frames = calls.map((ms) => ms.map((m) => Buffer.from(rpc.requestType.encode(m).finish())));
  const answers = [];
  const { transport } = LISTENERS[MODES[mode].listener];
  const stream = rpc.responseStream;
  if (MODES[mode].payload === 'protobuf-message') {
    const Client = grpc.makeGenericClientConstructor({
      call: {
        path: rpc.path, requestStream: rpc.requestStream, responseStream: stream, originalName: rpc.method,
        requestSerialize: (b) => b, requestDeserialize: (b) => b, responseSerialize: (b) => b, responseDeserialize: (b) => b,
      },
    }, 'Twin');
    const client = new Client(cell.host, ca ? grpc.credentials.createSsl(ca) : grpc.credentials.createInsecure());
    try {
      const failed = (err) => new Error(`gRPC status ${err.code}: ${err.details}`);
      for (let i = 0; i < count; i++) {
        const deadline = { deadline: Date.now() + CALL_TIMEOUT_MS };
        const frame = frames[i % frames.length];
        const messages = await (rpc.requestStream && stream ? new Promise((resolve, reject) => {
          // A relay: its messages written, then its side ended; each answered as it arrives.
          const call = client.call(deadline);
          const got = [];
          call.on('data', (bytes) => got.push(bytes));
          call.on('error', (err) => reject(failed(err)));
          call.on('end', () => resolve(got));
          for (const f of frame) call.write(f);
          call.end();
        }) : rpc.requestStream ? new Promise((resolve, reject) => {
          const call = client.call(deadline, (err, answer) => (err ? reject(failed(err)) : resolve([answer])));
          for (const f of frame) call.write(f);
          call.end();
        }) : stream ? new Promise((resolve, reject) => {
          const call = client.call(frame[0], deadline);
          const got = [];
          call.on('data', (bytes) => got.push(bytes));
          call.on('error', (err) => reject(failed(err)));
          call.on('end', () => resolve(got));
        }) : new Promise((resolve, reject) => client.call(frame[0], deadline, (err, answer) => (err ? reject(failed(err)) : resolve([answer])))));
        answers.push(messages.map((bytes) => rpc.responseType.decode(bytes)));
      }
    } finally {
      client.close();
    }
    return answers;
  }
  if (rpc.requestStream && stream) return relayTwin(cell, own, calls, count, ca);
  if (MODES[mode].listener === 'connect-json' && (stream || rpc.requestStream)) return connectStreamTwin(cell, own, calls, count, ca);
  // A server stream's HTTP twin answers Server-Sent Events or NDJSON (server/http.js), as the k6 script asks
  // (STREAM_FRAMING). A client stream's request is NDJSON, a line a message.
  const framing = own.record.stream_framing ?? 'sse';
  const headers = { 'content-type': rpc.requestStream ? 'application/x-ndjson' : 'application/json', ...(stream ? { accept: STREAM_FRAMINGS[framing] } : {}) };
  const settled = (status, body, resolve, reject) => settle(status, body, rpc, framing, resolve, reject);
  if (transport === 'HTTP/2') {
    const session = http2.connect(`${ca ? 'https' : 'http'}://${cell.host}`, ca ? { ca } : {});
    session.on('error', () => {});
    try {
      for (let i = 0; i < count; i++) {
        answers.push(await new Promise((resolve, reject) => {
          const stream = session.request({ ':method': 'POST', ':path': rpc.path, ...headers });
          stream.setTimeout(CALL_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
          let status = 0;
          const chunks = [];
          stream.on('response', (h) => { status = Number(h[':status']); });
          stream.on('data', (c) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => settled(status, Buffer.concat(chunks).toString('utf8'), resolve, reject));
          stream.end(bodies[i % bodies.length]);
        }));
      }
    } finally {
      session.close();
    }
    return answers;
  }
  const agent = new (ca ? https : http).Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < count; i++) {
      answers.push(await new Promise((resolve, reject) => {
        const req = (ca ? https : http).request(`${ca ? 'https' : 'http'}://${cell.host}${rpc.path}`,
          { method: 'POST', headers, agent, ca: ca ?? undefined, timeout: CALL_TIMEOUT_MS }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => settled(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), resolve, reject));
          });
        req.on('timeout', () => req.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
        req.on('error', reject);
        req.end(bodies[i % bodies.length]);
      }));
    }
  } finally {
    agent.destroy();
  }
  return answers;
}

/**
 * Calls a relay's HTTP twin, a WebSocket at the RPC's path (server/http.js), as the k6 script does: one connection a call,
 * the request stream's messages sent as text frames, an answer read for each, then closed.
 * @param {{host: string}} cell
 * @param {import('../own-service.js').OwnRun} own
 * @param {import('protobufjs').Message[][]} calls each call's request stream
 * @param {number} count calls
 * @param {Buffer|null} ca the CA to verify a wss: server against
 * @returns {Promise<import('protobufjs').Message[][]>} each call's answers
 */
async function relayTwin(cell, own, calls, count, ca) {
  const { rpc } = own.service;
  // RELAY_FRAMES=binary: protobuf both ways, as the k6 script sends them; else the proto3 JSON mapping in text frames.
  const inBinary = own.record.relay_frames === 'binary';
  const answers = [];
  for (let i = 0; i < count; i++) {
    const messages = calls[i % calls.length];
    answers.push(await new Promise((resolve, reject) => {
      const ws = new WebSocket(`${ca ? 'wss' : 'ws'}://${cell.host}${rpc.path}`, ca ? { ca } : {});
      const got = [];
      const timer = setTimeout(() => ws.terminate(), CALL_TIMEOUT_MS);
      ws.on('open', () => {
        for (const m of messages) {
          if (inBinary) ws.send(rpc.requestType.encode(m).finish(), { binary: true });
          else ws.send(toJsonText(rpc.requestType, m));
        }
      });
      ws.on('message', (data, binary) => {
        try {
          if (binary !== inBinary) throw new Error(`a ${binary ? 'binary' : 'text'} frame answered a ${inBinary ? 'binary' : 'text'} one`);
          got.push(inBinary ? rpc.responseType.decode(/** @type {Buffer} */ (data)) : fromJson(rpc.responseType, String(data)));
        } catch (err) {
          reject(new Error(`the answer is not a ${rpc.responseType.fullName.slice(1)} in ${inBinary ? 'protobuf' : 'the proto3 JSON mapping'}: ${err.message}`));
          ws.terminate();
          return;
        }
        if (got.length === messages.length) ws.close();
      });
      ws.on('error', reject);
      ws.on('close', (code, reason) => {
        clearTimeout(timer);
        if (got.length === messages.length) resolve(got);
        else reject(new Error(`the WebSocket closed (${code}${reason.length ? ` ${reason}` : ''}) after ${got.length} of ${messages.length} answers`));
      });
    }));
  }
  return answers;
}

/**
 * Calls connect-json's streaming method `count` times over one keep-alive connection, as the k6 script does (the Connect
 * protocol: each request message in an envelope, a flags byte and a 4-byte big-endian length before its JSON; the answer
 * the same, ended by an end-of-stream envelope, flag 0x02, whose JSON holds any error) and decodes each answer strictly.
 * @param {{host: string}} cell
 * @param {import('../own-service.js').OwnRun} own
 * @param {import('protobufjs').Message[][]} calls each call's request messages
 * @param {number} count
 * @param {Buffer|null} ca
 * @returns {Promise<import('protobufjs').Message[][]>}
 * @throws {Error} for a status other than 200, an error at the stream's end, or an answer that does not decode
 */
async function connectStreamTwin(cell, own, calls, count, ca) {
  const { rpc } = own.service;
  const envelope = (text) => {
    const json = Buffer.from(text, 'utf8');
    const head = Buffer.alloc(5);
    head.writeUInt32BE(json.length, 1);
    return Buffer.concat([head, json]);
  };
  const bodies = calls.map((ms) => Buffer.concat(ms.map((m) => envelope(toJsonText(rpc.requestType, m)))));
  const agent = new (ca ? https : http).Agent({ keepAlive: true, maxSockets: 1 });
  const answers = [];
  try {
    for (let i = 0; i < count; i++) {
      const { status, body } = await new Promise((resolve, reject) => {
        const req = (ca ? https : http).request(`${ca ? 'https' : 'http'}://${cell.host}${rpc.path}`, {
          method: 'POST', headers: { 'content-type': 'application/connect+json' }, agent, ca: ca ?? undefined, timeout: CALL_TIMEOUT_MS,
        }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        });
        req.on('timeout', () => req.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
        req.on('error', reject);
        req.end(bodies[i % bodies.length]);
      });
      if (status !== 200) throw new Error(`HTTP ${status}: ${body.toString('utf8').slice(0, 200)}`);
      const messages = [];
      let end = null;
      for (let at = 0; at + 5 <= body.length && end === null;) {
        const n = body.readUInt32BE(at + 1);
        const text = body.subarray(at + 5, at + 5 + n).toString('utf8');
        if (body[at] & 0x02) end = JSON.parse(text);
        else messages.push(text);
        at += 5 + n;
      }
      if (end === null) throw new Error('the Connect stream ended with no end-of-stream envelope');
      if (end.error) throw new Error(`the Connect stream ended in an error: ${JSON.stringify(end.error)}`);
      try {
        answers.push(messages.map((text) => fromJson(rpc.responseType, text)));
      } catch (err) {
        throw new Error(`the answer is not a ${rpc.responseType.fullName.slice(1)} in the proto3 JSON mapping: ${err.message}`, { cause: err });
      }
    }
  } finally {
    agent.destroy();
  }
  return answers;
}

/**
 * Decodes a JSON twin's answer strictly into its messages (a server stream's: each SSE event's `data:` line, or each
 * NDJSON line), or rejects with its status and body.
 */
function settle(status, body, rpc, framing, resolve, reject) {
  if (status !== 200) {
    reject(new Error(`HTTP ${status}: ${body.slice(0, 200)}`));
    return;
  }
  try {
    const texts = !rpc.responseStream ? [body] : framing === 'ndjson' ? body.split('\n').filter(Boolean)
      : body.split('\n\n').filter(Boolean).map((event, i) => {
        if (!event.startsWith('data: ') || event.includes('\n')) throw new Error(`SSE event ${i} is not one data line: ${event.slice(0, 100)}`);
        return event.slice('data: '.length);
      });
    resolve(texts.map((text) => fromJson(rpc.responseType, text)));
  } catch (err) {
    reject(new Error(`the answer is not a ${rpc.responseType.fullName.slice(1)} in the proto3 JSON mapping: ${err.message}`));
  }
}

/**
 * Proves that every mode's twin answers the response samples, the same messages, before anything is measured: each
 * twin is called once per sample (at least once per request sample too), up to `limit` calls, over one connection, and
 * answer i must be sample (k + i) mod n, where k is the sample its first answer is (0 for a server just started; a
 * remote one may have served before).
 * @param {string[]} modes names of MODES
 * @param {import('../own-service.js').OwnRun} own
 * @param {(mode: string) => Promise<{host: string, tls: {caCert: string}|null, stop: () => Promise<unknown>}>} start starts
 *   (or finds) the mode's server
 * @param {number} [limit] the most calls to each twin (default: none)
 * @param {(mode: string) => string} [nameOf] how the errors name what answered (default 'the <mode> twin'; a peer is
 *   called as its mode's twin is: the same protocol)
 * @returns {Promise<{calls: Record<string, number>, samples: number}>} how many calls each mode's twin answered
 * @throws {BenchError} naming the mode, the sample and the first field where an answer differs, or why a call failed
 */
export async function proveEquality(modes, own, start, limit = Infinity, nameOf = (mode) => `the ${mode} twin`) {
  const { rpc, responses, requests } = own.service;
  // What each call answers: a unary call one sample, a server stream or a relay one stream of samples.
  const expected = responses.streams ? responses.streams.map((s) => s.map((i) => responses.messages[i])) : responses.messages.map((m) => [m]);
  const count = Math.min(limit, Math.max(expected.length, (requests.streams ?? requests.messages).length));
  const differs = (want, got) => (want.length !== got.length ? `its length (${got.length} messages, the stream has ${want.length})`
    : want.map((m, j) => firstDifference(rpc.responseType, m, got[j])).map((d, j) => (d === null || !responses.streams ? d : `message ${j}, ${d}`))
      .find((d) => d !== null) ?? null);
  const what = responses.streams ? 'stream' : 'sample';
  // A relay answers call i's request messages, one each, with its response stream's messages in turn, round again.
  const relay = rpc.requestStream && rpc.responseStream;
  const wantOf = (sample, i) => (relay ? Array.from({ length: requests.streams[i % requests.streams.length].length },
    (_, j) => expected[sample][j % expected[sample].length]) : expected[sample]);
  /** @type {Record<string, number>} */
  const calls = {};
  for (const mode of modes) {
    const cell = await start(mode);
    let answers;
    try {
      answers = await callTwin(mode, cell, own, count);
    } catch (err) {
      throw new BenchError(`${rpc.name}: ${nameOf(mode)} at ${cell.host} failed the equality check: ${err.message}`);
    } finally {
      await cell.stop();
    }
    const offset = expected.findIndex((_, sample) => differs(wantOf(sample, 0), answers[0]) === null);
    for (let i = 0; i < answers.length; i++) {
      const sample = ((offset < 0 ? 0 : offset) + i) % expected.length;
      const where = differs(wantOf(sample, i), answers[i]);
      if (where !== null) {
        throw new BenchError(`${rpc.name}: ${nameOf(mode)} answered call ${i} with another message than RESPONSE ${what} ${sample} `
          + `(first difference at ${where}); the twins must serve the same messages before they are compared`);
      }
    }
    calls[mode] = answers.length;
  }
  return { calls, samples: expected.length };
}

/**
 * Proves, before an own service is measured, that every sample goes through the twins' codecs as the same message
 * (proveCodecs), and that every mode's twin answers its first samples in turn (proveEquality, WIRE_CALLS calls at
 * most), each server started where the placement puts the measured ones (unpaced: STREAM_INTERVAL=0), and says so
 * in one line on stderr.
 * @param {import('../own-service.js').OwnRun} own
 * @param {{modes: string[], workers: number, cpus?: string}} job the modes to prove, and the servers' workers and cpus
 * @param {{start: (mode: string, options: object) => Promise<{host: string, tls: {caCert: string}|null, stop: () => Promise<unknown>}>}} placement
 *   where the measured servers run (bench/placement/placement.js)
 * @returns {Promise<void>}
 * @throws {BenchError} naming the twin, the sample and the field where an answer differs
 */
export async function proveOwnEquality(own, { modes, workers, cpus }, placement) {
  const { rpc, requests, responses } = own.service;
  proveCodecs(own.service);
  // Unpaced (0, over the job's own STREAM_INTERVAL the server would inherit): the pacing changes when a message leaves,
  // not what it is, and a stream of 60 paced a second apart would hold the check a minute a call.
  const unpaced = { ...own.server, STREAM_INTERVAL: '0' };
  const { calls } = await proveEquality(modes, own, (mode) => placement.start(mode, { workers, cpus, settings: unpaced }), WIRE_CALLS);
  const all = Math.max((responses.streams ?? responses.messages).length, (requests.streams ?? requests.messages).length);
  const fewest = Math.min(...Object.values(calls));
  console.error(`${rpc.name}: ${requests.messages.length} request and ${responses.messages.length} response sample(s); every sample went `
    + `through the twins' codecs as the same message, and every twin answered ${fewest >= all ? 'the response samples' : `the first ${fewest} response samples`} `
    + `in turn, the same messages (${Object.entries(calls).map(([mode, n]) => `${mode} ${n} calls`).join(', ')})`);
}
