// How long a worker of `node server` takes to start, idle: this process plays the cluster primary, forks one worker
// (the checkout's server/index.js, with the V8 flags server/primary.js gives its workers) at a time and times it from
// fork() to its `{type: 'listening'}` (all its listeners bound), with the CPU it used by then (/proc); the worker then
// drains and exits, which writes its compile cache, as a reload's retired worker does. The checkouts (git worktrees with
// their node_modules; default: this one) interleaved round by round, each warmed by one start not counted; median
// (min–max) of each, and how busy the machine was meanwhile (all CPUs, /proc/stat). Not part of npm test. Pinned as the
// jobs pin the server: `taskset -c 0 node test/manual/worker-start.js ...` (the worker inherits the affinity).
//   node test/manual/worker-start.js 10 http                          this checkout
//   node test/manual/worker-start.js 10 both /tmp/before "$PWD"        two checkouts
import cluster from 'node:cluster';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSecondsOf, freePort } from '../../bench/processes.js';

const [rounds, mode, ...given] = [Number(process.argv[2]), process.argv[3] ?? 'both', ...process.argv.slice(4)];
if (!(rounds >= 1)) {
  console.error('usage: node test/manual/worker-start.js <rounds> [MODE] [checkout...]');
  process.exit(2);
}
const roots = given.length ? given.map((r) => path.resolve(r)) : [path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')];
const START_TIMEOUT_MS = 30000;

/** @returns {{busy: number, total: number}} jiffies of all CPUs, busy (not idle nor iowait) and in all */
const cpuTimes = () => {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
};

/**
 * Forks one worker of a checkout and times its start.
 * @param {string} root the checkout
 * @returns {Promise<{readyMs: number, onlineMs: number, cpuMs: number}>} fork() to 'online' (Node's bootstrap done) and
 *   to 'listening', ms; the worker's CPU (user + system) at 'listening', ms
 */
async function startOnce(root) {
  const { listenersOf, readSettings } = await import(`${root}/server/settings.js`);
  const { LISTENERS } = await import(`${root}/server/listeners.js`);
  const env = { MODE: mode, WORKERS: '1', LOG_LEVEL: 'warn' };
  for (const name of listenersOf(mode)) env[LISTENERS[name].portSetting] = String(await freePort());
  const settings = readSettings({ ...process.env, ...env });
  const execArgv = settings.WORKER_PRETENURING ? [] : ['--no-allocation-site-pretenuring'];
  if (settings.WORKER_INITIAL_HEAP_MB > 0) execArgv.push(`--initial-heap-size=${settings.WORKER_INITIAL_HEAP_MB}`);
  cluster.setupPrimary({ exec: path.join(root, 'server/index.js'), cwd: root, execArgv });
  const t0 = performance.now();
  const worker = cluster.fork(env);
  let onlineMs = NaN;
  worker.once('online', () => { onlineMs = performance.now() - t0; });
  const timer = setTimeout(() => worker.process.kill('SIGKILL'), START_TIMEOUT_MS);
  const figures = await new Promise((resolve, reject) => {
    worker.on('message', (msg) => {
      if (msg?.type === 'listening') resolve({ readyMs: performance.now() - t0, onlineMs, cpuMs: cpuSecondsOf(worker.process.pid) * 1000 });
      else if (msg?.type === 'drained') worker.send({ type: 'drained-ack' });
      else if (msg?.type === 'fatal' || msg?.type === 'crash') reject(new Error(`${root}: worker: ${msg.message}`));
    });
    worker.once('exit', (code, signal) => reject(new Error(`${root}: worker exited (${code ?? signal}) before it listened`)));
  });
  clearTimeout(timer);
  const exited = once(worker, 'exit');
  worker.send({ type: 'shutdown' });
  await exited;
  return figures;
}

const figures = Object.fromEntries(roots.map((root) => [root, { readyMs: [], onlineMs: [], cpuMs: [] }]));
for (const root of roots) await startOnce(root); // fills its compile cache
const cpu0 = cpuTimes();
const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
for (let r = 0; r < rounds; r++) {
  for (const root of roots) {
    const one = await startOnce(root);
    for (const key of Object.keys(one)) figures[root][key].push(one[key]);
  }
}
const cpu1 = cpuTimes();
const line = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return `${median.toFixed(0)} ms (${s[0].toFixed(0)}–${s.at(-1).toFixed(0)})`;
};
const affinity = readFileSync('/proc/self/status', 'utf8').match(/Cpus_allowed_list:\s*(\S+)/)?.[1];
console.log(`MODE=${mode}, ${rounds} rounds, cpus ${affinity}; machine busy ${(100 * (cpu1.busy - cpu0.busy) / (cpu1.total - cpu0.total)).toFixed(0)}% `
  + `of all CPUs meanwhile (this run included), load average ${load0} before, ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]} after`);
for (const [root, f] of Object.entries(figures)) {
  console.log(`${root}: fork to ready ${line(f.readyMs)}; to online ${line(f.onlineMs)}; worker CPU at ready ${line(f.cpuMs)}`);
}
