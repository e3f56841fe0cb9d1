// TLS (issue 26, first slice): a run's CA and certificate (bench/tls.js), every compared listener over TLS with its
// registry's ALPN protocol, verified by Node and by k6 in both modes, a wrong CA refused quickly, bad TLS input survived
// by the workers, bad certificates refused at start, and the healthcheck over TLS.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { makeRunCertificates } from '../../bench/tls.js';
import { parseScrape } from '../../bench/records/server-stats.js';
import { runK6 } from '../../bench/k6/runner.js';
import { LISTENERS, portEnv } from '../../server/listeners.js';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { freePort, ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const TLS_LISTENERS = Object.keys(LISTENERS).filter((name) => LISTENERS[name].alpn);
// Every wait here is bounded: a handshake that neither succeeds nor fails within this is a hang, and fails the test.
const HANDSHAKE_MS = 5000;

/**
 * A TLS handshake with a listener.
 * @param {number} port
 * @param {tls.ConnectionOptions} options
 * @returns {Promise<{alpn: string|false|null, version: string|null, authorized: boolean}>}
 */
const handshake = (port, options) => new Promise((resolve, reject) => {
  const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...options }, () => {
    resolve({ alpn: socket.alpnProtocol, version: socket.getProtocol(), authorized: socket.authorized });
    socket.end();
  });
  socket.setTimeout(HANDSHAKE_MS, () => socket.destroy(new Error(`no handshake in ${HANDSHAKE_MS} ms`)));
  socket.on('error', reject);
});

/**
 * Sends raw bytes to a port and resolves with what came back once the server closes (or after `ms`).
 * @param {number} port
 * @param {Buffer|string} bytes
 * @param {{ms?: number, end?: boolean}} [options] end: close our side right after writing
 * @returns {Promise<{answer: Buffer, closedByServer: boolean}>}
 */
const raw = (port, bytes, { ms = 3000, end = false } = {}) => new Promise((resolve) => {
  const chunks = [];
  const socket = net.connect(port, '127.0.0.1', () => (end ? socket.end(bytes) : socket.write(bytes)));
  const timer = setTimeout(() => { socket.destroy(); resolve({ answer: Buffer.concat(chunks), closedByServer: false }); }, ms);
  socket.on('data', (chunk) => chunks.push(chunk));
  socket.on('close', () => { clearTimeout(timer); resolve({ answer: Buffer.concat(chunks), closedByServer: true }); });
  socket.on('error', () => {});
});

