// The log lines that programs read carry an `event` field with one of these values: the
// jobs and the tests match on it, never on the message, which stays free to change.

/** Events of the server's life, as logged by the primary and the workers. */
export const EVENT = Object.freeze({
  /** primary: every worker is listening; carries mode, workers, host, the ports and admin */
  READY: 'ready',
  /** primary: it is exiting; carries exitCode */
  STOPPED: 'stopped',
  /** primary: a signal came; carries signal */
  SHUTTING_DOWN: 'shutting-down',
  /** primary: workers that outlived the shutdown timeout are killed */
  WORKERS_KILLED: 'workers-killed',
  /** primary: a worker could not start (a busy port, a listener's defect); carries code, worker */
  START_FAILED: 'start-failed',
  /** primary: a worker died before it listened */
  WORKER_DIED_EARLY: 'worker-died-early',
  /** primary: a worker died and is replaced; carries reason, delayMs, quickDeaths */
  WORKER_REPLACED: 'worker-replaced',
  /** primary: workers died too often at start; it gives up and exits 1 */
  GAVE_UP: 'gave-up',
  /** primary: SIGHUP; the workers are replaced one at a time; carries workers (the pids to replace) */
  RELOADING: 'reloading',
  /** primary: a worker the reload replaced has drained and exited; carries worker, by (its replacement's pid) */
  WORKER_RETIRED: 'worker-retired',
  /** primary: every worker of the reload is replaced; carries workers (the new pids), ms */
  RELOADED: 'reloaded',
  /** primary: a replacement did not start, so the reload stopped there; the old worker keeps serving; carries reason */
  RELOAD_FAILED: 'reload-failed',
  /** primary: its own start failed (a port, a setting); carries code */
  PRIMARY_FAILED: 'primary-failed',
  /** worker: all its listeners are open; carries host and the ports */
  WORKER_LISTENING: 'worker-listening',
  /** worker: SIGTERM or a stop from the primary; in-flight requests may finish */
  DRAINING: 'draining',
  /** worker: the drain outlived SHUTDOWN_TIMEOUT_MS; the connections left are closed */
  DRAIN_TIMED_OUT: 'drain-timed-out',
  /** worker: its listeners are closed; it exits 0 */
  WORKER_STOPPED: 'worker-stopped',
  /** worker: an uncaught exception; it exits and the primary replaces it; carries err */
  UNCAUGHT_EXCEPTION: 'uncaught-exception',
  /** primary: a worker past its memory budget is replaced (a fresh one listens first, then it drains); carries worker, rssMb */
  WORKER_RECYCLING: 'worker-recycling',
  /** worker: its RSS passed a mark of its budget or fell below (server/memory-budget.js); carries level, rssMb, budgetMb, refusedAnswers */
  MEMORY_PRESSURE: 'memory-pressure',
  /** worker: its RSS stayed past WORKER_MEMORY_MB; it asks the primary to replace it; carries rssMb, budgetMb */
  OVER_BUDGET: 'over-budget',
  /** worker: the HTTP/2 guard closed a connection (rapid reset, no PING ACK); carries listener, peer, reason */
  H2_CONNECTION_CLOSED: 'h2-connection-closed',
});
