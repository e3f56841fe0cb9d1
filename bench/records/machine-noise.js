// The machine's noise over a measured run (issue 38): how much of the cores the server and k6 were pinned to went to the
// hypervisor (steal) and to processes other than the server and k6, from /proc read right before and right after the
// measured k6 run (bench/passes/machine-noise.js reads it). A busy shared machine lowers the RPS without a sign in k6's
// figures; these say so per run. Everything here is arithmetic on the texts read; the summary keeps its result in
// `bench.run.machine`, and the report names the runs at DISTURBED or more (bench/report/machine-noise.js).
//
// Sources: proc(5), /proc/stat (`cpuN` lines: user nice system idle iowait irq softirq steal guest guest_nice, in USER_HZ
// ticks, `getconf CLK_TCK`, normally 100; guest and guest_nice are already counted in user and nice) and /proc/<pid>/stat
// (fields 14–17: utime, stime, cutime, cstime, the same ticks; cutime and cstime count the children the process has waited for).
import { cpuList } from '../settings/cores.js';
import { round } from '../format.js';

// The columns of a `cpuN` line of /proc/stat, in order (proc(5); older kernels write fewer: the missing ones read 0).
const FIELDS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice'];
// Busy time is the window's time less these: idle and iowait, which a tickless kernel (NO_HZ) measures to the microsecond
// when a core sleeps and wakes (kernel/time/tick-sched.c get_cpu_idle_time_us), and steal, which it reads from the
// hypervisor's steal clock (paravirt). The busy columns are not used for it: they are tick samples (a tick that finds the core
// busy adds one), and with the tick stopped while a core idles, busy spells shorter than a tick between idle ones go unseen:
// 7–23% of a core under k6's load on a 250 Hz kernel, measured beside the processes' own times (sum_exec_runtime, exact).
const IDLE = ['idle', 'iowait'];
// The sampled busy columns, kept in the record to show what the ticks saw; guest and guest_nice are inside user and nice.
const TICKED = ['user', 'nice', 'system', 'irq', 'softirq'];

/**
 * @typedef {Record<string, number>} CpuTicks one core's counters since boot, by column name (FIELDS; ticks)
 */

/**
 * The per-CPU lines of /proc/stat.
 * @param {string} text the text of /proc/stat
 * @returns {Map<number, CpuTicks>} by CPU id; the `cpu` line of all CPUs together is left out
 */
export function parseProcStat(text) {
  const cpus = new Map();
  for (const line of text.split('\n')) {
    const match = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const values = match[2].trim().split(/\s+/).map(Number);
    cpus.set(Number(match[1]), Object.fromEntries(FIELDS.map((name, i) => [name, values[i] ?? 0])));
  }
  return cpus;
}

/**
 * A process's CPU time from the text of its /proc/<pid>/stat.
 * @param {string} text
 * @returns {{own: number, children: number}} ticks: own, utime + stime (all its threads); children, cutime + cstime (the
 *   children it has waited for)
 */
export function parseProcessStat(text) {
  // The fields after the command name, which is in parentheses and may hold spaces: the 3rd field is the first here.
  const fields = text.slice(text.lastIndexOf(')') + 2).trim().split(/\s+/).map(Number);
  return { own: fields[11] + fields[12], children: fields[13] + fields[14] };
}

/**
 * @typedef {object} MachineReading what bench/passes/machine-noise.js read at one instant
 * @property {number} at_ms when (performance.now(), ms)
 * @property {string|null} stat the text of /proc/stat; null where there is none (not Linux)
 * @property {string[]} server the texts of /proc/<pid>/stat of the server's processes alive then: each primary, its workers
 *   (replicas: every replica's), the balancer; empty for a server the job did not start
 * @property {string|null} job the text of /proc/self/stat of the job, whose children's time holds k6's once k6 has exited
 * @property {number} job_cpu_s the job's own CPU time so far (process.cpuUsage(), s)
 */

/**
 * @typedef {object} CoreSide one side of the run: the cores it was pinned to and what of their noise can be measured
 * @property {string|null} cpus the taskset CPU list (`0`, `0,1`); null when not pinned
 * @property {string|null} steal_reason why steal is not measured on them; null: it is
 * @property {string|null} other_reason why other processes' CPU is not measured on them; null: it is
 */

/**
 * @typedef {object} CoreNoise one side's cores over the measured run (`bench.run.machine.server`, `.k6`)
 * @property {string|null} cpus the CPU list, as pinned
 * @property {number|null} time_s the cores' time in the window: its wall time × the cores (s)
 * @property {number|null} idle_s time they were idle: /proc/stat idle + iowait (s)
 * @property {number|null} steal_s time the hypervisor ran something else on them (/proc/stat steal, s)
 * @property {number|null} busy_s time they ran anything, interrupts included: time_s − idle_s − steal_s (s)
 * @property {number|null} ticked_s what the ticks saw of it: user + nice + system + irq + softirq (s); less than busy_s under
 *   a bursty load on a tickless kernel (see IDLE), so not used
 * @property {number|null} processes_s CPU time the side's own processes used in the window (s): the server's, or k6's
 * @property {number|null} other_s busy_s − processes_s (s): processes other than the server and k6, the kernel's threads and
 *   the job's own process included, and interrupts charged to no process; may be a tick or two below 0 (the counters are in
 *   ticks); null when not measured
 * @property {number|null} steal_pct steal_s ÷ time_s × 100 (%); null when not measured
 * @property {number|null} other_pct other_s ÷ time_s × 100 (%); null when not measured
 * @property {string|null} steal_reason why steal_pct is null
 * @property {string|null} other_reason why other_pct is null
 */

