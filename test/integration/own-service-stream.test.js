// A server-streaming own RPC (issue 48): each call answers the next response stream, message for message and in order,
// over gRPC and over its HTTP twins (SSE and NDJSON on HTTP/1.1, SSE on HTTP/2, grpc-gateway's mapping and ?alt=sse on a
// google.api.http route), as Google's Python protobuf reads every message; grpcurl, by reflection, reads the same
// stream. The HTTP head leaves with the first message; a reader that stops reading stops the writer (back-pressure); a
// client that goes away is counted as a cut stream.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { ensureTool } from '../../bench/tools.js';
import { k6Bin, k6Run } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ensurePyproto, pyproto } from '../helpers/pyproto.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';
import { EVENT } from '../../server/events.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const INCLUDES = [path.join(OWN, 'a'), path.join(OWN, 'b')];
const SHOP = {
  PROTO: path.join(OWN, 'a', 'shop', 'v1', 'shop.proto'), PROTO_PATH: INCLUDES.join(':'),
  RPC: 'shop.v1.ShopService/WatchOrders', RESPONSE: path.join(OWN, 'order-streams.json'),
};
const SCHEMA = { protos: [SHOP.PROTO], includes: INCLUDES };
const GEMINI_DIR = path.join(ROOT, 'proto', 'gemini');
const GEMINI = {
  PROTO: path.join(GEMINI_DIR, 'google/ai/generativelanguage/v1/generative_service.proto'), PROTO_PATH: GEMINI_DIR,
  RPC: 'google.ai.generativelanguage.v1.GenerativeService/StreamGenerateContent',
  RESPONSE: path.join(GEMINI_DIR, 'examples/responses.ndjson'),
};
const GEMINI_REQUESTS = JSON.parse(readFileSync(path.join(GEMINI_DIR, 'examples/requests.json'), 'utf8'));

/** The sample streams as Python reads each message: [stream][message] → {json, binary_b64}. */
let streams;
before(async () => {
  await ensurePyproto();
  const written = JSON.parse(readFileSync(SHOP.RESPONSE, 'utf8'));
  const flat = await pyproto({ ...SCHEMA, type: 'shop.v1.Order', inputs: written.flat().map((json) => ({ json })) });
  for (const [i, r] of flat.entries()) assert.ok(!('error' in r), `fixture message ${i}: ${r.error}`);
  let at = 0;
  streams = written.map((s) => flat.slice(at, (at += s.length)));
});

/**
 * A grpc-js client of one RPC with identity codecs (bytes in, bytes out), its method under the RPC's method name.
 * @param {number} port
 * @param {string} rpc `package.Service/Method`
 * @param {{requestStream: boolean, responseStream: boolean}} kind
 * @returns {{client: any, method: string}}
 */
function rawClient(port, rpc, { requestStream, responseStream }) {
  const [service, method] = rpc.split('/');
  const identity = (bytes) => bytes;
  const Client = grpc.makeGenericClientConstructor({
    [method]: { path: `/${rpc}`, requestStream, responseStream,
      requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  }, service);
  return { client: new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()), method };
}

/** One server-streaming call on a grpc-js channel, identity codecs: each message's bytes, in order. */
function grpcStream(port, rpc, request = Buffer.alloc(0)) {
  const { client, method } = rawClient(port, rpc, { requestStream: false, responseStream: true });
  const call = client[method](request, { deadline: Date.now() + 10000 });
  const done = new Promise((resolve, reject) => {
    const messages = [];
    call.on('data', (m) => messages.push(m));
    call.on('error', (err) => reject(new Error(`gRPC stream: ${err.code} ${err.details}`)));
    call.on('end', () => resolve(messages));
  }).finally(() => client.close());
  return { call, done };
}

/** The messages of an HTTP stream's body: SSE events' data, NDJSON lines, or grpc-gateway's lines' `result`. */
function messagesOf(body, framing) {
  if (framing === 'sse') {
    assert.ok(body.endsWith('\n\n'), 'an SSE body ends with a blank line');
    return body.split('\n\n').filter(Boolean).map((event) => {
      assert.match(event, /^data: [^\n]*$/, 'one data line an event');
      return event.slice('data: '.length);
    });
  }
  assert.ok(body.endsWith('\n'), 'an NDJSON body ends with a newline');
  const lines = body.split('\n').filter(Boolean);
  return framing === 'gateway' ? lines.map((l) => JSON.stringify(JSON.parse(l).result)) : lines;
}

