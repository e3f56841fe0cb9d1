// The k6 scripts with the user's request samples (k6/own.js ownShare): one copy for the k6 process, each VU sending
// its share in turn, so that every sample goes out about as often and k6's memory does not grow with the VUs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const RPC = 'shop.v1.ShopService/GetOrder';

/**
 * A JSON twin stand-in on an ephemeral loopback port that counts the bodies it is sent and answers `{}`, an empty
 * response message; k6 checks no more than an object for an own service.
 * @returns {Promise<{port: number, bodies: Map<string, number>, close: () => Promise<void>}>}
 */
async function countingServer() {
  const bodies = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      bodies.set(body, (bodies.get(body) ?? 0) + 1);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, bodies, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) };
}

/**
 * Runs the HTTP script on the samples in `file` for `duration`; resolves with k6's exit code, its output and its peak
 * resident memory (VmHWM, read from /proc while it runs: the high-water mark holds the peak however late it is read).
 */
function runK6({ port, file, vus, duration }) {
  const child = spawn(k6Bin(), ['run', '-q', '--summary-mode=disabled', '--vus', String(vus), '--duration', duration,
    '-e', `LOCAL_HTTP_HOST=127.0.0.1:${port}`, '-e', `RPC=${RPC}`, '-e', `REQUESTS=${file}`, '-e', `VUS=${vus}`,
    'http-tests/local.js'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let peakKb = 0;
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const poll = setInterval(() => {
    try {
      peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? peakKb);
    } catch { /* it has just ended */ }
  }, 100);
  const kill = setTimeout(() => child.kill('SIGKILL'), 60000);
  return new Promise((resolve) => child.on('close', (code) => {
    clearInterval(poll);
    clearTimeout(kill);
    resolve({ code, output, peakKb });
  }));
}

test('each VU sends its share of the samples in turn: every sample goes out, about as often', { timeout: 90000 }, async (t) => {
  const dir = await tempDir(t, 'k6-share-');
  const file = path.join(dir, 'requests.json');
  const samples = Array.from({ length: 6 }, (_, i) => ({ orderId: `order-${i}` }));
  await writeFile(file, JSON.stringify(samples));
  const server = await countingServer();
  try {
    const { code, output } = await runK6({ port: server.port, file, vus: 3, duration: '1s' });
    assert.equal(code, 0, output);
    // setup()'s probe sends the first sample once more; the rest are the VUs' turns.
    const counts = samples.map((s) => server.bodies.get(JSON.stringify(s)) ?? 0);
    assert.equal(server.bodies.size, samples.length, `bodies seen: ${[...server.bodies.keys()].join(' | ')}`);
    assert.ok(Math.min(...counts) >= 0.5 * Math.max(...counts), `sends per sample: ${counts.join(', ')}`);
  } finally {
    await server.close();
  }
});

test('10,000 samples at 32 VUs: one copy in k6, not one per VU', { timeout: 120000 }, async (t) => {
  const dir = await tempDir(t, 'k6-share-');
  const file = path.join(dir, 'requests.json');
  // 10,000 copies of OTLP's example trace export (about 560 bytes of JSON each, 5.6 MB): with a copy per VU, k6 held
  // 5.1–6.1 GB at its peak here and took 36–64 s to start; shared, 0.28–0.42 GB (docs/findings/2026-11-26-own-samples-memory.md).
  const one = JSON.stringify(JSON.parse(readFileSync(path.join(ROOT, 'proto/otlp/examples/traces.json'), 'utf8')));
  await writeFile(file, `[${Array(10000).fill(one).join(',')}]`);
  const server = await countingServer();
  try {
    const { code, output, peakKb } = await runK6({ port: server.port, file, vus: 32, duration: '2s' });
    assert.equal(code, 0, output);
    assert.ok(peakKb > 0, 'no VmHWM read');
    assert.ok(peakKb < 1.5 * 1024 * 1024, `k6's peak resident memory ${Math.round(peakKb / 1024)} MiB`);
  } finally {
    await server.close();
  }
});
