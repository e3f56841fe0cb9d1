// Provisioning (scripts/ensure-tool.sh, scripts/provision.sh): the tests run on the pinned Node, and a
// tool that cannot be had stops a command before anything starts, in one line naming the install.
// The fresh-machine check itself (scripts/fresh-machine.sh) is what .ci/run runs around npm test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../helpers/server.js';

const ENSURE = path.join(ROOT, 'scripts/ensure-tool.sh');
const PIN = /^NODE_PIN=(\d+\.\d+\.\d+)$/m.exec(readFileSync(ENSURE, 'utf8'))?.[1];
const atLeast = (pin, version) => {
  const [a, b] = [pin, version].map((v) => v.replace(/^v/, '').split('.').map(Number));
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return b[i] > a[i];
  return true;
};

// A PATH with the shell tools ensure-tool.sh uses and nothing else: no wrk, no haproxy, no apt-get,
// which is what a machine without the packages and without root's apt-get looks like to it.
const bare = mkdtempSync(path.join(os.tmpdir(), 'provision-path-'));
after(() => rmSync(bare, { recursive: true, force: true }));
for (const tool of ['bash', 'id', 'dirname', 'sort', 'cat', 'sed', 'head', 'uname', 'mktemp', 'rm', 'tr']) {
  const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
  symlinkSync(found, path.join(bare, tool));
}
symlinkSync(process.execPath, path.join(bare, 'node'));
const bareEnv = { ...process.env, PATH: bare };

test('npm test runs on the pinned Node release (or a newer one), and the pin is a release the npm registry carries', () => {
  assert.ok(PIN, 'no NODE_PIN=X.Y.Z in scripts/ensure-tool.sh');
  assert.ok(atLeast(PIN, process.version), `the tests run on ${process.version}, older than the pin ${PIN}`);
  const res = spawnSync('bash', [ENSURE, 'node'], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const version = spawnSync(res.stdout.trim(), ['--version'], { encoding: 'utf8' }).stdout.trim();
  assert.ok(atLeast(PIN, version), `ensure-tool.sh node gave ${version}`);
  // The server the jobs start is process.execPath, so it runs on the same release.
  assert.match(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node, new RegExp(`^>=${PIN.replaceAll('.', '\\.')}$`));
});

test('a Debian tool that cannot be installed here stops the set at once, in one line naming the one apt-get command', () => {
  const res = spawnSync('bash', [ENSURE, '--set', 'test'], { env: bareEnv, encoding: 'utf8', timeout: 30_000 });
  assert.equal(res.status, 1, res.stderr);
  assert.equal(res.stdout, '');
  const lines = res.stderr.trim().split('\n');
  assert.equal(lines.length, 1, res.stderr);
  assert.match(lines[0], /^ensure-tool: .*\bwrk\b.* missing: run 'sudo apt-get install -y [^']*\bhaproxy\b[^']*\bnghttp2-client\b[^']*\bwrk\b[^']*' \(Debian\/Ubuntu\), then this again$/);
});

test('a Go older than a pinned tool\'s go.mod asks for stops the build at once, in one line naming the Go needed', () => {
  // A copy of the script in a folder of its own, so that no tool is built there yet; a `go` that says it is Debian 12's.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'provision-go-'));
  try {
    mkdirSync(path.join(dir, 'scripts'));
    copyFileSync(ENSURE, path.join(dir, 'scripts', 'ensure-tool.sh'));
    writeFileSync(path.join(dir, 'go'), '#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo go1.19.8 && exit 0\nexit 1\n', { mode: 0o755 });
    const res = spawnSync('bash', [path.join(dir, 'scripts', 'ensure-tool.sh'), 'k6'], {
      env: { ...bareEnv, PATH: `${dir}:${bare}`, K6_BIN: '' }, encoding: 'utf8', timeout: 30_000,
    });
    assert.equal(res.status, 1, res.stderr);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /^ensure-tool: k6 v[\d.]+ needs Go 1\.25 or newer to build \(its go\.mod\), and this Go is 1\.19\.8: install a newer Go/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the main job asks for what a setting needs before anything starts, in one line (CAPACITY=1 without wrk)', () => {
  const res = spawnSync(process.execPath, ['bench/cli.js', 'run', '--check-settings'], {
    cwd: ROOT, env: { ...bareEnv, CAPACITY: '1', K6_BIN: '/nonexistent/k6' }, encoding: 'utf8', timeout: 30_000,
  });
  assert.notEqual(res.status, 0);
  assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  assert.match(res.stderr, /^bench: the capacity pass needs (wrk|h2load): .*missing: run 'sudo apt-get install -y .*' \(Debian\/Ubuntu\), then this again\n$/);
});

test('the default CAPACITY=auto provisions wrk and h2load before anything starts too, and says how to run without them', () => {
  const res = spawnSync(process.execPath, ['bench/cli.js', 'run', '--check-settings'], {
    cwd: ROOT, env: { ...bareEnv, K6_BIN: '/nonexistent/k6' }, encoding: 'utf8', timeout: 30_000,
  });
  assert.notEqual(res.status, 0);
  assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  assert.match(res.stderr, /^bench: the capacity pass \(CAPACITY=auto, the default; CAPACITY=0 runs without it\) needs (wrk|h2load): .*missing: /);
  const without = spawnSync(process.execPath, ['bench/cli.js', 'run', '--check-settings'], {
    cwd: ROOT, env: { ...bareEnv, CAPACITY: '0', K6_BIN: '/nonexistent/k6' }, encoding: 'utf8', timeout: 30_000,
  });
  assert.doesNotMatch(without.stderr, /capacity pass/);
});

test('an unknown tool or set is refused with the list of known ones', () => {
  for (const args of [['no-such-tool'], ['--set', 'no-such-set']]) {
    const res = spawnSync('bash', [ENSURE, ...args], { encoding: 'utf8' });
    assert.equal(res.status, 2);
    assert.match(res.stderr, /^ensure-tool: unknown (tool|set) 'no-such-(tool|set)': one of .*\b(k6|test)\b/);
  }
});
