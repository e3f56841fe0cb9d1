// The README's quick start as a newcomer runs it: each block marked `<!-- quick-start:NAME -->` (the line before its
// ```sh fence) run as written, with bash, from the root of a fresh clone of the repository. The clone reaches the
// provisioned node_modules and .tools (as a machine that ran it once has them; CI's fresh-machine check covers the first
// run). Only the environment shortens the runs: the blocks' text is never edited.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { benchSettingSpecs } from '../../bench/settings/bench.js';
import { OWN_SETTING_NAMES } from '../../bench/settings/shared.js';
import { ROOT } from '../helpers/server.js';

/** The quick start's blocks, in the README's order. */
const BLOCKS = ['demo', 'own-example', 'own-folder'];

/** Short runs, about 10 s a block: one 1 s run per mode, no warm-up, no client's ceiling, no capacity pass. */
const SHORT = { DURATION: '1s', WARMUP: '0s', REPEATS: '1', VUS: '4', CALIBRATE: '0s', CAPACITY: '0' };

const CATALOG = 'examples.catalog.v1.CatalogService.ListProducts';

/**
 * The quick start's shell blocks from the README's text.
 * @param {string} readme
 * @returns {Record<string, string>} each block's text by name
 * @throws {Error} naming a block whose marker is missing, repeated, or not followed by a ```sh fence
 */
export function quickStartBlocks(readme) {
  return Object.fromEntries(BLOCKS.map((name) => {
    const marker = `<!-- quick-start:${name} -->`;
    const parts = readme.split(marker);
    if (parts.length !== 2) throw new Error(`README.md: ${marker} occurs ${parts.length - 1} times, not once`);
    const block = /^\n```sh\n([\s\S]*?)\n```\n/.exec(parts[1]);
    if (!block) throw new Error(`README.md: ${marker} is not followed by a \`\`\`sh block`);
    return [name, block[1]];
  }));
}

