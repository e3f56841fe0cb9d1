// The fault matrix (node bench/cli.js faults; npm run faults): each fault injected into a fresh
// server under k6 load, in each mode, with the requests that completed, failed and timed out and
// the workers' RSS before, at the peak and at the end. A fault is one entry of FAULTS: what it
// does, and the function that does it while k6 loads the server.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bool, str } from 'envalid';
import { markdownTable } from 'markdown-table';
import { positiveInt, readEnv } from '../server/env.js';
import { EVENT } from '../server/events.js';
import { LISTENERS } from '../server/listeners.js';
import { BenchError } from './errors.js';
import { idleConnections, malformedBurst, slowReaders } from './fault-clients.js';
import { fileStamp, formatNumber, k6Reason } from './format.js';
import { MODE_NAMES, MODES, modeLabel } from './modes.js';
import { k6Args, portOfMode, serverEnv } from './invoke.js';
import { freePort, isServerProcess, ROOT, runK6, startServer } from './processes.js';
import { provenanceOf } from './provenance.js';
import { allowedCpus, duration, durationMs, listOf, splitCores } from './settings.js';
import { rssMib } from './soak-helpers.js';
import { readSummary } from './summary.js';

const log = (message) => console.error(`faults: ${message}`);
// Past --duration k6 may spend its gracefulStop (30 s); past that and a margin it is stuck.
const K6_OVERRUN_MS = 60000;

/**
 * @typedef {object} FaultContext what a fault gets while k6 loads the server
 * @property {import('./processes.js').RunningServer} server
 * @property {number} port the port k6 loads
 * @property {'http'|'grpc'} protocol how the port is spoken to: HTTP/1.1 GET, or gRPC
 * @property {number} loadMs how long the load lasts from the moment the fault starts (ms)
 * @property {FaultSettings} settings
 */

/**
 * Every fault, in table order. `inject` runs at the load's start and returns what it observed.
 * @type {Readonly<Record<string, {about: string, inject: (ctx: FaultContext) => Promise<Record<string, unknown>>}>>}
 */
export const FAULTS = Object.freeze({
  'worker-kill': {
    about: 'a worker killed with SIGKILL every 3 s (the restart policy replaces it)',
    async inject({ server, loadMs }) {
      let kills = 0;
      for (let at = 3000; at < loadMs - 1000; at += 3000) {
        await sleep(3000);
        const victim = server.workerPids().filter(isServerProcess).at(kills % 2);
        if (!victim) continue;
        process.kill(victim, 'SIGKILL');
        kills++;
      }
      return { kills };
    },
  },
  'primary-sigterm': {
    about: 'the primary gets SIGTERM at the midpoint: it drains and exits; later requests are refused, not lost',
    async inject({ server, loadMs, settings }) {
      await sleep(loadMs / 2);
      const at = Date.now();
      server.proc.kill('SIGTERM');
      const [code] = await Promise.race([server.exited, sleep(settings.SHUTDOWN_TIMEOUT_MS + 6000).then(() => ['hung'])]);
      return { exit_code: code, exit_ms: Date.now() - at };
    },
  },
  reload: {
    about: 'SIGHUP at the midpoint: every worker replaced one at a time',
    async inject({ server, loadMs }) {
      await sleep(loadMs / 2);
      const from = server.lines.length;
      server.proc.kill('SIGHUP');
      const done = await server.waitForLine((l) => l.event === EVENT.RELOADED || l.event === EVENT.RELOAD_FAILED, { from, timeoutMs: 30000 });
      return { reloaded: done.event === EVENT.RELOADED, reload_ms: done.ms ?? null };
    },
  },
  'slow-readers': {
    about: '16 connections ask for the 1 MiB blob (8 requests each: pipelined, or streams) and never read',
    async inject({ port, protocol, loadMs }) {
      await sleep(1000);
      const readers = await slowReaders({ port, protocol, connections: 16, requestsEach: 8 });
      await sleep(loadMs - 2000);
      readers.close();
      return { connections: readers.opened, requests: readers.opened * 8 };
    },
  },
  'idle-connections': {
    about: 'IDLE_CONNECTIONS connections opened at once that send nothing (gRPC: the preface only)',
    async inject({ port, protocol, loadMs, settings }) {
      await sleep(1000);
      const started = Date.now();
      const idle = await idleConnections({ port, protocol, count: settings.IDLE_CONNECTIONS });
      // Held at the end of the load: the primary hands each connection to a worker, which closes the ones
      // past MAX_CONNECTIONS, and with 10,000 queued that takes seconds.
      await sleep(Math.max(0, loadMs - 1000 - (Date.now() - started)));
      const heldAtEnd = idle.open();
      idle.close();
      return { opened: idle.opened, refused: idle.refused, held_at_end: heldAtEnd };
    },
  },
  'malformed-frames': {
    about: '500 connections at once, each with one malformed request (HTTP: not a request line; gRPC: DATA on stream 0)',
    async inject({ port, protocol, loadMs, settings }) {
      await sleep(loadMs / 2 - 1000);
      const timeoutMs = protocol === 'grpc' ? 2 * settings.H2_IDLE_PING_MS + 3000 : 5000;
      return malformedBurst({ port, protocol, count: 500, timeoutMs });
    },
  },
});

