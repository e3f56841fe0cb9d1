// k6's byte counters against an independent one: a dumpcap capture of the run on loopback.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startCapture } from '../../bench/passes/wire.js';
import { k6Run } from '../helpers/k6.js';
import { makeRunCertificates } from '../../bench/tls.js';
import { startServer } from '../helpers/server.js';

let server;
let dir;
before(async () => {
  server = await startServer({ MODE: 'both' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'wire-'));
});
after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function measured(script, hostVar, port, { tlsCa = null } = {}) {
  const capture = await startCapture(port);
  const summaryFile = path.join(dir, `${path.basename(path.dirname(script))}${tlsCa ? '-tls' : ''}.json`);
  const tls = tlsCa ? ['-e', `TLS_CA=${tlsCa}`] : [];
  const { code, output } = await k6Run(['--vus', '4', '--duration', '2s', '-e', `${hostVar}=127.0.0.1:${port}`, '-e', `SUMMARY_FILE=${summaryFile}`, ...tls, script],
    tlsCa ? { env: { SSL_CERT_FILE: tlsCa } } : {});
  const wire = await capture.stop();
  assert.equal(code, 0, output);
  const { metrics } = JSON.parse(await readFile(summaryFile, 'utf8'));
  assert.equal(wire.dropped, 0, 'dumpcap dropped packets');
  return { wire, sent: metrics.data_sent.values.count, received: metrics.data_received.values.count };
}

test('HTTP: k6 data_sent and data_received equal the captured TCP payload bytes', async () => {
  const { wire, sent, received } = await measured('http-tests/local.js', 'LOCAL_HTTP_HOST', server.httpPort);
  assert.ok(wire.sent_bytes > 10000 && wire.received_bytes > 10000);
  assert.equal(sent, wire.sent_bytes);
  assert.equal(received, wire.received_bytes);
});

test('gRPC: k6 counts within 1% of the captured TCP payload bytes', async () => {
  const { wire, sent, received } = await measured('grpc-tests/local.js', 'LOCAL_GRPC_HOST', server.grpcPort);
  assert.ok(wire.sent_bytes > 10000 && wire.received_bytes > 10000);
  assert.ok(Math.abs(sent / wire.sent_bytes - 1) < 0.01, `data_sent ${sent} vs captured ${wire.sent_bytes}`);
  assert.ok(Math.abs(received / wire.received_bytes - 1) < 0.01, `data_received ${received} vs captured ${wire.received_bytes}`);
});

// VERIFY_BYTES with TLS=1: the capture counts TCP payload, which is then TLS records; k6 counts the same bytes.
test('TLS: k6\'s counters are the TLS records\' bytes, within 1% of the capture, in both modes', async (t) => {
  const certs = await makeRunCertificates();
  t.after(() => certs.remove());
  const tlsServer = await startServer({ MODE: 'both', TLS_CERT: certs.cert, TLS_KEY: certs.key });
  t.after(() => tlsServer.stop());
  for (const [script, hostVar, port] of [['http-tests/local.js', 'LOCAL_HTTP_HOST', tlsServer.httpPort], ['grpc-tests/local.js', 'LOCAL_GRPC_HOST', tlsServer.grpcPort]]) {
    const { wire, sent, received } = await measured(script, hostVar, port, { tlsCa: certs.caCert });
    assert.ok(wire.sent_bytes > 10000 && wire.received_bytes > 10000);
    assert.ok(Math.abs(sent / wire.sent_bytes - 1) < 0.01, `${script}: data_sent ${sent} vs captured ${wire.sent_bytes}`);
    assert.ok(Math.abs(received / wire.received_bytes - 1) < 0.01, `${script}: data_received ${received} vs captured ${wire.received_bytes}`);
  }
});

test('a capture that cannot start says why and leaves no temporary folder behind', async () => {
  const captures = async () => (await readdir(os.tmpdir())).filter((f) => f.startsWith('capture-')).sort();
  const before = await captures();
  await assert.rejects(startCapture(server.httpPort, { iface: 'no-such-if0' }), (err) => err.code === 'ERR_BENCH' && /dumpcap exited/.test(err.message));
  assert.deepEqual(await captures(), before);
});
