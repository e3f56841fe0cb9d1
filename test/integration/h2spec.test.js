// h2spec against every HTTP/2 listener (issue 14): no worker dies during a full run, and every
// failing h2spec test is one docs/http2-hardening.md lists, with its reason, for that listener.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { GET_USER_RPC } from '../../proto/payload.js';
import { ensureTool } from '../../bench/tools.js';
import { ROOT, startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';
import { LISTENERS as REGISTRY } from '../../server/listeners.js';
import { makeRunCertificates } from '../../bench/tls.js';

const DOC = path.join(ROOT, 'docs/http2-hardening.md');
// Every hardened HTTP/2 listener of the registry (the anchors run as their users run them).
const LISTENERS = Object.keys(REGISTRY).filter((name) => REGISTRY[name].transport === 'HTTP/2' && REGISTRY[name].hardened);

/** The documented failures: listener -> h2spec test ids, from the doc's table. */
function documentedFailures() {
  const byListener = Object.fromEntries(LISTENERS.map((l) => [l, new Set()]));
  for (const [, id, who] of readFileSync(DOC, 'utf8').matchAll(/^\| `([a-z0-9/.]+)` \| ([a-z0-9, -]+) \|/gm)) {
    const listeners = who.trim() === 'any' ? LISTENERS : who.split(',').map((w) => w.trim());
    for (const l of listeners) byListener[l]?.add(id);
  }
  return byListener;
}

/** Failing test ids of an h2spec JUnit report: `<package>/<position in its suite>`, as h2spec names them. */
function failuresOf(xml) {
  const failed = [];
  for (const [, pkg, body] of xml.matchAll(/<testsuite [^>]*package="([^"]+)"[^>]*>([\s\S]*?)<\/testsuite>/g)) {
    [...body.matchAll(/<testcase [\s\S]*?(?:<\/testcase>|\/>)/g)].forEach(([testcase], i) => {
      if (/<(error|failure)[ >]/.test(testcase)) failed.push(`${pkg}/${i + 1}`);
    });
  }
  return failed;
}

let server;
let tlsServer;
let certs;
let h2spec;
let dir;
before(async () => {
  h2spec = ensureTool('h2spec');
  server = await startServer({ MODE: 'all' });
  // The same listeners over TLS (h2 by ALPN; issue 26); h2spec's -t -k: TLS without checking the run's certificate,
  // which only h2spec's own verification would need (it takes no CA), not what it tests.
  certs = await makeRunCertificates();
  tlsServer = await startServer({ MODE: LISTENERS.join(','), TLS_CERT: certs.cert, TLS_KEY: certs.key });
  dir = await mkdtemp(path.join(os.tmpdir(), 'h2spec-'));
});
after(async () => {
  await server?.stop();
  await tlsServer?.stop();
  await certs?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the table of h2spec failures in the docs parses', () => {
  const documented = documentedFailures();
  for (const l of LISTENERS) assert.ok(documented[l].size >= 5, `${l}: ${[...documented[l]]}`);
});

// The runs go at once: h2spec mostly waits (its -o 2 s timeout per test a listener leaves unanswered), each run has its
// own report file, and a race a loaded worker loses is what the single-test repeats below are for. Serially they took
// about 120 s of CI (2026-11-25); at once, about the slowest run.
describe('h2spec, every listener at once', { concurrency: true }, () => {
  for (const [listener, overTls] of [...LISTENERS.map((l) => [l, false]), ...LISTENERS.map((l) => [l, true])]) {
    test(`h2spec against ${listener}${overTls ? ' over TLS' : ''}: no worker dies, every failure is documented`, async () => {
      const target = overTls ? tlsServer : server;
      const [workerPid] = target.workerPids();
      const report = path.join(dir, `${listener}${overTls ? '-tls' : ''}.xml`);
      // h2spec exits 1 when any test fails; the report says which.
      const h2specRun = async (...ids) => {
        await promisify(execFile)(h2spec, ['-h', '127.0.0.1', '-p', String(target.ports[listener]), '-P', `/${GET_USER_RPC}`,
          ...(overTls ? ['-t', '-k'] : []), '-o', '2', '-j', report, ...ids], { timeout: 120_000 })
          .catch((err) => { if (err.code !== 1) throw err; });
        return failuresOf(await readFile(report, 'latin1'));
      };
      const failed = await h2specRun();
      // A listener that answers before h2spec's next frame arrives closes the stream first (the table's
      // "timing" rows); such a race seldom repeats. An undocumented failure counts only if it fails
      // again each time it runs alone (h2spec numbers a single test as its section's 1st).
      const repeats = async (id) => {
        for (let i = 0; i < 3; i++) if ((await h2specRun(id)).length === 0) return false;
        return true;
      };
      const undocumented = [];
      for (const id of failed.filter((x) => !documentedFailures()[listener].has(x))) if (await repeats(id)) undocumented.push(id);
      assert.deepEqual(target.workerPids(), [workerPid], 'a worker was replaced');
      assert.equal(target.lines.filter((l) => [EVENT.UNCAUGHT_EXCEPTION, EVENT.WORKER_REPLACED, EVENT.WORKER_DIED_EARLY].includes(l.event)).length, 0, target.output());
      assert.deepEqual(undocumented, [], `h2spec failures on ${listener} that docs/http2-hardening.md does not explain`);
    });
  }
});
