// Server replicas behind a real L7 balancer (SERVERS=N): N servers, each a cluster of WORKERS,
// each on its own loopback address (127.0.0.2, 127.0.0.3, …, as if on hosts of their own),
// behind one HAProxy on 127.0.0.1 that balances every request on its own, round robin
// (deploy/haproxy/haproxy.cfg, the same file Compose's `scale` profile runs). The main job
// asks this placement for a server per measured cell, like the others (bench/placement/placement.js).
// Each backend of the file has SERVERS slots; the bench gives each slot its replica's address
// over HAProxy's admin socket (its runtime API).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../errors.js';
import { ensureTools } from '../tools.js';
import { cpuSecondsOf, freePort, pinned, ROOT, startServer } from '../processes.js';
import { MODES } from '../modes.js';
import { serverEnv } from '../invoke.js';

/** The one balancer configuration, shared with compose.yaml's `scale` profile. */
export const HAPROXY_CONFIG = path.join(ROOT, 'deploy/haproxy/haproxy.cfg');

/**
 * The frontends of haproxy.cfg, by the listener whose backend each feeds (the backends are named after the listeners),
 * with the setting that holds its port.
 */
const FRONTENDS = Object.freeze({ http: 'LB_HTTP_PORT', grpc: 'LB_GRPC_PORT' });

/** The name of replica `index`'s (0-based) slot in each backend of haproxy.cfg (its server-template's prefix and number). */
export const slotName = (index) => `replica${index + 1}`;

/** The loopback address of replica `index` (0-based): 127.0.0.2 upwards; 127.0.0.1 is the balancer's. */
export const replicaAddress = (index) => `127.0.0.${index + 2}`;

/**
 * haproxy.cfg's maxconn, its `presetenv LB_MAXCONN` (Compose's `scale` profile runs with it): the bench's too, where the
 * open-file limit holds it (balancerMaxconn).
 */
export const DEFAULT_BALANCER_MAXCONN = Number(readFileSync(HAPROXY_CONFIG, 'utf8').match(/^\s*presetenv LB_MAXCONN (\d+)\s*$/m)?.[1] ?? NaN);

/**
 * File descriptors HAProxy needs besides two per connection (the client's, and the server connection it may hold): about
 * "doubling the maxconn value and adding a few tens" (HAProxy's doc/management.txt, "5. File-descriptor limitations");
 * its source (compute_ideal_maxsock in src/haproxy.c, 2.6) counts 2 × maxconn + 10 reserved, one per listener and
 * checked server, the admin socket's 10 connections, and 3 per thread (its epoll FD and wake-up pipe). Beyond 2 × maxconn
 * HAProxy 2.6 asks for that many at start, and stops (`Cannot raise FD limit to N, limit is L`) when the limit is lower.
 * @param {number} threads the threads HAProxy runs: one per CPU it may use
 * @returns {number}
 */
const fdsBesidesConnections = (threads) => 64 + 3 * threads;

/** Connections through the balancer beyond k6's VUs: setup()'s, and a margin. */
const CONNECTION_MARGIN = 16;

/**
 * The open-file limit a process started from here gets: this process's hard limit (/proc/self/limits), which Node has
 * raised its own soft limit to and HAProxy raises its own to (it takes the larger of the two).
 * @param {string} [limits] the text of /proc/<pid>/limits (default this process's)
 * @returns {number|null} open files; Infinity when unlimited; null when not known (no /proc)
 */
