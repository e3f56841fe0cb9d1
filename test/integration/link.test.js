// Remote runs over a real link: an emulated second machine (network namespace, veth,
// tbf, toxiproxy or netem), the remote k6 scripts over it, the main job over it and
// against servers "on another machine", and nothing left behind. Needs root and ip netns
// (CI runs as root); everything is addressed in 198.18.0.0/15 (RFC 2544).
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createLink, removeStaleLinks } from '../../bench/placement/link.js';
import { startServer } from '../../bench/processes.js';
import { readSummary } from '../../bench/records/summary.js';
import { makeRunCertificates } from '../../bench/tls.js';
import { ensureTool } from '../../bench/tools.js';
import { LISTENERS, portEnv } from '../../server/listeners.js';
import { k6Bin, k6Run } from '../helpers/k6.js';
import { runnableBy } from '../helpers/scratch.js';
import { isAlive, ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const root = process.getuid?.() === 0;
const skip = root ? false : 'needs root for ip netns and tc (CI runs as root)';
/** The user the tests drop root to (setpriv). */
const NOBODY = Object.freeze({ uid: 65534, gid: 65534 });

/** Runs the main job; resolves with {code, stdout, stderr}. */
async function bench(env, timeout = 180000) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bench/cli.js', 'run'], {
      // The client's ceiling and the capacity pass are loopback passes, checked in bench.test.js: off here.
      cwd: ROOT, env: { ...process.env, K6_BIN: k6Bin(), WARMUP: '0s', REPEATS: '1', VUS: '4', DURATION: '3s', CALIBRATE: '0s', CAPACITY: '0', ...env }, timeout,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const mine = (pid = process.pid) => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
  .split('\n').map((l) => l.split(' ')[0]).filter((name) => name.startsWith(`jvgb-${pid}-`));
const veths = () => execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).split('\n').filter((l) => /jvgb\d+h/.test(l));

/** Asserts nothing of a link is left: namespace, veth (and its qdiscs), proxy and probe processes. */
function assertGone(link, pids = []) {
  assert.deepEqual(mine(), [], 'namespace left');
  assert.ok(!veths().some((l) => l.includes(link.hostIf)), `veth ${link.hostIf} left`);
  assert.doesNotMatch(execFileSync('tc', ['qdisc', 'show'], { encoding: 'utf8' }), new RegExp(`dev ${link.hostIf} `), 'qdisc left');
  for (const pid of pids) assert.ok(!isAlive(pid), `process ${pid} left`);
}

const modes = [['http', 'http-tests/remote.js', 'REMOTE_HTTP_HOST'], ['grpc', 'grpc-tests/remote.js', 'REMOTE_GRPC_HOST']];

