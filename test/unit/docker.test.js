// The Docker packaging agrees with the server it packages: Dockerfile and compose.yaml are
// checked against server/settings.js, package.json and the k6 scripts, statically (the start
// scripts and haproxy -c: test/integration/docker.test.js).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DockerfileParser } from 'dockerfile-ast';
import * as config from '../../config.js';
import { readSettings } from '../../server/settings.js';
import { ENTRY_DIRS } from '../../bench/k6/scripts.js';
import { K6_VARS } from '../../bench/k6/command.js';
import { CLEARTEXT_MODE_NAMES, MODES as MODE_REGISTRY } from '../../bench/modes.js';
import { LISTENERS } from '../../server/listeners.js';
import YAML from 'yaml';
import { CERT_FILES, COMPOSE_NAMES } from '../../bench/commands/certs.js';
import { compose, defaultOf } from '../helpers/compose.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exists = (file) => fs.existsSync(path.join(ROOT, file));
const pkg = JSON.parse(read('package.json'));

/** The server's own defaults, as it reads them from an empty environment. */
const DEFAULTS = readSettings({});
/** Port setting of the listener a mode loads, e.g. http -> HTTP_PORT. */
const portKeyOf = (mode) => LISTENERS[MODE_REGISTRY[mode].listener].portSetting;
/** The modes the Docker files start (server-http, server-grpc) and the k6 service's profiles. */
// The Docker files start the cleartext modes (compose.tls.yaml adds TLS to them; the json-h2 mode has no service).
const MODES = CLEARTEXT_MODE_NAMES;

// ---------------------------------------------------------------- Dockerfile

const dockerfile = DockerfileParser.parse(read('Dockerfile'));
const buildArgs = Object.fromEntries(
  dockerfile.getInitialARGs().flatMap((arg) => arg.getProperties().map((p) => [p.getName(), p.getValue()])),
);
const expandArgs = (text) => text.replace(/\$\{?(\w+)\}?/g, (_, name) => buildArgs[name] ?? '');

/** Stages in order: {image, name, instructions}. */
const stages = [];
for (const instruction of dockerfile.getInstructions()) {
  if (instruction.getKeyword() === 'FROM') {
    stages.push({ image: expandArgs(instruction.getImage()), name: instruction.getBuildStage(), instructions: [] });
  } else if (stages.length) {
    stages.at(-1).instructions.push(instruction);
  }
}
const finalStage = stages.at(-1);
const inFinal = (keyword) => finalStage.instructions.filter((i) => i.getKeyword() === keyword);
const argsOf = (instruction) => instruction.getArguments().map((a) => a.getValue());
/** The exec-form (JSON array) arguments of CMD, ENTRYPOINT or HEALTHCHECK CMD. */
const execForm = (instruction, skip = 0) => JSON.parse(argsOf(instruction).slice(skip).join(' '));
const flagsOf = (instruction) => Object.fromEntries(instruction.getFlags().map((f) => [f.getName(), f.getValue()]));

const imageEnv = Object.fromEntries(
  inFinal('ENV').flatMap((env) => env.getProperties().map((p) => [p.getName(), p.getValue()])),
);
const [healthcheck] = inFinal('HEALTHCHECK');
const healthCommand = healthcheck && execForm(healthcheck, 1);

/** Repo paths the final stage copies from the build context (not from other stages). */
const copiedFromContext = inFinal('COPY')
  .filter((copy) => !flagsOf(copy).from)
  .flatMap((copy) => argsOf(copy).slice(0, -1));
const isCopied = (file) => copiedFromContext.some((src) => file === src || file.startsWith(`${src}/`));

/**
 * Every file reachable by static imports from `entries`, and the npm packages they name.
 * @param {string[]} entries repo-relative .js files
 */