/** One POST over HTTP/1.1 (fetch): the stream's messages as JSON texts, with the response's content type checked. */
async function httpStream(port, urlPath, { accept, body = '{}', framing }) {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}) }, body,
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${urlPath}: ${text.slice(0, 300)}`);
  const type = { sse: 'text/event-stream', ndjson: 'application/x-ndjson', gateway: 'application/json' }[framing];
  assert.equal(res.headers.get('content-type'), type);
  return messagesOf(text, framing);
}

/** One POST over h2c asking for SSE: the stream's messages. */
function h2Stream(port, urlPath) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': urlPath, 'content-type': 'application/json', accept: 'text/event-stream' });
    let text = '';
    req.setEncoding('utf8');
    req.on('response', (headers) => assert.equal(headers['content-type'], 'text/event-stream'));
    req.on('data', (d) => {
      text += d;
    });
    req.on('end', () => {
      session.close();
      resolve(messagesOf(text, 'sse'));
    });
    req.end('{}');
  });
}

/** Python's reading of each answer, compared with the sample stream's, message for message. */
async function assertStream(twin, answers, expected, { binary = false, schema = SCHEMA, type = 'shop.v1.Order' } = {}) {
  assert.equal(answers.length, expected.length, `${twin}: ${answers.length} messages, the sample stream has ${expected.length}`);
  const parsed = await pyproto({ ...schema, type, inputs: answers.map((a) => (binary
    ? { binary_b64: Buffer.from(a).toString('base64') } : { json_text: a })) });
  for (const [i, p] of parsed.entries()) {
    assert.ok(!('error' in p), `${twin}: message ${i} is not a ${type} to Python: ${p.error}`);
    assert.deepEqual(p.json, expected[i].json, `${twin}: message ${i} (canonical JSON, by Python)`);
    assert.equal(p.binary_b64, expected[i].binary_b64, `${twin}: message ${i} (deterministic serialization, by Python)`);
  }
}

test('each twin answers call i with sample stream i, message for message, as Python reads them: gRPC, SSE and NDJSON on HTTP/1.1, SSE on HTTP/2', async (t) => {
  const server = await startServer({ MODE: 'http,json-h2,grpc', ...SHOP });
  t.after(() => server.stop());
  const url = `/${SHOP.RPC}`;
  for (const [i, expected] of streams.entries()) {
    await assertStream(`gRPC call ${i}`, await grpcStream(server.grpcPort, SHOP.RPC).done, expected, { binary: true });
    await assertStream(`SSE call ${i}`, await httpStream(server.httpPort, url, { accept: 'text/event-stream', framing: 'sse' }), expected);
    await assertStream(`HTTP/2 SSE call ${i}`, await h2Stream(server.ports['json-h2'], url), expected);
  }
  // The HTTP/1.1 listener's turn went round once: NDJSON (asked for, or by no preference) starts again at stream 0.
  for (const [i, expected] of streams.entries()) {
    const accept = i === 0 ? undefined : 'application/x-ndjson';
    await assertStream(`NDJSON call ${i}`, await httpStream(server.httpPort, url, { accept, framing: 'ndjson' }), expected);
  }
  const refused = await fetch(`http://127.0.0.1:${server.httpPort}${url}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/html' }, body: '{}',
  });
  assert.equal(refused.status, 406, 'an Accept that takes neither framing');
  const bad = await fetch(`http://127.0.0.1:${server.httpPort}${url}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId": 5}',
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /not a valid shop\.v1\.GetOrderRequest: .*order_id/);
  await assert.rejects(grpcStream(server.grpcPort, SHOP.RPC, Buffer.from([0x0a, 0xff])).done, /^Error: gRPC stream: 3 the request is not a valid/);
});

test('Gemini\'s StreamGenerateContent: its REST route (a verb after a path variable) streams as grpc-gateway does and with ?alt=sse; grpcurl reads the gRPC stream by reflection', async (t) => {
  const geminiSchema = { protos: [GEMINI.PROTO], includes: [GEMINI_DIR] };
  const type = 'google.ai.generativelanguage.v1.GenerateContentResponse';
  const written = readFileSync(GEMINI.RESPONSE, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const expected = await pyproto({ ...geminiSchema, type, inputs: written[0].map((json) => ({ json })) });
  const server = await startServer({ MODE: 'http,grpc', ...GEMINI });
  t.after(() => server.stop());
  const route = '/v1/models/gemini-2.0-flash:streamGenerateContent';
  const body = JSON.stringify(GEMINI_REQUESTS[0]);
  await assertStream('?alt=sse', await httpStream(server.httpPort, `${route}?alt=sse`, { body, framing: 'sse' }), expected,
    { schema: geminiSchema, type });
  // grpc-gateway writes every field (its marshaler's EmitUnpopulated): Python reads them as the same messages.
  const gateway = await httpStream(server.httpPort, route, { body, framing: 'gateway' });
  assert.match(gateway[0], /"finishReason":"FINISH_REASON_UNSPECIFIED"/, 'every field written');
  assert.equal(gateway.length, written[1].length, 'the second call: the second stream');

  const grpcurl = ensureTool('grpcurl');
  const printed = await new Promise((resolve, reject) => {
    const child = execFile(grpcurl, ['-plaintext', '-d', '@', `127.0.0.1:${server.grpcPort}`, GEMINI.RPC], { timeout: 15000 },
      (err, stdout, stderr) => (err ? reject(new Error(`grpcurl: ${stderr || err.message}`)) : resolve(stdout)));
    child.stdin.end(body);
  });
  // grpcurl prints each message as an indented JSON object, one after the other.
  const messages = printed.trim().split(/\n(?=\{)/);
  await assertStream('grpcurl', messages, expected, { schema: geminiSchema, type });
});

/** The server's counters of streams, read from the admin endpoint's /metrics (every worker's, summed). */
async function streamCounts(adminPort) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const count = (re) => [...text.matchAll(re)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    sent: (listener) => count(new RegExp(`^server_stream_messages_total\\{listener="${listener}",direction="sent"[^}]*\\} (\\d+)`, 'gm')),
    ended: (listener, how) => count(new RegExp(`^server_streams_ended_total\\{listener="${listener}",how="${how}"[^}]*\\} (\\d+)`, 'gm')),
  };
}

test('back-pressure: a reader that stops reading stops the writer (gRPC, HTTP/1.1); the stream then completes, or counts as cut when the client goes away', async (t) => {
  const dir = await tempDir(t, 'own-stream-');
  // One stream of 8,000 orders of 3 kB each (24 MB): more than the kernel's socket buffers take.
  const file = path.join(dir, 'long.json');
  const total = 8000;
  writeFileSync(file, JSON.stringify([Array.from({ length: total }, (_, i) => ({ orderId: String(i), customerNote: 'x'.repeat(3000) }))]));
  const adminPort = await freePort();
  const server = await startServer({ MODE: 'http,grpc', ...SHOP, RESPONSE: file, ADMIN_PORT: String(adminPort) }, { readyTimeoutMs: 20000 });
  t.after(() => server.stop());

  const { call, done } = grpcStream(server.grpcPort, SHOP.RPC);
  call.pause();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const paused = (await streamCounts(adminPort)).sent('grpc');
  t.diagnostic(`gRPC: ${paused} of ${total} messages sent after 1.5 s of a reader that read none`);
  assert.ok(paused > 0 && paused < total / 4, `the gRPC writer sent ${paused} of ${total} messages to a reader that read none`);
  call.resume();
  assert.equal((await done).length, total, 'once read, every message arrives');

  const socket = net.connect(server.httpPort, '127.0.0.1');
  socket.write(`POST /${SHOP.RPC} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}`);
  socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const sentH1 = (await streamCounts(adminPort)).sent('http');
  t.diagnostic(`HTTP/1.1: ${sentH1} of ${total} messages sent after 1.5 s of a reader that read none`);
  assert.ok(sentH1 > 0 && sentH1 < total / 2, `the HTTP/1.1 writer sent ${sentH1} of ${total} messages to a reader that read none`);
  socket.destroy();
  let counts;
  for (let i = 0; i < 50; i++) {
    counts = await streamCounts(adminPort);
    if (counts.ended('http', 'cut')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(counts.ended('http', 'cut'), 1, 'the stream the client left is counted as cut');
  assert.equal(counts.ended('grpc', 'completed'), 1);
  assert.ok(counts.sent('http') < total, 'no message written after the client left');
});

test('a reload and a stop with streams open: every open stream completes on the worker that began it, none is cut', async (t) => {
  // Streams of 3, 1 and 4 messages, a second apart: open for up to 3 s, longer than a new worker takes to start.
  const server = await startServer({ MODE: 'http,grpc', ...SHOP, STREAM_INTERVAL: '1000' });
  t.after(() => server.stop());
  const expected = JSON.parse(readFileSync(SHOP.RESPONSE, 'utf8')).map((stream) => stream.length);
  /** One of each sample stream on each twin, each resolving with its message count. */
  const openStreams = () => [
    ...expected.map(() => grpcStream(server.grpcPort, SHOP.RPC).done.then((ms) => ms.length)),
    ...expected.map(() => httpStream(server.httpPort, `/${SHOP.RPC}`, { accept: 'text/event-stream', framing: 'sse' }).then((ms) => ms.length)),
  ];
  const counts = async (streams) => (await Promise.all(streams)).sort();
  const all = [...expected, ...expected].sort();

  const before = server.workerPids();
  const open = openStreams();
  await new Promise((resolve) => setTimeout(resolve, 150)); // each has its first message, the rest to come
  const from = server.lines.length;
  server.proc.kill('SIGHUP');
  await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
  const draining = await server.waitForLine((l) => l.event === EVENT.DRAINING && before.includes(l.pid), { from });
  assert.deepEqual(await counts(open), all, 'every stream open across the reload has all its messages');
  assert.ok(draining.at < Date.now() - 200, 'the old worker began its drain while the streams were open');
  const retired = server.lines.slice(from).filter((l) => l.event === EVENT.WORKER_RETIRED);
  assert.deepEqual(retired.map((l) => l.worker), before, 'the old worker drained');
  assert.ok(retired.every((l) => l.code === 0));

  // The new worker serves; a stop waits for the streams it has open.
  const again = openStreams();
  await new Promise((resolve) => setTimeout(resolve, 150));
  const stopped = server.stop();
  assert.deepEqual(await counts(again), all, 'every stream open across the stop has all its messages');
  assert.equal(await stopped, 0);
  const ended = server.lines.filter((l) => l.event === EVENT.WORKER_STOPPED);
  assert.ok(ended.length >= 1, 'the worker logged its stop');
});

test('a stream still open at the drain\'s deadline: SSE ends cleanly with retry: (HTTP/1.1 and HTTP/2), a client that reads it sees a whole body', async (t) => {
  const dir = await tempDir(t, 'own-stream-deadline-');
  // One stream of 20 orders, 200 ms apart (4 s), against a drain of 1 s.
  const file = path.join(dir, 'long.json');
  writeFileSync(file, JSON.stringify([Array.from({ length: 20 }, (_, i) => ({ orderId: String(i) }))]));
  const server = await startServer({ MODE: 'http,json-h2', WORKERS: '1', ...SHOP, RESPONSE: file, STREAM_INTERVAL: '200', SHUTDOWN_TIMEOUT_MS: '1000' });
  t.after(() => server.stop());
  const h1 = fetch(`http://127.0.0.1:${server.httpPort}/${SHOP.RPC}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: '{}',
  }).then((res) => res.text());
  const h2 = new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${server.ports['json-h2']}`);
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': `/${SHOP.RPC}`, 'content-type': 'application/json', accept: 'text/event-stream' });
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { text += d; });
    req.on('error', reject);
    // END_STREAM, not a reset: the stream ended as a body ends.
    req.on('end', () => { session.close(); resolve({ text, code: req.rstCode }); });
    req.end('{}');
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const from = server.lines.length;
  server.proc.kill('SIGTERM');
  const [text1, { text: text2, code }] = await Promise.all([h1, h2]);
  assert.equal(code, http2.constants.NGHTTP2_NO_ERROR);
  for (const [name, text] of [['HTTP/1.1', text1], ['HTTP/2', text2]]) {
    const events = text.split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'retry: 1000', `${name}: the last event tells an EventSource when to come back: ${text.slice(-80)}`);
    const data = events.filter((e) => e.startsWith('data: '));
    // About 1.5 s of a 4 s stream: cut, not finished, and cut cleanly after whole events.
    assert.ok(data.length >= 3 && data.length < 20, `${name}: ${data.length} messages before the deadline`);
    assert.equal(data.length + 1, events.length, `${name}: every event whole`);
  }
  await server.waitForLine((l) => l.event === EVENT.DRAIN_TIMED_OUT, { from });
});

test('the HTTP head leaves with the first message: one read holds both, the second message STREAM_INTERVAL later', async (t) => {
  const server = await startServer({ MODE: 'http', ...SHOP, STREAM_INTERVAL: '300' });
  t.after(() => server.stop());
  const reads = await new Promise((resolve, reject) => {
    const socket = net.connect(server.httpPort, '127.0.0.1');
    const got = [];
    const t0 = performance.now();
    socket.on('error', reject);
    socket.on('data', (d) => {
      got.push({ at: performance.now() - t0, text: d.toString('utf8') });
      if (got.length === 2) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.write(`POST /${SHOP.RPC} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: 2\r\n\r\n{}`);
  });
  const [first, second] = reads;
  assert.match(first.text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.equal(first.text.split('\r\n\r\n').length, 2, 'the whole head in the first read');
  assert.equal(first.text.match(/data: /g)?.length, 1, 'and the first message with it');
  assert.equal(second.text.match(/data: /g)?.length, 1);
  assert.ok(second.at - first.at >= 250, `the second message ${(second.at - first.at).toFixed(0)} ms after the first (STREAM_INTERVAL=300)`);
});

test('a client stream: each twin reads the request stream as it arrives, counts its messages, then answers response sample i at call i, as Python reads it; a bad message mid-stream is refused naming its index', async (t) => {
  const responses = path.join(OWN, 'requests.ndjson'); // GetOrderRequest messages, ImportOrders's response type
  const schema = { ...SCHEMA };
  const expected = await pyproto({ ...schema, type: 'shop.v1.GetOrderRequest', inputs: [{ json_file: responses }] });
  const adminPort = await freePort();
  const server = await startServer({ MODE: 'http,json-h2,grpc', ...SHOP, RPC: 'shop.v1.ShopService/ImportOrders', RESPONSE: responses,
    ADMIN_PORT: String(adminPort), MAX_BODY_BYTES: '65536' });
  t.after(() => server.stop());
  const { client, method } = rawClient(server.grpcPort, 'shop.v1.ShopService/ImportOrders', { requestStream: true, responseStream: false });
  t.after(() => client.close());
  const upload = (frames) => new Promise((resolve, reject) => {
    const call = client[method]({ deadline: Date.now() + 10000 }, (err, bytes) => (err ? reject(new Error(`${err.code} ${err.details}`)) : resolve(bytes)));
    for (const f of frames) call.write(f);
    call.end();
  });
  // The request streams: the sample orders, as protobuf (Python's serialization) and as NDJSON lines.
  const written = JSON.parse(readFileSync(SHOP.RESPONSE, 'utf8')).flat();
  const orders = await pyproto({ ...schema, type: 'shop.v1.Order', inputs: written.map((json) => ({ json })) });
  const frames = orders.map((o) => Buffer.from(o.binary_b64, 'base64'));
  const ndjson = `${written.map((o) => JSON.stringify(o)).join('\n')}\n`;
  const grpcAnswers = [];
  const httpAnswers = [];
  for (let i = 0; i < expected.length; i++) {
    grpcAnswers.push(await upload(frames.slice(0, 1 + (i % frames.length))));
    const res = await fetch(`http://127.0.0.1:${server.httpPort}/shop.v1.ShopService/ImportOrders`, {
      method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: ndjson,
    });
    assert.equal(res.status, 200, await res.clone().text());
    httpAnswers.push(await res.text());
  }
  const parsed = await pyproto({ ...schema, type: 'shop.v1.GetOrderRequest', inputs: [
    ...grpcAnswers.map((b) => ({ binary_b64: Buffer.from(b).toString('base64') })), ...httpAnswers.map((json_text) => ({ json_text }))] });
  for (const [i, p] of parsed.entries()) {
    const k = i % expected.length;
    assert.ok(!('error' in p), `answer ${i}: ${p.error}`);
    assert.equal(p.binary_b64, expected[k].binary_b64, `${i < expected.length ? 'gRPC' : 'HTTP'} answer ${k} is response sample ${k}`);
  }
  const counts = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const received = (listener) => Number(new RegExp(`^server_stream_messages_total\\{listener="${listener}",direction="received"[^}]*\\} (\\d+)`, 'm').exec(counts)?.[1]);
  const sentOverGrpc = Array.from({ length: expected.length }, (_, i) => 1 + (i % frames.length)).reduce((a, b) => a + b, 0);
  assert.equal(received('grpc'), sentOverGrpc, 'every gRPC message counted');
  assert.equal(received('http'), expected.length * written.length, 'every NDJSON line counted');

  const bad = await fetch(`http://127.0.0.1:${server.httpPort}/shop.v1.ShopService/ImportOrders`, {
    method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{"orderId":"a"}\n{"orderId":5}\n{"orderId":"c"}\n',
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /^the request is not a valid shop\.v1\.Order: message 1 of the stream: .*order_id/);
  await assert.rejects(upload([frames[0], Buffer.from([0x0a, 0xff])]), /^Error: 3 the request is not a valid shop\.v1\.Order: message 1 of the stream/);
  const long = await fetch(`http://127.0.0.1:${server.httpPort}/shop.v1.ShopService/ImportOrders`, {
    method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: `{"orderId":"a"}\n{"customerNote":"${'x'.repeat(70000)}"}\n`,
  });
  assert.equal(long.status, 413, 'a line past MAX_BODY_BYTES');
  const h2 = await h2Post(server.ports['json-h2'], '/shop.v1.ShopService/ImportOrders', ndjson);
  assert.equal(h2.status, 200, 'HTTP/2 reads the stream too');
});