describe('an emulated link: 4 Mbit/s down, 2 Mbit/s up, 10 ms RTT', { skip }, () => {
  const spec = { name: 'custom', down: 4e6, up: 2e6, rttMs: 10 };
  let link;
  let server;
  let dir;
  let proxyPids;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'link-'));
    link = await createLink(spec, { toxiproxyBin: () => ensureTool('toxiproxy-server') });
    proxyPids = execFileSync('ip', ['netns', 'pids', link.ns], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
    const ports = portEnv();
    await link.expose(Object.values(LISTENERS).map((l) => l.defaultPort));
    server = await startServer({ env: { ...ports, MODE: 'both', HOST: link.bindHost }, wrap: (c, a) => link.command(c, a, null) });
  });
  after(async () => {
    await server?.stop();
    await link?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('measures the RTT and the bandwidth it was built with, each within 20%', async () => {
    const check = await link.check();
    assert.deepEqual(check.warnings, []);
    assert.ok(check.rtt.min_ms >= 10 && check.rtt.min_ms <= 12, `RTT ${check.rtt.min_ms} ms`);
    assert.ok(Math.abs(check.down.link_bps / 4e6 - 1) < 0.2, `down ${check.down.link_bps} bit/s`);
    assert.ok(Math.abs(check.up.link_bps / 2e6 - 1) < 0.2, `up ${check.up.link_bps} bit/s`);
    // TCP payload is below the link-layer rate: headers and ACKs take their share.
    assert.ok(check.down.goodput_bps < check.down.link_bps);
  });

  for (const [mode, script, hostVar] of modes) {
    test(`${script} runs over the link: every request answered, p50 at least the RTT, within the bandwidth`, async () => {
      const summaryFile = path.join(dir, `${mode}.json`);
      const before = link.counters();
      const { code, output } = await k6Run(['--vus', '4', '--duration', '2s', '-e', `${hostVar}=${link.hostOf(server.ports[mode])}`,
        '-e', `SUMMARY_FILE=${summaryFile}`, '-e', 'SAMPLE_EVERY=10', script]);
      assert.equal(code, 0, output);
      const after = link.counters();
      const f = await readSummary(summaryFile);
      assert.equal(f.target, 'remote');
      assert.equal(f.host, `${link.serverAddress}:${server.ports[mode]}`);
      assert.ok(f.requests > 50 && f.failed === 0 && f.checks_failed === 0, JSON.stringify(f));
      assert.ok(f.latency_ms.p50 >= 10, `p50 ${f.latency_ms.p50} ms below the 10 ms RTT`);
      // Everything k6 received crossed the shaped link: no faster than 4 Mbit/s (+5%).
      assert.ok((f.data_received_bytes * 8) / f.duration_s <= 4e6 * 1.05, `${f.data_received_bytes} B in ${f.duration_s} s`);
      assert.ok(after.down.bytes - before.down.bytes >= f.data_received_bytes, 'the link carried less than k6 received');
    });
  }

  test('closing it leaves no namespace, veth, qdisc or process behind', async () => {
    await server.stop();
    server = null;
    await link.close();
    assertGone(link, proxyPids);
  });
});

describe('cleanup after a killed run, and on Ctrl-C', { skip }, () => {
  // A child builds a link and waits; it is then killed (SIGKILL: nothing runs) or interrupted (SIGINT).
  const child = async () => {
    const code = `import { createLink } from './bench/placement/link.js';
      const link = await createLink({ name: 'custom', down: 1e6, up: 1e6, rttMs: 0 });
      console.log(JSON.stringify({ ns: link.ns, hostIf: link.hostIf }));
      setInterval(() => {}, 1000);`;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = await once(proc.stdout, 'data');
    return { proc, ...JSON.parse(String(line)) };
  };

  const children = [];
  after(() => {
    for (const proc of children) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    removeStaleLinks();
  });

  test('SIGINT removes the link before the process ends', async () => {
    const { proc, ns, hostIf } = await child();
    children.push(proc);
    const exited = once(proc, 'exit');
    assert.deepEqual(mine(proc.pid), [ns]);
    proc.kill('SIGINT');
    const [, signal] = await exited;
    assert.equal(signal, 'SIGINT');
    assert.deepEqual(mine(proc.pid), []);
    assert.ok(!veths().some((l) => l.includes(hostIf)));
  });

  test('a link whose process was killed is found and removed by the next run', async () => {
    const { proc, ns, hostIf } = await child();
    children.push(proc);
    const exited = once(proc, 'exit');
    proc.kill('SIGKILL');
    await exited;
    assert.deepEqual(mine(proc.pid), [ns], 'SIGKILL left the namespace, as expected');
    assert.ok(removeStaleLinks().includes(ns));
    assert.deepEqual(mine(proc.pid), []);
    assert.ok(!veths().some((l) => l.includes(hostIf)));
  });
});