export function openFileLimit(limits) {
  let text = limits;
  try {
    text ??= readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
  const hard = text.match(/^Max open files\s+\S+\s+(\S+)/m)?.[1];
  if (hard === undefined) return null;
  return hard === 'unlimited' ? Infinity : Number(hard);
}

/**
 * HAProxy's maxconn under an open-file limit: the most connections whose descriptors fit in it (fdsBesidesConnections),
 * and at most DEFAULT_BALANCER_MAXCONN.
 * @param {number|null} limit open files (openFileLimit); null: not known, DEFAULT_BALANCER_MAXCONN
 * @param {number} [threads] CPUs HAProxy may run on (default: this process's)
 * @returns {number} connections, 0 when the limit holds none
 */
export function balancerMaxconn(limit, threads = os.availableParallelism()) {
  if (limit === null) return DEFAULT_BALANCER_MAXCONN;
  return Math.max(0, Math.min(DEFAULT_BALANCER_MAXCONN, Math.floor((limit - fdsBesidesConnections(threads)) / 2)));
}

/**
 * Provisions HAProxy before anything starts (scripts/ensure-tool.sh), and checks that the open-file limit holds the
 * connections the run makes through it (k6's VUs; in the open model, RATE, up to 4 × VUS: k6/common.js maxVUs).
 * @param {{VUS: number, RATE?: number|null}} [settings] the job's; without them, only the provisioning
 * @returns {void}
 * @throws {BenchError} naming the command that installs HAProxy, or the limit and the `ulimit -n` that raises it
 */
export function requireBalancer(settings) {
  ensureTools(['haproxy'], 'SERVERS > 1 (the replicas behind HAProxy)');
  if (!settings) return;
  const needed = settings.VUS * (settings.RATE ? 4 : 1) + CONNECTION_MARGIN;
  const short = balancerShort(needed, `VUS=${settings.VUS}${settings.RATE ? ', RATE: up to 4 × VUS' : ''}`);
  if (short) throw short;
}

/**
 * The one-line error when the open-file limit holds fewer connections through HAProxy than needed.
 * @param {number} needed connections
 * @param {string} why what makes them, e.g. `VUS=32`
 * @returns {BenchError|null} null when the limit holds them, or is not known
 */
function balancerShort(needed, why) {
  const limit = openFileLimit();
  const maxconn = balancerMaxconn(limit);
  if (maxconn >= needed) return null;
  const fds = 2 * needed + fdsBesidesConnections(os.availableParallelism());
  return new BenchError(`SERVERS > 1: the open-file limit here is ${limit}, which holds HAProxy to ${maxconn} connections, fewer than the `
    + `${needed} this run makes through it (${why}): raise it first, e.g. ulimit -n ${fds} (above the hard limit, ulimit -Hn, only root can)`);
}

/**
 * One command on HAProxy's admin socket (its runtime API), answered in full.
 * @param {string} socket path of the stats socket
 * @param {string} command e.g. `show stat`
 * @returns {Promise<string>}
 * @throws {Error} when the socket does not answer in 5 s
 */
export function haproxyCommand(socket, command) {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket);
    let out = '';
    conn.setTimeout(5000, () => conn.destroy(new Error(`HAProxy's socket did not answer "${command}" in 5 s`)));
    conn.on('connect', () => conn.end(`${command}\n`));
    conn.on('data', (chunk) => { out += chunk; });
    conn.on('end', () => resolve(out));
    conn.on('error', reject);
  });
}

/**
 * Requests each server of a backend took, by HAProxy's own count (`show stat`, its `req_tot`
 * column: HTTP requests, i.e. each gRPC call too).
 * @param {string} text `show stat` output (CSV, header line starting with `# `)
 * @param {string} backend
 * @returns {Record<string, number>} by server name
 */
