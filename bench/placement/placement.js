// Where the measured server runs and how k6 reaches it: on loopback (the default),
// on an emulated second machine behind a shaped link (NETWORK, BANDWIDTH, RTT:
// bench/placement/link.js), or on a real second machine (TARGET=remote). The main job asks
// a placement for a server per measured cell and treats all three alike.
import net from 'node:net';
import { median } from 'simple-statistics';
import { BenchError } from '../errors.js';
import { createLink } from './link.js';
import { freePort, launchServer } from '../processes.js';
import { LISTENERS, portEnv } from '../../server/listeners.js';
import { ensureTool } from '../tools.js';
import { portOfMode, serverEnv } from '../invoke.js';
import { jobCertificates, serverTlsSettings } from '../tls.js';

/** The admin endpoint's port inside an emulated link's namespace (it has the namespace to itself). */
const LINK_ADMIN_PORT = 9100;

/**
 * @typedef {object} Cell a server ready to be measured in one mode
 * @property {string} host host:port k6 loads
 * @property {number} port its port
 * @property {string|null} admin host:port of the server's admin endpoint; null when not reachable (remote without REMOTE_ADMIN_HOST)
 * @property {{iface: string, host: string}} capture where VERIFY_BYTES captures
 * @property {Record<string, string>|null} env what the job set in the server's environment (null: a server it did not start)
 * @property {() => Promise<unknown>} stop stops the server the cell started (nothing for a remote one)
 * @property {() => number[]} pids the processes the job started for the cell on the server's cores, now: the server's primary and
 *   every worker it logged (each replica's, and the balancer, with SERVERS > 1); empty for a remote server
 * @property {{caCert: string}|null} tls TLS=1: the CA certificate (PEM path) k6 verifies the server against; null: cleartext
 * @property {Array<{host: string, admin: string}>} [replicas] SERVERS > 1: each replica's listener and admin endpoint
 *   (bench/placement/replicas.js); `admin` is then null
 * @property {import('./replicas.js').Balancer} [balancer] the balancer in front of them
 */

/**
 * @typedef {object} Placement
 * @property {'local'|'remote'} target which k6 script runs: local.js on loopback, remote.js otherwise
 * @property {import('./link.js').Link|null} link the emulated link, if any
 * @property {(mode: string, options: {workers: number, cpus?: string, compression?: 'off'|'gzip', node?: string,
 *   settings?: Record<string, string>}) => Promise<Cell>} start settings: more server settings (an own service's,
 *   bench/own-service.js); a remote server was started with them by its owner
 *   compression: the server's COMPRESSION (default off; set either way, so that the job's own environment never decides it);
 *   node: the node binary the server runs on (default the job's, process.execPath; a remote server runs on its own)
 * @property {() => Promise<object|null>} check the link as measured before the runs (null on loopback)
 * @property {() => Promise<void>} close
 */

/**
 * The placement the job's settings ask for. An emulated link is built here (and removed by close).
 * @param {import('../plans.js').PlacementPlan} plan
 * @param {{serverCpus?: string, serverCoreCount: number}} cores
 * @returns {Promise<Placement>}
 * @throws {BenchError} when the link cannot be built
 */
export async function placementOf(plan, cores) {
  if (plan.TARGET === 'remote') return remotePlacement(plan);
  return localPlacement(plan, cores);
}

/**
 * A server this job starts: on loopback, or with NETWORK set in a network namespace of its own behind the emulated link
 * (bench/placement/link.js), where every listener keeps its default port (the namespace is the server's alone) and k6
 * loads the namespace's address. With TLS=1 the job's certificates (naming that address) are served, and removed by close.
 * @param {import('../plans.js').PlacementPlan} plan
 * @param {{serverCpus?: string, serverCoreCount: number}} cores
 * @returns {Promise<Placement>}
 * @throws {BenchError} when the link cannot be built
 */
async function localPlacement(plan, cores) {
  const link = plan.link ? await createLink(plan.link, {
    cpus: cores.serverCpus, coreCount: cores.serverCoreCount, toxiproxyBin: () => ensureTool('toxiproxy-server'),
  }) : null;
  let certs = null;
  try {
    await link?.expose(Object.values(LISTENERS).map((l) => l.defaultPort));
    if (plan.TLS) certs = await jobCertificates(link ? [link.serverAddress] : undefined);
  } catch (err) {
    await link?.close();
    throw err;
  }
  // A server started for TLS=1 is given TLS_CERT, TLS_KEY and the job's TLS_SESSION_TICKETS; k6 is told the CA.
  const tls = { settings: serverTlsSettings(certs, plan.TLS_SESSION_TICKETS), cell: certs && { caCert: certs.caCert } };
  const ports = link ? portEnv() : undefined;
  return {
    target: link ? 'remote' : 'local',
    link,
    async start(mode, { workers, cpus, compression = 'off', node, settings: more = {} }) {
      const adminPort = link ? LINK_ADMIN_PORT : await freePort();
      const env = serverEnv([mode], {
        ports, workers, host: link ? link.bindHost : '127.0.0.1', compression, adminPort, adminHost: link?.serverAddress,
        settings: { ...tls.settings, ...more },
      });
      const wrap = link ? (command, args) => link.command(command, args, null) : undefined;
      const server = await launchServer(`the ${mode} server`, { env, cpus, node, wrap });
      const port = portOfMode(server, mode);
      const address = link ? link.serverAddress : '127.0.0.1';
      return {
        host: link ? link.hostOf(port) : `127.0.0.1:${port}`, port, admin: `${address}:${adminPort}`, env,
        capture: link ? { iface: link.hostIf, host: address } : { iface: 'lo', host: address },
        tls: tls.cell, stop: () => server.stop(), pids: server.pids,
      };
    },
    check: async () => (link ? link.check() : null),
    close: async () => {
      await certs?.remove();
      await link?.close();
    },
  };
}

/** @returns {Placement} */
function remotePlacement(plan) {
  return {
    target: 'remote',
    link: null,
    async start(mode) {
      const { authority: host, host: address, port } = plan.remotes[mode];
      return {
        host, port, admin: plan.REMOTE_ADMIN_HOST || null, capture: { iface: 'any', host: address }, env: null,
        tls: plan.TLS ? { caCert: plan.TLS_CA } : null, stop: async () => {}, pids: () => [],
      };
    },
    // Over a real link only the RTT can be measured without a probe on the far side: timed TCP connects.
    async check() {
      const { host, port } = plan.remotes.http;
      const samples = [];
      for (let i = 0; i < 10; i++) samples.push(await connectMs(host, port));
      return { rtt: { configured: null, min_ms: Math.min(...samples), median_ms: median(samples), method: 'TCP connect to REMOTE_HTTP_HOST' }, warnings: [] };
    },
    close: async () => {},
  };
}

/** Time (ms) to open one TCP connection: one round trip where the handshake sees the link. */
function connectMs(host, port) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const socket = net.connect({ host, port }, () => { resolve(performance.now() - t0); socket.destroy(); });
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer in 5 s')));
    socket.once('error', (err) => reject(new BenchError(`cannot reach ${host}:${port} (REMOTE_HTTP_HOST): ${err.message}`)));
  });
}
