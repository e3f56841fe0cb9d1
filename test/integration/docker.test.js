// The Docker packaging's scripts and the balancer's config, run: build.sh, starthttp.sh and startgrpc.sh
// against a stub `docker` (their no-engine path for real), and haproxy -c on deploy/haproxy/haproxy.cfg.
// Needs no Docker engine. The static checks of Dockerfile and compose.yaml: test/unit/docker.test.js.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { CLEARTEXT_MODE_NAMES, MODES as MODE_REGISTRY } from '../../bench/modes.js';
import { ensureTool } from '../../bench/tools.js';
import { ROOT } from '../../bench/root.js';
import { LISTENERS } from '../../server/listeners.js';
import { compose, defaultOf } from '../helpers/compose.js';

const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exists = (file) => fs.existsSync(path.join(ROOT, file));
const pkg = JSON.parse(read('package.json'));
// The Docker files start the cleartext modes (compose.tls.yaml adds TLS to them; the json-h2 mode has no service).
const MODES = CLEARTEXT_MODE_NAMES;
// A key without a value (LB_MAXCONN) passes the caller's variable: unset here.
const haproxyEnv = Object.fromEntries(Object.entries(compose.services.haproxy?.environment ?? {}).filter(([, v]) => v !== null)
  .map(([k, v]) => [k, defaultOf(v)]));

describe('deploy/haproxy/haproxy.cfg', () => {
  test('haproxy -c accepts the file in both forms, and rejects a broken one', () => {
    const haproxy = ensureTool('haproxy'); // npm test provisions it; a machine without it fails here, naming the install
    const check = (file, env) => spawnSync(haproxy, ['-c', '-q', '-f', file], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const file = path.join(ROOT, 'deploy/haproxy/haproxy.cfg');
    assert.equal(check(file, {}).status, 0, check(file, {}).stderr);
    assert.equal(check(file, haproxyEnv).status, 0, check(file, haproxyEnv).stderr);
    const broken = path.join(tmp, 'broken.cfg');
    fs.writeFileSync(broken, read('deploy/haproxy/haproxy.cfg').replace('balance roundrobin', 'balance round-robin'));
    assert.notEqual(check(broken, {}).status, 0);
  });
});

// ---------------------------------------------------------------- scripts

const BASH = spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docker-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs a repo script with bash from another folder; env replaces the environment. */
const runScript = (script, env) => spawnSync(BASH, [path.join(ROOT, script)], { cwd: tmp, env, encoding: 'utf8', timeout: 30_000 });
/** The environment without anything that points docker at an engine. */
const { DOCKER_HOST, DOCKER_CONTEXT, ...baseEnv } = process.env; // eslint-disable-line no-unused-vars

/** Stub `docker` (and `docker-compose`) that log their arguments and answer like a healthy engine. */
function stubDocker({ composeV2 = true, health = 'healthy' } = {}) {
  const dir = fs.mkdtempSync(path.join(tmp, 'stub-'));
  const log = path.join(dir, 'calls.log');
  const answer = (name) => `#!${BASH}
echo "${name} $*" >> "${log}"
case " $* " in
  " compose version ") exit ${composeV2 ? 0 : 1} ;;
  *" ps -q "*) echo c0ffee ;;
  " inspect "*) echo ${health} ;;
esac
exit 0
`;
  fs.writeFileSync(path.join(dir, 'docker'), answer('docker'), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'docker-compose'), answer('docker-compose'), { mode: 0o755 });
  return { env: { ...baseEnv, PATH: `${dir}${path.delimiter}${process.env.PATH}` }, calls: () => fs.readFileSync(log, 'utf8').trim().split('\n') };
}