/** One POST of an NDJSON body over h2c: its status. */
function h2Post(port, urlPath, body) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': urlPath, 'content-type': 'application/x-ndjson' });
    let status = 0;
    req.on('response', (h) => { status = Number(h[':status']); });
    req.resume();
    req.on('end', () => {
      session.close();
      resolve({ status });
    });
    req.end(body);
  });
}

test('a bidirectional stream, a relay: gRPC and the WebSocket twin (text frames in JSON, binary frames in protobuf) answer each message with the next of the call\'s stream, as Python reads them; a bad frame closes with 1007', async (t) => {
  const server = await startServer({ MODE: 'http,grpc', ...SHOP, RPC: 'shop.v1.ShopService/SyncOrders' });
  t.after(() => server.stop());
  const asked = Array.from({ length: 5 }, (_, i) => ({ orderId: `q${i}` }));
  // Call k takes stream k of order-streams.json: 5 messages answered with its messages round and round.
  const expectedOf = (k) => asked.map((_, i) => streams[k][i % streams[k].length]);
  const { client, method } = rawClient(server.grpcPort, 'shop.v1.ShopService/SyncOrders', { requestStream: true, responseStream: true });
  t.after(() => client.close());
  const frames = (await pyproto({ ...SCHEMA, type: 'shop.v1.GetOrderRequest', inputs: asked.map((json) => ({ json })) }))
    .map((r) => Buffer.from(r.binary_b64, 'base64'));
  const relayed = await new Promise((resolve, reject) => {
    const call = client[method]({ deadline: Date.now() + 10000 });
    const got = [];
    call.on('data', (b) => got.push(b));
    call.on('error', reject);
    call.on('end', () => resolve(got));
    for (const f of frames) call.write(f);
    call.end();
  });
  await assertStream('gRPC relay', relayed, expectedOf(0), { binary: true });

  /** One WebSocket: the frames sent in order, each answer awaited before the next (the relay answers one each). */
  const socketRelay = (messages, binary) => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.httpPort}/shop.v1.ShopService/SyncOrders`);
    const got = [];
    ws.on('error', reject);
    ws.on('open', () => ws.send(messages[0], { binary }));
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, binary, 'answered in the frame type asked in');
      got.push(isBinary ? data : data.toString('utf8'));
      if (got.length < messages.length) ws.send(messages[got.length], { binary });
      else ws.close(1000);
    });
    ws.on('close', (code, reason) => resolve({ got, code, reason: reason.toString() }));
  });
  const text = await socketRelay(asked.map((m) => JSON.stringify(m)), false);
  await assertStream('WebSocket, text frames', text.got, expectedOf(0));
  const binary = await socketRelay(frames, true);
  await assertStream('WebSocket, binary frames', binary.got, expectedOf(1), { binary: true });
  const bad = await socketRelay(['{"orderId":"a"}', '{"orderId":5}'], false);
  assert.equal(bad.code, 1007);
  assert.match(bad.reason, /^message 1: .*order_id/);
});

test('a listener that serves no streams refuses a streaming RPC at start, in one line', async () => {
  await assert.rejects(startServer({ MODE: 'http,baseline-grpc', ...SHOP }), (err) => {
    assert.match(String(err.message), /RPC=shop\.v1\.ShopService\/WatchOrders is a server streaming RPC, which baseline-grpc cannot serve yet/);
    return true;
  });
});

test('the HTTP script reads a server stream as SSE or NDJSON (STREAM_FRAMING): it counts every message the server sent', async (t) => {
  const dir = await tempDir(t, 'own-stream-framing-');
  const requests = path.join(dir, 'requests.json');
  writeFileSync(requests, '[{"orderId":"a"}]');
  const adminPort = await freePort();
  // Streams of 3, 1 and 4 messages in turn; 1 ms apart, so that a stream's messages leave in separate writes.
  const server = await startServer({ MODE: 'http', WORKERS: '1', ...SHOP, STREAM_INTERVAL: '1', ADMIN_PORT: String(adminPort) });
  t.after(() => server.stop());
  let before = 0;
  for (const framing of ['sse', 'ndjson']) {
    const summaryFile = path.join(dir, `${framing}.json`);
    const { code, output } = await k6Run(['--vus', '1', '--duration', '1s', '-e', `LOCAL_HTTP_HOST=127.0.0.1:${server.httpPort}`,
      '-e', `RPC=${SHOP.RPC}`, '-e', `PROTO=${path.relative(INCLUDES[0], SHOP.PROTO)}`, '-e', `PROTO_PATH=${SHOP.PROTO_PATH}`,
      '-e', 'STREAM=server', '-e', `STREAM_FRAMING=${framing}`, '-e', `REQUESTS=${requests}`, '-e', `SUMMARY_FILE=${summaryFile}`,
      'http-tests/local.js']);
    assert.equal(code, 0, output);
    const { metrics } = JSON.parse(await readFile(summaryFile, 'utf8'));
    assert.equal(metrics.http_req_failed.values.passes, 0, framing);
    // Every message the server sent, but those of setup()'s one stream (its first: whichever it was, k6 counts it not).
    const sent = (await streamCounts(adminPort)).sent('http');
    const streams = metrics.http_reqs.values.count;
    const counted = metrics.stream_messages.values.count;
    assert.ok(streams > 10, `${framing}: ${streams} streams`);
    assert.ok(sent - before - counted >= 1 && sent - before - counted <= 4, `${framing}: k6 counted ${counted} of ${sent - before} messages sent`);
    assert.equal(metrics.stream_largest_gap, undefined, `${framing}: k6's HTTP client returns a body whole: no gap is timed`);
    before = sent;
  }
  const bad = await k6Run(['--vus', '1', '--duration', '1s', '-e', `LOCAL_HTTP_HOST=127.0.0.1:${server.httpPort}`, '-e', `RPC=${SHOP.RPC}`,
    '-e', `PROTO=${SHOP.PROTO}`, '-e', 'STREAM=server', '-e', 'STREAM_FRAMING=jsonl', 'http-tests/local.js']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.output, /STREAM_FRAMING=\\?"jsonl\\?": must be one of sse, ndjson \(how HTTP reads a server stream\)/);
});

