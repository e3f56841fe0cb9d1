// One cluster worker: opens the listeners its MODE asks for, reports to the primary,
// and drains them when told to stop.
import { ListenError, StartError } from './errors.js';
import { createHealth } from './health.js';
import { createLogger } from './log.js';
import { listenersOf, portOf } from './settings.js';
import { LISTENERS } from './listeners.js';
import { EVENT } from './events.js';
import { servedRequests, streamsEnded } from './served.js';
import { tlsServerOptions } from './tls.js';
import { budgetMbOf, memoryState, startMemoryBudget } from './memory-budget.js';

// After a forced close, how long the listeners get to report closed before the worker exits anyway.
const FORCE_CLOSE_GRACE_MS = 1000;
// The longest wait for the primary's answer to 'drained' (a primary that is gone never answers).
const BARRIER_TIMEOUT_MS = 1000;

/**
 * Waits until the primary has sent every connection it handed to this worker before the worker
 * closed its listeners. cluster's primary hands a connection over IPC and forgets it until the worker
 * answers (accepted, or refused: then it goes to another worker); a worker that exits with a handover
 * in flight takes the connection with it, unanswered and unclosed, and its client hangs (seen in
 * reloads under load). IPC is ordered both ways: the primary answers 'drained' after the listeners'
 * close, so every handover reaches this worker, which refuses it, before the answer does.
 * @returns {Promise<void>}
 */
const primaryBarrier = () => new Promise((resolve) => {
  const timer = setTimeout(resolve, BARRIER_TIMEOUT_MS);
  const onMessage = (msg) => {
    if (msg?.type !== 'drained-ack') return;
    clearTimeout(timer);
    process.off('message', onMessage);
    // cluster's refusals of those handovers go out on the same channel: let them leave first.
    setImmediate(resolve);
  };
  process.on('message', onMessage);
  try { process.send({ type: 'drained' }); } catch { resolve(); }
});
// What binding an address can fail with (net.Server's 'error', or the errno server/grpc.js finds in grpc-js's message).
const BIND_ERRORS = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EINVAL', 'ENOTFOUND']);

/**
 * Runs a worker until the primary or a signal stops it. Sends the primary
 * `{type: 'listening'}` once every listener is bound, `{type: 'fatal', message, code}`
 * when one cannot be bound, and `{type: 'crash', message}` before it dies of an
 * uncaught exception (exit code 1). On `{type: 'shutdown'}`, SIGTERM or SIGINT it
 * reports NOT_SERVING, stops accepting, lets in-flight requests finish for up to
 * SHUTDOWN_TIMEOUT_MS, closes what is left and exits 0. A drain that begins while the
 * listeners open lets no further one open and closes the one under way as soon as it opens.
 * Exits 0 at once when the primary is gone.
 * @param {import('./settings.js').ServerSettings} settings
 */