describe('TLS on every compared listener', () => {
  let certs;
  let other;
  let server;
  before(async () => {
    certs = await makeRunCertificates({ addresses: ['198.18.0.2'] });
    other = await makeRunCertificates();
    server = await startServer({ MODE: TLS_LISTENERS.join(','), TLS_CERT: certs.cert, TLS_KEY: certs.key });
  });
  after(async () => {
    server?.proc.kill('SIGTERM');
    await server?.exited;
    await certs?.remove();
    await other?.remove();
  });

  test('the run certificate names 127.0.0.1, localhost and the addresses given, and chains to the run CA', () => {
    const leaf = new X509Certificate(fs.readFileSync(certs.cert));
    assert.equal(leaf.subjectAltName, 'IP Address:127.0.0.1, DNS:localhost, IP Address:198.18.0.2');
    const ca = new X509Certificate(fs.readFileSync(certs.caCert));
    assert.ok(leaf.verify(ca.publicKey));
    assert.ok(leaf.checkIssued(ca));
  });

  test('each listener offers exactly its registry protocol in ALPN, over TLS 1.3, verified against the run CA', async () => {
    const ca = fs.readFileSync(certs.caCert);
    for (const name of TLS_LISTENERS) {
      const got = await handshake(server.ports[name], { ca, ALPNProtocols: ['h2', 'http/1.1'] });
      assert.deepEqual(got, { alpn: LISTENERS[name].alpn, version: 'TLSv1.3', authorized: true }, name);
      // By IP too: the certificate names 127.0.0.1.
      const byIp = await handshake(server.ports[name], { ca, servername: undefined, ALPNProtocols: [LISTENERS[name].alpn] });
      assert.equal(byIp.authorized, true, name);
    }
  });

  test('TLS 1.2 is refused by default (TLS_MIN_VERSION=TLSv1.3)', async () => {
    const ca = fs.readFileSync(certs.caCert);
    for (const name of TLS_LISTENERS) {
      await assert.rejects(handshake(server.ports[name], { ca, maxVersion: 'TLSv1.2' }), /protocol version|alert/i, name);
    }
  });

  test('a client trusting another CA fails at once with a clear error, no hang', async () => {
    const started = Date.now();
    await assert.rejects(handshake(server.ports.grpc, { ca: fs.readFileSync(other.caCert) }),
      (err) => /** @type {any} */ (err).code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || /signature|issuer/i.test(err.message));
    assert.ok(Date.now() - started < HANDSHAKE_MS, 'refused before the bound');
  });

  test('plaintext HTTP and a truncated ClientHello are closed, and the workers live on', async () => {
    const pids = server.workerPids();
    const from = server.lines.length;
    for (const name of TLS_LISTENERS) {
      const port = server.ports[name];
      const plain = await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.ok(plain.closedByServer, `${name}: plaintext HTTP to a TLS port is closed`);
      assert.ok(!plain.answer.toString('latin1').startsWith('HTTP/1.1 200'), `${name}: nothing is served in clear`);
      // A TLS record header announcing a ClientHello of 512 bytes, then 4 of them, then our close.
      await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01]), { end: true, ms: 2000 });
      // A ClientHello cut short that stays open: the server must not be held (bounded wait, then we close).
      await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]), { ms: 500 });
      const still = await handshake(port, { ca: fs.readFileSync(certs.caCert), ALPNProtocols: [LISTENERS[name].alpn] });
      assert.equal(still.authorized, true, `${name} still serves TLS`);
    }
    assert.deepEqual(server.workerPids(), pids, 'the same workers');
    const deaths = server.lines.slice(from).filter((l) => ['worker-replaced', 'worker-died-early', 'uncaught-exception'].includes(l.event));
    assert.deepEqual(deaths, []);
  });

  test('k6 verifies the run CA in both modes, and aborts with x509\'s reason against another CA', { timeout: 120_000 }, async () => {
    const k6 = k6Bin();
    const scripts = [['http-tests/local.js', 'LOCAL_HTTP_HOST', 'http'], ['grpc-tests/local.js', 'LOCAL_GRPC_HOST', 'grpc']];
    for (const [script, hostSetting, name] of scripts) {
      for (const [ca, ok] of [[certs.caCert, true], [other.caCert, false]]) {
        const started = Date.now();
        const { code, output } = await runK6({
          k6, quiet: true, timeoutMs: 30_000, env: { SSL_CERT_FILE: ca },
          args: ['--quiet', '--duration=2s', '--vus=2', '-e', `${hostSetting}=127.0.0.1:${server.ports[name]}`, '-e', `TLS_CA=${ca}`,
            '-e', `SUMMARY_FILE=${path.join(certs.dir, `${name}-${ok}.json`)}`, script],
        });
        if (ok) {
          assert.equal(code, 0, `${script}: ${output}`);
          assert.match(output, /checks\.+: 100\.00%/, script);
        } else {
          assert.notEqual(code, 0, script);
          assert.match(output, /certificate signed by unknown authority/, script);
          assert.ok(Date.now() - started < 20_000, `${script}: refused within its 5 s setup bound`);
        }
      }
    }
  });

  test('the healthcheck probes over TLS, trusting only the server\'s own certificate', async () => {
    const env = (extra) => ({ ...process.env, HOST: '127.0.0.1', MODE: 'http,grpc,connect-json,connect-grpc', ...portEnv((n) => server.ports[n]), ...extra });
    const healthy = await run(process.execPath, ['server/healthcheck.js'], { cwd: ROOT, env: env({ TLS_CERT: certs.cert, TLS_KEY: certs.key }), timeout: 15_000 });
    assert.match(healthy.stdout, /^healthy: /);
    assert.equal(healthy.stderr, '');
    const pinnedElsewhere = await run(process.execPath, ['server/healthcheck.js'], { cwd: ROOT, env: env({ TLS_CERT: other.cert, TLS_KEY: other.key }), timeout: 15_000 })
      .then(() => null, (e) => e);
    assert.equal(pinnedElsewhere?.code, 1);
    assert.match(pinnedElsewhere.stderr, /^unhealthy: /);
  });
});

