// npm test's runner (issue 39): the test files side by side, TEST_CONCURRENCY at a time, the slowest first so that none
// is left running alone at the end; then, one at a time, the files whose assertions read the machine's timing or CPU
// (ALONE), which a neighbour's load would make fail. Most files wait on bounded runs of a few seconds (k6, wrk, a
// drain deadline), not on the CPU, so three at a time on two cores take about half the time of one at a time.
//   node test/suite.js [FILE...]    default: test/unit/*.test.js and test/integration/*.test.js
//   TEST_CONCURRENCY=N              files side by side in the first phase (default 3; 1: every file alone)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * The files that run alone, after the others, and what each asserts that a neighbour's load breaks (seen with three
 * files side by side on this project's 2-core VM, 2026-11-26).
 * @type {Record<string, string>}
 */
export const ALONE = {
  'test/integration/faults-max.test.js': 'the honest client (k6) loses no gRPC call beside 64 slow readers at the stream limit '
    + '(it lost 14 and 16 beside two other files, in CI\'s fresh container; none alone)',
  'test/integration/machine-noise.test.js': "a quiet run's CPU of other processes on the server's core below a disturbed run's "
    + "(70% against 63% beside two other files, in CI's fresh container)",
  'test/integration/heap-allocation.test.js': 'the bytes allocated per request agree with a sampling heap profile within 20% '
    + '(not beside two other files, in CI\'s fresh container)',
  'test/integration/profile.test.js': "the CPU profile's parts add up to the server's accounting within 20% (181% beside two other files)",
  'test/integration/server-lifecycle.test.js': 'its signals raced against a worker\'s death and start, 0 to 250 ms apart, which a '
    + 'neighbour\'s load stretches (a killed worker was replaced in 1,007 ms beside two other files, against about 900 ms alone)',
  'test/integration/sweep.test.js': "the model's predictions, fed each mode's measured CPU and service time per request: "
    + 'its ratio at 2 Mbit/s (1.13, not above 1.2) and its verdict (a tie, not bandwidth) moved beside two other files',
  'test/integration/tls-idle.test.js': 'some of 4000 TLS handshakes complete within 500 ms (none did beside two other files)',
};

/**
 * The slowest files, slowest first (npm test's per-file times in CI's fresh container, 2026-11-28; docker-run, which
 * skips there, and the files new since, open-streams, targets-stream and users-stream, by their times on the host): started first,
 * they end with the rest.
 */
export const SLOWEST = ['soak', 'docker-run', 'own-service-stream', 'bench', 'link', 'h2-hostile', 'faults', 'tls', 'own-service-job',
  'own-service-equality', 'multiplexed-drain', 'open-streams', 'quick-start', 'targets-stream', 'node-versions', 'decompose', 'replicas', 'reload',
  'h2spec', 'k6-scripts', 'accounting', 'server-start', 'users-stream', 'compression', 'early-signal', 'wire', 'own-service-input', 'k8s',
  'mode-listener', 'sweep-own']
  .map((name) => `test/integration/${name}.test.js`);

/**
 * Every test file, relative to the repository: the unit tests and the integration tests.
 * @returns {string[]}
 */
export function allTestFiles() {
  return ['test/unit', 'test/integration'].flatMap((dir) => readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.test.js')).sort().map((f) => `${dir}/${f}`));
}

/**
 * Splits test files into the two phases.
 * @param {string[]} files relative to the repository
 * @returns {{together: string[], alone: string[]}} together: SLOWEST first (in its order), then the rest as given
 */
export function phases(files) {
  const alone = files.filter((f) => f in ALONE);
  const rest = files.filter((f) => !(f in ALONE));
  const rank = (f) => (SLOWEST.includes(f) ? SLOWEST.indexOf(f) : SLOWEST.length);
  return { together: rest.map((f, i) => [f, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([f]) => f), alone };
}

/**
 * Runs node --test on some files with the spec reporter on stdout and the per-file times on stderr.
 * @param {string[]} files
 * @param {number} concurrency
 * @returns {number} its exit status
 */
function nodeTest(files, concurrency) {
  if (files.length === 0) return 0;
  const res = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`,
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=./test/helpers/file-times.js', '--test-reporter-destination=stderr', ...files], { cwd: ROOT, stdio: 'inherit' });
  return res.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const raw = process.env.TEST_CONCURRENCY ?? '3';
  const concurrency = Number(raw);
  if (!/^[1-9]\d*$/.test(raw)) {
    console.error(`test: invalid setting TEST_CONCURRENCY=${JSON.stringify(raw)}: must be a whole number of files, 1 or more`);
    process.exit(1);
  }
  const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => path.relative(ROOT, path.resolve(f))) : allTestFiles();
  const { together, alone } = concurrency === 1 ? { together: files, alone: [] } : phases(files);
  const started = Date.now();
  console.error(`test: ${together.length} files, ${concurrency} at a time; then ${alone.length} alone (${alone.join(', ') || 'none'})`);
  const first = nodeTest(together, concurrency);
  const second = nodeTest(alone, 1);
  console.error(`test: ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
  process.exit(first || second);
}
