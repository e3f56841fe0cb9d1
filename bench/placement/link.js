// An emulated second machine: the server runs in its own network namespace, reached
// over a veth pair at an address from 198.18.0.0/15 (RFC 2544's benchmarking range).
// Bandwidth is shaped by the kernel's tbf qdisc on both veth ends; delay by netem
// where the kernel has it, else by toxiproxy in the server's namespace. Everything
// made here is named jvgb-<pid>-<n>, removed on close, on exit and on SIGINT/SIGTERM,
// and found and removed by the next run if this process was killed.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from 'simple-statistics';
import { BenchError } from '../errors.js';
import { formatRate, LINK_TOLERANCE } from '../settings/network.js';
import { cpuSecondsOf, isAlive, onStopSignal, pinned } from '../processes.js';
import { ROOT } from '../root.js';
import { ensureTools } from '../tools.js';

const NS_PREFIX = 'jvgb';
const NS_NAME = new RegExp(`^${NS_PREFIX}-(\\d+)-(\\d+)$`);
/** Port of the link probe (bench/placement/link-probe.js) in the server's namespace. */
export const PROBE_PORT = 9000;
/** Port of toxiproxy's HTTP API, on the server's veth address. */
const TOXIPROXY_API_PORT = 8474;
/** tbf's queue, as the time it takes to drain at the link's rate (tc-tbf(8) `latency`). */
const TBF_QUEUE_MS = 100;

/** One line per shaper, on what it cannot emulate; the report prints the ones a run used. */
export const SHAPER_LIMITS = Object.freeze({
  tbf: 'tbf shapes link-layer bytes (Ethernet frames: IP/TCP headers and ACKs count), with a 100 ms queue; no loss or reordering',
  netem: 'netem delays every packet, the TCP handshake included',
  toxiproxy: 'toxiproxy delays data, not packets: the TCP handshake does not see the delay, and TCP\'s slow start '
    + 'and congestion control react to the proxy, not to the emulated link; its latency is whole ms; from about 40 ms RTT '
    + '(TCP\'s delayed-ACK timer) its socket ACKs each request in a packet of its own, which a real link would not carry',
  none: 'no added delay: the veth pair\'s own RTT, as the link check measures it',
});

const ip = (args, options = {}) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
/** @type {(ns: string, command: string, args: string[]) => [string, string[]]} */
const inNs = (ns, command, args) => ['ip', ['netns', 'exec', ns, command, ...args]];
const run = (command, args) => execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const stderrOf = (err) => String(err.stderr || err.message).trim().split('\n')[0];

/**
 * Stops at once, with one line, when this machine cannot build a link: not root, or no `ip netns`, `tc` or tbf.
 * @returns {void}
 * @throws {BenchError} saying what is missing
 */
export function requireLinkTools() {
  if (process.getuid?.() !== 0) {
    throw new BenchError('a network profile other than loopback builds a network namespace and shapes it with tc: run as root (sudo -E bash bench.sh)');
  }
  ensureTools(['ip', 'tc'], 'a network profile');
  /** @type {Array<[string, string[]]>} */
  const needed = [['ip', ['netns', 'list']], ['tc', ['qdisc', 'show', 'dev', 'lo']]];
  for (const [command, args] of needed) {
    try {
      run(command, args);
    } catch (err) {
      throw new BenchError(`a network profile needs \`${command} ${args.join(' ')}\`, which failed (${stderrOf(err)})`);
    }
  }
}

/**
 * Removes what a killed run left behind: every jvgb-<pid>-<n> namespace whose pid is
 * gone, with the processes still in it (their veth pairs and qdiscs go with the namespace).
 * @returns {string[]} the namespaces removed
 */
