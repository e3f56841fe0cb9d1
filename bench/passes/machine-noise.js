// The machine's noise around a measured run (issue 38): /proc read right before and right after the measured k6 run, for
// bench/records/machine-noise.js to tell how much of the server's and k6's pinned cores went to the hypervisor (steal) and
// to other processes. This reads, and says which figures a placement cannot have; the arithmetic is the report's.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { clockTicks } from '../processes.js';

/** Why nothing is measured when the server and k6 are not pinned (bench/settings/cores.js splitCores, one core). */
const ONE_CORE = 'one core: the server and k6 share it, not pinned, so no core is either\'s alone';
/** Why the server's cores are not read with TARGET=remote. */
const REMOTE = 'TARGET=remote: the server runs on another machine, whose cores are not read from here';
/**
 * Why other processes' CPU is not measured over an emulated link (bench/placement/link.js): its own work shares the cores,
 * toxiproxy pinned to the server's, and the kernel's shaping (netem's and the veth's work in softirq), which is charged to
 * whatever task it interrupts, or to none, so that it cannot be told from a stranger's. Steal is the hypervisor's, and is.
 */
const LINK = 'over an emulated link the link\'s own work (toxiproxy, the kernel\'s shaping in interrupts) shares the cores, '
  + 'charged to no process of the run';

/**
 * The two sides of a cell's runs, the server's cores and k6's, with what of their noise cannot be measured and why.
 * @param {{serverCpus?: string, k6Cpus?: string}} cores bench/settings/cores.js splitCores
 * @param {{target: 'local'|'remote', link: object|null}} placement
 * @returns {{server: import('../records/machine-noise.js').CoreSide, k6: import('../records/machine-noise.js').CoreSide}}
 */
export function coreSides(cores, placement) {
  if (!cores.serverCpus || !cores.k6Cpus) {
    const none = { cpus: null, steal_reason: ONE_CORE, other_reason: ONE_CORE };
    return { server: none, k6: none };
  }
  const other = placement.link ? LINK : null;
  const server = placement.target === 'remote' && !placement.link
    ? { cpus: null, steal_reason: REMOTE, other_reason: REMOTE }
    : { cpus: cores.serverCpus, steal_reason: null, other_reason: other };
  return { server, k6: { cpus: cores.k6Cpus, steal_reason: null, other_reason: other } };
}

/** The text of a /proc file, or null when it cannot be read (a process gone, a system without /proc). */
const readOrNull = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/**
 * /proc now: every CPU's counters, the server's processes' CPU times and the job's (whose children's times take in k6's
 * once it has exited). Quick (a few files), so that it brackets the k6 run closely.
 * @param {number[]} serverPids the server's processes the job started (Cell.pids): each primary, its workers, the balancer
 * @returns {import('../records/machine-noise.js').MachineReading}
 */
export function readMachine(serverPids) {
  clockTicks(); // read once, before the window: getconf is a child too, and would count among k6's time in it
  const { user, system } = process.cpuUsage();
  return {
    at_ms: performance.now(),
    stat: readOrNull('/proc/stat'),
    server: serverPids.map((pid) => readOrNull(`/proc/${pid}/stat`)).filter((text) => text !== null),
    job: readOrNull('/proc/self/stat'),
    job_cpu_s: (user + system) / 1e6,
  };
}
