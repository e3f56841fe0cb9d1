// `node server/healthcheck.js`, the Docker HEALTHCHECK: asks every listener of MODE
// on this machine whether it serves (HTTP GET /health, gRPC grpc.health.v1.Health/Check
// of the whole server) and exits 0 when all do, 1 otherwise, saying which in one line.
// Reads MODE, HOST, HTTP_PORT and GRPC_PORT like the server. Exit 2 is avoided: Docker reserves it.
// With TLS_CERT/TLS_KEY set it probes over TLS, trusting exactly the server's own certificate (see pinnedTls).
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { HEALTH_PATH } from './health.js';
import { LISTENERS } from './listeners.js';
import { listenersOf, portOf, readSettings } from './settings.js';
import { tlsMaterial } from './tls.js';

// Well inside Docker's default HEALTHCHECK --timeout of 30 s.
const TIMEOUT_MS = 2000;

/**
 * The address to probe: loopback when the server binds every address.
 * @param {string} host the server's HOST
 * @returns {string} host part of a URL
 */
const probeHost = (host) => {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
};

/**
 * How the probes trust a TLS server: the certificate it must present is TLS_CERT's leaf, byte for byte. The probe
 * reaches the server over loopback, an address a user's certificate rarely names, so a hostname check would fail a
 * healthy server; pinning the very certificate the server was given verifies more than a CA and a name would (another
 * process on the port with any other certificate fails), and needs no CA file in the container.
 * @param {import('./tls.js').TlsMaterial|null} material
 * @returns {{ca: Buffer, allowPartialTrustChain: true, checkServerIdentity: (host: string, cert: {raw: Buffer}) =>
 *   Error|undefined}|null} options of tls.connect and tls.createSecureContext; null when TLS is off
 */
function pinnedTls(material) {
  if (!material) return null;
  const leaf = new X509Certificate(material.cert);
  return {
    // The leaf alone as trust anchor: OpenSSL ends the chain at it (partial chain) instead of asking for its root.
    ca: material.cert,
    allowPartialTrustChain: true,
    checkServerIdentity: (hostname, cert) => (cert.raw?.equals(leaf.raw) ? undefined
      : new Error('the server presented a certificate other than TLS_CERT')),
  };
}

/**
 * One request to a local listener, over TLS when `pin` is given.
 * @param {string} url http:// URL (its scheme becomes https:// with TLS)
 * @param {{method?: string, headers?: Record<string, string>, body?: string}} request
 * @param {ReturnType<typeof pinnedTls>} pin
 * @returns {Promise<{status: number, body: string}>}
 * @throws {Error} TimeoutError after TIMEOUT_MS; the connection's error (its `code`: ECONNREFUSED, a TLS failure, ...)
 */
const ask = (url, { method = 'GET', headers = {}, body } = {}, pin = null) => new Promise((resolve, reject) => {
  const target = pin ? url.replace(/^http:/, 'https:') : url;
  // servername '': no SNI, as a loopback address may not be one (RFC 6066; Node warns, DEP0123).
  const tlsOptions = pin ? { ...pin, servername: '' } : {};
  const req = (pin ? https : http).request(target, { method, headers, ...tlsOptions, timeout: TIMEOUT_MS }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => { text += chunk; });
    res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    res.on('error', reject);
  });
  req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
  req.on('error', reject);
  req.end(body);
});

/** @param {any} err @returns {string} */
const whyNot = (err) => (err.name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS} ms` : (err.code ?? err.cause?.code ?? err.message));

/**
 * @param {string} host from probeHost
 * @param {number} port
 * @param {ReturnType<typeof pinnedTls>} pin
 * @returns {Promise<string|null>} null when GET /health answers 200, else why not
 */
async function probeHttp(host, port, pin) {
  try {
    const res = await ask(`http://${host}:${port}${HEALTH_PATH}`, {}, pin);
    return res.status === 200 ? null : `answered ${res.status}`;
  } catch (err) {
    return whyNot(err);
  }
}

/**
 * @param {string} host from probeHost
 * @param {number} port
 * @param {ReturnType<typeof pinnedTls>} pin
 * @returns {Promise<string|null>} null when the server's health is SERVING, else why not
 */
function probeGrpc(host, port, pin) {
  const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
  const credentials = pin
    ? grpc.credentials.createFromSecureContext(tls.createSecureContext({ ca: pin.ca, allowPartialTrustChain: true }),
      { checkServerIdentity: pin.checkServerIdentity })
    : grpc.credentials.createInsecure();
  // A name for SNI: grpc-js would send the loopback address, which SNI may not carry (DEP0123); the pin checks the certificate.
  const client = new Health(`${host}:${port}`, credentials, pin ? { 'grpc.ssl_target_name_override': 'localhost' } : {});
  return new Promise((resolve) => {
    client.Check({ service: '' }, { deadline: Date.now() + TIMEOUT_MS }, (err, res) => {
      client.close();
      if (err?.code === grpc.status.DEADLINE_EXCEEDED) resolve(`no answer in ${TIMEOUT_MS} ms`);
      // grpc-js's details are a paragraph; the status and the errno say enough.
      else if (err) resolve([grpc.status[err.code], /\bE[A-Z]{3,}\b/.exec(err.details)?.[0]].filter(Boolean).join(' '));
      else resolve(res.status === 'SERVING' ? null : res.status);
    });
  });
}

// By the listener registry's `probe` (server/listeners.js).
/**
 * @param {string} host from probeHost
 * @param {number} port
 * @param {ReturnType<typeof pinnedTls>} pin
 * @returns {Promise<string|null>} null when grpc.health.v1.Health/Check, called with the Connect protocol (a POST of
 *   JSON), answers SERVING, else why not
 */
async function probeConnect(host, port, pin) {
  try {
    const res = await ask(`http://${host}:${port}/grpc.health.v1.Health/Check`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"service":""}',
    }, pin);
    let answer = /** @type {{code?: string, status?: string}} */ ({});
    try { answer = JSON.parse(res.body); } catch { /* no JSON: the status says enough */ }
    if (res.status !== 200) return `answered ${res.status}${answer.code ? ` ${answer.code}` : ''}`;
    return answer.status === 'SERVING' ? null : answer.status ?? 'no status';
  } catch (err) {
    return whyNot(err);
  }
}

const PROBES = { http: probeHttp, grpc: probeGrpc, connect: probeConnect };

let settings;
try {
  settings = readSettings();
} catch (err) {
  console.error(`healthcheck: ${err.message}`);
  process.exit(1);
}
const host = probeHost(settings.HOST);
const pin = pinnedTls(tlsMaterial(settings));
// The listeners that take the comparison apart are for benchmarks, not deployments: not probed.
const results = await Promise.all(listenersOf(settings.MODE).filter((name) => LISTENERS[name].probe).map(async (name) => {
  const { protocol, probe } = LISTENERS[name];
  const port = portOf(settings, name);
  return { where: `${protocol} ${host}:${port}`, problem: await PROBES[probe](host, port, pin) };
}));
const failed = results.filter((r) => r.problem !== null);
if (failed.length === 0) {
  console.log(`healthy: ${results.map((r) => r.where).join(', ')}`);
  process.exit(0);
}
console.error(`unhealthy: ${failed.map((r) => `${r.where} ${r.problem}`).join('; ')}`);
process.exit(1);
