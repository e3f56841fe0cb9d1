// The soak job (npm run soak). For each mode: the sustained run, then (FAULTS) the fault runs, each a
// run of bench/passes/soak.js; then the report (bench/report/soak.js). Settings: bench/settings/soak.js.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { fileStamp } from '../format.js';
import { ROOT } from '../processes.js';
import { faultRun, soakRun } from '../passes/soak.js';
import { allowedCpus, splitCores } from '../settings/cores.js';
import { faultSummary, renderSoakMarkdown } from '../report/soak.js';
import { SOAK_SETTING_NAMES } from '../settings/soak.js';
import { jobCertificates } from '../tls.js';

/**
 * Runs the soak job (bench/cli.js soak): the sustained runs and the fault runs of each mode, then the report.
 * @param {import('../settings/soak.js').SoakSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server or k6 fails, or a sustained run had failed requests
 */
export async function main(settings) {
  process.chdir(ROOT); // k6 resolves the scripts, and RESULTS_DIR is relative, from here
  const command = [...SOAK_SETTING_NAMES.filter((n) => n !== 'K6_BIN' && process.env[n] !== undefined)
    .map((n) => `${n}=${process.env[n]}`), 'npm run soak'].join(' ');
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  const cores = splitCores(allowedCpus());
  const stamp = fileStamp();
  const job = { stamp, scratch: await mkdtemp(path.join(os.tmpdir(), 'soak-')), tls: settings.TLS ? await jobCertificates() : null };
  const soak = [];
  const faults = [];
  try {
    for (const mode of settings.MODE) {
      if (settings.SOAK) soak.push(await soakRun(mode, settings, cores, job));
      if (!settings.FAULTS) continue;
      const runs = [];
      for (let repeat = 1; repeat <= settings.FAULT_REPEATS; repeat++) runs.push(await faultRun(mode, settings, cores, job, repeat));
      faults.push(faultSummary(mode, settings, runs));
    }
  } finally {
    await rm(job.scratch, { recursive: true, force: true });
    await job.tls?.remove();
  }
  const shared = cores.serverCpus && settings.FAULT_WORKERS > cores.serverCoreCount;
  const report = {
    generated_at: new Date().toISOString(),
    command,
    settings,
    pinning: [cores.description, settings.SOAK && `sustained runs ${settings.WORKERS} worker(s)`,
      settings.FAULTS && `fault runs ${settings.FAULT_WORKERS} worker(s)`].filter(Boolean).join('; '),
    machine: { cpus: allowedCpus().length, node: process.version, k6: execFileSync(settings.K6_BIN, ['version'], { encoding: 'utf8' }).split('\n')[0] },
    noise: 'a shared machine: other work may have run during these runs; the 1-minute load average before each run is recorded '
      + '(this job alone adds about 2 on 2 CPUs). One sustained run per mode (minutes each), so no spread for it; '
      + 'its RSS samples give the spread over time.',
    fault_note: faults.length && shared
      ? `The ${settings.FAULT_WORKERS} fault-run workers share server cpu ${cores.serverCpus}: the surviving worker keeps serving, `
        + 'but its RPS is not comparable with the sustained run\'s.'
      : undefined,
    soak,
    faults,
  };
  const markdown = renderSoakMarkdown(report);
  const base = path.join(settings.RESULTS_DIR, `soak-${stamp}`);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${markdown}\nwritten: ${base}.md, ${base}.json\n`);
  const failing = soak.filter((r) => r.failed > 0);
  if (failing.length) {
    throw new BenchError(`failed requests under sustained load (must be 0): ${failing.map((r) => `${r.mode} ${r.failed}`).join(', ')}`);
  }
}

