// STREAMS=N (docs/streaming.md, "Open streams"): what the job refuses before anything starts, how it spreads the streams
// and sizes the server, and the figures it makes of the server's counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BenchError } from '../../bench/errors.js';
import { openStreamsPreflight } from '../../bench/commands/run.js';
import { openStreamsGap } from '../../bench/settings/bench.js';
import { openStreamVus } from '../../bench/plans.js';
import { openStreamsServer } from '../../bench/passes/cell.js';
import { parseScrape, serverFigures, serverWindow } from '../../bench/records/server-stats.js';

const SERVER_STREAM = { name: 'shop.v1.ShopService/WatchOrders', kind: 'server streaming', responseStream: true, requestStream: false };
const settings = { MODES: ['http', 'grpc'], STREAMS: 1000, STREAM_INTERVAL: 1000 };

test('STREAMS refuses in one line what cannot hold paced streams open: a unary RPC, a client stream, STREAM_INTERVAL=0, '
  + 'connect-json, too few open files; and RATE, per-request connections, REQUEST_TIMEOUT, K6_INSTANCES', () => {
  const refused = (s, rpc, limit = 20000) => assert.throws(() => openStreamsPreflight(s, /** @type {any} */ (rpc), limit), (err) => {
    assert.ok(err instanceof BenchError);
    assert.doesNotMatch(err.message, /\n/);
    return true;
  });
  assert.doesNotThrow(() => openStreamsPreflight(settings, /** @type {any} */ (SERVER_STREAM), 20000));
  assert.doesNotThrow(() => openStreamsPreflight({ ...settings, STREAMS: undefined, STREAM_INTERVAL: 0 }, /** @type {any} */ (SERVER_STREAM), 10));
  refused(settings, { name: 'a.B/C', kind: 'unary', responseStream: false, requestStream: false });
  refused(settings, { name: 'a.B/C', kind: 'client streaming', responseStream: false, requestStream: true });
  assert.throws(() => openStreamsPreflight({ ...settings, STREAM_INTERVAL: 0 }, /** @type {any} */ (SERVER_STREAM), 20000), /set STREAM_INTERVAL/);
  assert.throws(() => openStreamsPreflight({ ...settings, MODES: ['grpc', 'connect-json'] }, /** @type {any} */ (SERVER_STREAM), 20000),
    /MODES connect-json cannot hold open streams yet/);
  assert.throws(() => openStreamsPreflight({ ...settings, STREAMS: 10000 }, /** @type {any} */ (SERVER_STREAM), 4096),
    /STREAMS=10000 needs 11024 open files in k6 and in the server, and the limit here is 4096/);
  const job = { STREAMS: 1000, CONNECTIONS: 'reuse', K6_INSTANCES: 1 };
  assert.equal(openStreamsGap(job, {}), null);
  assert.equal(openStreamsGap({ ...job, STREAMS: undefined, RATE: 100 }, {}), null);
  assert.match(openStreamsGap({ ...job, RATE: 100 }, {}), /set one or the other/);
  assert.match(openStreamsGap({ ...job, CONNECTIONS: 'per-request' }, {}), /CONNECTIONS=reuse/);
  assert.match(openStreamsGap(job, { REQUEST_TIMEOUT: '5s' }), /without REQUEST_TIMEOUT/);
  assert.match(openStreamsGap({ ...job, K6_INSTANCES: 2 }, {}), /K6_INSTANCES=1/);
});

test('STREAMS is spread over VUS, or over more VUs where one would hold more than 100; the server takes N connections', () => {
  assert.equal(openStreamVus(200, 4), 4);
  assert.equal(openStreamVus(1000, 32), 32);
  assert.equal(openStreamVus(10000, 32), 100);
  assert.deepEqual(openStreamsServer({ STREAMS: undefined, VUS: 32 }), {});
  assert.deepEqual(openStreamsServer({ STREAMS: 1000, VUS: 32 }), {});
  assert.deepEqual(openStreamsServer({ STREAMS: 10000, VUS: 100 }), { MAX_CONNECTIONS: '10164' });
});

test('a STREAMS run\'s server figures: the peak of open streams, messages/s and CPU per message by the server\'s count, '
  + 'and the RSS the streams took above the window\'s start ÷ the peak', () => {
  const scrape = (atMs, { rss, peakRss, cpu, sent, open, peak }) => parseScrape([
    `process_cpu_user_seconds_total{pid="11"} ${cpu}`,
    'process_cpu_system_seconds_total{pid="11"} 0',
    `process_resident_memory_bytes{pid="11"} ${rss}`,
    `server_resident_memory_peak_bytes{pid="11"} ${peakRss}`,
    'server_requests_served_total{handlers="grpc",pid="11"} 10',
    `server_stream_messages_total{listener="grpc",direction="sent",pid="11"} ${sent}`,
    'server_stream_messages_total{listener="grpc",direction="received",pid="11"} 5',
    `server_streams_open{pid="11"} ${open}`,
    `server_streams_open_peak{pid="11"} ${peak}`,
    '',
  ].join('\n'), atMs);
  const MIB = 2 ** 20;
  const before = scrape(0, { rss: 100 * MIB, peakRss: 100 * MIB, cpu: 1, sent: 40, open: 0, peak: 0 });
  const after = scrape(8000, { rss: 140 * MIB, peakRss: 150 * MIB, cpu: 3, sent: 8040, open: 0, peak: 1000 });
  const window = serverWindow(before, after);
  assert.equal(window.workers[0].rss_start_bytes, 100 * MIB);
  assert.equal(window.workers[0].stream_messages_sent, 8000);
  assert.equal(window.workers[0].streams_open_peak, 1000);
  const f = serverFigures(window, { held_s: 8 });
  assert.equal(f.server_streams_open_peak, 1000);
  assert.equal(f.server_messages_per_s, 1000);
  assert.equal(f.server_memory_per_open_stream_kib, (50 * 1024) / 1000);
  assert.equal(f.server_cpu_us_per_message, 250);
  // Without STREAMS: none of them, and the CPU per message is left to k6's messages (bench/records/summary.js).
  const plain = serverFigures(window);
  assert.deepEqual([plain.server_streams_open_peak, plain.server_messages_per_s, plain.server_memory_per_open_stream_kib,
    plain.server_cpu_us_per_message], [null, null, null, null]);
});