export function removeStaleLinks() {
  const removed = [];
  for (const line of ip(['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0];
    const m = NS_NAME.exec(name);
    if (!m || isAlive(Number(m[1]))) continue;
    removeNamespace(name, `${NS_PREFIX}${m[2]}h`);
    removed.push(name);
  }
  return removed;
}

/** Kills what runs in the namespace, deletes the veth pair (at once: a namespace's own devices go
 * only when the kernel gets round to it) and then the namespace. */
function removeNamespace(name, hostIf) {
  try { ip(['link', 'del', hostIf]); } catch { /* gone with its namespace already */ }
  try {
    for (const pid of ip(['netns', 'pids', name]).split('\n').filter(Boolean)) {
      try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone already */ }
    }
  } catch { /* no such namespace */ }
  try { ip(['netns', 'del', name]); } catch { /* no such namespace */ }
}

/** The first /30 of 198.18.<n>.0/24 that no interface here uses yet, nor `taken`. */
function freeSubnet(taken) {
  const used = ip(['-o', '-4', 'addr', 'show']);
  for (let n = 0; n < 256; n++) if (!taken.has(n) && !used.includes(` 198.18.${n}.`)) return n;
  throw new BenchError('every 198.18.<n>.0/30 of this machine is in use: remove old jvgb-* namespaces (ip netns list)');
}

/**
 * Claims a free subnet n: its namespace made and its veth pair (jvgb<n>h, jvgb<n>s) added. Two runs at once (the tests
 * run files side by side) can both see n free; the veth's name is the claim the kernel makes atomic, so the one that
 * finds it taken moves on to the next n.
 * @param {string} name the link's, for the error
 * @returns {{n: number, ns: string, hostIf: string, nsIf: string}}
 * @throws {BenchError} when ip fails for another reason than a name already taken, or no subnet is left
 */
function claimSubnet(name) {
  const taken = new Set();
  for (;;) {
    const n = freeSubnet(taken);
    const ns = `${NS_PREFIX}-${process.pid}-${n}`;
    const hostIf = `${NS_PREFIX}${n}h`;
    const nsIf = `${NS_PREFIX}${n}s`;
    try {
      ip(['netns', 'add', ns]);
      ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', ns]);
      return { n, ns, hostIf, nsIf };
    } catch (err) {
      try { ip(['netns', 'del', ns]); } catch { /* not made */ }
      if (!/exists/i.test(stderrOf(err))) throw new BenchError(`building the ${name} link failed: ${stderrOf(err)}`);
      taken.add(n);
    }
  }
}

function tbfArgs(bps) {
  // burst: 4 ms at the rate, at least two full frames (tbf must hold the largest packet).
  const burst = Math.max(Math.ceil(bps / 8 * 0.004), 3100);
  return ['tbf', 'rate', `${Math.round(bps)}bit`, 'burst', String(burst), 'latency', `${TBF_QUEUE_MS}ms`];
}

/** Whether the kernel has sch_netem: tried on a device, then removed. */
function hasNetem(ns, dev) {
  try {
    run(...inNs(ns, 'tc', ['qdisc', 'add', 'dev', dev, 'root', 'handle', '9:', 'netem', 'delay', '1ms']));
    run(...inNs(ns, 'tc', ['qdisc', 'del', 'dev', dev, 'root']));
    return true;
  } catch {
    return false;
  }
}

/** Shapes one direction: tbf at the rate (if any) with netem below it (if any). */
function shape(ns, dev, bps, delayMs) {
  const tc = (args) => (ns ? run(...inNs(ns, 'tc', args)) : run('tc', args));
  if (bps) tc(['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', ...tbfArgs(bps)]);
  if (delayMs > 0) {
    const where = bps ? ['parent', '1:1', 'handle', '10:'] : ['root', 'handle', '10:'];
    tc(['qdisc', 'add', 'dev', dev, ...where, 'netem', 'delay', `${delayMs}ms`, 'limit', '100000']);
  }
}

function counters(dev) {
  const read = (name) => Number(readFileSync(`/sys/class/net/${dev}/statistics/${name}`, 'utf8'));
  // The root side's veth: what it transmits goes up (client to server), what it receives came down.
  return { up: { bytes: read('tx_bytes'), packets: read('tx_packets') }, down: { bytes: read('rx_bytes'), packets: read('rx_packets') } };
}

/** Spawns a long-lived helper and waits for a line of its output that matches. */
async function spawnUntil(command, args, ready, what, env = {}) {
  const proc = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  const exited = once(proc, 'exit');
  const seen = new Promise((resolve) => {
    const check = (chunk) => { output += chunk; if (ready.test(output)) resolve(true); };
    proc.stdout.on('data', check);
    proc.stderr.on('data', check);
  });
  const outcome = await Promise.race([seen, exited.then(() => false), sleep(10000).then(() => false)]);
  if (!outcome) {
    proc.kill('SIGKILL');
    throw new BenchError(`${what} did not start:\n${output.trim()}`);
  }
  return proc;
}

async function toxiproxyApi(base, method, route, body) {
  const res = await fetch(`${base}${route}`, {
    method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body), signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new BenchError(`toxiproxy ${method} ${route} answered ${res.status}: ${(await res.text()).trim()}`);
  return res.json();
}

/**
 * @typedef {object} Link an emulated second machine, see createLink
 * @property {string} ns the server's network namespace
 * @property {string} hostIf the load side's veth (tbf on its egress shapes `up`)
 * @property {string} serverAddress the address k6 loads, e.g. 198.18.0.2
 * @property {string} clientAddress the load side's address, e.g. 198.18.0.1
 * @property {string} bindHost what the server binds inside the namespace (127.0.0.1 behind toxiproxy, else serverAddress)
 * @property {import('../settings/network.js').LinkSpec} spec what was asked for
 * @property {{bandwidth: string, delay: string, delay_ms: {up: number, down: number}}} shapers which shaper did what;
 *   delay_ms: the delay actually set each way (toxiproxy's is whole ms)
 * @property {string[]} limits one line per shaper used (SHAPER_LIMITS)
 * @property {(command: string, args: string[], cpus?: string) => [string, string[]]} command a command line that runs in the namespace
 * @property {(port: number) => string} hostOf host:port k6 uses for a port the server listens on in the namespace
 * @property {(ports: number[]) => Promise<void>} expose makes those ports reachable over the link (a toxiproxy proxy each)
 * @property {() => {up: {bytes: number, packets: number}, down: {bytes: number, packets: number}}} counters
 *   link-layer bytes and packets so far each way (the veth's counters: Ethernet frames, headers and ACKs included)
 * @property {() => number} proxyCpuSeconds CPU seconds toxiproxy has used so far (0 without it)
 * @property {() => Promise<LinkCheck>} check measures RTT and throughput over the link (see checkLink)
 * @property {() => Promise<void>} close removes the namespace, its veth pair, qdiscs and processes
 */

/**
 * Builds the link: namespace, veth pair, addresses, tbf each way, delay (netem or
 * toxiproxy), and the link probe. Removes stale links of killed runs first.
 * @param {import('../settings/network.js').LinkSpec} spec
 * @param {{cpus?: string, coreCount?: number, toxiproxyBin?: () => string}} [options] cpus: taskset list for
 *   toxiproxy and the probe (the server's cores: they stand for the far machine); toxiproxyBin: returns its path
 *   (called only when the kernel lacks netem and the link has a delay)
 * @returns {Promise<Link>}
 * @throws {BenchError} when a step fails; what was built is removed first
 */
export async function createLink(spec, { cpus, coreCount = 1, toxiproxyBin } = {}) {
  requireLinkTools();
  removeStaleLinks();
  const { n, ns, hostIf, nsIf } = claimSubnet(spec.name);
  const clientAddress = `198.18.${n}.1`;
  const serverAddress = `198.18.${n}.2`;
  const children = [];
  let closed = false;
  const closeSync = () => {
    if (closed) return;
    closed = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    removeNamespace(ns, hostIf);
    process.off('exit', closeSync);
    forgetOnSignal();
  };
  process.on('exit', closeSync);
  // Ctrl-C or a kill: remove the link, then end as the signal would have.
  const forgetOnSignal = onStopSignal(closeSync);

  try {
    ip(['addr', 'add', `${clientAddress}/30`, 'dev', hostIf]);
    ip(['link', 'set', hostIf, 'up']);
    ip(['netns', 'exec', ns, 'ip', 'addr', 'add', `${serverAddress}/30`, 'dev', nsIf]);
    ip(['netns', 'exec', ns, 'ip', 'link', 'set', nsIf, 'up']);
    ip(['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);

    const delay = spec.rttMs > 0 ? (hasNetem(ns, nsIf) ? 'netem' : 'toxiproxy') : 'none';
    // Half the RTT each way; toxiproxy takes whole ms, the odd one goes up.
    const upMs = delay === 'toxiproxy' ? Math.ceil(Math.round(spec.rttMs) / 2) : spec.rttMs / 2;
    const downMs = delay === 'toxiproxy' ? Math.round(spec.rttMs) - upMs : spec.rttMs / 2;
    const netemMs = (ms) => (delay === 'netem' ? ms : 0);
    shape(null, hostIf, spec.up, netemMs(upMs)); // root side's egress: client to server
    shape(ns, nsIf, spec.down, netemMs(downMs)); // namespace side's egress: server to client

    /** @type {(cmd: string, args: string[], pin?: string) => [string, string[]]} */
    const command = (cmd, args, pin = cpus) => inNs(ns, ...pinned(pin, cmd, args));
    let api = null;
    let proxy = null;
    if (delay === 'toxiproxy') {
      const bin = toxiproxyBin();
      proxy = await spawnUntil(...command(bin, ['-host', serverAddress, '-port', String(TOXIPROXY_API_PORT)]),
        /API HTTP server starting|Starting Toxiproxy HTTP server/i, 'toxiproxy', { GOMAXPROCS: String(coreCount) });
      children.push(proxy);
      api = `http://${serverAddress}:${TOXIPROXY_API_PORT}`;
    }
    const bindHost = delay === 'toxiproxy' ? '127.0.0.1' : serverAddress;
    const exposed = new Set();
    const expose = async (ports) => {
      if (!api) return;
      for (const port of ports) {
        if (exposed.has(port)) continue;
        const name = `p${port}`;
        await toxiproxyApi(api, 'POST', '/proxies', { name, listen: `${serverAddress}:${port}`, upstream: `127.0.0.1:${port}`, enabled: true });
        for (const [stream, latency] of /** @type {Array<[string, number]>} */ ([['upstream', upMs], ['downstream', downMs]])) {
          if (latency > 0) {
            await toxiproxyApi(api, 'POST', `/proxies/${name}/toxics`,
              { name: `${stream}-latency`, type: 'latency', stream, toxicity: 1, attributes: { latency, jitter: 0 } });
          }
        }
        exposed.add(port);
      }
    };

    const probe = await spawnUntil(...command(process.execPath, [path.join(ROOT, 'bench/placement/link-probe.js'), bindHost, String(PROBE_PORT)]),
      /"listening"/, 'the link probe');
    children.push(probe);
    await expose([PROBE_PORT]);

    const link = {
      ns, hostIf, serverAddress, clientAddress, bindHost, spec,
      shapers: {
        bandwidth: spec.down || spec.up ? 'tbf' : 'none',
        delay,
        delay_ms: { up: delay === 'none' ? 0 : upMs, down: delay === 'none' ? 0 : downMs },
      },
      limits: [...new Set([spec.down || spec.up ? 'tbf' : null, delay].filter(Boolean))].map((s) => `${s}: ${SHAPER_LIMITS[s]}`),
      command,
      hostOf: (port) => `${serverAddress}:${port}`,
      expose,
      counters: () => counters(hostIf),
      proxyCpuSeconds: () => (proxy && proxy.exitCode === null ? cpuSecondsOf(proxy.pid) : 0),
      check: () => checkLink(link),
      close: async () => {
        closeSync();
        // Reaped, not just signalled: a killed child is a zombie until its 'exit' is handled.
        await Promise.all(children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => once(c, 'exit')));
      },
    };
    return link;
  } catch (err) {
    closeSync();
    if (err instanceof BenchError) throw err;
    throw new BenchError(`building the ${spec.name} link failed: ${stderrOf(err)}`);
  }
}

function connect(host, port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, noDelay: true }, () => resolve(socket));
    socket.once('error', reject);
    socket.setTimeout(15000, () => socket.destroy(new Error(`no answer from ${host}:${port} in 15 s`)));
  });
}

