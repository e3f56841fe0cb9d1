// `node server/healthcheck.js`, the Docker HEALTHCHECK: asks every listener of MODE
// on this machine whether it serves (HTTP GET /health, gRPC grpc.health.v1.Health/Check
// of the whole server) and exits 0 when all do, 1 otherwise, saying which in one line.
// Reads MODE, HOST, HTTP_PORT and GRPC_PORT like the server. Exit 2 is avoided: Docker reserves it.
import grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { HEALTH_PATH } from './health.js';
import { LISTENERS } from './listeners.js';
import { listenersOf, portOf, readSettings } from './settings.js';

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
 * @param {string} host from probeHost
 * @param {number} port
 * @returns {Promise<string|null>} null when GET /health answers 200, else why not
 */
async function probeHttp(host, port) {
  try {
    const res = await fetch(`http://${host}:${port}${HEALTH_PATH}`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await res.body?.cancel();
    return res.status === 200 ? null : `answered ${res.status}`;
  } catch (err) {
    return err.name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS} ms` : (err.cause?.code ?? err.message);
  }
}

/**
 * @param {string} host from probeHost
 * @param {number} port
 * @returns {Promise<string|null>} null when the server's health is SERVING, else why not
 */
function probeGrpc(host, port) {
  const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
  const client = new Health(`${host}:${port}`, grpc.credentials.createInsecure());
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
 * @returns {Promise<string|null>} null when grpc.health.v1.Health/Check, called with the Connect protocol (a POST of
 *   JSON), answers SERVING, else why not
 */
async function probeConnect(host, port) {
  try {
    const res = await fetch(`http://${host}:${port}/grpc.health.v1.Health/Check`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"service":""}', signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const answer = /** @type {{code?: string, status?: string}} */ (await res.json().catch(() => ({})));
    if (res.status !== 200) return `answered ${res.status}${answer.code ? ` ${answer.code}` : ''}`;
    return answer.status === 'SERVING' ? null : answer.status ?? 'no status';
  } catch (err) {
    return err.name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS} ms` : (err.cause?.code ?? err.message);
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
// The listeners that take the comparison apart are for benchmarks, not deployments: not probed.
const results = await Promise.all(listenersOf(settings.MODE).filter((name) => LISTENERS[name].probe).map(async (name) => {
  const { protocol, probe } = LISTENERS[name];
  const port = portOf(settings, name);
  return { where: `${protocol} ${host}:${port}`, problem: await PROBES[probe](host, port) };
}));
const failed = results.filter((r) => r.problem !== null);
if (failed.length === 0) {
  console.log(`healthy: ${results.map((r) => r.where).join(', ')}`);
  process.exit(0);
}
console.error(`unhealthy: ${failed.map((r) => `${r.where} ${r.problem}`).join('; ')}`);
process.exit(1);
