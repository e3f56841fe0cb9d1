// The Docker flow for real, on podman: build.sh builds the image, starthttp.sh and startgrpc.sh start it
// until its HEALTHCHECK passes, the server runs as uid 1000 and answers curl and grpcurl from the host,
// Compose's k6 service runs the repo's k6 scripts into results/, a stop drains and exits 0 in time,
// the scale profile balances over two replicas, and broken images fail. compose.yaml runs unchanged,
// by docker-compose (Debian's, v1) against podman's Docker API (`podman system service`).
// No registry is reachable: scripts/podman-standins.sh builds local stand-ins of the base images under
// their own names. Needs root; skips (with the reason) only where podman cannot run at all.
// The static checks of the same files: test/unit/docker.test.js and test/integration/docker.test.js.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { ensureTool } from '../../bench/tools.js';
import { freePort, ROOT } from '../helpers/server.js';
import { compose as composeFile } from '../helpers/compose.js';

const IMAGE = 'json-vs-grpc-bench:local';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docker-run-'));
const socket = path.join(tmp, 'podman.sock');
/** @type {Record<string, string>} the environment of every podman, docker and compose command */
let env = { ...process.env };
let service; // podman system service
const ports = {};

/**
 * Runs a command in the repository and resolves with its status and output (never rejects).
 * @param {string} cmd
 * @param {string[]} args
 * @param {{timeoutMs?: number, extraEnv?: Record<string, string>}} [opts] killed past timeoutMs (default 120000)
 * @returns {Promise<{status: number|null, stdout: string, stderr: string, ms: number}>}
 */