function importGraph(entries) {
  const files = new Set();
  const packages = new Set();
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;
  const visit = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, spec] of read(file).matchAll(pattern)) {
      if (spec.startsWith('.')) {
        let target = path.posix.join(path.posix.dirname(file), spec);
        if (exists(target) && fs.statSync(path.join(ROOT, target)).isDirectory()) target = `${target}/index.js`;
        assert.ok(exists(target), `${file} imports ${spec}, which is missing`);
        if (target.endsWith('.js')) visit(target);
        else files.add(target);
      } else if (!spec.startsWith('node:') && !spec.startsWith('k6') && !builtinModules.includes(spec)) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
      }
    }
  };
  entries.forEach(visit);
  return { files: [...files], packages: [...packages] };
}

describe('Dockerfile', () => {
  test('every stage starts from the Node release the project pins, on bookworm-slim, and package.json asks for it', () => {
    const images = new Set(stages.map((s) => s.image));
    assert.equal(images.size, 1, `stages use different images: ${[...images]}`);
    const [image] = images;
    // The pin lives in one place: ensure-tool.sh's NODE_PIN (a release the npm registry carries, so the tag exists).
    const pin = /^NODE_PIN=(\d+\.\d+\.\d+)$/m.exec(read('scripts/ensure-tool.sh'))?.[1];
    assert.ok(pin, 'no NODE_PIN=X.Y.Z in scripts/ensure-tool.sh');
    assert.equal(image, `node:${pin}-bookworm-slim`);
    assert.equal(Number(pin.split('.')[0]) % 2, 0, `Node ${pin} is not an LTS line`);
    assert.equal(pkg.engines.node, `>=${pin}`);
  });

  test('a build stage runs npm ci --omit=dev and the final stage takes node_modules from it', () => {
    assert.ok(stages.length >= 2, 'not a multi-stage build');
    const build = stages.slice(0, -1).find((s) => s.instructions
      .some((i) => i.getKeyword() === 'RUN' && /\bnpm ci\b[^&|;]*--omit=dev/.test(argsOf(i).join(' '))));
    assert.ok(build?.name, 'no named build stage runs `npm ci --omit=dev`');
    const fromBuild = inFinal('COPY').filter((c) => flagsOf(c).from === build.name);
    assert.deepEqual(fromBuild.map((c) => argsOf(c)[0]), ['/app/node_modules']);
  });

  test('only the runtime files go in: package*.json, proto/, server/', () => {
    assert.deepEqual(new Set(copiedFromContext), new Set(['package.json', 'package-lock.json', 'proto', 'server']));
  });

  test('every module the server loads is in the image, and every package it imports is a production dependency', () => {
    const entries = ['server/index.js', 'server/healthcheck.js'];
    const { files, packages } = importGraph(entries);
    for (const file of files) assert.ok(isCopied(file), `${file} is loaded by the server but not copied into the image`);
    for (const name of packages) {
      assert.ok(pkg.dependencies?.[name], `${name} is imported by the server but is not in dependencies (npm ci --omit=dev drops it)`);
    }
  });

  test('runs as the unprivileged node user (uid 1000 in the Node images)', () => {
    const user = argsOf(inFinal('USER').at(-1) ?? { getArguments: () => [] }).join('');
    assert.match(user, /^(node|1000)(:(node|1000))?$/, `final USER is ${JSON.stringify(user)}`);
  });

  test('tini is PID 1 and CMD is the command of `npm start`', () => {
    const entrypoint = execForm(inFinal('ENTRYPOINT').at(-1));
    assert.deepEqual(entrypoint, ['/usr/bin/tini', '--']);
    assert.ok(inFinal('RUN').some((i) => /apt-get install\b.*\btini\b/.test(argsOf(i).join(' '))), 'tini is not installed');
    const cmd = execForm(inFinal('CMD').at(-1));
    assert.deepEqual(cmd, pkg.scripts.start.split(' '));
    assert.ok(exists(`${cmd[1]}/index.js`) && isCopied(`${cmd[1]}/index.js`));
  });

  test('ENV sets MODE, HOST and the ports at the server\'s own defaults, and never WORKERS', () => {
    const { NODE_ENV, ...settings } = imageEnv;
    assert.equal(NODE_ENV, 'production');
    for (const name of ['MODE', 'HOST', 'HTTP_PORT', 'GRPC_PORT']) assert.ok(name in settings, `ENV does not set ${name}`);
    for (const [name, value] of Object.entries(settings)) {
      assert.ok(name in DEFAULTS, `ENV sets ${name}, which the server does not read`);
      assert.equal(value, String(DEFAULTS[name]), `ENV ${name}=${value}, the server's default is ${DEFAULTS[name]}`);
    }
    // WORKERS follows the CPUs the container gets, so the image must not fix it.
    assert.ok(!('WORKERS' in settings));
    assert.deepEqual({ ...readSettings(imageEnv) }, { ...DEFAULTS }); // plain copies: envalid's strict proxy throws on the .constructor Node 24's assert reads
  });

  test('EXPOSE lists the port of every listener, at the ports the image configures', () => {
    const exposed = inFinal('EXPOSE').flatMap(argsOf).map(Number).sort();
    const both = readSettings({ ...imageEnv, MODE: 'both' });
    assert.deepEqual(exposed, [both.HTTP_PORT, both.GRPC_PORT].sort());
  });

  test('HEALTHCHECK runs the server\'s own probe, which is copied into the image', () => {
    assert.ok(healthcheck, 'no HEALTHCHECK');
    assert.deepEqual(healthCommand, ['node', 'server/healthcheck.js']);
    assert.ok(exists(healthCommand[1]) && isCopied(healthCommand[1]));
  });

  test('.dockerignore keeps node_modules, results, .tools and .git out of the build context', () => {
    const ignored = new Set(read('.dockerignore').split('\n').map((l) => l.trim().replace(/^\/|\/$/g, '')));
    for (const entry of ['node_modules', 'results', '.tools', '.git']) assert.ok(ignored.has(entry), `${entry} is not ignored`);
    for (const entry of copiedFromContext) assert.ok(!ignored.has(entry), `${entry} is copied but ignored`);
  });
});

