// The Docker flow for real, on podman: build.sh builds the image, starthttp.sh and startgrpc.sh start it
// until its HEALTHCHECK passes, the server runs as uid 1000 and answers curl and grpcurl from the host,
// Compose's k6 service runs the repo's k6 scripts into results/, a stop drains and exits 0 in time,
// the scale profile balances over two replicas, k6 on a second machine (a network namespace) loads the container through
// REMOTE_*_HOST, and broken images fail. compose.yaml runs unchanged,
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
import { createLink } from '../../bench/placement/link.js';
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

/** The new results/ files a callback leaves, removed when the test ends. */
async function newResults(t, fn) {
  const dir = path.join(ROOT, 'results');
  const before = new Set(fs.readdirSync(dir));
  const out = await fn();
  const files = fs.readdirSync(dir).filter((f) => !before.has(f)).map((f) => path.join(dir, f));
  t.after(() => { for (const f of files) fs.rmSync(f, { force: true }); });
  return { out, files };
}

/** The one summary k6 wrote: iterations and failed checks; fails the test unless it is one file. */
function summaryOf(files) {
  assert.equal(files.length, 1, files.join(','));
  const { metrics } = JSON.parse(fs.readFileSync(files[0], 'utf8'));
  return { iterations: metrics.iterations.values.count, rate: metrics.iterations.values.rate, fails: metrics.checks.values.fails };
}

const GRACE_MS = 1000 * Number(/^(\d+)s$/.exec(composeFile['x-server']?.stop_grace_period ?? composeFile.services['server-http'].stop_grace_period)[1]);

/**
 * What is wrong with an image, run as the start scripts run it: [] when its health check passes within
 * 20 s and it runs as the base image's `node` user (uid 1000).
 * @param {string} image
 * @returns {Promise<string[]>}
 */
