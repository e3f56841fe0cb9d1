// V8 CPU profiles of the workers over a measured window (PROFILE=1 in the bench), started and
// stopped by the primary's admin endpoint (POST /profile/start, POST /profile/stop), which
// asks every worker over cluster IPC. Each worker profiles itself with node:inspector's
// Profiler, the one Chrome DevTools and `node --cpu-prof` use; its .cpuprofile opens in both.
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * Sampling interval of the profiles (µs): V8's default (its --cpu-profiler-sampling-interval,
 * 1000 µs), which `node --cpu-prof` keeps too. Finer intervals cost more of what they measure.
 */
export const PROFILE_INTERVAL_US = 1000;

/** How long (ms) the primary waits for every worker's answer. */
const WORKER_ANSWER_MS = 10000;

const MESSAGE = 'profile';

/**
 * CPU time (user + system) of this process's main thread, the one that runs JavaScript (Linux: its
 * /proc/self/task/<pid>/stat, in clock ticks of 10 ms); null where /proc is not there.
 * @returns {number|null} µs
 */
function mainThreadCpuUs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10000; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

const processCpuUs = () => { const { user, system } = process.cpuUsage(); return user + system; };

/**
 * A worker's side: answers the primary's `{type: 'profile', id, action: 'start'|'stop'}` with
 * `{type: 'profile', id, ok, profile?, cpu?, error?}`; `cpu` is the CPU time over the profile (µs): of the
 * main thread (`main_thread_us`, null without /proc) and of the whole process (`process_us`). Call once, in a worker.
 */
export function startWorkerProfiling() {
  /** @type {Session|null} */
  let session = null;
  let cpuAtStart = { thread: null, process: 0 };
  const act = {
    async start() {
      if (session) throw new Error('a profile is running already');
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: PROFILE_INTERVAL_US });
      await session.post('Profiler.start');
      cpuAtStart = { thread: mainThreadCpuUs(), process: processCpuUs() };
      return {};
    },
    async stop() {
      if (!session) throw new Error('no profile is running');
      const thread = mainThreadCpuUs();
      const cpu = {
        // The profile marks as idle whatever runs with no JavaScript on the stack while the loop polls (socket
        // reads and writes, llhttp, nghttp2): the main thread's CPU time says how much of its "idle" was work.
        main_thread_us: thread === null || cpuAtStart.thread === null ? null : thread - cpuAtStart.thread,
        process_us: processCpuUs() - cpuAtStart.process,
      };
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = null;
      return { profile, cpu };
    },
  };
  process.on('message', (/** @type {{type?: string, id?: number, action?: string}} */ msg) => {
    if (msg?.type !== MESSAGE || !(msg.action in act)) return;
    act[msg.action]().then(
      (result) => process.send({ type: MESSAGE, id: msg.id, ok: true, ...result }),
      (err) => process.send({ type: MESSAGE, id: msg.id, ok: false, error: err.message }),
    );
  });
}

let nextId = 0;

/**
 * The primary's side: asks every live worker to start or stop its profile, and waits for all.
 * @param {'start'|'stop'} action
 * @returns {Promise<Array<{pid: number, profile?: object, cpu?: {main_thread_us: number|null, process_us: number}}>>} one
 *   entry per worker; for `stop`, `profile` (the V8 CPU profile: nodes, startTime, endTime, samples, timeDeltas in µs)
 *   and `cpu` (its CPU time over the profile, µs)
 * @throws {Error} when a worker refuses (e.g. stop without start) or does not answer in 10 s
 */
export async function profileWorkers(action) {
  const workers = Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());
  return Promise.all(workers.map((worker) => new Promise((resolve, reject) => {
    const id = ++nextId;
    const timer = setTimeout(() => { worker.off('message', onMessage); reject(new Error(`worker ${worker.process.pid} did not answer in ${WORKER_ANSWER_MS} ms`)); },
      WORKER_ANSWER_MS);
    function onMessage(msg) {
      if (msg?.type !== MESSAGE || msg.id !== id) return;
      clearTimeout(timer);
      worker.off('message', onMessage);
      if (msg.ok) resolve({ pid: worker.process.pid, profile: msg.profile, cpu: msg.cpu });
      else reject(new Error(`worker ${worker.process.pid}: ${msg.error}`));
    }
    worker.on('message', onMessage);
    worker.send({ type: MESSAGE, id, action });
  })));
}