// ---------------------------------------------------------------- compose.yaml

const services = compose.services ?? {};
const varOf = (value) => /^\$\{(\w+)/.exec(String(value))?.[1];
/** A ports entry as [host port, container port], with `${VAR:-default}` at its default. */
const portPair = (p) => /^(?:\$\{\w+:-)?(\d+)\}?:(\d+)$/.exec(String(p))?.slice(1).map(Number);
const nofile = (service) => {
  const limit = service.ulimits?.nofile;
  const { soft, hard } = typeof limit === 'object' ? limit : { soft: limit, hard: limit };
  return { soft: Number(defaultOf(soft)), hard: Number(defaultOf(hard)), vars: [varOf(soft), varOf(hard)] };
};

describe('compose.yaml', () => {
  test('follows the Compose Specification (no version key)', () => {
    assert.ok(!('version' in compose));
  });

  for (const mode of MODES) {
    describe(`server-${mode}`, () => {
      const service = services[`server-${mode}`];
      const env = Object.fromEntries(Object.entries(service?.environment ?? {}).map(([k, v]) => [k, defaultOf(v)]));
      const settings = service && readSettings({ ...imageEnv, ...env });

      // The server's MODE is a listener set: the mode's listener, whose name need not be the mode's.
      test(`is in profile ${mode}, runs MODE=${MODE_REGISTRY[mode].listener} and valid settings`, () => {
        assert.ok(service, `no service server-${mode}`);
        assert.deepEqual(service.profiles, [mode]);
        assert.equal(settings.MODE, MODE_REGISTRY[mode].listener);
        assert.deepEqual(Object.keys(env).filter((k) => !(k in DEFAULTS)), [], 'sets variables the server does not read');
      });

      test('publishes the port of its listener on the same host port (by default), and no other', () => {
        const ports = (service.ports ?? []).map(portPair);
        const port = settings[portKeyOf(mode)];
        assert.deepEqual(ports, [[port, port]]);
      });

      test('runs the image that build.sh builds, with the Dockerfile\'s health check and a restart policy', () => {
        assert.ok(service.build, 'no build: compose would pull the image');
        assert.equal(service.image, services[`server-${MODES.find((m) => m !== mode)}`].image);
        assert.deepEqual(service.healthcheck?.test, ['CMD', ...healthCommand]);
        assert.ok(service.restart && service.restart !== 'no', `restart is ${service.restart}`);
      });

      test('gives the server longer to stop than it lets in-flight requests finish', (t) => {
        if (!('SHUTDOWN_TIMEOUT_MS' in settings)) return t.skip('the server has no SHUTDOWN_TIMEOUT_MS');
        const match = /^(\d+)(ms|s|m)$/.exec(String(service.stop_grace_period));
        assert.ok(match, `stop_grace_period is ${service.stop_grace_period}; Docker's default 10s`);
        const graceMs = Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2]];
        // Past the grace period Docker sends SIGKILL, cutting the drain short.
        assert.ok(graceMs > settings.SHUTDOWN_TIMEOUT_MS, `${graceMs} ms <= SHUTDOWN_TIMEOUT_MS ${settings.SHUTDOWN_TIMEOUT_MS}`);
      });

      test('has nofile 250000 (NOFILE) and CPU and memory limits from SERVER_CPUS / SERVER_MEMORY with defaults', () => {
        assert.deepEqual(nofile(service), { soft: 250000, hard: 250000, vars: ['NOFILE', 'NOFILE'] });
        assert.equal(varOf(service.cpus), 'SERVER_CPUS');
        assert.match(defaultOf(service.cpus), /^\d+(\.\d+)?$/);
        assert.equal(varOf(service.mem_limit), 'SERVER_MEMORY');
        assert.match(defaultOf(service.mem_limit), /^\d+[kmg]?$/i);
        // One worker per CPU the container gets: the default WORKERS fits the default CPUs.
        if ('WORKERS' in env) assert.equal(Number(env.WORKERS), Number(defaultOf(service.cpus)));
      });
    });
  }

  test('compose.tls.yaml gives every mode\'s service the certificate and the k6 service its CA, from one TLS_DIR mount', () => {
    const tls = YAML.parse(read('compose.tls.yaml'), { merge: true });
    assert.deepEqual(Object.keys(tls.services).sort(), [...MODES.map((m) => `server-${m}`), 'k6'].sort());
    const mount = '/run/secrets/tls';
    for (const mode of MODES) {
      const server = tls.services[`server-${mode}`];
      assert.equal(server.volumes.length, 1);
      assert.match(server.volumes[0], new RegExp(`^\\$\\{TLS_DIR:\\?[^}]+\\}:${mount}:ro$`));
      // What the server reads (server/tls.js) and its HEALTHCHECK pins.
      assert.deepEqual(server.environment, { TLS_CERT: `${mount}/server.crt`, TLS_KEY: `${mount}/server.key` });
    }
    // The scripts read TLS_CA (k6/common.js); k6's HTTP client SSL_CERT_FILE.
    assert.deepEqual(tls.services.k6.environment, { TLS_CA: `${mount}/ca.crt`, SSL_CERT_FILE: `${mount}/ca.crt` });
    assert.deepEqual(tls.services.k6.volumes, tls.services['server-http'].volumes);
    // npm run certs writes the three files the overlay names, and puts every service's name in the certificate.
    assert.deepEqual(Object.keys(CERT_FILES).sort(), ['ca.crt', 'server.crt', 'server.key']);
    assert.deepEqual([...COMPOSE_NAMES].sort(), MODES.map((m) => `server-${m}`).sort());
  });

  test('compose.own.yaml gives every server service an own service\'s settings and k6 its variables, from one OWN_DIR mount at /own', () => {
    const own = YAML.parse(read('compose.own.yaml'), { merge: true });
    const servers = [...MODES.map((m) => `server-${m}`), 'server'];
    assert.deepEqual(Object.keys(own.services).sort(), [...servers, 'k6'].sort());
    const mount = own.services.k6.volumes;
    assert.equal(mount.length, 1);
    assert.match(mount[0], /^\$\{OWN_DIR:\?[^}]+\}:\/own:ro$/);
    for (const name of servers) {
      const server = own.services[name];
      assert.deepEqual(server.volumes, mount, name);
      // The user's paths are relative to /own: the server runs there, its command and health check named from /app.
      assert.equal(server.working_dir, '/own');
      assert.deepEqual(server.command, ['node', `/app/${execForm(inFinal('CMD')[0])[1]}`]);
      assert.deepEqual(server.healthcheck.test, ['CMD', healthCommand[0], `/app/${healthCommand[1]}`]);
      assert.deepEqual(Object.keys(server.environment).sort(), ['MAX_BODY_BYTES', 'PROTO', 'PROTO_PATH', 'RESPONSE', 'RPC', 'STREAM_INTERVAL']);
      assert.deepEqual(Object.keys(server.environment).filter((k) => !(k in DEFAULTS)), [], 'sets variables the server does not read');
    }
    assert.deepEqual(Object.keys(own.services.k6.environment).sort(), ['OWN_DIR', 'PROTO', 'PROTO_PATH', 'REQUESTS', 'RPC', 'STREAM', 'STREAM_FRAMING']);
    assert.equal(own.services.k6.environment.OWN_DIR, '/own');
    assert.deepEqual(Object.keys(own.services.k6.environment).filter((k) => !(k in K6_VARS)), [], 'sets variables no k6 script reads');
  });

  test('scripts/compose.sh starts every mode\'s service, and stops the others', () => {
    const list = /^SERVER_MODES=\(([^)]*)\)$/m.exec(read('scripts/compose.sh'));
    assert.ok(list, 'no SERVER_MODES=(...) in scripts/compose.sh');
    assert.deepEqual(list[1].trim().split(/\s+/), [...MODES]);
  });

  describe('k6', () => {
    const k6 = services.k6;

    test('is the official grafana/k6 image at the k6 release the project pins', () => {
      assert.ok(k6, 'no k6 service');
      const [, tag] = String(k6.image).split(':');
      assert.match(String(k6.image), /^grafana\/k6:\d+\.\d+\.\d+$/);
      // The pin lives in one place: ensure-tool.sh's VERSION table.
      const pin = /^\s*\[k6\]=v([0-9.]+)$/m.exec(read('scripts/ensure-tool.sh'));
      assert.ok(pin, 'no [k6]=v<version> pin in scripts/ensure-tool.sh');
      assert.equal(tag, pin[1]);
      assert.deepEqual(new Set(k6.profiles), new Set([...MODES, 'scale']));
    });

    // A mode that runs another mode's scripts (connect-grpc) shares that mode's host variable: the start script
    // aims it with -e instead (scripts/compose.sh start_mode).
    test('aims LOCAL_*_HOST at the server services by name, on the ports they listen on', () => {
      for (const mode of MODES.filter((m, i) => MODES.findIndex((o) => MODE_REGISTRY[o].hostVars.local === MODE_REGISTRY[m].hostVars.local) === i)) {
        const name = MODE_REGISTRY[mode].hostVars.local;
        assert.ok(name in config, `config.js does not read ${name}`);
        const server = services[`server-${mode}`];
        const env = Object.fromEntries(Object.entries(server.environment).map(([k, v]) => [k, defaultOf(v)]));
        const port = readSettings({ ...imageEnv, ...env })[portKeyOf(mode)];
        assert.equal(k6.environment[name], `server-${mode}:${port}`);
      }
    });

    test('mounts what the k6 scripts load read-only, at their repo paths, and results/ writable', () => {
      const mounts = Object.fromEntries(k6.volumes.map((v) => {
        const [source, target, mode = 'rw'] = v.split(':');
        assert.equal(target, path.posix.join(k6.working_dir, source), `${v} is not at its repo path under working_dir`);
        return [path.posix.normalize(source), mode];
      }));
      assert.deepEqual(mounts, {
        'config.js': 'ro', k6: 'ro', ...Object.fromEntries(ENTRY_DIRS.map((dir) => [dir, 'ro'])), proto: 'ro',
        'server/compression.js': 'ro', results: 'rw',
      });
      const scripts = ENTRY_DIRS.flatMap((dir) => fs.readdirSync(path.join(ROOT, dir)).map((f) => `${dir}/${f}`));
      const { files } = importGraph(scripts);
      const mounted = (file) => Object.keys(mounts).some((m) => file === m || file.startsWith(`${m}/`));
      for (const file of [...files, 'proto/user.proto']) assert.ok(mounted(file), `${file} is not mounted for k6`);
    });
  });
});

