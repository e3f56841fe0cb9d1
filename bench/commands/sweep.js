// The sweep (npm run sweep; docs/sweep.md): for each link of SWEEP_BANDWIDTH × SWEEP_RTT, the link built and measured
// (bench/passes/sweep.js), every cell of SWEEP_VUS (or SWEEP_RATE) × SCENARIO (or an own service's RPC) on it, both modes
// interleaved, an own service's twins proven equal first; then the model beside the measurement, the verdicts and the
// heat maps (bench/report/sweep*.js). With --link it answers one link from the newest sweep's JSON instead, running nothing.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { fileStamp, progressOf } from '../format.js';
import { ROOT } from '../processes.js';
import { provenanceOf } from '../provenance.js';
import { prepareOwn, scenariosOf } from '../own-service.js';
import { loadOwnService } from '../../proto/own/service.js';
import { measureLink } from '../passes/sweep.js';
import { requireLinkTools } from '../placement/link.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { parseRate, parseRttMs } from '../settings/network.js';
import { EMULATION_LIMITS, SWEEP_SETTING_NAMES } from '../settings/sweep.js';
import { durationMs } from '../settings/validators.js';
import { answerFor, buildSweep, renderSweep } from '../report/sweep.js';
import { sweepMapSvg } from '../report/sweep-map.js';

const usage = (message) => Object.assign(new Error(message), { code: 'ERR_USAGE' });

/**
 * Before anything starts: root and ip netns for the links (not needed to answer --link from a sweep's JSON).
 * @param {import('../settings/sweep.js').SweepSettings} settings
 * @param {{values: Record<string, unknown>}} [args]
 * @returns {Promise<void>}
 * @throws {BenchError} naming what is missing
 */
export async function preflight(settings, { values } = { values: {} }) {
  if (values.link || values.render) return;
  if (values.vus || values.rate || values.from) throw usage('--vus, --rate and --from go with --link');
  // An own service's schema, RPC and samples: a bad one is one line (ERR_OWN_SERVICE) before anything starts.
  for (const { source } of scenariosOf(settings)) if (source) loadOwnService(source);
  requireLinkTools();
}

/**
 * Runs the sweep (bench/cli.js sweep), or with --link answers one link from a sweep's JSON.
 * @param {import('../settings/sweep.js').SweepSettings & {K6_BIN: string}} settings checked by bench/cli.js
 * @param {{values: {link?: string, vus?: string, rate?: string, from?: string, render?: string}}} args
 * @returns {Promise<void>}
 * @throws {BenchError} when a link cannot be built, a server does not start or k6 fails; ERR_USAGE for a bad --link
 */