describe('the main job over a link', { skip }, () => {
  test('BANDWIDTH=1mbit RTT=10ms: both modes over the link, report with the link section', async (t) => {
    const dir = await tempDir(t, 'bench-link-');
    const { code, stdout, stderr } = await bench({ BANDWIDTH: '1mbit', RTT: '10ms', RESULTS_DIR: dir });
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /\*\*Link\.\*\*/);
    assert.match(stdout, /configured \(custom\): down 1 Mbit\/s, up 1 Mbit\/s, RTT 10 ms/);
    assert.match(stdout, /shaped by: bandwidth tbf, delay (toxiproxy|netem)/);
    assert.doesNotMatch(stdout, /WARNING/);
    const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
    for (const mode of ['http', 'grpc']) {
      const m = report.modes[mode];
      assert.equal(m.target, 'remote');
      assert.match(m.host, /^198\.18\.\d+\.2:\d+$/);
      assert.equal(m.failed, 0);
      assert.ok(m.latency_ms.p50 >= 10, `${mode} p50 ${m.latency_ms.p50}`);
      assert.ok(m.link_down_mbps > 0 && m.link_down_mbps <= 1.05, `${mode} down ${m.link_down_mbps} Mbit/s`);
      assert.ok(m.link_down_per_request > m.received_per_request, 'frames carry more than k6 counts');
      assert.ok(m.server_cpu_us_per_request > 0, 'the server\'s accounting crossed the link');
      assert.ok(m.ceiling_link_bytes_rps > 0 && m.limits.length === 1);
    }
    assert.deepEqual(mine(), []);
  });

  test('TLS=1 CONNECTIONS=per-request RTT=10ms: the certificate names the namespace\'s address, one full handshake per request', async (t) => {
    const dir = await tempDir(t, 'bench-link-tls-');
    const { code, stdout, stderr } = await bench({ TLS: '1', CONNECTIONS: 'per-request', RTT: '10ms', MODES: 'grpc', DURATION: '2s',
      CAPACITY: '0', RESULTS_DIR: dir });
    assert.equal(code, 0, stderr + stdout);
    const { grpc } = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8')).modes;
    assert.match(grpc.host, /^198\.18\.\d+\.2:\d+$/);
    assert.equal(grpc.failed, 0);
    assert.match(grpc.server_tls, /^TLSv1\.3 · \S+ · ALPN h2$/);
    assert.ok(Math.abs(grpc.server_tls_handshakes_per_1k_requests - 1000) <= 2000 / grpc.server_requests + 1, String(grpc.server_tls_handshakes_per_1k_requests));
    // The call crosses the link (k6's grpc_req_duration leaves the connect and the TLS handshake out: docs/tls.md).
    assert.ok(grpc.latency_ms.p50 >= 10, `p50 ${grpc.latency_ms.p50} ms`);
    assert.deepEqual(mine(), []);
  });
});