describe('compose.yaml profile scale: replicas behind the bench\'s HAProxy config', () => {
  const { server, haproxy } = services;
  const haproxyEnv = Object.fromEntries(Object.entries(haproxy?.environment ?? {}).map(([k, v]) => [k, defaultOf(v)]));

  test('the replicas run both modes on the server\'s default ports, and publish none', () => {
    assert.deepEqual(server.profiles, ['scale']);
    assert.equal(server.image, services['server-http'].image);
    // A key without a value (ADMIN_PORT) passes the caller's variable, and is unset when the caller has none.
    const given = Object.entries(server.environment).filter(([, v]) => v !== null);
    const settings = readSettings({ ...imageEnv, ...Object.fromEntries(given.map(([k, v]) => [k, defaultOf(v)])) });
    assert.equal(settings.MODE, 'both');
    assert.equal(server.ports, undefined, 'a published port would stop --scale server=2');
    assert.deepEqual(server.expose.map(Number).sort(), [settings.HTTP_PORT, settings.GRPC_PORT].sort());
  });

  test('HAProxy runs the one haproxy.cfg the bench runs (bench/placement/replicas.js), slots filled by DNS of the server service', async () => {
    const { HAPROXY_CONFIG } = await import('../../bench/placement/replicas.js');
    const [source, target, mode] = haproxy.volumes[0].split(':');
    assert.equal(path.resolve(ROOT, source), HAPROXY_CONFIG);
    assert.equal(target, '/usr/local/etc/haproxy/haproxy.cfg'); // where the official image reads it
    assert.equal(mode, 'ro');
    assert.equal(haproxyEnv.REPLICA_DNS, 'server');
    // LB_MAXCONN (the file's maxconn) passes the caller's value; unset, the file's default.
    assert.equal(haproxy.environment.LB_MAXCONN, null);
    assert.match(read('deploy/haproxy/haproxy.cfg'), /^\s*presetenv LB_MAXCONN \d+$/m);
    assert.match(haproxyEnv.SERVERS, /^[1-9]\d*$/);
    // The ports it publishes are the ones the file listens on and forwards to by default: the server's.
    const cfg = read('deploy/haproxy/haproxy.cfg');
    for (const name of ['LB_HTTP_PORT', 'LB_GRPC_PORT', 'SERVER_HTTP_PORT', 'SERVER_GRPC_PORT']) {
      const preset = new RegExp(`presetenv ${name} (\\d+)`).exec(cfg)?.[1];
      assert.equal(Number(preset), DEFAULTS[name.endsWith('HTTP_PORT') ? 'HTTP_PORT' : 'GRPC_PORT'], name);
    }
    assert.deepEqual(haproxy.ports.map(portPair), [[DEFAULTS.HTTP_PORT, DEFAULTS.HTTP_PORT], [DEFAULTS.GRPC_PORT, DEFAULTS.GRPC_PORT]]);
  });
});
