// The main job (bash bench.sh): each mode in turn, server started natively and
// warmed up, then measured by the local k6 script; then the side-by-side report.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from './errors.js';
import { ROOT, runK6, startServer } from './processes.js';
import { buildReport, renderMarkdown, writeReport } from './report.js';
import { allowedCpus, readBenchSettings, splitCores } from './settings.js';
import { readSummary } from './summary.js';

const MODES = {
  http: { script: 'http-tests/local.js', hostVar: 'LOCAL_HTTP_HOST', port: (s) => s.httpPort },
  grpc: { script: 'grpc-tests/local.js', hostVar: 'LOCAL_GRPC_HOST', port: (s) => s.grpcPort },
};

/** The last lines k6 printed about why it stopped, for an error message. */
const k6Reason = (output) => output.split('\n').filter((l) => /level=(error|fatal)|test aborted/.test(l)).slice(-3).join('\n');

/**
 * Runs one mode: server up, warm-up, measured run, server down; records the
 * k6 CPU use and the core split in the summary's `bench.run`.
 * @returns {Promise<string>} path of the measured run's summary
 * @throws {BenchError} when the server does not start or k6 fails
 */
async function measureMode(mode, settings, cores, stamp, scratch) {
  const { script, hostVar, port } = MODES[mode];
  let server;
  try {
    server = await startServer({ env: { MODE: mode, WORKERS: String(settings.WORKERS) }, cpus: cores.serverCpus });
  } catch (err) {
    throw new BenchError(`the ${mode} server did not start: ${err.message}`);
  }
  const host = `127.0.0.1:${port(server)}`;
  const k6 = { k6: settings.K6_BIN, cpus: cores.k6Cpus, coreCount: cores.k6CoreCount };
  const load = ['--vus', String(settings.VUS), '-e', `${hostVar}=${host}`];
  try {
    if (!/^0+(\.0+)?(ms|s|m|h)$/.test(settings.WARMUP)) {
      console.error(`${mode}: warm-up, ${settings.WARMUP} at ${settings.VUS} VUs (left out of the figures)`);
      const warm = await runK6({ ...k6, quiet: true,
        args: [...load, '--duration', settings.WARMUP, '-e', `SUMMARY_FILE=${path.join(scratch, `${mode}-warmup.json`)}`, script] });
      if (warm.code !== 0) throw new BenchError(`k6 warm-up against ${host} failed (exit ${warm.code}):\n${k6Reason(warm.output)}`);
    }
    const summaryFile = path.join(settings.RESULTS_DIR, `k6-${mode}-local-${stamp}.json`);
    const dashboard = path.join(settings.RESULTS_DIR, `dashboard-${mode}-${stamp}.html`);
    console.error(`${mode}: measuring, ${settings.DURATION} at ${settings.VUS} VUs`);
    const run = await runK6({ ...k6,
      args: [...load, '--duration', settings.DURATION, '-e', `SUMMARY_FILE=${summaryFile}`, script],
      env: {
        K6_WEB_DASHBOARD: 'true',
        K6_WEB_DASHBOARD_PORT: '-1', // no HTTP endpoint, only the exported HTML report (works offline)
        K6_WEB_DASHBOARD_EXPORT: dashboard,
        K6_WEB_DASHBOARD_PERIOD: '1s', // the export is skipped when a run holds fewer than two periods
      } });
    if (run.code !== 0) throw new BenchError(`k6 run against ${host} failed (exit ${run.code}):\n${k6Reason(run.output)}`);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
    summary.bench.run = {
      k6_cpu: run.cpu,
      pinning: `${cores.description}; ${settings.WORKERS} server worker(s); warm-up ${settings.WARMUP} left out`,
      workers: settings.WORKERS,
      warmup: settings.WARMUP,
      dashboard,
    };
    await writeFile(summaryFile, JSON.stringify(summary, null, 2));
    return summaryFile;
  } finally {
    await server.stop();
  }
}

async function main() {
  const settings = readBenchSettings();
  if (process.argv.includes('--check-settings')) return;
  process.chdir(ROOT); // k6 and the report resolve results/ and the scripts from here
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus());
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'bench-'));
  try {
    const runs = Object.fromEntries(Object.keys(MODES).map((mode) => [mode, []]));
    // Modes interleaved (A B A B ...), so a drift of the machine over time touches both alike.
    for (let repeat = 1; repeat <= settings.REPEATS; repeat++) {
      for (const mode of Object.keys(MODES)) {
        console.error(`--- run ${repeat} of ${settings.REPEATS}: ${mode}`);
        runs[mode].push(await readSummary(await measureMode(mode, settings, cores, `${stamp}-r${repeat}`, scratch)));
      }
    }
    const report = buildReport(Object.entries(runs).map(([key, figures]) => ({ key, runs: figures })));
    process.stdout.write(`\n${renderMarkdown(report)}\n`);
    const paths = await writeReport(report, settings.RESULTS_DIR);
    process.stdout.write(`written: ${paths.markdown}, ${paths.json}\n`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  if (!err.code?.startsWith('ERR_')) throw err;
  console.error(`bench: ${err.message}`);
  process.exit(1);
}
