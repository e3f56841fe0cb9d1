// The worker's memory budget (WORKER_MEMORY_MB), held by back-pressure before the kernel's OOM killer has to:
// - a large answer (LARGE_ANSWER_BYTES or more) is refused, not built, when the worker's RSS and that answer would pass
//   the refusal mark (REFUSE_AT of the budget): gRPC RESOURCE_EXHAUSTED, HTTP 503 with Retry-After. Small answers are
//   always built: they are what an honest client asks for, and they hold little;
// - a stream whose largest message is large is refused at its start the same way (admitStream), the same statuses, and
//   a WebSocket relay closed with 1013 (try again later); a stream already open keeps its back-pressure and is never cut
//   by the budget;
// - new connections are not refused: under cluster's round robin a worker cannot leave a connection in the accept
//   queue, and closing it made an honest gRPC client fail at once and retry in a loop (61,932 failed k6 calls in the
//   fault matrix's slow-readers-max cell with a worker past 95%), while handing it back to the primary spins
//   (nodejs/node#54882); MAX_CONNECTIONS bounds connections;
// - a worker whose RSS stays past the budget for RECYCLE_AFTER_SAMPLES samples asks the primary to replace it, as a
//   SIGHUP reload replaces every worker: a fresh worker listens first, then this one drains and exits. V8 and glibc
//   keep what a burst made them take, so without this a worker stays at its high-water RSS for good.
// Why RSS: it is what the OOM killer counts; node:http2's maxSessionMemory does not bound it (streams that arrive in
// one read are all accepted before any answer is queued, and grpc-js turns that cap off).
// One budget per process: the state below is the worker's, read by the guards (server/h1-guard.js, h2-guard.js) and
// the listeners' handlers.
import os from 'node:os';
import { EVENT } from './events.js';

/** The part of the memory the machine (or container) gives that the workers share; the rest is the primary's and the kernel's. */
export const WORKERS_SHARE = 0.8;
/** Answers at least this large are admitted by the budget; reading RSS (about 8 µs here) is then small beside building them. */
export const LARGE_ANSWER_BYTES = 64 * 1024;
/** Large answers are refused past this fraction of the budget. */
export const REFUSE_AT = 0.85;
/** How often the worker's RSS is sampled, for the log and the recycling (ms). */
export const SAMPLE_MS = 250;
/** Consecutive samples past the budget after which the worker asks to be replaced (2 s at SAMPLE_MS). */
export const RECYCLE_AFTER_SAMPLES = 8;

const MiB = 1024 * 1024;

/**
 * The memory this process may use in all: the container's limit (cgroup, Node's process.constrainedMemory) where it is
 * below the machine's, else the machine's (os.totalmem).
 * @returns {number} bytes
 */
export function memoryGiven() {
  const total = os.totalmem();
  const constrained = process.constrainedMemory();
  return constrained > 0 && constrained < total ? constrained : total;
}

/**
 * Each worker's budget when WORKER_MEMORY_MB is not set: WORKERS_SHARE of the memory given, divided among the workers.
 * @param {number} workers WORKERS
 * @param {number} [given] bytes (default memoryGiven())
 * @returns {number} MiB, at least 1
 */
export const defaultBudgetMb = (workers, given = memoryGiven()) => Math.max(1, Math.floor((given * WORKERS_SHARE) / workers / MiB));

/**
 * The worker's budget state: `level` 0 below the refusal mark, 1 past it, as of the last sample (for the log); and what
 * was refused.
 */
export const memoryState = {
  /** @type {0|1} */
  level: 0,
  /** bytes; 0 = no budget applied (the process is no worker, or the budget is not started) */
  budgetBytes: 0,
  refusedAnswers: 0,
};

/**
 * What an unread answer holds per byte of its encoding: 1 MiB answers held about 3.2 MiB each on Node 24.21 (the fault
 * matrix's slow-readers, docs/faults.md: +407 to +425 MiB for 128 unread streams): the encoding, grpc-js's framed copy
 * and what HTTP/2 queues.
 */
export const HELD_PER_BYTE = 3;
// Bytes admitted in this turn of the event loop, not yet in RSS (see admitAnswer).
let reserved = 0;
let clearing = false;
const clearReserved = () => {
  reserved = 0;
  clearing = false;
};

/**
 * Whether a worker may build an answer of this size now. Small answers always may; a large one may while the worker's
 * RSS, the answers admitted earlier in this turn of the event loop (not yet built, so not yet in RSS) and this one
 * (HELD_PER_BYTE times its size) stay below the refusal mark. A refusal is counted.
 * @param {number} answerBytes the answer's encoded size (bytes)
 * @returns {boolean}
 */
