// What a k6 run says of itself, read once for every job: why it failed, the iterations it interrupted, and its CPU use
// as a percentage (runK6 measures it, bench/k6/runner.js). Pure: the report reads k6's figures from here too.

/**
 * k6's CPU use over a run as a percentage of its cores, from runK6's `cpu` (bench/k6/runner.js); null when it was not
 * sampled (a run too short, or one started by hand).
 * @param {{utilization: number}|null|undefined} cpu
 * @returns {number|null} % of the cores k6 was given
 */
export const k6CpuPct = (cpu) => (cpu && Number.isFinite(cpu.utilization) ? cpu.utilization * 100 : null);

/**
 * The line that opens one instance's output in the output of a run split over k6 instances (bench/k6/split.js), which
 * k6Interrupted splits it by.
 * @param {number} i the instance, from 0
 * @param {number} n instances
 * @param {string} segment its execution segment, e.g. '0:1/2'
 * @returns {string} e.g. '--- k6 instance 1 of 2 (0:1/2)'
 */
export const instanceHeader = (i, n, segment) => `--- k6 instance ${i + 1} of ${n} (${segment})`;

/**
 * Iterations k6 had to interrupt at the end of a run (still waiting after its gracefulStop, 30 s): requests that got
 * neither an answer nor an error by then. From k6's last progress line ("N complete and M interrupted iterations"),
 * summed over the instances of a split run (their output separated by instanceHeader's lines).
 * @param {string} output k6's output
 * @returns {number|null} null when k6 printed no progress line
 */
export function k6Interrupted(output) {
  const counts = output.split(/^--- k6 instance .*$/m).map((part) => [...part.matchAll(/(\d+) complete and (\d+) interrupted iterations/g)].at(-1))
    .filter(Boolean).map((found) => Number(found[2]));
  return counts.length ? counts.reduce((a, b) => a + b, 0) : null;
}

/**
 * The last lines k6 printed about why it stopped, for an error message.
 * @param {string} output k6's stdout and stderr
 * @returns {string} up to 3 lines; '' when k6 said nothing of the kind
 */
export const k6Reason = (output) => output.split('\n').filter((l) => /level=(error|fatal)|test aborted/.test(l)).slice(-3).join('\n');
