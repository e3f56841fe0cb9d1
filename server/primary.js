// The cluster primary: forks the workers, reports when all listen, replaces the
// ones that die, and drains them all on a signal. What it decides is server/supervisor.js's;
// this wires node:cluster's and the process's events to it.
import cluster from 'node:cluster';
import { createLogger } from './log.js';
import { EVENT } from './events.js';
import { Supervisor } from './supervisor.js';

/**
 * Forks `settings.WORKERS` workers and supervises them. Logs `ready` once every
 * worker listens and, with ADMIN_PORT set, the admin endpoint (server/admin.js) too;
 * exits 1 when a worker or the admin endpoint cannot start before that. A worker that
 * dies later is replaced as `createRestartPolicy` decides, and the primary exits 1
 * when the policy gives up. On SIGTERM or SIGINT every worker drains and the
 * primary exits 0 once all have exited (1 if it had to kill some, past
 * SHUTDOWN_TIMEOUT_MS + 5 s). On SIGHUP the workers are replaced one at a time with no
 * request lost (a zero-downtime reload, as `pm2 reload` does): a fresh worker (the code on
 * disk now, the primary's settings) is forked and listening before the old one drains. A SIGHUP before ready is ignored
 * with a warning (`reload-failed`, reason 'not ready yet').
 * @param {import('./settings.js').ServerSettings} settings
 * @param {{earlyHangups?: number}} [options] earlyHangups: SIGHUPs that came before this ran (server/index.js caught
 *   them), each logged as ignored
 */
export function runPrimary(settings, { earlyHangups = 0 } = {}) {
  const log = createLogger(settings.LOG_LEVEL);
  // V8 flags of the workers (docs/findings/2026-11-25-profiling.md, "Why ours ÷ peer swung"): each after the primary's own.
  const v8Flags = [
    ...(settings.WORKER_INITIAL_HEAP_MB > 0 ? [`--initial-heap-size=${settings.WORKER_INITIAL_HEAP_MB}`] : []),
    ...(settings.WORKER_PRETENURING ? [] : ['--no-allocation-site-pretenuring']),
  ];
  if (v8Flags.length > 0) cluster.setupPrimary({ execArgv: [...process.execArgv, ...v8Flags] });
  const supervisor = new Supervisor({ settings, log, cluster, process });
  cluster.on('message', (worker, msg) => supervisor.onMessage(worker, msg));
  cluster.on('exit', (worker, code, signal) => supervisor.onExit(worker, code, signal));
  cluster.on('disconnect', () => supervisor.onDisconnect());
  for (const signal of /** @type {NodeJS.Signals[]} */ (['SIGTERM', 'SIGINT'])) process.on(signal, () => supervisor.onStopSignal(signal));
  // Each is ignored as one before ready: 'not ready yet'.
  for (let i = 0; i < earlyHangups; i++) supervisor.onHangup();
  process.on('SIGHUP', () => supervisor.onHangup());
  if (!settings.ADMIN_PORT) {
    supervisor.start();
    return;
  }
  // The admin endpoint listens before any worker is forked: 'ready' then means it can be scraped,
  // and a port in use stops the primary before a worker could miss the shutdown message.
  // Loaded only when asked for: with ADMIN_PORT unset, no accounting code runs at all.
  import('./admin.js')
    .then(({ startAdmin }) => startAdmin({ host: settings.ADMIN_HOST, port: settings.ADMIN_PORT, log }))
    .then(() => supervisor.start(), (err) => {
      log.error({ event: EVENT.PRIMARY_FAILED, code: err.code }, err.message);
      supervisor.stop(1);
    });
}