export async function runWorker(settings) {
  const log = createLogger(settings.LOG_LEVEL);
  // After an uncaught exception the worker's state is unknown: log the cause where
  // operators look, tell the primary why, and die so that a fresh worker replaces it.
  process.on('uncaughtException', (err) => {
    log.fatal({ event: EVENT.UNCAUGHT_EXCEPTION, err }, 'uncaught exception; worker exits');
    const exit = () => process.exit(1);
    setTimeout(exit, 500).unref();
    try { process.send({ type: 'crash', message: String(err?.message ?? err) }, exit); } catch { exit(); }
  });
  // A worker whose primary is gone must not linger: Node's cluster exits it on the IPC
  // 'disconnect' already (test/integration/server-lifecycle.test.js checks it after a SIGKILL).

  const health = createHealth();
  const open = [];
  // The closes the drain waits for: those of the listeners open when it began, and of any that opened after.
  const closing = [];
  // Settles once no listener is being opened; the drain waits for it so that none opens after it closed the rest.
  let opening = Promise.resolve();
  let draining = false;
  const drain = async () => {
    if (draining) return;
    draining = true;
    health.set(false);
    log.info({ event: EVENT.DRAINING, timeoutMs: settings.SHUTDOWN_TIMEOUT_MS }, 'draining');
    const deadline = setTimeout(() => {
      log.warn({ event: EVENT.DRAIN_TIMED_OUT, timeoutMs: settings.SHUTDOWN_TIMEOUT_MS }, 'drain timed out; closing the connections left');
      for (const listener of open) listener.forceClose();
      setTimeout(() => process.exit(0), FORCE_CLOSE_GRACE_MS).unref();
    }, settings.SHUTDOWN_TIMEOUT_MS);
    closing.push(...open.map((listener) => listener.close()));
    await opening.catch(() => {}); // a start that fails exits the worker (below)
    const closed = await Promise.allSettled(closing);
    // A listener whose close throws is a defect: say so where operators look, then go on exiting.
    for (const result of closed) if (result.status === 'rejected') log.error({ err: result.reason }, 'a listener failed to close');
    // The requests (HTTP/2: streams) in flight when the drain began or that came during it: answered, or lost (their
    // connection closed first, or reset). The hardened listeners count them; the others resolve with nothing.
    const drained = { answered: 0, lost: 0 };
    for (const result of closed) {
      if (result.status !== 'fulfilled' || !result.value) continue;
      drained.answered += result.value.answered;
      drained.lost += result.value.lost;
    }
    await primaryBarrier();
    clearTimeout(deadline);
    // served: what its handlers answered since it started (server/served.js), so a client's count can be checked
    // against the server's even for workers a reload retired; streamsEnded: its server streams and relays by listener and
    // how they ended (`listener completed|cut`), so a fault's streams are all accounted for.
    log.info({ event: EVENT.WORKER_STOPPED, drained, served: { ...servedRequests }, memory: { refusedAnswers: memoryState.refusedAnswers },
      streamsEnded: Object.fromEntries(streamsEnded) },
      'worker stopped');
    process.exit(0);
  };
  // Listening for a stop from the start: a stop that comes while the listeners open must not be lost.
  process.on('message', (/** @type {{type?: string}} */ msg) => msg?.type === 'shutdown' && drain());
  process.on('SIGTERM', drain);
  process.on('SIGINT', drain);
  // SIGHUP is the primary's (a reload): a hangup sent to the whole process group must not end a worker.
  process.on('SIGHUP', () => {});

  // Accounting for the primary's admin endpoint (issue 6): nothing of it loads while ADMIN_PORT is unset.
  if (settings.ADMIN_PORT) {
    (await import('./accounting.js')).startWorkerAccounting();
    // Answers the admin endpoint's profile requests; the inspector session exists only while one runs.
    (await import('./profiling.js')).startWorkerProfiling();
  }

  const openAll = async () => {
    // The user's own RPC and its answers, decoded once per worker (the primary checked them before forking).
    const own = settings.RPC ? (await import('../proto/own/service.js')).loadOwnService(settings) : null;
    for (const name of listenersOf(settings.MODE)) {
      if (draining) return; // none opens once a drain began
      const { protocol, start, alpn } = LISTENERS[name];
      const port = portOf(settings, name);
      let listener;
      try {
        // TLS_CERT/TLS_KEY with the one ALPN protocol the registry names; settings.js refused TLS for a listener with none.
        const tls = alpn ? tlsServerOptions(settings, alpn) : null;
        listener = await start({ host: settings.HOST, port, log, health, settings, tls, own, listener: name });
      } catch (err) {
        // Only the address's own errors read as "cannot be bound"; anything else is named as what it is.
        if (BIND_ERRORS.has(err.code)) throw new ListenError(protocol, `${settings.HOST}:${port}`, err.code);
        throw new StartError(name, err);
      }
      open.push(listener);
      // Opened after a drain began, which closed the others: closed now, else it would serve until the exit.
      if (draining) closing.push(listener.close());
    }
  };
  opening = openAll();
  try {
    await opening;
  } catch (err) {
    process.send({ type: 'fatal', code: err.code, message: err.message });
    process.exit(1);
  }
  if (draining) return;
  // The memory budget (server/memory-budget.js): back-pressure past its marks, a replacement past the budget.
  startMemoryBudget({ budgetMb: budgetMbOf(settings), log, onOverBudget: () => process.send({ type: 'over-budget' }, () => {}) });
  health.set(true);
  const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, portOf(settings, n)]));
  log.info({ event: EVENT.WORKER_LISTENING, ...ports, host: settings.HOST }, 'worker listening');
  process.send({ type: 'listening' });
}