test('TLS_MIN_VERSION=TLSv1.2 lets a TLS 1.2 client in, with the same ALPN (grpc-js\'s context included)', async () => {
  const certs = await makeRunCertificates();
  const names = ['http', 'json-h2', 'grpc', 'connect-grpc'];
  const server = await startServer({ MODE: names.join(','), TLS_CERT: certs.cert, TLS_KEY: certs.key, TLS_MIN_VERSION: 'TLSv1.2' });
  try {
    for (const name of names) {
      const got = await handshake(server.ports[name], { ca: fs.readFileSync(certs.caCert), maxVersion: 'TLSv1.2', ALPNProtocols: ['h2', 'http/1.1'] });
      assert.deepEqual(got, { alpn: LISTENERS[name].alpn, version: 'TLSv1.2', authorized: true }, name);
    }
  } finally {
    server.proc.kill('SIGTERM');
    await server.exited;
    await certs.remove();
  }
});

describe('TLS settings refused at start, in one line', () => {
  let certs;
  let other;
  let expired;
  before(async () => {
    certs = await makeRunCertificates();
    other = await makeRunCertificates();
    expired = await makeRunCertificates({ validFrom: new Date('2020-01-01T00:00:00Z'), validTo: new Date('2020-01-02T00:00:00Z') });
  });
  after(async () => Promise.all([certs, other, expired].map((c) => c?.remove())));

  const start = (env) => run(process.execPath, ['server'], { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', ...env }, timeout: 10_000 })
    .then(() => null, (e) => e);

  test('one of TLS_CERT/TLS_KEY, an unreadable file, a key of another certificate, an expired certificate, a peer', async () => {
    const cases = [
      [{ TLS_CERT: certs.cert }, 'server: invalid setting TLS_KEY: TLS_CERT and TLS_KEY go together (TLS_CERT is set)\n'],
      [{ TLS_KEY: certs.key }, 'server: invalid setting TLS_CERT: TLS_CERT and TLS_KEY go together (TLS_KEY is set)\n'],
      [{ TLS_CERT: '/nonexistent.crt', TLS_KEY: certs.key }, 'server: invalid setting TLS_CERT="/nonexistent.crt": cannot read it (ENOENT)\n'],
      [{ TLS_CERT: certs.cert, TLS_KEY: other.key }, `server: invalid setting TLS_KEY="${other.key}": it is not the key of the certificate in TLS_CERT\n`],
      [{ TLS_CERT: expired.cert, TLS_KEY: expired.key }, `server: invalid setting TLS_CERT="${expired.cert}": the certificate expired on Jan  2 00:00:00 2020 GMT\n`],
      [{ TLS_CERT: certs.cert, TLS_KEY: certs.key, MODE: 'http,peer-http' },
        'server: invalid setting MODE="http,peer-http": peer-http serves no TLS (the peers stay as their library\'s users run them); '
        + 'leave TLS_CERT/TLS_KEY unset or drop them from MODE\n'],
    ];
    for (const [env, line] of cases) {
      const err = await start(env);
      assert.equal(err?.code, 2, JSON.stringify(env));
      assert.equal(err.stderr, line);
    }
  });
});

/** The JSON report of a `bash bench.sh` run in dir. */
const reportIn = async (dir) => JSON.parse(await fs.promises.readFile(path.join(dir,
  (await fs.promises.readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));

test('TLS=1 bash bench.sh: three columns (JSON over HTTP/1.1 and HTTP/2, gRPC) over TLS 1.3 verified by k6, the servers\' handshake count, the client\'s ceiling and the capacity pass over TLS', { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t, 'bench-tls-');
  const vus = 4;
  const run = await sh('bash', ['bench.sh'], { K6_BIN: k6Bin(), TLS: '1', MODES: 'http,json-h2,grpc', DURATION: '2s', WARMUP: '1s',
    VUS: String(vus), REPEATS: '1', CAPACITY: '1', CALIBRATE: '2s', RESULTS_DIR: dir }, 230_000);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  assert.match(run.stdout, /^### Scenario `user` · closed model, 4 VUs · connections: reuse · TLS · 1 run\(s\) per mode$/m);
  // The client's ceiling over TLS, against the bare listeners serving TLS; json-h2 has no bare listener.
  assert.match(run.stderr, /client's ceiling · user · http: [\d,]+ req\/s against baseline-http/);
  assert.match(run.stderr, /client's ceiling · user · grpc: [\d,]+ req\/s against baseline-grpc/);
  assert.match(run.stderr, /client's ceiling · user · json-h2: not measured \(its mode names no bare listener/);
  const report = await reportIn(dir);
  // json-h2: k6's HTTP client (the HTTP scripts) negotiating h2, which that listener alone offers.
  for (const [mode, alpn] of [['http', 'http/1.1'], ['json-h2', 'h2'], ['grpc', 'h2']]) {
    const m = report.modes[mode];
    assert.equal(m.failed, 0, mode);
    assert.ok(m.requests > 100, `${mode}: ${m.requests} requests`);
    // Negotiated as the listener's registry entry says, over TLS 1.3 (TLS_MIN_VERSION's default).
    assert.match(m.server_tls, new RegExp(`^TLSv1\\.3 · TLS_[A-Z0-9_]+ · ALPN ${alpn.replace('/', '\\/')}$`), mode);
    // CONNECTIONS=reuse: one handshake per VU's connection and setup()'s, all in the measured k6 run, none resumed.
    const handshakes = Math.round((m.server_tls_handshakes_per_1k_requests * m.server_requests) / 1000);
    assert.ok(handshakes >= 1 && handshakes <= vus + 1, `${mode}: ${handshakes} handshakes for ${vus} VUs`);
    assert.ok(m.capacity_rps > 0, `${mode}: the capacity pass (wrk or h2load over https) measured nothing`);
    if (mode === 'json-h2') assert.equal(m.client_ceiling_rps, null);
    else assert.ok(m.client_ceiling_rps > m.rps / 2, `${mode}: ceiling ${m.client_ceiling_rps} req/s, measured ${m.rps}`);
  }
  assert.match(run.stdout, /^- grpc: TLS, as the server negotiated it: TLSv1\.3 · \S+ · ALPN h2\. Bytes sent and received count TLS records/m);
});

test('TLS=1 CONNECTIONS=per-request: one full handshake per request, by the server\'s count', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t, 'bench-tls-pr-');
  const run = await sh('bash', ['bench.sh'], { K6_BIN: k6Bin(), TLS: '1', CONNECTIONS: 'per-request', MODES: 'grpc', DURATION: '2s',
    WARMUP: '0s', VUS: '2', REPEATS: '1', CAPACITY: '0', CALIBRATE: '0s', RESULTS_DIR: dir }, 110_000); // the ceiling: the test above
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const { grpc } = (await reportIn(dir)).modes;
  assert.equal(grpc.failed, 0);
  // A connection in flight at either edge of the window can put its handshake and its request on two sides of it.
  assert.ok(Math.abs(grpc.server_tls_handshakes_per_1k_requests - 1000) <= 2000 / grpc.server_requests + 1,
    `${grpc.server_tls_handshakes_per_1k_requests} handshakes per 1000 requests`);
  assert.equal(grpc.server_tls_resumed_pct, 0, 'k6 resumes no session');
});

/**
 * Two TLS connections to a port, the second offering the session ticket the first received (if any), each closed once
 * it has had the time to read one (a TLS 1.3 ticket comes after the handshake).
 * @returns {Promise<{ticketed: boolean, resumed: boolean}>}
 */
async function twoConnections(port, ca, alpn) {
  const connect = (session) => new Promise((resolve, reject) => {
    let ticket = null;
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca, ALPNProtocols: [alpn], session }, () => {
      setTimeout(() => { resolve({ ticket, resumed: socket.isSessionReused() }); socket.end(); }, 300);
    });
    socket.on('session', (s) => { ticket = s; });
    socket.setTimeout(HANDSHAKE_MS, () => socket.destroy(new Error(`no handshake in ${HANDSHAKE_MS} ms`)));
    socket.on('error', reject);
  });
  const first = await connect(undefined);
  const second = await connect(first.ticket ?? undefined);
  return { ticketed: first.ticket !== null, resumed: second.resumed };
}

test('TLS_SESSION_TICKETS: a client that keeps its ticket resumes, by the server\'s count; with false every handshake is full', async (t) => {
  const certs = await makeRunCertificates();
  t.after(() => certs.remove());
  const ca = fs.readFileSync(certs.caCert);
  for (const tickets of [true, false]) {
    const adminPort = await freePort();
    const server = await startServer({ MODE: 'http,grpc', TLS_CERT: certs.cert, TLS_KEY: certs.key, TLS_SESSION_TICKETS: String(tickets),
      ADMIN_PORT: String(adminPort) });
    try {
      // grpc-js builds its own TLS context: the setting must reach it too.
      for (const [listener, alpn] of [['http', 'http/1.1'], ['grpc', 'h2']]) {
        // Without stateless tickets TLS 1.3 still sends a stateful one (OpenSSL), naming a session cache Node does not keep.
        const { ticketed, resumed } = await twoConnections(server.ports[listener], ca, alpn);
        assert.ok(ticketed, `${listener}: the first connection got a ticket`);
        assert.equal(resumed, tickets, `${listener}, tickets ${tickets}`);
      }
      const scrape = parseScrape(await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text(), Date.now());
      const counts = { true: 0, false: 0 };
      for (const [key, n] of scrape.workers.flatMap((w) => Object.entries(w.tls_handshakes ?? {}))) counts[key.split('|')[3]] += n;
      assert.deepEqual(counts, tickets ? { true: 2, false: 2 } : { true: 0, false: 4 }, `the server counted, tickets ${tickets}`);
    } finally {
      await server.stop();
    }
  }
});

test('npm run certs: a set the server serves and a client verifies under every name it holds; nothing overwritten; a bad name in one line', async (t) => {
  const dir = path.join(await tempDir(t, 'certs-'), 'set');
  const certs = (...args) => run(process.execPath, ['bench/cli.js', 'certs', '--out', dir, ...args], { cwd: ROOT, timeout: 30_000 }).then((r) => ({ code: 0, ...r }), (e) => e);
  const made = await certs('--name', '198.18.0.7', '--name', 'bench.example');
  assert.equal(made.code, 0, made.stderr);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['ca.crt', 'server.crt', 'server.key']);
  // Readable by the container's uid 1000, whoever made it.
  assert.equal(fs.statSync(path.join(dir, 'server.key')).mode & 0o777, 0o644);
  const server = await startServer({ MODE: 'http,grpc', TLS_CERT: path.join(dir, 'server.crt'), TLS_KEY: path.join(dir, 'server.key') });
  t.after(() => server.stop());
  const ca = fs.readFileSync(path.join(dir, 'ca.crt'));
  // Compose's k6 dials the service names; a second machine the address given.
  for (const servername of ['server-http', 'server-grpc', 'localhost', 'bench.example']) {
    assert.deepEqual(await handshake(server.ports.http, { ca, servername, ALPNProtocols: ['http/1.1'] }),
      { alpn: 'http/1.1', version: 'TLSv1.3', authorized: true }, servername);
  }
  assert.equal(new X509Certificate(fs.readFileSync(path.join(dir, 'server.crt'))).checkIP('198.18.0.7'), '198.18.0.7');
  await assert.rejects(handshake(server.ports.grpc, { ca, servername: 'elsewhere.example', ALPNProtocols: ['h2'] }), /altnames/);
  const again = await certs();
  assert.equal(again.code, 2);
  assert.equal(again.stderr, `certs: ${path.join(dir, 'ca.crt')} exists: remove it or choose another --out; usage: npm run certs -- --out DIR [--name HOST]\n`);
  const bad = await certs('--name', 'not a name');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^certs: --name "not a name" is neither an IP address nor a DNS name;/);
});