export function admitAnswer(answerBytes) {
  if (answerBytes < LARGE_ANSWER_BYTES || memoryState.budgetBytes === 0) return true;
  const cost = answerBytes * HELD_PER_BYTE;
  if (process.memoryUsage.rss() + reserved + cost > memoryState.budgetBytes * REFUSE_AT) {
    memoryState.refusedAnswers++;
    return false;
  }
  // grpc-js builds the answer after the handler returns: until the turn ends, RSS does not show it.
  reserved += cost;
  if (!clearing) {
    clearing = true;
    setImmediate(clearReserved);
  }
  return true;
}

// Each stream's largest message (bytes), found once: the listeners' streams are the same arrays call after call.
const largestOf = new WeakMap();

/**
 * Whether a worker may begin a stream now, weighed as one answer of its largest message (admitAnswer): refused, and
 * counted, where that answer would be. Why one message: a reader that stops reading holds about one message's worth
 * per stream (grpc-js's writer queues the message objects the samples share and serializes one at a time; an HTTP
 * response's write returns false at the first large message; a relay stops answering past its mark): 64 unread
 * streams of 256 KiB messages held about 240 KiB each over gRPC and 800 KiB each as SSE (test/manual/slow-stream-readers.js,
 * docs/streaming.md). What earlier streams hold is in RSS when the next one starts, so the mark applies to it. The
 * RSS is read once at the stream's start, as for a large answer, never per message; a stream of small messages is
 * always begun, as a small answer is built.
 * @template M
 * @param {M[]} stream the stream's messages, as the listener answers them (the same array each time it is picked)
 * @param {(message: M) => number} [bytesOf] a message's encoded size (bytes); default its `bytes`
 * @returns {boolean}
 */
export function admitStream(stream, bytesOf = (/** @type {any} */ m) => m.bytes) {
  let largest = largestOf.get(stream);
  if (largest === undefined) {
    largest = stream.reduce((max, m) => Math.max(max, bytesOf(m)), 0);
    largestOf.set(stream, largest);
  }
  return admitAnswer(largest);
}

/**
 * Starts the worker's budget: samples its RSS every SAMPLE_MS, sets memoryState.level, and asks for a replacement
 * (`onOverBudget`, again every RECYCLE_AFTER_SAMPLES while it stays so) when the RSS stays past the budget for RECYCLE_AFTER_SAMPLES samples.
 * @param {{budgetMb: number, log: import('pino').Logger, onOverBudget: () => void}} options budgetMb: WORKER_MEMORY_MB
 * @returns {() => void} stops the sampling
 */
export function startMemoryBudget({ budgetMb, log, onOverBudget }) {
  const budgetBytes = budgetMb * MiB;
  memoryState.budgetBytes = budgetBytes;
  const atStart = process.memoryUsage.rss();
  // Such a worker is replaced every few seconds for good: say why where operators look.
  if (atStart > budgetBytes) {
    log.error({ event: EVENT.OVER_BUDGET, rssMb: Math.round(atStart / MiB), budgetMb },
      'WORKER_MEMORY_MB is below what this worker takes at start: it will be replaced again and again; raise it');
  }
  let over = 0;
  const timer = setInterval(() => {
    const rss = process.memoryUsage.rss();
    const level = rss > budgetBytes * REFUSE_AT ? 1 : 0;
    if (level !== memoryState.level) {
      log.info({ event: EVENT.MEMORY_PRESSURE, level, rssMb: Math.round(rss / MiB), budgetMb, refusedAnswers: memoryState.refusedAnswers },
        level === 0 ? 'memory below the refusal mark' : 'memory past the refusal mark: large answers refused');
    }
    memoryState.level = /** @type {0|1} */ (level);
    over = rss > budgetBytes ? over + 1 : 0;
    // Asked again every RECYCLE_AFTER_SAMPLES while past it: the primary may be busy with a reload when first asked.
    if (over > 0 && over % RECYCLE_AFTER_SAMPLES === 0) {
      log.warn({ event: EVENT.OVER_BUDGET, rssMb: Math.round(rss / MiB), budgetMb }, 'past the memory budget; asking to be replaced');
      onOverBudget();
    }
  }, SAMPLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The budget each worker holds: WORKER_MEMORY_MB, or when 0 the default (defaultBudgetMb).
 * @param {{WORKER_MEMORY_MB: number, WORKERS: number}} settings
 * @returns {number} MiB
 */
export const budgetMbOf = (settings) => settings.WORKER_MEMORY_MB || defaultBudgetMb(settings.WORKERS);
