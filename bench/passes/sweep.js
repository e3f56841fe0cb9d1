// One link of the sweep (npm run sweep): the main job's emulated link built once for a bandwidth and RTT
// (bench/placement/placement.js), measured before its runs, then every cell on it (each concurrency and scenario),
// both modes interleaved, each run one measured cell of the main job (bench/passes/cell.js). Returns data.
import { BenchError } from '../errors.js';
import { placementOf } from '../placement/placement.js';
import { readBenchSettings } from '../settings/bench.js';
import { formatRate } from '../settings/network.js';
import { cellEnv } from '../settings/sweep.js';
import { cellPlanOf, placementPlanOf } from '../plans.js';
import { runRecord, SWEEP_MODES } from '../records/sweep.js';
import { measureCell } from './cell.js';
import { proveOwnEquality } from './equality.js';

/**
 * Measures every cell of one link.
 * @param {{bandwidth: number, rttMs: number, points: Array<{vus?: number, rate?: number}>}} link bandwidth bit/s both ways, RTT ms;
 *   points: the concurrencies (closed model) or offered rates (open model)
 * @param {import('../settings/sweep.js').SweepSettings & {K6_BIN: string}} settings
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {{scratch: string, stamp: string, next: (what: string) => void,
 *   scenarios: Array<{scenario: string, own: import('../own-service.js').OwnRun|null}>, prove: boolean}} job next: the progress
 *   line before each cell; scenarios: what each cell measures, an own service with its run (bench/own-service.js); prove:
 *   the own services' twins are proven equal on this link first (the sweep's first link)
 * @returns {Promise<Array<{scenario: string, bandwidth_bps: number, rtt_ms: number, vus?: number, rate?: number,
 *   connections: string, link_check: object|null, runs: Record<string, object[]>}>>} one per cell: per mode, each repeat's runRecord
 * @throws {BenchError} when the link cannot be built, a server does not start, k6 fails or an own service's twins answer differently
 */
export async function measureLink({ bandwidth, rttMs, points }, settings, cores, { scratch, stamp, next, scenarios, prove }) {
  const benchOf = (point, scenario) => readBenchSettings(cellEnv(settings, { bandwidth, rttMs, ...point, scenario }));
  const placement = await placementOf(placementPlanOf(benchOf(points[0], scenarios[0].scenario)), cores);
  const cells = [];
  try {
    const check = await placement.check();
    const linkName = `${Math.round(bandwidth)}bit-${rttMs}ms`;
    for (const { own } of scenarios) {
      if (own && prove) await proveOwnEquality(own, { modes: [...SWEEP_MODES], workers: settings.WORKERS, cpus: cores.serverCpus }, placement);
    }
    for (const point of points) {
      for (const { scenario, own } of scenarios) {
        const plan = cellPlanOf(benchOf(point, scenario));
        next(`${scenario} · ${formatRate(bandwidth)}, ${rttMs} ms · ${point.rate ? `${point.rate} req/s` : `${point.vus} VUs`}`);
        /** @type {Record<string, object[]>} */
        const runs = Object.fromEntries(SWEEP_MODES.map((m) => [m, []]));
        // Modes interleaved (HTTP, gRPC, HTTP, …), so a drift of the machine touches both alike.
        for (let repeat = 1; repeat <= settings.REPEATS; repeat++) {
          for (const mode of SWEEP_MODES) {
            const label = `sweep-${mode}-${linkName}-${point.rate ? `r${point.rate}` : `v${point.vus}`}-${scenario}-${stamp}-r${repeat}`;
            const record = runRecord(await measureCell({ mode, scenario, label, own }, plan, cores, scratch, placement, check));
            if (record.requests === 0) throw new BenchError(`${label}: no request was answered in ${settings.DURATION}; raise DURATION or REQUEST_TIMEOUT`);
            runs[mode].push(record);
          }
        }
        cells.push({
          scenario, bandwidth_bps: bandwidth, rtt_ms: rttMs, ...point, connections: settings.CONNECTIONS,
          link_check: check && { rtt_min_ms: check.rtt.min_ms, down_bps: check.down?.link_bps ?? null, up_bps: check.up?.link_bps ?? null, warnings: check.warnings },
          runs,
        });
      }
    }
  } finally {
    await placement.close();
  }
  return cells;
}