export function requestsByServer(text, backend) {
  const [header, ...lines] = text.trim().split('\n');
  const names = header.replace(/^# /, '').split(',');
  const [px, sv, req] = ['pxname', 'svname', 'req_tot'].map((n) => names.indexOf(n));
  /** @type {Record<string, number>} */
  const out = {};
  for (const line of lines) {
    const f = line.split(',');
    if (f[px] === backend && f[sv] !== 'BACKEND' && f[sv] !== 'FRONTEND') out[f[sv]] = Number(f[req]);
  }
  return out;
}

/**
 * @typedef {object} Balancer HAProxy in front of a cell's replicas
 * @property {number} pid
 * @property {string} version e.g. `2.6.12`
 * @property {number|null} maxconn the connections it accepts at most, as it says (`show info`): balancerMaxconn of the
 *   open-file limit
 * @property {() => number} cpuSeconds CPU time it has used so far (s)
 * @property {() => Promise<Record<string, number>>} requests requests per replica so far, by its own count
 */

/**
 * The replicas placement: each cell is N servers and one HAProxy, started for it and stopped after it.
 * @param {number} servers how many replicas (SERVERS, more than 1)
 * @returns {import('./placement.js').Placement}
 */
export function replicasPlacement(servers) {
  return {
    target: 'local',
    link: null,
    async start(mode, { workers, cpus, compression = 'off', node, settings: more = {} }) {
      const { listener } = MODES[mode];
      if (!FRONTENDS[listener]) {
        throw new BenchError(`SERVERS > 1: ${HAPROXY_CONFIG} has no frontend for the ${listener} listener of the ${mode} mode `
          + `(it balances ${Object.keys(FRONTENDS).join(', ')})`);
      }
      const started = [];
      let balancer = null;
      const stop = async () => {
        await balancer?.stop();
        await Promise.all(started.map(({ server }) => server.stop()));
      };
      try {
        for (let i = 0; i < servers; i++) {
          const adminPort = await freePort();
          const env = serverEnv([mode], { workers, adminPort, host: replicaAddress(i), compression, settings: more });
          let server;
          try {
            server = await startServer({ env, cpus, node });
          } catch (err) {
            throw new BenchError(`replica ${i + 1} of the ${mode} server did not start: ${err.message}`);
          }
          started.push({ server, env, address: `${replicaAddress(i)}:${server.ports[listener]}`, admin: `127.0.0.1:${adminPort}` });
        }
        balancer = await startBalancer(listener, started.map((s) => s.address), cpus);
      } catch (err) {
        await stop();
        throw err;
      }
      const port = balancer.port;
      return {
        host: `127.0.0.1:${port}`, port, admin: null, capture: { iface: 'lo', host: '127.0.0.1' }, env: started[0].env,
        replicas: started.map((s) => ({ host: s.address, admin: s.admin })),
        balancer,
        tls: null, // TLS=1 is refused with SERVERS > 1 (bench/settings/bench.js)
        stop,
        pids: () => [...started.flatMap(({ server }) => server.pids()), balancer.pid],
      };
    },
    check: async () => null,
    close: async () => {},
  };
}

/**
 * Starts HAProxy with deploy/haproxy/haproxy.cfg on 127.0.0.1 and adds the replicas to the
 * listener's backend, one per slot of its server-template, round robin; resolves once it balances.
 * Its maxconn (LB_MAXCONN) is what the open-file limit holds (balancerMaxconn), so that it starts under a low limit.
 * @param {string} listener the backend (named after the listener: `http`, `grpc`)
 * @param {string[]} replicas host:port of each replica's listener
 * @param {string|undefined} cpus taskset CPU list (the server's)
 * @returns {Promise<Balancer & {port: number, stop: () => Promise<void>}>}
 * @throws {BenchError} with HAProxy's output when it does not start or refuses a server
 */
export async function startBalancer(listener, replicas, cpus) {
  const short = balancerShort(1, 'one at least');
  if (short) throw short;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'haproxy-'));
  const socket = path.join(dir, 'admin.sock');
  // Each frontend of haproxy.cfg on a free port; the listener's is the one k6 loads.
  /** @type {Record<string, string>} */
  const ports = {};
  for (const setting of Object.values(FRONTENDS)) ports[setting] = String(await freePort());
  const [command, args] = pinned(cpus, 'haproxy', ['-db', '-f', HAPROXY_CONFIG]);
  const proc = spawn(command, args, {
    env: {
      ...process.env, LB_BIND: '127.0.0.1', ...ports, HAPROXY_SOCKET: socket,
      SERVERS: String(replicas.length), LB_MAXCONN: String(balancerMaxconn(openFileLimit())),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (c) => { output += c; });
  proc.stderr.on('data', (c) => { output += c; });
  const exited = once(proc, 'exit');
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  };
  const fail = async (what) => {
    await stop();
    return new BenchError(`HAProxy (${HAPROXY_CONFIG}) ${what}:\n${output.trim().split('\n').slice(-10).join('\n')}`);
  };
  let info = '';
  for (let tries = 0; !info.includes('Version:'); tries++) {
    if (proc.exitCode !== null || tries > 100) throw await fail(proc.exitCode !== null ? `exited with ${proc.exitCode}` : 'did not open its admin socket in 5 s');
    await sleep(50);
    info = await haproxyCommand(socket, 'show info').catch(() => '');
  }
  for (const [i, address] of replicas.entries()) {
    // Each slot of the backend's server-template starts disabled at a dummy address: the bench saw the replica
    // ready, so it takes requests once it has its address (no health check here).
    const name = `${listener}/${slotName(i)}`;
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), address.slice(address.lastIndexOf(':') + 1)];
    const set = await haproxyCommand(socket, `set server ${name} addr ${host} port ${port}`);
    const ready = await haproxyCommand(socket, `set server ${name} state ready`);
    if (!/changed from/.test(set) || ready.trim() !== '') throw await fail(`did not take ${address} into its slot ${name}: ${(set + ready).trim()}`);
  }
  return {
    pid: proc.pid,
    port: Number(ports[FRONTENDS[listener]]),
    version: info.match(/^Version: (.+)$/m)?.[1] ?? 'unknown',
    maxconn: Number(info.match(/^Maxconn: (\d+)$/m)?.[1] ?? NaN) || null,
    cpuSeconds: () => cpuSecondsOf(proc.pid),
    requests: async () => requestsByServer(await haproxyCommand(socket, 'show stat'), listener),
    stop,
  };
}