export async function main(settings, { values }) {
  process.chdir(ROOT);
  if (values.link) {
    await answer(settings, values);
    return;
  }
  if (values.render) {
    await render(settings, values.render);
    return;
  }
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus());
  const stamp = fileStamp();
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'sweep-'));
  const open = Boolean(settings.SWEEP_RATE);
  const points = open ? settings.SWEEP_RATE.map((rate) => ({ rate })) : settings.SWEEP_VUS.map((vus) => ({ vus }));
  const links = settings.SWEEP_RTT.flatMap((rttMs) => settings.SWEEP_BANDWIDTH.map((bandwidth) => ({ bandwidth, rttMs, points })));
  const measured = [];
  const start = Date.now();
  /** @type {Record<string, import('../own-service.js').OwnRecord>} */
  const services = {};
  try {
    const scenarios = [];
    for (const { scenario, source } of scenariosOf(settings)) {
      const own = source ? await prepareOwn(source, scratch, scenario) : null;
      if (own) services[scenario] = own.record;
      scenarios.push({ scenario, own });
    }
    const progress = progressOf(links.length * points.length * scenarios.length, estimateCellS(settings));
    for (const [i, link] of links.entries()) {
      measured.push(...await measureLink(link, settings, cores, { scratch, stamp, next: progress.next, scenarios, prove: i === 0 }));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const report = {
    generated_at: new Date().toISOString(),
    command: [...SWEEP_SETTING_NAMES.filter((n) => n !== 'K6_BIN' && process.env[n] !== undefined)
      .map((n) => `${n}=${process.env[n]}`), 'npm run sweep'].join(' '),
    // The sweep's settings stand where the main job's would: provenanceOf records every one as it is.
    provenance: provenanceOf({ settings: /** @type {any} */ ({ ...settings, link: null }), pinning: `${cores.description}; ${settings.WORKERS} server worker(s)`, serverEnv: null }),
    k6: execFileSync(settings.K6_BIN, ['version'], { encoding: 'utf8' }).split('\n')[0],
    elapsed_s: (Date.now() - start) / 1000,
    // Each own service's schema and samples with their SHA-256, and its sizes (bench/own-service.js OwnRecord).
    services,
    limits_note: `${EMULATION_LIMITS.bandwidth_bps / 1e9} Gbit/s, ${EMULATION_LIMITS.rtt_ms} ms, ${EMULATION_LIMITS.vus.toLocaleString('en-US')} VUs`,
    ...buildSweep({
      measured, model: open ? 'open' : 'closed', services,
      machine: { serverCores: cores.serverCoreCount, clientCores: cores.k6CoreCount },
      extend: extensionOf(settings, open),
    }),
    maps: [],
  };
  await writeSweep(report, path.join(settings.RESULTS_DIR, `sweep-${stamp}`), [...new Set(measured.map((c) => c.scenario))]);
}

/**
 * Writes a sweep's heat maps (one per scenario and RTT), its Markdown and its JSON, and prints the Markdown.
 * @param {object} report buildSweep's body with the provenance
 * @param {string} base the files' path without extension
 * @param {string[]} scenarios
 * @returns {Promise<void>}
 */
async function writeSweep(report, base, scenarios) {
  const rtts = [...new Set([...report.cells, ...report.predicted].map((c) => c.rtt_ms))].sort((a, b) => a - b);
  for (const scenario of scenarios) {
    for (const rtt of rtts) {
      const file = `${base}-${scenario}-${rtt}ms.svg`;
      await writeFile(file, await sweepMapSvg(report, scenario, rtt));
      report.maps.push(file);
    }
  }
  const markdown = renderSweep(report);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${markdown}\nwritten: ${base}.md, ${base}.json, ${report.maps.join(', ')}\n`);
}

/**
 * --render FILE: the model, the verdicts, the report and the maps made again from a sweep JSON's measured runs, with the
 * code of this checkout; the measurement's provenance stays, and the rendering's commit is added (`rendered`).
 * @param {{RESULTS_DIR: string}} settings
 * @param {string} file a results/sweep-*.json
 * @returns {Promise<void>}
 * @throws {BenchError} when the file cannot be read or holds no measured cells
 */
async function render(settings, file) {
  let saved;
  try {
    saved = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new BenchError(`cannot read the sweep ${file}: ${err.code ?? err.message}`);
  }
  const cells = (Array.isArray(saved.cells) ? saved.cells : []).filter((c) => c.kind === 'measured' && c.modes?.http?.runs && c.modes?.grpc?.runs);
  if (!cells.length || !saved.machine) throw new BenchError(`${file} is not a sweep's JSON (no measured cells with their runs)`);
  const key = saved.model === 'open' ? 'rate' : 'vus';
  const measured = cells.map((c) => ({
    scenario: c.scenario, bandwidth_bps: c.bandwidth_bps, rtt_ms: c.rtt_ms, [key]: c[key], connections: c.connections,
    link_check: c.link_check, runs: Object.fromEntries(Object.entries(c.modes).map(([mode, m]) => [mode, m.runs])),
  }));
  const axis = (k) => [...new Set(cells.map((c) => c[k]))];
  const extend = extensionOf({ SWEEP_BANDWIDTH: axis('bandwidth_bps'), SWEEP_RTT: axis('rtt_ms'), SWEEP_VUS: axis('vus'),
    SWEEP_RATE: axis('rate') }, key === 'rate');
  const report = {
    ...saved,
    rendered: { at: new Date().toISOString(), commit: execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim() },
    ...buildSweep({ measured, model: saved.model, machine: saved.machine, extend, services: saved.services ?? {} }),
    maps: [],
  };
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  await writeSweep(report, path.join(settings.RESULTS_DIR, `${path.basename(file, '.json')}-rendered`), axis('scenario'));
}

/** The map's axes past the measured ones, up to what the machine cannot emulate (predicted only). */
function extensionOf(settings, open) {
  const above = (values, list) => list.filter((v) => v > Math.max(...values));
  return {
    bandwidths: above(settings.SWEEP_BANDWIDTH, [1e9, EMULATION_LIMITS.bandwidth_bps]),
    rtts: above(settings.SWEEP_RTT, [EMULATION_LIMITS.rtt_ms]),
    concurrency: open ? [Math.max(...settings.SWEEP_RATE) * 10] : above(settings.SWEEP_VUS, [1000, EMULATION_LIMITS.vus]),
  };
}

/** About how long one cell takes (s): each mode's server start, warm-up and run, REPEATS times; and the link's share. */
function estimateCellS(settings) {
  const run = 2.5 + (durationMs(settings.WARMUP) + durationMs(settings.DURATION)) / 1000;
  return 2 * settings.REPEATS * run;
}

/** --link BW/RTT with --vus or --rate: the answer from a sweep's JSON (--from, else the newest in RESULTS_DIR). */
async function answer(settings, values) {
  const [bw, rtt, extra] = String(values.link).split('/');
  /** @type {{bandwidth: number, rttMs: number, vus?: number, rate?: number}} */
  let point;
  try {
    if (extra !== undefined || rtt === undefined) throw new Error('must be BANDWIDTH/RTT such as 20mbit/60ms');
    point = /** @type {{bandwidth: number, rttMs: number, vus?: number, rate?: number}} */ ({ bandwidth: parseRate(bw), rttMs: parseRttMs(rtt) });
  } catch (err) {
    throw usage(`--link ${values.link}: ${err.message}`);
  }
  for (const name of ['vus', 'rate']) {
    if (values[name] === undefined) continue;
    if (!/^[1-9][0-9]*$/.test(values[name])) throw usage(`--${name} ${values[name]}: must be a whole number above 0`);
    point[name] = Number(values[name]);
  }
  if (point.vus === undefined && point.rate === undefined) throw usage('--link needs --vus (or --rate for an open-model sweep)');
  const file = values.from ?? await newestSweep(settings.RESULTS_DIR);
  let report;
  try {
    report = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new BenchError(`cannot read the sweep ${file}: ${err.code ?? err.message}`);
  }
  if (!Array.isArray(report.cells) || !report.profiles) throw new BenchError(`${file} is not a sweep's JSON (no cells and profiles)`);
  process.stdout.write(`${answerFor(report, point).join('\n')}\n(from ${file})\n`);
}

async function newestSweep(dir) {
  const names = (await readdir(dir).catch(() => [])).filter((n) => /^sweep-.*\.json$/.test(n)).sort();
  if (!names.length) throw new BenchError(`no sweep in ${dir}/: run npm run sweep first, or give --from FILE`);
  return path.join(dir, names.at(-1));
}
