// The framing the reading counts around a streamed message (bench/report/stream-framing.js), against the protocols'
// texts and, for HTTP/1.1's chunks, against the bytes node:http writes.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { framingParts, framingText } from '../../bench/report/stream-framing.js';

const SERVER = { kind: 'server streaming', stream_framing: 'sse' };
const sum = (parts) => parts.reduce((n, p) => n + p.bytes, 0);

test('framingParts: each protocol\'s own bytes around one message, each way that carries a stream', () => {
  assert.equal(framingText(framingParts({ mode: 'grpc' }, SERVER, 'received', 63)), 'gRPC\'s length prefix 5 + an HTTP/2 DATA frame\'s header 9 = 14');
  assert.equal(sum(framingParts({ mode: 'connect-grpc' }, SERVER, 'received', 63)), 14);
  // SSE on HTTP/1.1: `data: ` and the blank line, then a chunk of 140 bytes: "8c" CRLF … CRLF.
  assert.equal(framingText(framingParts({ mode: 'http' }, SERVER, 'received', 132)),
    'SSE\'s `data: ` and blank line 8 + the chunk\'s size line and CRLFs 6 = 14');
  assert.equal(sum(framingParts({ mode: 'http' }, SERVER, 'received', 4000)), 8 + 3 + 4, 'a chunk of 4008 bytes: "fa8"');
  assert.equal(sum(framingParts({ mode: 'json-h2' }, SERVER, 'received', 132)), 8 + 9);
  assert.equal(sum(framingParts({ mode: 'http' }, { ...SERVER, stream_framing: 'ndjson' }, 'received', 132)), 1 + 6);
  assert.equal(sum(framingParts({ mode: 'connect-json' }, SERVER, 'received', 132)), 5 + 6);
  assert.equal(framingParts({ mode: 'http' }, SERVER, 'sent', 132), null, 'a server stream\'s request is no stream');
  // A client stream: k6 sends the messages in one body, a line or an envelope each; gRPC a DATA frame each.
  const client = { kind: 'client streaming' };
  assert.equal(sum(framingParts({ mode: 'http' }, client, 'sent', 500)), 1);
  assert.equal(sum(framingParts({ mode: 'connect-json' }, client, 'sent', 500)), 5);
  assert.equal(sum(framingParts({ mode: 'grpc' }, client, 'sent', 500)), 14);
  assert.equal(framingParts({ mode: 'grpc' }, client, 'received', 500), null);
  // A relay over WebSocket: 2 bytes of header under 126 bytes, 4 to 65,535, 10 beyond; the client's frames masked.
  const relay = { kind: 'bidirectional streaming' };
  assert.equal(sum(framingParts({ mode: 'http' }, relay, 'received', 125)), 2);
  assert.equal(sum(framingParts({ mode: 'http' }, relay, 'received', 126)), 4);
  assert.equal(sum(framingParts({ mode: 'http' }, relay, 'received', 65536)), 10);
  assert.equal(sum(framingParts({ mode: 'http' }, relay, 'sent', 300)), 8);
  assert.equal(framingParts({ mode: 'no-such-mode' }, relay, 'sent', 300), null);
  assert.equal(framingParts({ mode: 'grpc' }, { kind: 'unary' }, 'received', 300), null);
});

test('an HTTP/1.1 chunk\'s framing is what node:http writes around each res.write', async (t) => {
  const sizes = [9, 140, 4008];
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const n of sizes) res.write('x'.repeat(n));
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const raw = await new Promise((resolve, reject) => {
    const socket = net.connect(server.address().port, '127.0.0.1');
    const chunks = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  // Each chunk's framing as counted, the body's last chunk ("0" CRLF CRLF) apart.
  const framed = sizes.reduce((n, size) => n + size + sum(framingParts({ mode: 'http' }, { kind: 'server streaming', stream_framing: 'ndjson' }, 'received', size - 1)) - 1, 0);
  assert.equal(body.length - '0\r\n\r\n'.length, framed);
});
