// The primary's state and decisions, apart from node:cluster and the process's signals: which worker serves which
// slot, which listen, which a reload or a recycling retires, and when the primary stops. server/primary.js wires the
// cluster's and the process's events to it; test/unit/supervisor.test.js drives it with fake workers.
import { createRestartPolicy, RESTART_DEFAULTS } from './restart-policy.js';
import { listenersOf, portOf } from './settings.js';
import { EVENT } from './events.js';
import { budgetMbOf } from './memory-budget.js';

// Past SHUTDOWN_TIMEOUT_MS, how long the workers get to exit before the primary kills them.
export const KILL_AFTER_DRAIN_MS = 5000;
// How long a reload's replacement worker may take to listen before the reload gives up on it.
export const RELOAD_START_TIMEOUT_MS = 15000;

/**
 * What node:cluster's Worker the supervisor uses.
 * @typedef {object} SupervisedWorker
 * @property {number} id
 * @property {{pid?: number, kill: (signal: NodeJS.Signals) => unknown}} process
 * @property {(message: object, callback: (err: Error|null) => void) => unknown} send
 * @property {() => boolean} isDead
 */

/**
 * What node:cluster's primary side the supervisor uses.
 * @typedef {object} SupervisedCluster
 * @property {() => SupervisedWorker} fork
 * @property {NodeJS.Dict<SupervisedWorker>} [workers] the workers not yet both exited and disconnected
 */

/**
 * One forked worker, as the supervisor sees it; gone once it exited.
 * @typedef {object} Member
 * @property {number} slot the worker's place among WORKERS, kept by its replacements (the restart policy counts per slot)
 * @property {number} forkedAt Date.now() at its fork
 * @property {boolean} listening it reported all its listeners bound
 * @property {string|null} crash the message of the uncaught exception (or fatal error) it reported
 * @property {boolean} retiring a reload or a recycling drains it: its exit is no death
 * @property {number|undefined} retiredBy the pid of its replacement, once retiring
 * @property {boolean} candidate a replacement not yet listening: its death is no death either
 * @property {((outcome: string) => void)|null} waiter a replacement waiting for it to listen ('listening') or to exit
 *   (the reason)
 */

/**
 * The cluster primary's supervisor. Its `on…` methods take the cluster's and the process's events; it forks, sends,
 * kills and exits through the `cluster` and `process` it is given, and logs every decision (server/events.js).
 */
export class Supervisor {
  /** @type {Map<number, Member>} worker.id -> its member */
  #members = new Map();
  /** @type {Set<ReturnType<typeof setTimeout>>} the restart policy's delayed forks */
  #delayedForks = new Set();
  #restarts = createRestartPolicy();
  /** listening reports before ready */
  #listening = 0;
  #ready = false;
  /** Whether a worker's bad own-service input was written on stderr (once). */
  #toldBadInput = false;
  #stopping = false;
  /** the exit code of the stop under way */
  #exitCode = 0;
  /**
   * One replacement at a time, whether for a reload or a worker past its memory budget: which one runs, or null.
   * @type {'a reload'|'a recycling'|null}
   */
  #replacing = null;

  /**
   * @param {object} options
   * @param {import('./settings.js').ServerSettings} options.settings
   * @param {import('pino').Logger} options.log
   * @param {SupervisedCluster} options.cluster node:cluster, or a fake
   * @param {{exit: (code: number) => void, stderr?: {write: (text: string) => unknown}}} options.process node:process, or a fake
   */
  constructor({ settings, log, cluster, process }) {
    this.settings = settings;
    this.log = log;
    this.cluster = cluster;
    this.process = process;
  }

  get ready() { return this.#ready; }

  get stopping() { return this.#stopping; }

  /** Forks the WORKERS workers, unless a stop came first. */
  start() {
    if (this.#stopping) return;
    for (let slot = 0; slot < this.settings.WORKERS; slot++) this.#fork(slot);
  }

  /** @param {number} slot */
  #fork(slot) {
    const worker = this.cluster.fork();
    this.#members.set(worker.id, {
      slot, forkedAt: Date.now(), listening: false, crash: null, retiring: false, retiredBy: undefined, candidate: false,
      waiter: null,
    });
    return worker;
  }

