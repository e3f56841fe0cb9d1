// The idle-connections fault's client over TLS (bench/faults/clients.js), apart from the fault matrix (faults.test.js):
// how many of 4000 handshakes complete within withinMs is the machine's speed, so npm test runs this file alone
// (test/suite.js ALONE).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { idleConnections } from '../../bench/faults/clients.js';
import { makeRunCertificates } from '../../bench/tls.js';
import { establishedOn, eventually } from '../helpers/proc.js';
import { startServer } from '../helpers/server.js';

test('TLS: idle connections stop opening after withinMs, and those that complete later are closed at once', async (t) => {
  const certs = await makeRunCertificates();
  t.after(() => certs.remove());
  const server = await startServer({ MODE: 'grpc', TLS_CERT: certs.cert, TLS_KEY: certs.key });
  t.after(() => server.stop());
  const port = server.ports.grpc;
  const count = 4000;
  const started = performance.now();
  // Thousands of handshakes take the server seconds; opening may take 500 ms (the fault cell once ran 2-4 times its length).
  const idle = await idleConnections({ port, protocol: 'grpc', count, tls: { ca: await readFile(certs.caCert) }, withinMs: 500 });
  const tookMs = performance.now() - started;
  assert.ok(tookMs < 1500, `opening took ${Math.round(tookMs)} ms`);
  assert.equal(idle.opened + idle.refused + idle.not_opened, count, JSON.stringify(idle));
  assert.ok(idle.opened > 0 && idle.not_opened > 0, JSON.stringify(idle));
  idle.close();
  // The handshakes still under way at close complete later and are closed then: nothing stays open.
  assert.ok(await eventually(() => establishedOn(port) === 0, 15000), `${establishedOn(port)} connections still open`);
});