test('bash bench.sh with a server stream (SCENARIO=gemini-stream): the equality check, then streams/s, messages/s, time to first message and bytes per message for both twins', async (t) => {
  const dir = await tempDir(t, 'own-stream-job-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
    REPEATS: '1', DURATION: '3s', WARMUP: '0s', VUS: '4', SCENARIO: 'gemini-stream', STREAM_INTERVAL: '1', MODES: 'http,grpc,connect-json',
    RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 180_000);
  assert.equal(code, 0, stderr);
  assert.match(stderr, /StreamGenerateContent: 8 request and 237 response sample\(s\); every sample went through the twins' codecs as the same message, and every twin answered the response samples in turn/);
  assert.match(stderr, /client's ceiling · gemini-stream · http: not measured \(the bare listeners serve no streams\)/);
  for (const row of ['messages/s', 'messages per stream', 'time to first message p50 \\(ms\\)', 'received per message \\(bytes\\)',
    'server CPU per message \\(µs\\)']) assert.match(stdout, new RegExp(`\\| ${row}\\s+\\|`), row);
  assert.match(stdout, /^- a stream's run: each request is one stream, so RPS counts streams; the latency rows are the time to the last message; over HTTP the stream is read as Server-Sent Events, an event a message \(STREAM_FRAMING=sse\); gRPC's time to first message is timed in whole milliseconds/m);
  assert.match(stdout, /\| largest gap between messages p50 \(ms\)\s+\|/);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  assert.equal(report.own.kind, 'server streaming');
  assert.equal(report.own.stream_interval_ms, 1);
  assert.equal(report.own.stream_framing, 'sse');
  // Paced at 1 ms, whole milliseconds: each gRPC stream's largest gap is at least 1 ms; k6 sees no SSE event apart.
  assert.ok(report.modes.grpc.largest_gap_ms.p50 >= 1, `gRPC's largest gap ${report.modes.grpc.largest_gap_ms.p50} ms`);
  assert.equal(report.modes.http.largest_gap_ms.p50, null);
  // Each call answers the next of the 8 streams (237 messages), whichever twin: about 29.6 messages a stream.
  for (const [mode, m] of Object.entries(report.modes)) {
    assert.equal(m.failed, 0, mode);
    assert.ok(Math.abs(m.messages_per_stream - 237 / 8) < 3, `${mode}: ${m.messages_per_stream} messages a stream`);
    assert.ok(m.first_message_ms.p50 <= m.latency_ms.p50, `${mode}: the first message before the last`);
    // Paced at 1 ms, a stream of about 30 messages lasts at least about 30 ms: the pacing reached the server.
    assert.ok(m.latency_ms.p50 >= 20, `${mode}: a stream took ${m.latency_ms.p50} ms at STREAM_INTERVAL=1`);
    assert.ok(m.server_cpu_us_per_message > 0, mode);
  }
  assert.ok(report.modes.grpc.received_per_message < report.modes.http.received_per_message, 'protobuf messages are smaller than SSE events');
});

test('bash bench.sh with a client stream: each call sends a request stream (NDJSON over HTTP, a gRPC client stream); messages/s and bytes sent per message for both twins', async (t) => {
  const dir = await tempDir(t, 'own-client-stream-job-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
    ...SHOP, RPC: 'shop.v1.ShopService/ImportOrders', REQUEST: path.join(OWN, 'order-uploads.ndjson'), RESPONSE: path.join(OWN, 'requests.ndjson'),
    REPEATS: '1', DURATION: '3s', WARMUP: '0s', VUS: '4', MODES: 'http,grpc,connect-json', RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 180_000);
  assert.equal(code, 0, stderr);
  assert.match(stderr, /ImportOrders: 6 request and 5 response sample\(s\); every sample went through the twins' codecs as the same message, and every twin answered the response samples in turn/);
  assert.match(stdout, /\| sent per message \(bytes\)\s+\|/);
  assert.doesNotMatch(stdout, /time to first message/, 'a client stream has no first message to time');
  assert.match(stdout, /Bytes sent per message of the stream: /);
  assert.match(stdout, /^- a stream's run: each request is one stream, so RPS counts streams; the latency rows are the time to the answer \(docs\/streaming\.md\)$/m);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  assert.equal(report.own.kind, 'client streaming');
  // order-uploads.ndjson: streams of 2, 1 and 3 orders, sent in turn by each VU: 2 messages a stream on average.
  for (const [mode, m] of Object.entries(report.modes)) {
    assert.equal(m.failed, 0, mode);
    assert.ok(Math.abs(m.messages_per_stream - 2) < 0.3, `${mode}: ${m.messages_per_stream} messages a stream`);
    assert.equal(m.received_per_message, null, mode);
  }
  assert.ok(report.modes.grpc.sent_per_message < report.modes.http.sent_per_message, 'protobuf messages are smaller than NDJSON lines');
});

test('bash bench.sh with a bidirectional stream over TLS: a WebSocket relay (wss:, protobuf in binary frames) against a gRPC '
  + 'one, each call a request stream answered message for message; messages/s, time to first answer and bytes per message both ways', async (t) => {
  const dir = await tempDir(t, 'own-relay-job-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
    ...SHOP, RPC: 'shop.v1.ShopService/SyncOrders', REQUEST: path.join(OWN, 'order-syncs.ndjson'), TLS: '1', RELAY_FRAMES: 'binary',
    REPEATS: '1', DURATION: '3s', WARMUP: '0s', VUS: '4', RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 180_000);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^### Scenario `shop\.v1\.ShopService\.SyncOrders` · closed model, 4 VUs · connections: reuse · TLS · 1 run\(s\) per mode$/m);
  // Three request streams against three response streams: every twin called once a stream, each call's answers checked.
  assert.match(stderr, /SyncOrders: 9 request and 8 response sample\(s\); every sample went through the twins' codecs as the same message, and every twin answered the response samples in turn, the same messages \(http 3 calls, grpc 3 calls\)/);
  assert.match(stdout, /\| time to first message p50 \(ms\)\s+\|/);
  assert.match(stdout, /\| sent per message \(bytes\)\s+\|/);
  assert.match(stdout, /\| received per message \(bytes\)\s+\|/);
  assert.match(stdout, /^- a relay's run \(a bidirectional stream\): each request is one call, so RPS counts calls, and messages\/s the answers; over HTTP a call is a WebSocket \(binary frames, protobuf: RELAY_FRAMES=binary\)/m);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  assert.equal(report.own.kind, 'bidirectional streaming');
  assert.equal(report.own.relay_frames, 'binary');
  // order-syncs.ndjson: request streams of 3, 1 and 5 messages, each answered message for message: 3 a call on average.
  for (const [mode, m] of Object.entries(report.modes)) {
    assert.equal(m.failed, 0, mode);
    assert.ok(m.requests > 10, `${mode}: ${m.requests} calls`);
    assert.ok(Math.abs(m.messages_per_stream - 3) < 0.4, `${mode}: ${m.messages_per_stream} answers a call`);
    assert.ok(m.sent_per_message > 0 && m.received_per_message > 0, mode);
    // Both scripts see each answer arrive: each relay of two or more answers has its largest gap timed (whole ms, 0 or more).
    assert.ok(m.largest_gap_ms.p50 >= 0 && m.largest_gap_ms.p99 >= m.largest_gap_ms.p50, `${mode}: ${JSON.stringify(m.largest_gap_ms)}`);
  }
  // Protobuf both ways: the first answer is the same message, of the same size, over the WebSocket and over gRPC.
  assert.equal(report.modes.http.payload_bytes, report.modes.grpc.payload_bytes);
});

test('the HTTP script relays a stream in text frames (the proto3 JSON mapping): an answer to every message it sent', async (t) => {
  const dir = await tempDir(t, 'own-relay-text-');
  const requests = path.join(dir, 'requests.json');
  writeFileSync(requests, JSON.stringify(readFileSync(path.join(OWN, 'order-syncs.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))));
  const server = await startServer({ MODE: 'http', WORKERS: '1', ...SHOP, RPC: 'shop.v1.ShopService/SyncOrders' });
  t.after(() => server.stop());
  const summaryFile = path.join(dir, 'summary.json');
  const { code, output } = await k6Run(['--vus', '2', '--duration', '1s', '-e', `LOCAL_HTTP_HOST=127.0.0.1:${server.httpPort}`,
    '-e', 'RPC=shop.v1.ShopService/SyncOrders', '-e', `PROTO=${path.relative(INCLUDES[0], SHOP.PROTO)}`, '-e', `PROTO_PATH=${SHOP.PROTO_PATH}`,
    '-e', 'STREAM=bidi', '-e', `REQUESTS=${requests}`, '-e', `SUMMARY_FILE=${summaryFile}`, 'http-tests/local.js']);
  assert.equal(code, 0, output);
  const { metrics } = JSON.parse(await readFile(summaryFile, 'utf8'));
  assert.ok(metrics.http_reqs.values.count > 10, `${metrics.http_reqs.values.count} relays`);
  assert.equal(metrics.http_req_failed.values.passes, 0);
  assert.equal(metrics.stream_messages.values.count, metrics.stream_messages_sent.values.count, 'an answer to each message sent');
});
