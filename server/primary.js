// The cluster primary: forks the workers, reports when all listen, replaces the
// ones that die, and drains them all on a signal.
import cluster from 'node:cluster';
import { createLogger } from './log.js';
import { createRestartPolicy, RESTART_DEFAULTS } from './restart-policy.js';
import { listenersOf, portOf } from './settings.js';
import { EVENT } from './events.js';
import { budgetMbOf } from './memory-budget.js';

// Past SHUTDOWN_TIMEOUT_MS, how long the workers get to exit before the primary kills them.
const KILL_AFTER_DRAIN_MS = 5000;
// How long a reload's replacement worker may take to listen before the reload gives up on it.
const RELOAD_START_TIMEOUT_MS = 15000;

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
  if (settings.WORKER_INITIAL_HEAP_MB > 0) {
    cluster.setupPrimary({ execArgv: [...process.execArgv, `--initial-heap-size=${settings.WORKER_INITIAL_HEAP_MB}`] });
  }
  const restarts = createRestartPolicy();
  const slots = new Map(); // worker.id -> {slot, forkedAt}
  const crashes = new Map(); // worker.id -> message of the uncaught exception it reported
  const listeningIds = new Set(); // workers that reported all their listeners bound
  const delayedForks = new Set();
  const retiring = new Map(); // worker.id -> pid of its replacement: a reload drains it; its exit is no death
  const candidates = new Set(); // worker.id of a reload's replacement not yet listening
  const waiters = new Map(); // worker.id -> callbacks of a reload waiting for it to listen or to exit
  let listening = 0;
  let ready = false;
  let stopping = false;

  const fork = (slot) => {
    const worker = cluster.fork();
    slots.set(worker.id, { slot, forkedAt: Date.now() });
    return worker;
  };

  /** Resolves 'listening' or 'exit', whichever the worker does first. */
  const next = (worker) => new Promise((resolve) => waiters.set(worker.id, resolve));

  // SIGHUP: for each worker in turn, a replacement in its slot listens first, then the old one
  // drains (server/worker.js: GOAWAY on HTTP/2, Connection: close on HTTP/1.1) and exits.
  /**
   * Replaces one worker: a fresh one in its slot listens first, then the old one drains and exits.
   * @returns {Promise<number|null>} the replacement's pid, or null when it did not start (the old worker keeps serving)
   *   or the primary is stopping
   */
  const replace = async (worker) => {
    const replacement = fork(slots.get(worker.id).slot);
    candidates.add(replacement.id);
    const timer = setTimeout(() => replacement.process.kill('SIGKILL'), RELOAD_START_TIMEOUT_MS);
    const outcome = await next(replacement);
    clearTimeout(timer);
    candidates.delete(replacement.id);
    if (stopping) return null;
    if (outcome !== 'listening') {
      log.error({ event: EVENT.RELOAD_FAILED, worker: worker.process.pid, reason: outcome },
        'a replacement did not start; the old worker keeps serving');
      return null;
    }
    if (worker.isDead()) return replacement.process.pid; // died meanwhile; its slot is served again
    retiring.set(worker.id, replacement.process.pid);
    const exited = next(worker);
    worker.send({ type: 'shutdown' }, () => {});
    await exited;
    return replacement.process.pid;
  };

  // One replacement at a time, whether for a reload or a worker past its memory budget: which one runs, or null.
  /** @type {'a reload'|'a recycling'|null} */
  let replacing = null;
  const reload = async () => {
    const started = Date.now();
    const old = Object.values(cluster.workers).filter((w) => !w.isDead() && listeningIds.has(w.id));
    log.info({ event: EVENT.RELOADING, workers: old.map((w) => w.process.pid) }, 'reloading: replacing the workers one at a time');
    const fresh = [];
    for (const worker of old) {
      if (stopping) return;
      if (worker.isDead() || !slots.has(worker.id)) continue; // died meanwhile: the restart policy replaced it
      const pid = await replace(worker);
      if (pid === null) return;
      fresh.push(pid);
    }
    log.info({ event: EVENT.RELOADED, workers: fresh, ms: Date.now() - started }, 'reloaded');
  };

  const stopAll = (exitCode) => {
    if (stopping) return;
    stopping = true;
    for (const timer of delayedForks) clearTimeout(timer);
    // cluster keeps a worker listed until both its 'exit' and its IPC 'disconnect' came, in either
    // order: a worker that exited is gone whatever the list says, and both events check again.
    const exitWhenNoneLeft = () => {
      if (Object.values(cluster.workers).some((w) => !w.isDead())) return;
      log.info({ event: EVENT.STOPPED, exitCode }, 'stopped');
      process.exit(exitCode);
    };
    cluster.on('exit', exitWhenNoneLeft);
    cluster.on('disconnect', exitWhenNoneLeft);
    for (const worker of Object.values(cluster.workers)) {
      // A callback keeps a send to a worker that is just exiting from throwing.
      worker.send({ type: 'shutdown' }, () => {});
      // A worker still starting (a replacement, or any before ready) may not listen for messages yet, and IPC
      // drops a message nobody listens for: SIGTERM reaches it either way. It drains if its handler is in place
      // (worker.js sets it before opening any listener), else it dies at once, having served nothing.
      if (!listeningIds.has(worker.id)) worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      const left = Object.values(cluster.workers);
      log.error({ event: EVENT.WORKERS_KILLED, workers: left.map((w) => w.process.pid) }, 'workers did not stop in time; killing them');
      for (const worker of left) worker.process.kill('SIGKILL');
      process.exit(1);
    }, settings.SHUTDOWN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS);
    exitWhenNoneLeft();
  };

  cluster.on('message', (worker, msg) => {
    if (msg?.type === 'listening') {
      listeningIds.add(worker.id);
      waiters.get(worker.id)?.('listening');
      waiters.delete(worker.id);
      if (!ready && ++listening === settings.WORKERS) {
        ready = true;
        const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, portOf(settings, n)]));
        const admin = settings.ADMIN_PORT ? { admin: `${settings.ADMIN_HOST}:${settings.ADMIN_PORT}` } : {};
        log.info({ event: EVENT.READY, mode: settings.MODE, workers: settings.WORKERS, host: settings.HOST, ...ports, ...admin,
          workerMemoryMb: budgetMbOf(settings) }, 'ready');
      }
    } else if (msg?.type === 'over-budget') {
      // A worker past WORKER_MEMORY_MB (server/memory-budget.js). During a reload or another recycling it asks again
      // at its next sample past the budget, if it still is.
      if (stopping || replacing || retiring.has(worker.id) || !slots.has(worker.id)) return;
      replacing = 'a recycling';
      log.warn({ event: EVENT.WORKER_RECYCLING, worker: worker.process.pid }, 'a worker past its memory budget is replaced');
      replace(worker).finally(() => { replacing = null; });
    } else if (msg?.type === 'drained') {
      // The worker's listeners are closed and, IPC being ordered, so is cluster's record of them:
      // no connection goes to it after this answer (see server/worker.js primaryBarrier).
      worker.send({ type: 'drained-ack' }, () => {});
    } else if (msg?.type === 'crash') {
      crashes.set(worker.id, msg.message);
    } else if (msg?.type === 'fatal') {
      log.error({ event: EVENT.START_FAILED, code: msg.code, worker: worker.process.pid }, msg.message);
      // Before ready nothing is served yet: fail fast. Later the restart policy decides.
      if (!ready) stopAll(1);
      else crashes.set(worker.id, msg.message);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const { slot, forkedAt } = slots.get(worker.id);
    slots.delete(worker.id);
    listeningIds.delete(worker.id);
    const reason = crashes.get(worker.id) ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
    crashes.delete(worker.id);
    waiters.get(worker.id)?.(reason);
    waiters.delete(worker.id);
    if (stopping) return;
    const about = { worker: worker.process.pid, code, signal, reason };
    if (retiring.has(worker.id)) {
      log.info({ event: EVENT.WORKER_RETIRED, ...about, by: retiring.get(worker.id) }, 'worker drained and exited; its replacement serves');
      retiring.delete(worker.id);
      return;
    }
    // A reload's replacement that dies before it listens is not replaced: the worker it was to replace still serves.
    if (candidates.has(worker.id)) return;
    if (!ready) {
      log.error({ event: EVENT.WORKER_DIED_EARLY, ...about }, 'worker died before it listened');
      stopAll(1);
      return;
    }
    const decision = restarts.onDeath(slot, Date.now() - forkedAt);
    if (decision.giveUp === true) {
      log.fatal({ event: EVENT.GAVE_UP, ...about, quickDeaths: decision.quickDeaths },
        `worker died ${decision.quickDeaths} times in a row within ${RESTART_DEFAULTS.stableAfterMs} ms of its start; giving up`);
      stopAll(1);
      return;
    }
    log.warn({ event: EVENT.WORKER_REPLACED, ...about, delayMs: decision.delayMs, quickDeaths: decision.quickDeaths }, 'worker died; forking a replacement');
    if (decision.delayMs === 0) return fork(slot);
    const timer = setTimeout(() => { delayedForks.delete(timer); fork(slot); }, decision.delayMs);
    delayedForks.add(timer);
  });

  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      log.info({ event: EVENT.SHUTTING_DOWN, signal }, 'shutting down');
      stopAll(0);
    });
  }
  const ignoredHangup = (reason) => log.warn({ event: EVENT.RELOAD_FAILED, reason }, 'SIGHUP ignored');
  for (let i = 0; i < earlyHangups; i++) ignoredHangup('not ready yet');
  process.on('SIGHUP', () => {
    // A reload before ready, or during one, would count workers twice: one at a time, once serving.
    if (stopping || !ready || replacing) {
      ignoredHangup(stopping ? 'stopping' : replacing ? `${replacing} is running` : 'not ready yet');
      return;
    }
    replacing = 'a reload';
    reload().finally(() => { replacing = null; });
  });
  const forkAll = () => { for (let slot = 0; slot < settings.WORKERS; slot++) fork(slot); };
  if (!settings.ADMIN_PORT) {
    forkAll();
    return;
  }
  // The admin endpoint listens before any worker is forked: 'ready' then means it can be scraped,
  // and a port in use stops the primary before a worker could miss the shutdown message.
  // Loaded only when asked for: with ADMIN_PORT unset, no accounting code runs at all.
  import('./admin.js')
    .then(({ startAdmin }) => startAdmin({ host: settings.ADMIN_HOST, port: settings.ADMIN_PORT, log }))
    .then(() => { if (!stopping) forkAll(); }, (err) => {
      log.error({ event: EVENT.PRIMARY_FAILED, code: err.code }, err.message);
      stopAll(1);
    });
}
