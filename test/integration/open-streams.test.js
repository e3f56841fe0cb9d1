// STREAMS=N in the main job (issue 48, docs/streaming.md "Open streams"): k6 holds N paced streams open at once against
// one worker, re-opening each as it ends, over gRPC (streams on each VU's connection), SSE (a connection each) and a
// WebSocket relay (a socket each); the server's own count says it held about N at once and sent N ÷ STREAM_INTERVAL
// messages a second, and the report gives the memory per open stream and the CPU per message.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { k6Bin } from '../helpers/k6.js';
import { sh } from '../helpers/run.js';
import { ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const SHOP = { PROTO: path.join(OWN, 'a', 'shop', 'v1', 'shop.proto'), PROTO_PATH: [path.join(OWN, 'a'), path.join(OWN, 'b')].join(':') };
const N = 200;
const INTERVAL_MS = 200;

/** One job run with STREAMS=N over HTTP and gRPC, 3 s, no warm-up: its stdout and its JSON report. */
async function openStreamsRun(t, settings) {
  const dir = await tempDir(t, 'open-streams-job-');
  const { code, stdout, stderr } = await sh(process.execPath, ['bench/cli.js', 'run'], {
    ...SHOP, ...settings, STREAMS: String(N), STREAM_INTERVAL: String(INTERVAL_MS), MODES: 'http,grpc',
    REPEATS: '1', DURATION: '3s', WARMUP: '0s', VUS: '4', RESULTS_DIR: dir, K6_BIN: await k6Bin(),
  }, 120_000);
  assert.equal(code, 0, stderr);
  const report = JSON.parse(await readFile(path.join(dir, (await readdir(dir)).find((f) => /^compare-.*\.json$/.test(f))), 'utf8'));
  return { stdout, report };
}

/** N ÷ STREAM_INTERVAL: the messages a second N paced streams send. */
const EXPECTED = (N / INTERVAL_MS) * 1000;

/**
 * What every STREAMS run's columns show: about N open at once by the server's count, the memory and CPU rows, and the
 * server's messages/s within [low, high] × EXPECTED.
 */
function assertHeld(report, stdout, [low, high]) {
  for (const row of ['open streams, peak \\(server count\\)', 'messages/s, server count', 'memory per open stream \\(KiB\\)',
    'server CPU per message \\(µs\\)']) assert.match(stdout, new RegExp(`\\| ${row}\\s+\\|`), row);
  assert.match(stdout, new RegExp(`^- STREAMS=${N}: k6 held ${N} streams open at once over 4 VUs, re-opening each as it ended`, 'm'));
  for (const [mode, m] of Object.entries(report.modes)) {
    assert.equal(m.failed, 0, mode);
    // Every VU holds its 50 at once; a stream is re-opened only once it ended, so the server never holds more (but setup()'s,
    // cut at its first message until the server's next write finds it gone).
    assert.ok(m.server_streams_open_peak >= 0.95 * N && m.server_streams_open_peak <= N + 1, `${mode}: ${m.server_streams_open_peak} open at once`);
    assert.ok(m.server_memory_per_open_stream_kib > 0, `${mode}: ${m.server_memory_per_open_stream_kib} KiB a stream`);
    assert.ok(m.server_cpu_us_per_message > 0, mode);
    assert.ok(m.runs[0].run.open_streams.streams === N, mode);
    assert.ok(m.server_messages_per_s > low * EXPECTED && m.server_messages_per_s < high * EXPECTED, `${mode}: ${m.server_messages_per_s} messages/s`);
  }
}

test('STREAMS=200 with a paced server stream: gRPC streams on 4 connections and 200 SSE connections held open, re-opened as they end; '
  + 'the server held about 200 at once and sent about 200 ÷ STREAM_INTERVAL messages a second', async (t) => {
  // One response stream of 10 messages, 1.8 s at 200 ms: each of the 200 is re-opened once or twice in the 3 s run.
  const { stdout, report } = await openStreamsRun(t, { RPC: 'shop.v1.ShopService/WatchOrders', RESPONSE: path.join(OWN, 'order-stream-10.json') });
  // A stream of 10 sends its first message at once and the others 200 ms apart: 10 in 1.8 s, 5.6 a second, less the gap
  // between a stream's end and the next's start.
  assertHeld(report, stdout, [0.8, 1.25]);
  for (const [mode, m] of Object.entries(report.modes)) assert.ok(m.requests > N, `${mode}: ${m.requests} streams, some re-opened`);
  // k6 counts a gRPC stream's messages as they come (a cut stream's too), and an SSE stream's only from a body it got whole.
  const { grpc, http } = report.modes;
  const sent = (m) => m.server_messages_per_s * 3;
  const counted = (m) => m.messages_per_s * m.duration_s;
  assert.ok(Math.abs(counted(grpc) - sent(grpc)) < 0.1 * sent(grpc), `gRPC: k6 counted ${counted(grpc)}, the server ${sent(grpc)}`);
  assert.ok(counted(http) < sent(http), `SSE: k6 counted ${counted(http)}, the server ${sent(http)}`);
});

test('STREAMS=200 with relays: 200 WebSockets and 200 gRPC streams on 4 connections held open, k6 sending a message every '
  + 'STREAM_INTERVAL on each; the server answered about 200 ÷ STREAM_INTERVAL a second', async (t) => {
  const { stdout, report } = await openStreamsRun(t, { RPC: 'shop.v1.ShopService/SyncOrders', REQUEST: path.join(OWN, 'order-syncs.ndjson') });
  // The client paces a relay: N ÷ STREAM_INTERVAL a second, less the sockets' ramp at the start.
  assertHeld(report, stdout, [0.75, 1.1]);
  for (const [mode, m] of Object.entries(report.modes)) {
    // Held open through the run, a relay is cut at the end: about one call a stream.
    assert.ok(m.requests <= N + 5, `${mode}: ${m.requests} calls`);
    assert.ok(Math.abs(m.messages_per_s - m.server_messages_per_s) < 0.2 * EXPECTED, `${mode}: k6 counted ${m.messages_per_s} answers a second`);
  }
});
