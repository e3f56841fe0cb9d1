// The command line of the jobs (bench/cli.js): strict arguments, --help on every command, compare's
// and merge's positionals and --out, the warning about a misspelt setting; and `npm run k6`, the
// provisioned k6 for the manual flow (docs/manual-flow.md). Nothing here loads a server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ROOT } from '../helpers/server.js';

const COMMANDS = ['run', 'compare', 'merge', 'targets', 'soak', 'faults', 'sweep'];
// Were a command to run instead of printing its usage, these make it fail at once (exit 1 or 2) rather than
// load anything for a minute: a setting every job refuses, and no k6.
const RUN_NOTHING = { VUS: 'abc', MODE: 'nope', K6_BIN: '/nonexistent/k6' };
// --help reads no settings and imports no job: well under this, even on a busy machine.
const HELP_TIMEOUT_MS = 10000;

let dir;
before(async () => { dir = await mkdtemp(path.join(os.tmpdir(), 'cli-')); });
after(() => rm(dir, { recursive: true, force: true }));

test('--help and -h on every command print its usage and exit 0, running nothing', async () => {
  for (const command of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      const started = Date.now();
      const { code, stdout, stderr } = await sh('node', ['bench/cli.js', command, flag], RUN_NOTHING, HELP_TIMEOUT_MS);
      assert.equal(code, 0, `${command} ${flag}: ${stderr}`);
      assert.equal(stderr, '', `${command} ${flag}`);
      assert.match(stdout, /^usage: (bash bench\.sh|npm run \S+ --)/, `${command} ${flag}`);
      assert.match(stdout, new RegExp(`^ {3}or: node bench/cli\\.js ${command}( |$)`, 'm'));
      assert.match(stdout, /^ {2}-h, --help +print this usage/m);
      assert.ok(Date.now() - started < HELP_TIMEOUT_MS, `${command} ${flag} took ${Date.now() - started} ms`);
    }
  }
  // Each usage lists the command's own options.
  const compare = await sh('node', ['bench/cli.js', 'compare', '--help']);
  assert.match(compare.stdout, /^usage: npm run compare -- <summary\.json> <summary\.json> \[more\.\.\.\] \[--out DIR\]$/m);
  assert.match(compare.stdout, /^ {2}--out DIR +folder/m);
  const run = await sh('node', ['bench/cli.js', 'run', '--help']);
  assert.match(run.stdout, /^usage: bash bench\.sh \[--check-settings\]$/m);
  assert.match(run.stdout, /docs\/settings\.md/);
  // The list of commands derives from the same declarations.
  const all = await sh('node', ['bench/cli.js', '--help']);
  assert.equal(all.code, 0);
  for (const command of COMMANDS) assert.match(all.stdout, new RegExp(`^ {2}${command} `, 'm'));
  assert.match(all.stdout, /^ +npm run merge -- <summary\.json> <samples\.csv> .* --out FILE$/m);
});

test('an unknown option or argument is one line naming it, pointing to --help, exit 2, before any setting is read', async () => {
  const bogus = await sh('node', ['bench/cli.js', 'run', '--bogus'], RUN_NOTHING, HELP_TIMEOUT_MS);
  assert.equal(bogus.code, 2);
  assert.equal(bogus.stdout, '');
  assert.equal(bogus.stderr, 'bench: unknown option --bogus; bash bench.sh --help lists the options\n');
  const cases = [
    [['soak', '-x'], /^soak: unknown option -x; npm run soak -- --help lists the options\n$/],
    [['faults', 'now'], /^faults: faults takes no arguments, got "now"; npm run faults -- --help lists the options\n$/],
    [['compare', 'a.json', 'b.json', '--check-settings'], /^compare: unknown option --check-settings; npm run compare -- --help/],
    [['compare', 'a.json', 'b.json', '--out'], /^compare: Option '--out <value>' argument missing; npm run compare -- --help/],
    [['merge', 'a.json', 'a.csv'], /^merge: --out FILE is required; npm run merge -- --help lists the options\n$/],
    [['run', '--help=yes'], /^bench: Option '-h, --help' does not take an argument; bash bench\.sh --help/],
  ];
  for (const [args, expected] of cases) {
    const { code, stdout, stderr } = await sh('node', ['bench/cli.js', ...args], RUN_NOTHING, HELP_TIMEOUT_MS);
    assert.equal(code, 2, args.join(' '));
    assert.equal(stdout, '', args.join(' '));
    assert.match(stderr, expected);
    assert.equal(stderr.split('\n').length, 2, `one line: ${stderr}`);
  }
});