test('the quick start\'s blocks are found by their markers, and a missing one is named', () => {
  const blocks = quickStartBlocks(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  assert.deepEqual(Object.keys(blocks), BLOCKS);
  assert.match(blocks.demo, /^bash bench\.sh$/);
  assert.throws(() => quickStartBlocks('<!-- quick-start:demo -->\n```sh\nbash bench.sh\n```\n'), /<!-- quick-start:own-example --> occurs 0 times/);
  assert.throws(() => quickStartBlocks(BLOCKS.map((b) => `<!-- quick-start:${b} -->\n\nbash bench.sh\n`).join('')), /quick-start:demo --> is not followed by a ```sh block/);
});

let work;
let clone;
/** Each block's run: exit code, output, seconds, and the reports it added to the clone's results/. */
const runs = {};

/**
 * Runs one block with bash -e in the clone and collects what it wrote.
 * @param {string} name
 * @param {string} text the block
 * @returns {Promise<{code: number|null, stdout: string, stderr: string, seconds: number, reports: any[], added: string[]}>}
 *   reports: the compare-*.json it added to results/; added: every file it added there
 */
async function runBlock(name, text) {
  const results = path.join(clone, 'results');
  const seen = new Set(await readdir(results));
  const script = path.join(work, `${name}.sh`);
  await writeFile(script, `${text}\n`);
  const env = { ...process.env, ...SHORT };
  // A run under npm test has INIT_CWD (npm's folder), which the jobs would read the user's paths from; a user's shell
  // has none. And no own-service or scenario setting of the caller's may leak into the blocks.
  for (const name of ['INIT_CWD', 'BENCH_CWD', 'RESULTS_DIR', 'SCENARIO', 'MODES', ...OWN_SETTING_NAMES]) delete env[name];
  const started = process.hrtime.bigint();
  const child = spawn('bash', ['-e', script], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const timer = setTimeout(() => child.kill('SIGTERM'), 120_000); // bounded: a block that hangs fails the test
  const code = await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const added = (await readdir(results)).filter((f) => !seen.has(f));
  const reports = await Promise.all(added.filter((f) => /^compare-.*\.json$/.test(f))
    .map(async (f) => JSON.parse(await readFile(path.join(results, f), 'utf8'))));
  return { code, stdout, stderr, seconds, reports, added };
}

before(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'quick-start-'));
  // Named as `git clone` names it; the own-folder block makes its folder beside it.
  clone = path.join(work, 'json-vs-grpc-bench');
  execFileSync('git', ['clone', '--quiet', ROOT, clone]);
  await symlink(await realpath(path.join(ROOT, 'node_modules')), path.join(clone, 'node_modules'));
  if (existsSync(path.join(ROOT, '.tools'))) await symlink(await realpath(path.join(ROOT, '.tools')), path.join(clone, '.tools'));
  const blocks = quickStartBlocks(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  for (const name of BLOCKS) runs[name] = await runBlock(name, blocks[name]); // one at a time: each pins the cores
});
after(() => (work ? rm(work, { recursive: true, force: true }) : undefined));

/** Asserts a block's run ended well and wrote one report of the scenario, both modes measured. */
function assertMeasured(name, scenario) {
  const { code, stdout, stderr, seconds, reports, added } = runs[name];
  assert.equal(code, 0, `${name}: exit ${code}\n${stderr}\n${stdout}`);
  assert.equal(reports.length, 1, `${name}: ${reports.length} compare-*.json written to results/`);
  // The README's promise: the report as Markdown and JSON, a chart per scenario, k6's output in a log per run.
  const stamp = added.find((f) => f.endsWith('.json') && f.startsWith('compare-')).slice(0, -'.json'.length);
  for (const file of [`${stamp}.md`, `${stamp}-${scenario}.svg`]) assert.ok(added.includes(file), `${name}: no results/${file} in ${added}`);
  assert.ok(added.some((f) => /^k6-.*\.log$/.test(f)), `${name}: no k6 log in results/`);
  const [report] = reports;
  assert.equal(report.scenario, scenario);
  for (const mode of ['http', 'grpc']) {
    assert.ok(report.modes[mode].requests > 0, `${name}: ${mode} measured no request`);
    assert.equal(report.modes[mode].failed, 0, `${name}: ${mode} had failed requests`);
  }
  assert.match(stdout, new RegExp(`^### Scenario \`${scenario.replaceAll('.', '\\.')}\``, 'm'));
  return { report, seconds };
}

test('1. the demo: bash bench.sh measures the User scenario and writes its report to results/', (t) => {
  const { seconds } = assertMeasured('demo', 'user');
  t.diagnostic(`${seconds.toFixed(1)} s`);
});

test('2. the shipped example as an own service: the catalog, every setting written out', (t) => {
  const { report, seconds } = assertMeasured('own-example', CATALOG);
  // The same service SCENARIO=catalog runs: its schema and samples, found from the clone's root.
  assert.equal(report.own.rpc, 'examples.catalog.v1.CatalogService/ListProducts');
  t.diagnostic(`${seconds.toFixed(1)} s`);
});

test('3. your own folder: --check-settings says what it would measure, then the run reads the files from that folder', (t) => {
  const { report, seconds } = assertMeasured('own-folder', CATALOG);
  const { stdout } = runs['own-folder'];
  const line = 'bench: settings and tools checked, nothing run; would measure examples.catalog.v1.CatalogService/ListProducts '
    + '(unary; 3 request samples, 3 response samples) in http, grpc, 1 run(s) of 1s each';
  assert.equal(stdout.split('\n')[0], line, 'the first line the block prints is the check\'s');
  // The README quotes the line as the defaults make it.
  const specs = benchSettingSpecs();
  const quoted = line.replace('1 run(s) of 1s each', `${specs.REPEATS.default} run(s) of ${specs.DURATION.default} each`);
  assert.ok(readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ').includes(quoted), `README.md does not quote: ${quoted}`);
  // The schema and samples were read from the user's folder, beside the clone, not from the clone's proto/.
  const mine = path.join(work, 'my-service');
  for (const file of [report.own.schema[0].path, report.own.samples.request.file, report.own.samples.response.file]) {
    assert.ok(file.startsWith(`${mine}/`), `read ${file}, not a file of ${mine}`);
  }
  t.diagnostic(`${seconds.toFixed(1)} s`);
});
