// The cluster primary: forks the workers, reports when all listen, replaces the
// ones that die, and drains them all on a signal.
import cluster from 'node:cluster';
import { createLogger } from './log.js';
import { createRestartPolicy, RESTART_DEFAULTS } from './restart-policy.js';
import { listenersOf, portOf } from './settings.js';
import { EVENT } from './events.js';

// Past SHUTDOWN_TIMEOUT_MS, how long the workers get to exit before the primary kills them.
const KILL_AFTER_DRAIN_MS = 5000;

/**
 * Forks `settings.WORKERS` workers and supervises them. Logs `ready` once every
 * worker listens and, with ADMIN_PORT set, the admin endpoint (server/admin.js) too;
 * exits 1 when a worker or the admin endpoint cannot start before that. A worker that
 * dies later is replaced as `createRestartPolicy` decides, and the primary exits 1
 * when the policy gives up. On SIGTERM or SIGINT every worker drains and the
 * primary exits 0 once all have exited (1 if it had to kill some, past
 * SHUTDOWN_TIMEOUT_MS + 5 s).
 * @param {import('./settings.js').ServerSettings} settings
 */
export function runPrimary(settings) {
  const log = createLogger(settings.LOG_LEVEL);
  const restarts = createRestartPolicy();
  const slots = new Map(); // worker.id -> {slot, forkedAt}
  const crashes = new Map(); // worker.id -> message of the uncaught exception it reported
  const listeningIds = new Set(); // workers that reported all their listeners bound
  const delayedForks = new Set();
  let listening = 0;
  let ready = false;
  let stopping = false;

  const fork = (slot) => {
    const worker = cluster.fork();
    slots.set(worker.id, { slot, forkedAt: Date.now() });
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
      if (!ready && ++listening === settings.WORKERS) {
        ready = true;
        const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, portOf(settings, n)]));
        const admin = settings.ADMIN_PORT ? { admin: `${settings.ADMIN_HOST}:${settings.ADMIN_PORT}` } : {};
        log.info({ event: EVENT.READY, mode: settings.MODE, workers: settings.WORKERS, host: settings.HOST, ...ports, ...admin }, 'ready');
      }
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
    if (stopping) return;
    const about = { worker: worker.process.pid, code, signal, reason };
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