/**
 * Round-trip time of one byte there and back over an open TCP connection (so it holds
 * whatever delays data, netem or toxiproxy), `count` times after one warm-up exchange.
 * @param {string} host
 * @param {number} port a link probe (bench/placement/link-probe.js)
 * @param {number} [count] default 20
 * @returns {Promise<{min_ms: number, median_ms: number}>}
 */
export async function measureRtt(host, port, count = 20) {
  const socket = await connect(host, port);
  try {
    const samples = [];
    for (let i = 0; i <= count; i++) {
      const t0 = performance.now();
      socket.write('p');
      await once(socket, 'data');
      if (i > 0) samples.push(performance.now() - t0);
      await sleep(5);
    }
    return { min_ms: Math.min(...samples), median_ms: median(samples) };
  } finally {
    socket.destroy();
  }
}

const command = (letter, bytes) => {
  const b = Buffer.alloc(9);
  b.write(letter, 0);
  b.writeBigUInt64BE(BigInt(bytes), 1);
  return b;
};

/**
 * Throughput of one bulk TCP transfer over the link, each way: from the first byte to
 * the last, as TCP payload (goodput) and as link-layer bits (the veth's counters).
 * @param {Link} link
 * @param {'down'|'up'} direction down: server to client
 * @param {number} bytes transfer size
 * @returns {Promise<{goodput_bps: number, link_bps: number, seconds: number}>}
 */