/**
 * The fault matrix's settings, as envalid specs (scripts/gen-docs.js renders them in docs/faults.md).
 * @returns {Record<string, object>}
 */
export function faultSettingSpecs() {
  return {
    FAULTS: listOf(Object.keys(FAULTS))({
      default: Object.keys(FAULTS),
      desc: `faults to inject, comma-separated from ${Object.keys(FAULTS).map((f) => `\`${f}\``).join(', ')} (bench/faults.js)`,
    }),
    MODES: listOf(MODE_NAMES)({ default: [...MODE_NAMES], desc: 'modes to load, comma-separated (bench/modes.js)' }),
    FAULT_DURATION: duration({ minMs: 8000 })({ default: '12s', desc: 'k6 run of one cell, the fault injected during it (k6 duration, at least 8s)' }),
    VUS: positiveInt({ default: 16, desc: 'k6 virtual users (closed model)' }),
    WORKERS: positiveInt({ default: 2, desc: 'server workers: 2 keeps one serving while the other is killed or replaced' }),
    REQUEST_TIMEOUT: duration()({
      default: '5s', desc: 'how long one k6 request may take; past it, it is ended and counted as failed and as timed out',
    }),
    IDLE_CONNECTIONS: positiveInt({ default: 10000, desc: 'connections the idle-connections fault opens on the loaded port' }),
    SHUTDOWN_TIMEOUT_MS: positiveInt({ default: 10000, desc: 'the server\'s drain time (its SHUTDOWN_TIMEOUT_MS)' }),
    H2_IDLE_PING_MS: positiveInt({ default: 5000, desc: 'the server\'s idle PING sweep (its H2_IDLE_PING_MS)' }),
    VERBOSE: bool({ default: false, desc: 'k6\'s own output on the terminal too' }),
    K6_BIN: str({ default: '', desc: 'path of k6; empty: `bench/cli.js` finds or builds the pinned release' }),
    RESULTS_DIR: str({ default: 'results', desc: 'where the report and the k6 summaries go' }),
  };
}

/**
 * @typedef {object} FaultSettings
 * @property {string[]} FAULTS
 * @property {string[]} MODES
 * @property {string} FAULT_DURATION k6 duration
 * @property {number} VUS
 * @property {number} WORKERS
 * @property {string} REQUEST_TIMEOUT k6 duration
 * @property {number} IDLE_CONNECTIONS
 * @property {number} SHUTDOWN_TIMEOUT_MS ms
 * @property {number} H2_IDLE_PING_MS ms
 * @property {boolean} VERBOSE
 * @property {string} K6_BIN
 * @property {string} RESULTS_DIR
 */

/**
 * Reads and checks the fault matrix's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {FaultSettings}
 * @throws {BenchError} naming every invalid variable
 */
export function readFaultSettings(env = process.env) {
  // A plain copy: envalid's object refuses changes, and the CLI sets K6_BIN.
  return /** @type {FaultSettings} */ ({ ...readEnv(env, faultSettingSpecs(), BenchError) });
}

/** The server settings the matrix sets in each cell's server. */
const serverSettingsOf = (settings) => ({ SHUTDOWN_TIMEOUT_MS: settings.SHUTDOWN_TIMEOUT_MS, H2_IDLE_PING_MS: settings.H2_IDLE_PING_MS });

/** Sum of the workers' RSS (MiB), null when none is readable. */
const workersRss = (server) => {
  const each = server.workerPids().map(rssMib).filter((v) => v !== null);
  return each.length ? each.reduce((a, b) => a + b, 0) : null;
};

/**
 * One cell: a fresh server in the mode's listener, k6 for FAULT_DURATION, the fault during it.
 * @returns {Promise<object>} the cell's figures; memory in MiB
 * @throws {BenchError} when the server does not start or k6 cannot run
 */
async function cell(name, mode, settings, cores, stamp) {
  const { listener } = MODES[mode];
  const server = await startServer({
    env: serverEnv([mode], { workers: settings.WORKERS, adminPort: await freePort(), settings: serverSettingsOf(settings) }),
    cpus: cores.serverCpus,
  }).catch((err) => { throw new BenchError(`the ${mode} server did not start: ${err.message.split('\n')[0]}`); });
  const port = portOfMode(server, mode);
  const summaryFile = path.join(settings.RESULTS_DIR, `faults-${stamp}-${name}-${mode}-k6.json`);
  try {
    const loadMs = durationMs(settings.FAULT_DURATION);
    const load = runK6({
      k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount, quiet: !settings.VERBOSE, timeoutMs: loadMs + K6_OVERRUN_MS,
      args: k6Args(mode, {
        host: `127.0.0.1:${port}`, vus: settings.VUS, duration: settings.FAULT_DURATION, summaryFile,
        vars: { SCENARIO: 'user', REQUEST_TIMEOUT: settings.REQUEST_TIMEOUT },
      }),
    });
    await sleep(1000); // k6's start-up and setup()
    const rssBefore = workersRss(server);
    let rssPeak = rssBefore ?? 0;
    const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, workersRss(server) ?? 0); }, 200);
    const protocol = LISTENERS[listener].load.request === 'grpc' ? 'grpc' : 'http';
    const observed = await FAULTS[name].inject({ server, port, protocol, loadMs: loadMs - 1000, settings })
      .catch((err) => ({ error: err.message.split('\n')[0] }));
    const run = await load;
    clearInterval(sampler);
    const rssEnd = workersRss(server);
    if (run.timedOut) throw new BenchError(`${name} · ${mode}: k6 still ran ${(loadMs + K6_OVERRUN_MS) / 1000} s after its start and was killed`);
    const figures = await readSummary(summaryFile).catch((err) => {
      throw new BenchError(`${name} · ${mode}: k6 wrote no summary (exit ${run.code}): ${k6Reason(run.output) || err.message}`);
    });
    const exitCode = await server.stop();
    return {
      fault: name, mode, summary_file: summaryFile,
      completed: figures.requests - figures.failed, failed: figures.failed, timed_out: figures.timed_out,
      rss_before_mib: rssBefore, rss_peak_mib: rssPeak, rss_end_mib: rssEnd,
      server_exit_code: exitCode, observed,
    };
  } finally {
    await server.kill();
  }
}

const fmtMib = (v) => (v === null || v === undefined ? 'n/a' : formatNumber(v, 0));
const fmtObserved = (o) => Object.entries(o).map(([k, v]) => `${k} ${typeof v === 'number' ? formatNumber(v, 0) : v}`).join(', ');

/**
 * The matrix as Markdown: one row per fault and mode.
 * @param {{cells: object[], settings: FaultSettings, pinning: string}} report
 * @returns {string}
 */
function renderFaults({ cells, settings, pinning }) {
  const rows = cells.map((c) => [c.fault, modeLabel(c.mode), formatNumber(c.completed), formatNumber(c.failed), formatNumber(c.timed_out),
    `${fmtMib(c.rss_before_mib)} → ${fmtMib(c.rss_peak_mib)} → ${fmtMib(c.rss_end_mib)}`, fmtObserved(c.observed)]);
  const table = markdownTable([['fault', 'mode', 'completed', 'failed', 'timed out', 'workers\' RSS, MiB: before → peak → end', 'observed'], ...rows],
    { align: ['l', 'l', 'r', 'r', 'r', 'r', 'l'] });
  const about = Object.entries(FAULTS).filter(([name]) => settings.FAULTS.includes(name)).map(([name, f]) => `- \`${name}\`: ${f.about}`);
  return [`## Fault matrix`, '', table, '',
    `Each cell: a fresh server (${settings.WORKERS} workers), k6 at ${settings.VUS} VUs for ${settings.FAULT_DURATION} `
    + `(REQUEST_TIMEOUT ${settings.REQUEST_TIMEOUT}), the fault injected during the load. Failed includes timed out; `
    + `RSS is the sum of the workers' (a killed or replaced worker's memory leaves with it). ${pinning}.`, '', ...about, ''].join('\n');
}

/**
 * Runs the matrix (bench/cli.js faults), prints it and writes it to RESULTS_DIR.
 * @param {FaultSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server or k6 fails
 */
export async function main(settings) {
  process.chdir(ROOT);
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus());
  const stamp = fileStamp();
  const cells = [];
  const total = settings.FAULTS.length * settings.MODES.length;
  for (const name of settings.FAULTS) {
    for (const mode of settings.MODES) {
      log(`[${cells.length + 1}/${total}] ${name} · ${mode}`);
      cells.push(await cell(name, mode, settings, cores, stamp));
    }
  }
  const pinning = cores.description;
  // The cells' listener sets differ by mode: the provenance records what they share.
  const shared = serverEnv(null, { workers: settings.WORKERS, settings: serverSettingsOf(settings) });
  const provenance = provenanceOf({ settings: /** @type {any} */ (settings), pinning, serverEnv: shared });
  const report = { generated_at: new Date().toISOString(), provenance, settings, pinning, cells };
  const markdown = renderFaults(report);
  const base = path.join(settings.RESULTS_DIR, `faults-${stamp}`);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${markdown}\nwritten: ${base}.md, ${base}.json\n`);
}
