// The runs the machine disturbed (issue 38): a run's noise on its pinned cores (bench/records/machine-noise.js makes it,
// `bench.run.machine`) at DISTURBED or more, per column, and the report's note naming them.
import { TIE } from './sweep-model.js';

/**
 * A run is disturbed when steal or other processes took this share of its pinned cores' time or more. Steal: 5%, as when the
 * server (or k6) is the limit, CPU it could not have costs about that share of its RPS, and a ratio moved that much is no
 * longer a tie by the project's reading (sweep-model.js TIE). Other processes: 10%, that 5% above a floor every run has: its
 * own wake-ups from idle and the interrupts that wake the cores are charged to no process, and read as other processes' CPU.
 * On a quiet 2-core VM (Linux 6.18, 250 Hz, tickless) that floor was 2.5–4.1% of the server's core for HTTP/1.1 at 4 and 32
 * VUs, whose server idles between requests; 0.3–0.5% for gRPC; 0.1–2.2% of k6's core (six quiet runs of the main job, 2 s and
 * 4 s; a busy loop on the server's core read 53–58%, test/integration/machine-noise.test.js).
 * @type {Readonly<{steal: number, other: number}>}
 */
export const DISTURBED = Object.freeze({ steal: TIE, other: 2 * TIE });

/**
 * Each figure the disturbance is read from: its side of the run, its field of a CoreNoise (bench/records/machine-noise.js), and how a note says it.
 * @type {ReadonlyArray<{side: 'server'|'k6', field: 'other_pct'|'steal_pct', says: string}>}
 */
const DISTURBANCES = [
  { side: 'server', field: 'other_pct', says: 'of the server\'s cores went to other processes' },
  { side: 'server', field: 'steal_pct', says: 'of the server\'s cores went to the hypervisor (steal)' },
  { side: 'k6', field: 'other_pct', says: 'of k6\'s cores went to other processes' },
  { side: 'k6', field: 'steal_pct', says: 'of k6\'s cores went to the hypervisor (steal)' },
];

/**
 * @typedef {object} Disturbance a run whose pinned cores lost DISTURBED or more of their time (`modes.<mode>.disturbed`)
 * @property {number} run its place among the column's runs (1-based, in `runs` order)
 * @property {string} file its summary
 * @property {'server'|'k6'} side whose cores
 * @property {'other'|'steal'} what other processes, or the hypervisor
 * @property {string} cpus the cores
 * @property {number} pct the share of their time it took (%)
 */

/**
 * The disturbed runs of a column: each figure at or above its DISTURBED share, per run.
 * @param {Array<{file: string, run?: {machine?: import('../records/machine-noise.js').MachineNoise}}>} runs the column's runs, in order
 * @returns {Disturbance[]}
 */
export function disturbedRuns(runs) {
  return runs.flatMap((r, i) => DISTURBANCES.flatMap(({ side, field }) => {
    const noise = r.run?.machine?.[side];
    const pct = noise?.[field];
    const what = field === 'steal_pct' ? 'steal' : 'other';
    if (typeof pct !== 'number' || pct < DISTURBED[what] * 100) return [];
    return [{ run: i + 1, file: r.file, side, what, cpus: noise.cpus, pct }];
  }));
}

/**
 * The note naming a report's disturbed runs, one per column that has any, e.g. `DISTURBED: http run 2: 23% of the server's
 * cores (cpu 0) went to other processes. …`
 * @param {Record<string, {disturbed?: Disturbance[]}>} modes the report's columns
 * @returns {string[]}
 */
export function disturbedNotes(modes) {
  return Object.entries(modes).flatMap(([key, mode]) => {
    const disturbed = mode.disturbed ?? [];
    if (!disturbed.length) return [];
    const runs = [...new Set(disturbed.map((d) => d.run))].map((run) => {
      const parts = disturbed.filter((d) => d.run === run).map((d) => {
        const { says } = DISTURBANCES.find((x) => x.side === d.side && x.field === `${d.what}_pct`);
        return `${d.pct.toFixed(0)}% ${says.replace(/cores/, `cores (cpu ${d.cpus})`)}`;
      });
      return `${key} run ${run}: ${parts.join(', ')}`;
    });
    return [`DISTURBED: ${runs.join('; ')}. A busy machine lowers the RPS without a sign in k6's figures: distrust the run `
      + `(steal at ${DISTURBED.steal * 100}% of the cores' time or more, other processes at ${DISTURBED.other * 100}%: a CPU-bound side loses `
      + 'about that share of its RPS), or repeat it on a quiet machine.'];
  });
}