describe('build.sh, starthttp.sh, startgrpc.sh', () => {
  for (const mode of MODES) {
    const script = `start${mode}.sh`;

    test(`${script} points to npm run start:${mode}, which exists and sets MODE to the mode's listener`, () => {
      assert.match(pkg.scripts[`start:${mode}`], new RegExp(`\\bMODE=${MODE_REGISTRY[mode].listener}\\b`));
    });

    test(`${script} with no docker on PATH: one clear line, nonzero exit`, () => {
      const empty = fs.mkdtempSync(path.join(tmp, 'path-'));
      const res = runScript(script, { PATH: empty });
      assert.notEqual(res.status, 0);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, new RegExp(`^${script}: Docker is not installed .*npm run start:${mode}\\n$`));
    });

    test(`${script} with docker but no engine: one clear line, nonzero exit`, () => {
      ensureTool('docker'); // the real client (npm test provisions Debian's docker.io), pointed at no engine
      const res = runScript(script, { ...baseEnv, DOCKER_HOST: `unix://${path.join(tmp, 'no-engine.sock')}` });
      assert.notEqual(res.status, 0);
      assert.equal(res.stdout, '');
      assert.match(res.stderr, new RegExp(`^${script}: no Docker engine is running .*npm run start:${mode}\\n$`));
    });

    test(`${script} with a Docker engine: stops the other modes, starts server-${mode}, prints the k6 command`, () => {
      const stub = stubDocker();
      const res = runScript(script, stub.env);
      assert.equal(res.status, 0, res.stderr);
      const calls = stub.calls();
      for (const other of MODES.filter((m) => m !== mode)) {
        assert.ok(calls.includes(`docker compose --profile ${other} stop server-${other}`), calls.join('\n'));
      }
      assert.ok(calls.includes(`docker compose --profile ${mode} up -d server-${mode}`), calls.join('\n'));
      // A mode that runs another mode's scripts aims them at its own server with -e.
      const { scripts: { local }, hostVars, listener } = MODE_REGISTRY[mode];
      const own = local === `${mode}-tests/local.js`;
      const port = LISTENERS[listener].defaultPort;
      const k6Args = (host) => `${own ? '' : `-e ${hostVars.local}=${host}:${port} `}${local} --duration=60s --vus=32`;
      assert.ok(exists(local));
      assert.ok(res.stdout.includes(`  k6 run ${k6Args('localhost')}\n`), res.stdout);
      assert.ok(res.stdout.includes(`  docker compose --profile ${mode} run --rm k6 run ${k6Args(`server-${mode}`)}\n`), res.stdout);
    });
  }

  test('this machine as it is: starthttp.sh without an engine says so and exits nonzero', (t) => {
    if (spawnSync('docker', ['info'], { timeout: 20_000 }).status === 0) return t.skip('a Docker engine runs here');
    const res = runScript('starthttp.sh', process.env);
    assert.notEqual(res.status, 0);
    assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    assert.match(res.stderr, /Docker.*npm run start:http$/m);
  });

  test('falls back to docker-compose when the compose plugin is missing', () => {
    const stub = stubDocker({ composeV2: false });
    const res = runScript('starthttp.sh', stub.env);
    assert.equal(res.status, 0, res.stderr);
    assert.ok(stub.calls().includes('docker-compose --profile http up -d server-http'));
    assert.ok(res.stdout.includes('  docker-compose --profile http run --rm k6 run http-tests/local.js'), res.stdout);
  });

  test('TLS_DIR: the printed Compose commands carry it, since Compose reads it again from compose.tls.yaml', () => {
    const certs = fs.mkdtempSync(path.join(tmp, 'tls-'));
    for (const file of ['server.crt', 'server.key', 'ca.crt']) fs.writeFileSync(path.join(certs, file), '');
    const stub = stubDocker();
    const res = runScript('starthttp.sh', { ...stub.env, TLS_DIR: certs });
    assert.equal(res.status, 0, res.stderr);
    const compose = `TLS_DIR=${certs} docker compose -f compose.yaml -f compose.tls.yaml --profile http`;
    assert.ok(res.stdout.includes(`  SSL_CERT_FILE=${certs}/ca.crt TLS_CA=${certs}/ca.crt k6 run http-tests/local.js`), res.stdout);
    assert.ok(res.stdout.includes(`  ${compose} run --rm k6 run http-tests/local.js --duration=60s --vus=32\n`), res.stdout);
    assert.ok(res.stdout.includes(`Stop it with: ${compose} down\n`), res.stdout);
  });

  test('an unhealthy server fails the start with a pointer to its logs', () => {
    const res = runScript('startgrpc.sh', stubDocker({ health: 'unhealthy' }).env);
    assert.equal(res.status, 1);
    assert.match(res.stderr, /server-grpc is not healthy .*logs server-grpc/);
  });

  test('build.sh builds the image through compose, and without an engine points to npm', () => {
    const stub = stubDocker();
    assert.equal(runScript('build.sh', stub.env).status, 0);
    assert.ok(stub.calls().includes('docker compose --profile http build server-http'));
    const res = runScript('build.sh', { PATH: fs.mkdtempSync(path.join(tmp, 'path-')) });
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /npm run start:http/);
  });
});