test('a profile other than loopback without root stops with one line before anything starts', { skip }, async (t) => {
  // As nobody, from the repository or, where nobody cannot read it (a clone under /root), from a copy it can.
  const { dir, node } = await runnableBy(NOBODY, (fn) => t.after(fn));
  const { code, stderr } = await (async () => {
    try {
      await run('setpriv', [`--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', node, 'bench/cli.js', 'run', '--check-settings'],
        { cwd: dir, env: { ...process.env, NETWORK: 'wan' } });
      return { code: 0, stderr: '' };
    } catch (err) {
      return { code: err.code, stderr: err.stderr };
    }
  })();
  assert.equal(code, 1, stderr);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(stderr, /run as root/);
});

describe('TARGET=remote: servers already running on another machine', { skip }, () => {
  // "Machine B": a namespace with the server in it, no shaping; its admin endpoint exposed on purpose.
  let link;
  let server;
  before(async () => {
    link = await createLink({ name: 'machine-b', down: null, up: null, rttMs: 0 });
    server = await startServer({ env: { MODE: 'both', HOST: link.serverAddress, ADMIN_PORT: '9100', ADMIN_HOST: link.serverAddress,
      HTTP_PORT: '3000', GRPC_PORT: '4000' }, wrap: (c, a) => link.command(c, a, null) });
  });
  after(async () => {
    await server?.stop();
    await link?.close();
  });

  test('measures both, with the server rows from REMOTE_ADMIN_HOST and the RTT by TCP connect', async (t) => {
    const dir = await tempDir(t, 'bench-remote-');
    const { code, stdout, stderr } = await bench({ TARGET: 'remote', RESULTS_DIR: dir,
      REMOTE_HTTP_HOST: `http://${link.serverAddress}:3000`, REMOTE_GRPC_HOST: `${link.serverAddress}:4000`, REMOTE_ADMIN_HOST: `${link.serverAddress}:9100` });
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /measured before the runs: RTT [\d.]+ ms min.*\(TCP connect to REMOTE_HTTP_HOST\)/);
    const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
    for (const mode of ['http', 'grpc']) {
      assert.equal(report.modes[mode].failed, 0);
      assert.ok(report.modes[mode].server_requests > 0, `${mode}: server rows`);
    }
    assert.equal(report.modes.http.host, `${link.serverAddress}:3000`);
  });

  test('without REMOTE_ADMIN_HOST the server rows are not measured', async (t) => {
    const dir = await tempDir(t, 'bench-remote-');
    const { code, stdout, stderr } = await bench({ TARGET: 'remote', RESULTS_DIR: dir, MODES: 'http', DURATION: '2s',
      REMOTE_HTTP_HOST: `${link.serverAddress}:3000` });
    assert.equal(code, 0, stderr + stdout);
    assert.match(stdout, /http: the server's own figures \(CPU, memory, GC per request\) were not measured: set REMOTE_ADMIN_HOST/);
    assert.doesNotMatch(stdout, /requests served, server count/);
  });

  test('TLS=1 with TLS_CA: the remote servers\' own certificates, verified by k6 against that CA; another CA fails with x509\'s reason', async (t) => {
    // The user's own certificate on machine B, naming its address; its CA is what they give the job.
    const certs = await makeRunCertificates({ addresses: [link.serverAddress] });
    const other = await makeRunCertificates();
    t.after(() => Promise.all([certs.remove(), other.remove()]));
    const tlsServer = await startServer({ env: { MODE: 'both', HOST: link.serverAddress, ADMIN_PORT: '9101', ADMIN_HOST: link.serverAddress,
      HTTP_PORT: '3443', GRPC_PORT: '4443', TLS_CERT: certs.cert, TLS_KEY: certs.key }, wrap: (c, a) => link.command(c, a, null) });
    t.after(() => tlsServer.stop());
    const hosts = { REMOTE_HTTP_HOST: `${link.serverAddress}:3443`, REMOTE_GRPC_HOST: `${link.serverAddress}:4443` };
    const dir = await tempDir(t, 'bench-remote-tls-');
    const ok = await bench({ TARGET: 'remote', TLS: '1', TLS_CA: certs.caCert, RESULTS_DIR: dir, DURATION: '2s', ...hosts,
      REMOTE_ADMIN_HOST: `${link.serverAddress}:9101` });
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
    const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
    for (const [mode, alpn] of [['http', 'http/1.1'], ['grpc', 'h2']]) {
      assert.equal(report.modes[mode].failed, 0);
      assert.match(report.modes[mode].server_tls, new RegExp(`^TLSv1\\.3 · \\S+ · ALPN ${alpn.replace('/', '\\/')}$`));
    }
    const wrong = await bench({ TARGET: 'remote', TLS: '1', TLS_CA: other.caCert, RESULTS_DIR: dir, MODES: 'http', DURATION: '2s', ...hosts }, 60000);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /test aborted: cannot reach the HTTP server at [\d.]+:3443: x509: unknown authority/);
  });

  test('a remote host where nothing listens stops with its name, and no load loop', async () => {
    const { code, stderr } = await bench({ TARGET: 'remote', MODES: 'http', REMOTE_HTTP_HOST: `${link.serverAddress}:3999` }, 30000);
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`cannot reach ${link.serverAddress.replace(/\./g, '\\.')}:3999`));
  });
});