test('merge and compare take their positionals and --out as before (--out DIR and --out=DIR)', async () => {
  const fixtures = path.join('test', 'fixtures', 'k6-split');
  const pairs = [1, 2].flatMap((n) => [path.join(fixtures, `instance-${n}.json`), path.join(fixtures, `instance-${n}.csv`)]);
  const out = path.join(dir, 'merged.json');
  // --out before the positionals as well as after: parseArgs takes options anywhere.
  const merged = await sh('node', ['bench/cli.js', 'merge', '--out', out, ...pairs]);
  assert.equal(merged.code, 0, merged.stderr);
  assert.match(merged.stdout, /^merged 2 k6 instances: 153 requests, p99 [\d.]+ ms: /);

  const tables = path.join(dir, 'tables');
  const compared = await sh('node', ['bench/cli.js', 'compare', out, out, `--out=${tables}`]);
  assert.equal(compared.code, 0, compared.stderr);
  assert.match(compared.stdout, /\| requests +\| +153 \| +153 \|/);
  assert.equal((await readdir(tables)).length, 3, 'Markdown, JSON and the chart in --out');

  // A usage error of the command itself: what is wrong, then its synopsis, in one line.
  const one = await sh('node', ['bench/cli.js', 'compare', out]);
  assert.equal(one.code, 2);
  assert.equal(one.stderr, 'compare: needs two summaries or more, got 1; usage: npm run compare -- <summary.json> <summary.json> '
    + '[more...] [--out DIR]\n');
  const odd = await sh('node', ['bench/cli.js', 'merge', pairs[0], '--out', out]);
  assert.equal(odd.code, 2);
  assert.match(odd.stderr, /^merge: needs pairs of a summary and its samples CSV, got 1 files; usage: npm run merge -- <summary\.json> <samples\.csv>[^\n]*\n$/);
});

/** `node bench/cli.js <args>` with exactly `env` (and PATH): the test's own environment might hold a near-setting. */
async function cliWith(args, env) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['bench/cli.js', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, timeout: 20000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

// What a shell, npm (NODE, INIT_CWD, npm_*), CI and a container set: 2 edits or less from HOST, MODE, RATE, RTT or UP
// (HOME, PATH, PORT, TTY, TZ, CI, NODE), yet none is a misspelt setting.
const SYSTEM = {
  HOME: '/root', PWD: ROOT, OLDPWD: '/', TERM: 'xterm', USER: 'me', LOGNAME: 'me', SHELL: '/bin/bash', LANG: 'C.UTF-8', TZ: 'UTC',
  CI: 'true', CC: 'gcc', NODE: process.execPath, INIT_CWD: ROOT, COLOR: '0', EDITOR: 'vi', HOSTNAME: 'box', PORT: '8080', TTY: '/dev/pts/0',
  TMPDIR: os.tmpdir(), npm_lifecycle_event: 'soak', npm_config_user_agent: 'npm', _: '/usr/bin/env',
};

test('a variable one slip from a setting gets one line of warning naming the setting meant, and the job goes on', async () => {
  const typo = await cliWith(['run', '--check-settings'], { ...SYSTEM, VU: '8' });
  assert.equal(typo.code, 0, typo.stderr);
  assert.equal(typo.stderr, 'bench: VU is not a setting; did you mean VUS?\n');
  // Any job, any reader's settings (the soak's, the server's), and a swap of two letters.
  const more = await cliWith(['soak', '--check-settings'], { ...SYSTEM, WORKER: '2', MDOE: 'grpc', SOAK_DURATON: '1m', LOG_LEVL: 'debug' });
  assert.equal(more.code, 0, more.stderr);
  assert.deepEqual(more.stderr.split('\n'), [
    'soak: LOG_LEVL is not a setting; did you mean LOG_LEVEL?', 'soak: MDOE is not a setting; did you mean MODE?',
    'soak: SOAK_DURATON is not a setting; did you mean SOAK_DURATION?', 'soak: WORKER is not a setting; did you mean WORKERS?', '']);
  // The shell's and npm's own variables, and settings spelt right, say nothing.
  const clean = await cliWith(['run', '--check-settings'], { ...SYSTEM, VUS: '8', MODE: 'http', WORKERS: '1' });
  assert.equal(clean.code, 0, clean.stderr);
  assert.equal(clean.stderr, '');
  // A typo does not hide a bad value: both are said, the bad value stops the job.
  const both = await cliWith(['run', '--check-settings'], { ...SYSTEM, VU: '8', NETWORK: 'moon' });
  assert.equal(both.code, 1);
  assert.equal(both.stderr, 'bench: VU is not a setting; did you mean VUS?\n'
    + 'bench: invalid setting NETWORK="moon": must be one of loopback, lan, wan, mobile\n');
});

test('npm run k6 -- <args> runs the provisioned k6 (scripts/ensure-tool.sh) with the arguments after --', async () => {
  // K6_BIN as the jobs get it (found or built once by ensure-tool.sh, which honours K6_BIN): no build here.
  const k6 = k6Bin();
  const expected = (await promisify(execFile)(k6, ['version'])).stdout;
  const { code, stdout, stderr } = await sh('npm', ['run', '--silent', 'k6', '--', 'version'], { K6_BIN: k6 }, 30000);
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^k6 v\d+\.\d+\.\d+/);
  assert.equal(stdout, expected);
  // Without --silent npm shows the command; more than one argument reaches k6, in order.
  const help = await sh('npm', ['run', 'k6', '--', 'run', '--help'], { K6_BIN: k6 }, 30000);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /exec "\$k6" run --help/);
  assert.match(help.stdout, /^Usage:\n {2}k6 run \[flags\]$/m);
});