export async function measureThroughput(link, direction, bytes) {
  const socket = await connect(link.serverAddress, PROBE_PORT);
  try {
    /** @type {number} */
    let t0;
    /** @type {number} */
    let c0;
    const done = new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.once('close', resolve);
    });
    if (direction === 'down') {
      let got = 0;
      // Timed from the first chunk's arrival, so that chunk counts in neither figure.
      socket.on('data', (chunk) => {
        if (t0 === undefined) { t0 = performance.now(); c0 = link.counters().down.bytes; return; }
        got += chunk.length;
      });
      socket.write(command('d', bytes));
      await done;
      const seconds = (performance.now() - t0) / 1000;
      return { goodput_bps: (got * 8) / seconds, link_bps: ((link.counters().down.bytes - c0) * 8) / seconds, seconds };
    }
    // Up: time from the first byte written to the server's 'k', less one RTT's worth of its answer path.
    socket.resume(); // reads the 'k' and the end, without which 'close' never comes
    t0 = performance.now();
    c0 = link.counters().up.bytes;
    socket.write(command('u', bytes));
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    for (let left = bytes; left > 0; left -= chunk.length) {
      if (!socket.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await once(socket, 'drain');
    }
    await done;
    const seconds = (performance.now() - t0) / 1000;
    return { goodput_bps: (bytes * 8) / seconds, link_bps: ((link.counters().up.bytes - c0) * 8) / seconds, seconds };
  } finally {
    socket.destroy();
  }
}