  /**
   * Resolves 'listening' or the reason of its exit, whichever the worker does first.
   * @param {SupervisedWorker} worker
   * @returns {Promise<string>}
   */
  #next(worker) {
    return new Promise((resolve) => {
      const member = this.#members.get(worker.id);
      if (member) member.waiter = resolve;
    });
  }

  /** @param {SupervisedWorker} worker @param {string} outcome */
  #wake(worker, outcome) {
    const member = this.#members.get(worker.id);
    member?.waiter?.(outcome);
    if (member) member.waiter = null;
  }

  /**
   * Replaces one worker: a fresh one in its slot listens first, then the old one drains (server/worker.js: GOAWAY on
   * HTTP/2, Connection: close on HTTP/1.1) and exits.
   * @param {SupervisedWorker} worker
   * @returns {Promise<number|undefined|null>} the replacement's pid, or null when it did not start (the old worker keeps serving)
   *   or the primary is stopping
   */
  async #replace(worker) {
    const replacement = this.#fork(/** @type {Member} */ (this.#members.get(worker.id)).slot);
    /** @type {Member} */ (this.#members.get(replacement.id)).candidate = true;
    const timer = setTimeout(() => replacement.process.kill('SIGKILL'), RELOAD_START_TIMEOUT_MS);
    const outcome = await this.#next(replacement);
    clearTimeout(timer);
    const member = this.#members.get(replacement.id);
    if (member) member.candidate = false;
    if (this.#stopping) return null;
    if (outcome !== 'listening') {
      this.log.error({ event: EVENT.RELOAD_FAILED, worker: worker.process.pid, reason: outcome },
        'a replacement did not start; the old worker keeps serving');
      return null;
    }
    if (worker.isDead()) return replacement.process.pid; // died meanwhile; its slot is served again
    const old = /** @type {Member} */ (this.#members.get(worker.id));
    old.retiring = true;
    old.retiredBy = replacement.process.pid;
    const exited = this.#next(worker);
    worker.send({ type: 'shutdown' }, () => {});
    await exited;
    return replacement.process.pid;
  }

  /** SIGHUP: every listening worker in turn, replaced as #replace does. */
  async #reload() {
    const started = Date.now();
    const old = this.#alive().filter((w) => this.#members.get(w.id)?.listening);
    this.log.info({ event: EVENT.RELOADING, workers: old.map((w) => w.process.pid) }, 'reloading: replacing the workers one at a time');
    const fresh = [];
    for (const worker of old) {
      if (this.#stopping) return;
      if (worker.isDead() || !this.#members.has(worker.id)) continue; // died meanwhile: the restart policy replaced it
      const pid = await this.#replace(worker);
      if (pid === null) return;
      fresh.push(pid);
    }
    this.log.info({ event: EVENT.RELOADED, workers: fresh, ms: Date.now() - started }, 'reloaded');
  }

  /** The workers cluster still lists that have not exited. */
  #alive() {
    return Object.values(this.cluster.workers ?? {}).filter((w) => w !== undefined && !w.isDead());
  }

  /**
   * Drains every worker, and exits with exitCode once none is left (1 if some had to be killed past
   * SHUTDOWN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS). A second call does nothing.
   * @param {number} exitCode
   */
  stop(exitCode) {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#exitCode = exitCode;
    for (const timer of this.#delayedForks) clearTimeout(timer);
    for (const worker of Object.values(this.cluster.workers ?? {})) {
      if (worker === undefined) continue;
      // A callback keeps a send to a worker that is just exiting from throwing.
      worker.send({ type: 'shutdown' }, () => {});
      // A worker still starting (a replacement, or any before ready) may not listen for messages yet, and IPC
      // drops a message nobody listens for: SIGTERM reaches it either way. It drains if its handler is in place
      // (worker.js sets it before opening any listener), else it dies at once, having served nothing.
      if (!this.#members.get(worker.id)?.listening) worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      const left = /** @type {SupervisedWorker[]} */ (Object.values(this.cluster.workers ?? {}));
      this.log.error({ event: EVENT.WORKERS_KILLED, workers: left.map((w) => w.process.pid) }, 'workers did not stop in time; killing them');
      for (const worker of left) worker.process.kill('SIGKILL');
      this.process.exit(1);
    }, this.settings.SHUTDOWN_TIMEOUT_MS + KILL_AFTER_DRAIN_MS);
    this.#exitWhenNoneLeft();
  }

  // cluster keeps a worker listed until both its 'exit' and its IPC 'disconnect' came, in either
  // order: a worker that exited is gone whatever the list says, and both events check again.
  #exitWhenNoneLeft() {
    if (this.#alive().length > 0) return;
    this.log.info({ event: EVENT.STOPPED, exitCode: this.#exitCode }, 'stopped');
    this.process.exit(this.#exitCode);
  }

  /**
   * SIGTERM or SIGINT: drain and exit 0.
   * @param {string} signal
   */
  onStopSignal(signal) {
    this.log.info({ event: EVENT.SHUTTING_DOWN, signal }, 'shutting down');
    this.stop(0);
  }

  /** SIGHUP: a reload, unless the primary is stopping, not ready yet, or replacing a worker already. */
  onHangup() {
    // A reload before ready, or during one, would count workers twice: one at a time, once serving.
    if (this.#stopping || !this.#ready || this.#replacing) {
      const reason = this.#stopping ? 'stopping' : this.#replacing ? `${this.#replacing} is running` : 'not ready yet';
      this.log.warn({ event: EVENT.RELOAD_FAILED, reason }, 'SIGHUP ignored');
      return;
    }
    this.#replacing = 'a reload';
    this.#reload().finally(() => { this.#replacing = null; });
  }

  /**
   * A message from a worker (server/worker.js): listening, over-budget, drained, crash or fatal.
   * @param {SupervisedWorker} worker
   * @param {any} msg
   */
  onMessage(worker, msg) {
    if (msg?.type === 'listening') this.#onListening(worker);
    else if (msg?.type === 'over-budget') this.#onOverBudget(worker);
    else if (msg?.type === 'drained') {
      // The worker's listeners are closed and, IPC being ordered, so is cluster's record of them:
      // no connection goes to it after this answer (see server/worker.js primaryBarrier).
      worker.send({ type: 'drained-ack' }, () => {});
    } else if (msg?.type === 'crash') {
      this.#noteCrash(worker, msg.message);
    } else if (msg?.type === 'fatal') {
      this.log.error({ event: EVENT.START_FAILED, code: msg.code, worker: worker.process.pid }, msg.message);
      // Before ready nothing is served yet: fail fast. Later the restart policy decides.
      if (!this.#ready) {
        // A bad sample of the user's service, found by the workers (the primary reads none): the one line on stderr that
        // a bad schema gets from server/index.js, once, however many workers found it.
        if (msg.code === 'ERR_OWN_SERVICE' && !this.#toldBadInput) this.process.stderr?.write(`server: ${msg.message}\n`);
        this.#toldBadInput ||= msg.code === 'ERR_OWN_SERVICE';
        this.stop(1);
      } else this.#noteCrash(worker, msg.message);
    }
  }

  /** @param {SupervisedWorker} worker @param {string} message */
  #noteCrash(worker, message) {
    const member = this.#members.get(worker.id);
    if (member) member.crash = message;
  }

  /** @param {SupervisedWorker} worker */
  #onListening(worker) {
    const member = this.#members.get(worker.id);
    if (member) member.listening = true;
    this.#wake(worker, 'listening');
    if (this.#ready || ++this.#listening !== this.settings.WORKERS) return;
    this.#ready = true;
    const { settings } = this;
    const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, portOf(settings, n)]));
    const admin = settings.ADMIN_PORT ? { admin: `${settings.ADMIN_HOST}:${settings.ADMIN_PORT}` } : {};
    this.log.info({ event: EVENT.READY, mode: settings.MODE, workers: settings.WORKERS, host: settings.HOST, ...ports, ...admin,
      workerMemoryMb: budgetMbOf(settings) }, 'ready');
  }

  /**
   * A worker past WORKER_MEMORY_MB (server/memory-budget.js) is replaced as a reload replaces it. During a reload or
   * another recycling it asks again at its next sample past the budget, if it still is.
   * @param {SupervisedWorker} worker
   */
  #onOverBudget(worker) {
    const member = this.#members.get(worker.id);
    if (this.#stopping || this.#replacing || !member || member.retiring) return;
    this.#replacing = 'a recycling';
    this.log.warn({ event: EVENT.WORKER_RECYCLING, worker: worker.process.pid }, 'a worker past its memory budget is replaced');
    this.#replace(worker).finally(() => { this.#replacing = null; });
  }

  /**
   * A worker exited: retired, a replacement that never listened, a death before ready (the primary stops), or a death
   * the restart policy answers with a replacement (at once or delayed) or by giving up.
   * @param {SupervisedWorker} worker
   * @param {number|null} code
   * @param {string|null} signal
   */
  onExit(worker, code, signal) {
    const member = /** @type {Member} */ (this.#members.get(worker.id));
    this.#members.delete(worker.id);
    const reason = member.crash ?? (signal ? `killed by ${signal}` : `exited with code ${code}`);
    member.waiter?.(reason);
    if (this.#stopping) {
      this.#exitWhenNoneLeft();
      return;
    }
    const about = { worker: worker.process.pid, code, signal, reason };
    if (member.retiring) {
      this.log.info({ event: EVENT.WORKER_RETIRED, ...about, by: member.retiredBy }, 'worker drained and exited; its replacement serves');
      return;
    }
    // A reload's replacement that dies before it listens is not replaced: the worker it was to replace still serves.
    if (member.candidate) return;
    if (!this.#ready) {
      this.log.error({ event: EVENT.WORKER_DIED_EARLY, ...about }, 'worker died before it listened');
      this.stop(1);
      return;
    }
    const decision = this.#restarts.onDeath(member.slot, Date.now() - member.forkedAt);
    if (decision.giveUp === true) {
      this.log.fatal({ event: EVENT.GAVE_UP, ...about, quickDeaths: decision.quickDeaths },
        `worker died ${decision.quickDeaths} times in a row within ${RESTART_DEFAULTS.stableAfterMs} ms of its start; giving up`);
      this.stop(1);
      return;
    }
    this.log.warn({ event: EVENT.WORKER_REPLACED, ...about, delayMs: decision.delayMs, quickDeaths: decision.quickDeaths }, 'worker died; forking a replacement');
    if (decision.delayMs === 0) {
      this.#fork(member.slot);
      return;
    }
    const timer = setTimeout(() => { this.#delayedForks.delete(timer); this.#fork(member.slot); }, decision.delayMs);
    this.#delayedForks.add(timer);
  }

  /** A worker's IPC channel closed: while stopping, the primary may exit now. */
  onDisconnect() {
    if (this.#stopping) this.#exitWhenNoneLeft();
  }
}