/**
 * @typedef {object} MachineNoise what the main job records in `bench.run.machine`
 * @property {string} source how it was read
 * @property {number} clock_ticks ticks per second of /proc's counters (`getconf CLK_TCK`)
 * @property {number} window_s wall time between the two readings (s)
 * @property {number} job_cpu_s the job's own CPU in the window (s): pinned nowhere, it counts among the other processes of
 *   whichever cores ran it, so at most this much of other_s is the job's
 * @property {CoreNoise} server the server's cores
 * @property {CoreNoise} k6 k6's cores
 */

const SOURCE = 'per-CPU /proc/stat and /proc/<pid>/stat (proc(5)), read right before and right after the measured k6 run';

/** One side's figures, every one null, with why. */
const unmeasured = (cpus, steal, other) => ({
  cpus, time_s: null, idle_s: null, steal_s: null, busy_s: null, ticked_s: null, processes_s: null, other_s: null,
  steal_pct: null, other_pct: null, steal_reason: steal, other_reason: other,
});


/**
 * The machine's noise on each side's cores between two readings.
 * @param {MachineReading} before read right before the measured k6 run
 * @param {MachineReading} after read right after k6 exited (and was waited for)
 * @param {{server: CoreSide, k6: CoreSide}} sides
 * @param {number} clockTicks ticks per second (`getconf CLK_TCK`)
 * @returns {MachineNoise}
 */
export function machineWindow(before, after, sides, clockTicks) {
  const s = (ticks) => round(ticks / clockTicks, 4);
  const start = before.stat === null ? null : parseProcStat(before.stat);
  const end = after.stat === null ? null : parseProcStat(after.stat);
  const sum = (texts) => texts.map(parseProcessStat).reduce((a, p) => a + p.own + p.children, 0);
  // The server's processes: each one's own time and its waited-for children's, so that a worker that exits in the window
  // (its whole time moves into its primary's cutime) counts for its time in the window alone.
  const processes = {
    server: sum(after.server) - sum(before.server),
    // k6 is the job's child, started and waited for in the window: all its time is in the job's cutime + cstime.
    k6: before.job && after.job ? parseProcessStat(after.job).children - parseProcessStat(before.job).children : null,
  };
  const side = (name) => {
    const { cpus, steal_reason: stealReason, other_reason: otherReason } = sides[name];
    if (!cpus) return unmeasured(null, stealReason ?? 'not pinned', otherReason ?? 'not pinned');
    if (!start || !end) return unmeasured(cpus, 'no /proc/stat (not Linux)', 'no /proc/stat (not Linux)');
    const ids = cpuList(cpus);
    const missing = ids.filter((id) => !start.has(id) || !end.has(id));
    if (missing.length) {
      const why = `cpu ${missing.join(',')} not in /proc/stat (offline)`;
      return unmeasured(cpus, why, why);
    }
    const delta = (columns) => ids.reduce((a, id) => a + columns.reduce((b, c) => b + end.get(id)[c] - start.get(id)[c], 0), 0);
    const time = ((after.at_ms - before.at_ms) / 1000) * clockTicks * ids.length;
    const steal = delta(['steal']);
    const busy = time - delta(IDLE) - steal;
    const own = processes[name];
    const stealPct = time > 0 && !stealReason ? (steal / time) * 100 : null;
    const otherPct = time > 0 && !otherReason && own !== null ? ((busy - own) / time) * 100 : null;
    return {
      cpus, time_s: s(time), idle_s: s(delta(IDLE)), steal_s: s(steal), busy_s: s(busy), ticked_s: s(delta(TICKED)),
      processes_s: own === null ? null : s(own), other_s: otherPct === null ? null : s(busy - own),
      steal_pct: stealPct === null ? null : round(stealPct, 4), other_pct: otherPct === null ? null : round(otherPct, 4),
      steal_reason: stealPct === null ? stealReason ?? 'the window was too short to count a tick' : null,
      other_reason: otherPct === null ? otherReason ?? (own === null ? 'the job\'s own /proc/self/stat could not be read' : 'the window was too short to count a tick') : null,
    };
  };
  return {
    source: SOURCE, clock_ticks: clockTicks, window_s: round((after.at_ms - before.at_ms) / 1000, 4),
    job_cpu_s: round(after.job_cpu_s - before.job_cpu_s, 4), server: side('server'), k6: side('k6'),
  };
}

/**
 * The figures of the report's machine rows (rows.js), from a run's `bench.run.machine`: null where it was not measured or
 * not recorded (a summary from a k6 run by hand, or from a job before it read them).
 * @param {MachineNoise|undefined} machine
 * @returns {{machine_steal_server_pct: number|null, machine_other_server_pct: number|null, machine_steal_k6_pct: number|null,
 *   machine_other_k6_pct: number|null}} %
 */
export function machineFigures(machine) {
  const pct = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    machine_steal_server_pct: pct(machine?.server?.steal_pct),
    machine_other_server_pct: pct(machine?.server?.other_pct),
    machine_steal_k6_pct: pct(machine?.k6?.steal_pct),
    machine_other_k6_pct: pct(machine?.k6?.other_pct),
  };
}