/**
 * @typedef {object} LinkCheck the link as measured before the runs
 * @property {{configured: number, min_ms: number, median_ms: number}} rtt ms
 * @property {{configured: number|null, link_bps: number, goodput_bps: number}} down bit/s
 * @property {{configured: number|null, link_bps: number, goodput_bps: number}} up bit/s
 * @property {string[]} warnings one per figure more than LINK_TOLERANCE off what was configured
 */

/**
 * Measures the link: RTT (min of 20 exchanges) and a bulk transfer each way, sized
 * to about 2 s at the configured rate (256 KiB to 64 MiB). Compares each with the
 * configuration; more than LINK_TOLERANCE off is a warning.
 * @param {Link} link
 * @returns {Promise<LinkCheck>}
 */
export async function checkLink(link) {
  const { spec } = link;
  const rtt = await measureRtt(link.serverAddress, PROBE_PORT);
  const size = (bps) => Math.min(64 * 2 ** 20, Math.max(256 * 2 ** 10, Math.round((bps ?? 4e9) / 8 * 2)));
  const down = await measureThroughput(link, 'down', size(spec.down));
  const up = await measureThroughput(link, 'up', size(spec.up));
  const warnings = [];
  const off = (measured, configured) => configured > 0 && Math.abs(measured / configured - 1) > LINK_TOLERANCE;
  const pct = `${LINK_TOLERANCE * 100}%`;
  // The veth's own RTT and the timers add tens of µs: a difference under 0.1 ms is no difference.
  if (off(rtt.min_ms, spec.rttMs) && Math.abs(rtt.min_ms - spec.rttMs) > 0.1) {
    warnings.push(`measured RTT ${rtt.min_ms.toFixed(2)} ms is more than ${pct} off the configured ${spec.rttMs} ms`);
  }
  for (const [name, measured, configured] of /** @type {Array<[string, {link_bps: number}, number|undefined]>} */ ([['down', down, spec.down], ['up', up, spec.up]])) {
    if (configured && off(measured.link_bps, configured)) {
      warnings.push(`measured ${name} bandwidth ${formatRate(measured.link_bps)} is more than ${pct} off the configured ${formatRate(configured)}`);
    }
  }
  return {
    rtt: { configured: spec.rttMs, ...rtt },
    down: { configured: spec.down, link_bps: down.link_bps, goodput_bps: down.goodput_bps },
    up: { configured: spec.up, link_bps: up.link_bps, goodput_bps: up.goodput_bps },
    warnings,
  };
}