function run(cmd, args, { timeoutMs = 120_000, extraEnv = {} } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...env, ...extraEnv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr, ms: Date.now() - started }); });
  });
}
const podman = (...args) => spawnSync('podman', args, { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
const compose = (profile, ...args) => run('docker-compose', ['--profile', profile, ...args], { timeoutMs: 180_000 });
const idOf = async (profile, svc) => (await compose(profile, 'ps', '-q', svc)).stdout.trim().split('\n').filter(Boolean);

/**
 * Runs every health check of this project's containers once a second until `until` settles: podman
 * runs HEALTHCHECKs from systemd timers, and no systemd runs here.
 * @template T
 * @param {Promise<T>} until
 * @returns {Promise<T>}
 */
async function drivingHealth(until) {
  let done = false;
  const settled = until.finally(() => { done = true; });
  while (!done) {
    const ids = podman('ps', '-q', '--filter', `label=com.docker.compose.project=${env.COMPOSE_PROJECT_NAME}`).stdout.trim().split('\n').filter(Boolean);
    for (const id of ids) podman('healthcheck', 'run', id);
    await Promise.race([settled, sleep(1000)]);
  }
  return settled;
}

/** Why these tests cannot run here, or '' when they can. */
function whyNot() {
  if (process.getuid?.() !== 0) return 'needs root (podman runs the containers rootful)';
  if (fs.existsSync('/run/.containerenv')) return 'inside a podman container (the fresh-machine check): .ci/run runs these on the host';
  return '';
}
const skip = whyNot();

before(async () => {
  if (skip) return;
  // The stand-ins (and podman's setup: CONTAINERS_CONF) once; seconds when .tools/podman has them.
  const standins = await run('bash', ['scripts/podman-standins.sh'], { timeoutMs: 15 * 60_000 });
  assert.equal(standins.status, 0, `scripts/podman-standins.sh failed:\n${standins.stderr}`);
  env.CONTAINERS_CONF = path.join(ROOT, '.tools/podman/containers.conf');
  service = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { env, stdio: 'ignore' });
  for (let i = 0; i < 100 && !fs.existsSync(socket); i++) await sleep(100);
  Object.assign(ports, { http: await freePort(), grpc: await freePort() });
  env = {
    ...env,
    DOCKER_HOST: `unix://${socket}`,
    COMPOSE_PROJECT_NAME: `jvgbtest${process.pid}`,
    // This machine's hard limit: podman cannot raise it (compose.yaml's default is 250000).
    NOFILE: spawnSync('bash', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim(),
    HTTP_PUBLISH: `127.0.0.1:${ports.http}`,
    GRPC_PUBLISH: `127.0.0.1:${ports.grpc}`,
    // As docs/docker.md tells: k6 writes results/ as the user who owns it (root here).
    K6_USER: '0:0',
    WORKERS: '1',
    SERVER_CPUS: '1',
    PATH: `${path.dirname(ensureTool('grpcurl'))}${path.delimiter}${process.env.PATH}`,
  };
});

after(async () => {
  if (!skip) {
    await run('docker-compose', ['--profile', 'http', '--profile', 'grpc', '--profile', 'scale', 'down', '--remove-orphans', '-t', '1'], { timeoutMs: 120_000 });
    service?.kill('SIGTERM');
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the Docker flow on podman', { skip: skip || false }, () => {
  test('bash build.sh builds the image with podman (CONTAINER_ENGINE=podman), keeping the HEALTHCHECK', async (t) => {
    const res = await run('bash', ['build.sh'], { timeoutMs: 15 * 60_000, extraEnv: { CONTAINER_ENGINE: 'podman' } });
    assert.equal(res.status, 0, res.stderr.slice(-3000));
    t.diagnostic(`build.sh took ${res.ms} ms`);
    const health = JSON.parse(podman('image', 'inspect', IMAGE, '--format', '{{json .Config.Healthcheck}}').stdout);
    assert.deepEqual(health.Test, composeFile['x-server']?.healthcheck?.test ?? ['CMD', 'node', 'server/healthcheck.js']);
  });

  test('bash build.sh with CONTAINER_ENGINE unset and no Docker engine finds podman', async () => {
    const res = await run('bash', ['build.sh'], { timeoutMs: 10 * 60_000, extraEnv: { DOCKER_HOST: `unix://${tmp}/no-engine.sock` } });
    assert.equal(res.status, 0, res.stderr.slice(-3000));
    assert.match(res.stdout + res.stderr, /STEP \d+\/\d+/); // podman build's progress, not Compose's
  });

  for (const mode of ['http', 'grpc']) {
    test(`bash start${mode}.sh: healthy, uid 1000, the payload from the host; Compose's k6 runs ${mode}-tests/local.js with 0 failed`, async (t) => {
      const res = await drivingHealth(run('bash', [`start${mode}.sh`], { timeoutMs: 180_000 }));
      assert.equal(res.status, 0, res.stderr);
      assert.match(res.stdout, new RegExp(`server-${mode} is up and healthy`));
      const [id] = await idOf(mode, `server-${mode}`);
      assert.ok(id, 'no container');
      assert.equal(podman('inspect', id, '--format', '{{.State.Health.Status}}').stdout.trim(), 'healthy');
      // Every process of the container (tini, the primary, its workers) runs as uid 1000.
      const pids = podman('top', id, 'hpid').stdout.trim().split('\n').slice(1).map((l) => l.trim());
      const uids = pids.map((pid) => /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      assert.ok(uids.length >= 3, uids.join(','));
      assert.deepEqual([...new Set(uids)], ['1000']);

      const payload = mode === 'http'
        ? spawnSync('curl', ['-fsS', `http://127.0.0.1:${ports.http}/`], { encoding: 'utf8', timeout: 10_000 })
        : spawnSync('grpcurl', ['-plaintext', '-d', '{}', `127.0.0.1:${ports.grpc}`, 'user.v1.UserService/GetUser'], { env, encoding: 'utf8', timeout: 10_000 });
      assert.equal(payload.status, 0, payload.stderr);
      assert.equal(JSON.parse(payload.stdout).username, 'Bob');

      const before = new Set(fs.readdirSync(path.join(ROOT, 'results')));
      const k6 = await compose(mode, 'run', '--rm', 'k6', 'run', `${mode}-tests/local.js`, '--duration=10s', '--vus=8');
      assert.equal(k6.status, 0, k6.stdout.slice(-3000) + k6.stderr.slice(-2000));
      const files = fs.readdirSync(path.join(ROOT, 'results')).filter((f) => !before.has(f) && f.startsWith(`k6-${mode}-local-`));
      assert.equal(files.length, 1, files.join(','));
      const file = path.join(ROOT, 'results', files[0]);
      t.after(() => fs.rmSync(file, { force: true }));
      const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.ok(summary.metrics.iterations.values.count > 0);
      assert.equal(summary.metrics.checks.values.fails, 0);
      t.diagnostic(`k6 in Compose, ${mode}: ${summary.metrics.iterations.values.count} iterations, ${summary.metrics.iterations.values.rate.toFixed(0)} /s`);
    });
  }
});
