// The cluster primary: forks the workers, reports when all listen, stops them on a signal.
import cluster from 'node:cluster';
import { createLogger } from './log.js';
import { listenersOf } from './worker.js';

/**
 * Forks `settings.WORKERS` workers and supervises them. Logs `ready` once every
 * worker listens; exits 1 when a worker cannot start, 0 after SIGTERM or SIGINT.
 * A worker that dies after start is replaced.
 * @param {import('./settings.js').ServerSettings} settings
 */
export function runPrimary(settings) {
  const log = createLogger(settings.LOG_LEVEL);
  let listening = 0;
  let stopping = false;

  const stopAll = (exitCode) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers);
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker.send({ type: 'shutdown' });
    cluster.on('exit', () => Object.keys(cluster.workers).length === 0 && process.exit(exitCode));
  };

  cluster.on('message', (worker, msg) => {
    if (msg?.type === 'listening') worker.listening = true;
    if (msg?.type === 'listening' && ++listening === settings.WORKERS) {
      const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, settings[`${n.toUpperCase()}_PORT`]]));
      log.info({ mode: settings.MODE, workers: settings.WORKERS, host: settings.HOST, ...ports }, 'ready');
    } else if (msg?.type === 'fatal') {
      log.error({ code: msg.code, worker: worker.process.pid }, msg.message);
      stopAll(1);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!worker.listening) {
      log.error({ worker: worker.process.pid, code, signal }, 'worker died before it listened');
      stopAll(1);
      return;
    }
    log.warn({ worker: worker.process.pid, code, signal }, 'worker died; forking a replacement');
    listening--;
    cluster.fork();
  });

  process.on('SIGTERM', () => stopAll(0));
  process.on('SIGINT', () => stopAll(0));
  for (let i = 0; i < settings.WORKERS; i++) cluster.fork();
}