async function imageProblems(image) {
  const name = `jvgb-probe-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const started = podman('run', '-d', '--pull=never', '--name', name, '-e', 'WORKERS=1', image);
  if (started.status !== 0) return [`does not start: ${started.stderr.trim()}`];
  const problems = [];
  try {
    let healthy = false;
    for (let i = 0; i < 20 && !healthy; i++) {
      await sleep(1000);
      if (podman('inspect', name, '--format', '{{.State.Running}}').stdout.trim() !== 'true') break;
      healthy = podman('healthcheck', 'run', name).status === 0;
    }
    if (!healthy) problems.push(`never healthy: ${podman('logs', '--tail', '3', name).stderr.trim()}`);
    const user = podman('run', '--rm', '--pull=never', '--entrypoint', 'id', image, '-un');
    if (user.stdout.trim() !== 'node') problems.push(`runs as '${user.stdout.trim()}' ${user.stderr.trim()}, not node`);
  } finally {
    podman('rm', '-f', '-t', '0', name);
  }
  return problems;
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
      assert.equal(podman('exec', id, 'id', '-un').stdout.trim(), 'node');

      const payload = mode === 'http'
        ? spawnSync('curl', ['-fsS', `http://127.0.0.1:${ports.http}/`], { encoding: 'utf8', timeout: 10_000 })
        : spawnSync('grpcurl', ['-plaintext', '-d', '{}', `127.0.0.1:${ports.grpc}`, 'user.v1.UserService/GetUser'], { env, encoding: 'utf8', timeout: 10_000 });
      assert.equal(payload.status, 0, payload.stderr);
      assert.equal(JSON.parse(payload.stdout).username, 'Bob');

      const { out: k6, files } = await newResults(t, () => compose(mode, 'run', '--rm', 'k6', 'run', `${mode}-tests/local.js`, '--duration=10s', '--vus=8'));
      assert.equal(k6.status, 0, k6.stdout.slice(-3000) + k6.stderr.slice(-2000));
      assert.match(path.basename(files[0] ?? ''), new RegExp(`^k6-${mode}-local-`));
      const summary = summaryOf(files);
      assert.ok(summary.iterations > 0);
      assert.equal(summary.fails, 0);
      t.diagnostic(`k6 in Compose, ${mode}: ${summary.iterations} iterations, ${summary.rate.toFixed(0)} /s`);
    });
  }

  test('two machines: k6 in a network namespace of its own (machine B) loads the container through REMOTE_*_HOST, as docs/docker.md tells', async (t) => {
    // Machine B: a namespace joined to this one by a veth pair, 198.18.n.2 there and 198.18.n.1 here (bench/placement/link.js,
    // no shaping); the start scripts publish on 198.18.n.1, the address B reaches A by.
    const link = await createLink({ name: 'machine-b', down: null, up: null, rttMs: 0 });
    t.after(async () => {
      await link.close();
      // The start script again, published on loopback as the tests after this one expect.
      await drivingHealth(run('bash', ['startgrpc.sh'], { timeoutMs: 180_000 }));
    });
    const k6 = ensureTool('k6');
    for (const [mode, hostVar] of [['http', 'REMOTE_HTTP_HOST'], ['grpc', 'REMOTE_GRPC_HOST']]) {
      const publish = `${link.clientAddress}:${ports[mode]}`;
      const started = await drivingHealth(run('bash', [`start${mode}.sh`], { timeoutMs: 180_000, extraEnv: { [`${mode.toUpperCase()}_PUBLISH`]: publish } }));
      assert.equal(started.status, 0, started.stderr);
      const [cmd, args] = link.command(k6, ['run', '-e', `${hostVar}=${publish}`, `${mode}-tests/remote.js`, '--duration=5s', '--vus=4'], null);
      const { out, files } = await newResults(t, () => run(cmd, args, { timeoutMs: 120_000 }));
      assert.equal(out.status, 0, out.stdout.slice(-3000) + out.stderr.slice(-2000));
      assert.match(path.basename(files[0] ?? ''), new RegExp(`^k6-${mode}-remote-`));
      const summary = summaryOf(files);
      assert.ok(summary.iterations > 0);
      assert.equal(summary.fails, 0);
      t.diagnostic(`k6 from machine B, ${mode} at ${publish}: ${summary.iterations} iterations, 0 failed`);
    }
  });

  test(`stop: SIGTERM through tini, the primary drains and exits 0 within stop_grace_period (${GRACE_MS} ms) while k6 runs`, async (t) => {
    const [id] = await idOf('grpc', 'server-grpc');
    assert.ok(id, 'server-grpc is not running (the test before starts it)');
    const k6 = newResults(t, () => compose('grpc', 'run', '--rm', 'k6', 'run', 'grpc-tests/local.js', '--duration=8s', '--vus=8'));
    await sleep(4000);
    const stop = await compose('grpc', 'stop', 'server-grpc');
    assert.equal(stop.status, 0, stop.stderr);
    t.diagnostic(`docker-compose stop server-grpc took ${stop.ms} ms`);
    assert.ok(stop.ms < GRACE_MS, `${stop.ms} ms`);
    assert.equal(podman('inspect', id, '--format', '{{.State.ExitCode}}').stdout.trim(), '0');
    const logs = podman('logs', id);
    const events = (logs.stdout + logs.stderr).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const shutdown = events.find((e) => e.event === 'shutting-down');
    assert.ok(shutdown, 'no shutting-down event: the primary did not get SIGTERM');
    assert.deepEqual(events.filter((e) => e.event === 'stopped').map((e) => e.exitCode), [0]);
    // k6 was running: what it served before the stop passed its checks (the requests after are refused).
    const { out, files } = await k6;
    const summary = summaryOf(files);
    assert.ok(summary.iterations > 0, out.stdout.slice(-2000));
    t.diagnostic(`k6 during the stop: ${summary.iterations} iterations, ${summary.fails} failed checks (exit ${out.status})`);
  });

  test('the scale profile: --scale server=2 behind HAProxy; k6 through HAProxy, 0 failed; both replicas serve, by their own counts', async (t) => {
    const extraEnv = { ADMIN_PORT: '9100' };
    const up = await run('docker-compose', ['--profile', 'scale', 'up', '-d', '--scale', 'server=2'], { timeoutMs: 180_000, extraEnv });
    assert.equal(up.status, 0, up.stderr);
    const replicas = await idOf('scale', 'server');
    assert.equal(replicas.length, 2);
    // HAProxy fills its slots from DNS and checks each replica: wait until a request goes through it.
    let through = false;
    for (let i = 0; i < 60 && !through; i++) {
      await sleep(1000);
      through = spawnSync('curl', ['-fsS', '-o', '/dev/null', `http://127.0.0.1:${ports.http}/`], { timeout: 5000 }).status === 0;
    }
    assert.ok(through, 'no answer through HAProxy in 60 s');
    for (const [mode, host] of [['http', 'haproxy:3000'], ['grpc', 'haproxy:4000']]) {
      const { out, files } = await newResults(t, () => compose('scale', 'run', '--rm', '-e', `LOCAL_${mode.toUpperCase()}_HOST=${host}`, 'k6', 'run', `${mode}-tests/local.js`, '--duration=5s', '--vus=8'));
      assert.equal(out.status, 0, out.stdout.slice(-2000) + out.stderr.slice(-2000));
      const summary = summaryOf(files);
      assert.equal(summary.fails, 0);
      assert.ok(summary.iterations > 0);
    }
    const served = replicas.map((id) => {
      const res = podman('exec', id, 'node', '-e', 'fetch("http://127.0.0.1:9100/metrics").then((r) => r.text()).then(console.log)');
      const count = (handlers) => [...res.stdout.matchAll(new RegExp(`^server_requests_served_total\\{[^}]*handlers="${handlers}"[^}]*\\} (\\d+)`, 'gm'))]
        .reduce((sum, m) => sum + Number(m[1]), 0);
      return { http: count('http'), grpc: count('grpc') };
    });
    t.diagnostic(`served by each replica: ${JSON.stringify(served)}`);
    for (const s of served) {
      assert.ok(s.http > 100, JSON.stringify(served));
      assert.ok(s.grpc > 100, JSON.stringify(served));
    }
  });

  describe('a broken image fails', () => {
    const broken = [];
    after(() => { for (const image of broken) podman('rmi', '-f', image); });
    /** Builds the Dockerfile with `edit` applied as image `tag`; returns its tag. */
    const buildVariant = async (tag, edit, args = []) => {
      const file = path.join(tmp, `Dockerfile.${tag}`);
      fs.writeFileSync(file, edit(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')));
      const res = await run('podman', ['build', '--format', 'docker', '--pull=never', '--file', file, '--tag', `localhost/jvgb-broken:${tag}`, ...args, '.'], { timeoutMs: 10 * 60_000 });
      assert.equal(res.status, 0, res.stderr.slice(-2000));
      broken.push(`localhost/jvgb-broken:${tag}`);
      return `localhost/jvgb-broken:${tag}`;
    };

    test('the image build.sh builds has no problem (the control)', async () => {
      assert.deepEqual(await imageProblems(IMAGE), []);
    });

    test('a Dockerfile that forgets COPY server: never healthy', async () => {
      const image = await buildVariant('no-server', (d) => d.replace(/^COPY server .*$/m, ''));
      const problems = await imageProblems(image);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], /^never healthy/);
    });

    test('a base without uid 1000: not the node user', async () => {
      const image = await buildVariant('no-node-user', (d) => d, ['--build-arg', 'NODE_IMAGE=localhost/node-no-user:test']);
      const problems = await imageProblems(image);
      assert.ok(problems.some((p) => /not node$/.test(p)), problems.join('\n'));
    });

    test('a HEALTHCHECK path that does not exist: never healthy', async () => {
      const image = await buildVariant('bad-healthcheck', (d) => d.replace('CMD ["node", "server/healthcheck.js"]', 'CMD ["node", "server/no-such-check.js"]'));
      const problems = await imageProblems(image);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], /^never healthy/);
    });
  });
});
