// Link settings and the link figures derived from a run (bench/settings/network.js, bench/records/summary.js): pure, no processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatRate, linkSpec, parseRate, parseRttMs, PROFILES } from '../../bench/settings/network.js';
import { figuresOf, limitOf } from '../../bench/records/summary.js';
import { k6Summary } from '../helpers/k6-summary.js';

test('rates are read in tc\'s bit units, and byte units are refused', () => {
  assert.equal(parseRate('2mbit'), 2e6);
  assert.equal(parseRate('500kbit'), 5e5);
  assert.equal(parseRate('1GBIT'), 1e9);
  assert.equal(parseRate('1.5mbit'), 1.5e6);
  for (const bad of ['2mb', '2mbps', '2', 'fast', '4kbit', '']) assert.throws(() => parseRate(bad), /rate in bits|at least 8kbit/, bad);
});

test('RTT is ms, with or without the unit, up to 10 s', () => {
  assert.equal(parseRttMs('20ms'), 20);
  assert.equal(parseRttMs('0.5ms'), 0.5);
  assert.equal(parseRttMs('40'), 40);
  for (const bad of ['20s', '-1', 'x', '10001']) assert.throws(() => parseRttMs(bad), /round-trip time in ms/, bad);
});

test('a profile, overridden by BANDWIDTH, DOWN, UP and RTT; loopback alone builds no link', () => {
  assert.equal(linkSpec({ NETWORK: 'loopback' }), null);
  assert.deepEqual(linkSpec({ NETWORK: 'mobile' }), { name: 'mobile', down: 20e6, up: 5e6, rttMs: 60 });
  assert.deepEqual(linkSpec({ NETWORK: 'wan', BANDWIDTH: 2e6 }), { name: 'wan', down: 2e6, up: 2e6, rttMs: 40 });
  assert.deepEqual(linkSpec({ NETWORK: 'wan', BANDWIDTH: 2e6, UP: 1e6 }), { name: 'wan', down: 2e6, up: 1e6, rttMs: 40 });
  assert.deepEqual(linkSpec({ NETWORK: 'loopback', BANDWIDTH: 2e6, RTT: 20 }), { name: 'custom', down: 2e6, up: 2e6, rttMs: 20 });
  assert.deepEqual(linkSpec({ NETWORK: 'loopback', RTT: 20 }), { name: 'custom', down: null, up: null, rttMs: 20 });
  for (const [name, p] of Object.entries(PROFILES)) assert.ok(p.source.length > 10, `${name} names its source`);
});

test('rates read back for people', () => {
  assert.equal(formatRate(2e6), '2 Mbit/s');
  assert.equal(formatRate(1.5e9), '1.5 Gbit/s');
  assert.equal(formatRate(500e3), '500 kbit/s');
});

test('the limit a run hit is the resource it used most, from 80% up', () => {
  assert.equal(limitOf({ bandwidth: 0.98, client: 0.2, server: 0.3, latency: 0.5 }), 'bandwidth (98%)');
  assert.equal(limitOf({ bandwidth: 0.1, client: null, server: 0.2, latency: 0.94 }), 'latency (94%)');
  assert.equal(limitOf({ bandwidth: 0.5, client: 0.6 }), 'none reached 80% (largest: client 60%)');
  assert.equal(limitOf({ bandwidth: null }), 'not measured');
});

/** A k6 summary of 10 s and 1,000 HTTP requests, as the scripts write it, with a link record. */
const summary = (link) => k6Summary({ mode: 'http', target: 'remote', host: '198.18.0.2:3000', model: 'closed', run: { server_cores: 1, link } });

test('link figures: utilisation, bytes and packets per request, and the ceilings each way of counting predicts', () => {
  const f = figuresOf('s.json', summary({
    configured: { down_bps: 2e6, up_bps: 2e6, rtt_ms: 20 },
    measured: { rtt: { min_ms: 20 } },
    counters: { down: { bytes: 356000, packets: 1020 }, up: { bytes: 139000, packets: 1030 }, proxy_cpu_s: 1 },
  }));
  assert.equal(f.rps, 100);
  assert.equal(f.link_down_per_request, 356);
  assert.equal(f.link_up_packets_per_request, 1.03);
  assert.ok(Math.abs(f.link_down_mbps - 0.2848) < 1e-9); // 356,000 B × 8 / 10 s
  assert.ok(Math.abs(f.link_down_util_pct - 14.24) < 1e-9);
  assert.ok(Math.abs(f.ceiling_k6_bytes_rps - 2e6 / (8 * 289)) < 1e-9, 'down is the tighter direction');
  assert.ok(Math.abs(f.ceiling_link_bytes_rps - 2e6 / (8 * 356)) < 1e-9);
  assert.equal(f.ceiling_latency_rps, 1600); // 32 VUs / 20 ms
  assert.equal(f.latency_share_pct, 6.25);
  assert.equal(f.proxy_cpu_pct, 10);
  assert.match(f.limit, /^none reached 80%/);
});

test('off a link every link figure is null, and none is made up', () => {
  const f = figuresOf('s.json', summary(undefined));
  for (const key of ['link_down_mbps', 'ceiling_link_bytes_rps', 'ceiling_latency_rps', 'limit']) assert.equal(f[key], null, key);
});
