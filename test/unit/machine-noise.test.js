// The machine's noise per run (issue 38): the arithmetic on /proc (bench/records/machine-noise.js) from synthetic /proc/stat and
// /proc/<pid>/stat texts read before and after a run, which figures a placement cannot have (bench/passes/machine-noise.js
// coreSides), and what the report says of a disturbed run: its rows, its DISTURBED note, its JSON. Pure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coreSides } from '../../bench/passes/machine-noise.js';
import { DISTURBED, disturbedRuns } from '../../bench/report/machine-noise.js';
import { machineFigures, machineWindow, parseProcessStat, parseProcStat } from '../../bench/records/machine-noise.js';
import { buildReport } from '../../bench/report/report.js';
import { renderMarkdown } from '../../bench/report/render.js';
import { splitCores } from '../../bench/settings/cores.js';

const HZ = 100;
const COLUMNS = ['user', 'nice', 'system', 'idle', 'iowait', 'irq', 'softirq', 'steal', 'guest', 'guest_nice'];

/** /proc/stat as the kernel writes it: the `cpu` line of all CPUs, one `cpuN` line each, and lines that are not CPUs. */
function procStat(cpus) {
  const line = (name, c) => `${name} ${COLUMNS.map((k) => c[k] ?? 0).join(' ')}`;
  const all = Object.fromEntries(COLUMNS.map((k) => [k, Object.values(cpus).reduce((a, c) => a + (c[k] ?? 0), 0)]));
  return [line('cpu ', all), ...Object.entries(cpus).map(([id, c]) => line(`cpu${id}`, c)), 'intr 2922218 0 0', 'ctxt 5187381',
    'btime 1764160080', 'processes 31562', 'procs_running 3', 'procs_blocked 0', 'softirq 1 2 3'].join('\n');
}

/** /proc/<pid>/stat: a command name with a space and a parenthesis, as the parser must take it, and the four times (ticks). */
const procPid = (pid, { utime = 0, stime = 0, cutime = 0, cstime = 0 }) => `${pid} (node (worker) 1) S 1 ${pid} ${pid} 0 -1 4194560 `
  + `2000 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 11 0 5000 1300000000 30000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 0 0 0 0 0 0`;

/** Two cores' counters at the run's start, since boot (ticks). */
const START = {
  0: { user: 62461, nice: 0, system: 11587, idle: 67466, iowait: 122, irq: 0, softirq: 2531, steal: 92, guest: 0, guest_nice: 0 },
  1: { user: 46989, nice: 0, system: 13388, idle: 80435, iowait: 649, irq: 0, softirq: 1816, steal: 106, guest: 0, guest_nice: 0 },
};
/**
 * Each core's 2 s at 100 ticks a second = 200 ticks. The server's core: 20 idle, 10 stolen, so 170 busy, all of which the ticks
 * saw. k6's: 46 idle and 2 iowait, 2 stolen, so 150 busy, of which the ticks saw 120 (short busy spells between idle ones, with
 * the tick stopped: a tickless kernel's idle time is measured, its busy time sampled).
 */
const DELTA = {
  0: { user: 120, system: 40, idle: 20, softirq: 10, steal: 10 },
  1: { user: 80, system: 40, idle: 46, iowait: 2, steal: 2 },
};
const plus = (a, b) => Object.fromEntries(COLUMNS.map((k) => [k, (a[k] ?? 0) + (b[k] ?? 0)]));
const END = { 0: plus(START[0], DELTA[0]), 1: plus(START[1], DELTA[1]) };

/**
 * The server's primary (pid 10) and workers 11 and 12, before and after: worker 11 exits in the window after 50 ticks of it,
 * its whole 1050 moving into the primary's cutime; the primary used 4 ticks, worker 12 70: 124 ticks of the server's in all.
 * The job had waited for an earlier k6 (300 ticks) before; k6 used 150 in the window, waited for at its end.
 */
const before = {
  at_ms: 1000, stat: procStat(START), job_cpu_s: 1.5,
  server: [procPid(10, { utime: 80, stime: 20 }), procPid(11, { utime: 900, stime: 100 }), procPid(12, { utime: 1800, stime: 200 })],
  job: procPid(9, { utime: 400, stime: 50, cutime: 250, cstime: 50 }),
};
const after = {
  at_ms: 3000, stat: procStat(END), job_cpu_s: 1.53,
  server: [procPid(10, { utime: 83, stime: 21, cutime: 1000, cstime: 50 }), procPid(12, { utime: 1860, stime: 210 })],
  job: procPid(9, { utime: 402, stime: 51, cutime: 370, cstime: 80 }),
};
const LOOPBACK = { target: /** @type {'local'} */ ('local'), link: null };

test('/proc/stat: one entry per cpuN line, by column name; the all-CPUs line and the others left out', () => {
  const cpus = parseProcStat(procStat(START));
  assert.deepEqual([...cpus.keys()], [0, 1]);
  assert.deepEqual(cpus.get(1), START[1]);
  // An older kernel writes fewer columns: the missing ones read 0.
  assert.deepEqual(parseProcStat('cpu  1 2 3 4\ncpu0 1 2 3 4 5 6 7\n').get(0), { ...Object.fromEntries(COLUMNS.map((k) => [k, 0])),
    user: 1, nice: 2, system: 3, idle: 4, iowait: 5, irq: 6, softirq: 7 });
});

test('/proc/<pid>/stat: utime + stime and cutime + cstime, past a command name holding spaces and parentheses', () => {
  assert.deepEqual(parseProcessStat(procPid(10, { utime: 83, stime: 21, cutime: 1000, cstime: 50 })), { own: 104, children: 1050 });
});

test('steal and other processes\' CPU per side: shares of the pinned cores\' time, a worker gone in the window counted once', () => {
  const noise = machineWindow(before, after, coreSides(splitCores([0, 1]), LOOPBACK), HZ);
  assert.equal(noise.clock_ticks, HZ);
  assert.equal(noise.window_s, 2);
  assert.equal(noise.job_cpu_s, 0.03);
  // Server's core: 200 ticks; 10 stolen (5%); 170 busy, 124 of them the server's: 46 (23%) another's.
  assert.deepEqual(noise.server, {
    cpus: '0', time_s: 2, idle_s: 0.2, steal_s: 0.1, busy_s: 1.7, ticked_s: 1.7, processes_s: 1.24, other_s: 0.46,
    steal_pct: 5, other_pct: 23, steal_reason: null, other_reason: null,
  });
  // k6's core: 200 ticks; 2 stolen (1%); 150 busy, whatever the ticks saw, all k6's (the job's waited-for children: 450 − 300).
  assert.deepEqual(noise.k6, {
    cpus: '1', time_s: 2, idle_s: 0.48, steal_s: 0.02, busy_s: 1.5, ticked_s: 1.2, processes_s: 1.5, other_s: 0,
    steal_pct: 1, other_pct: 0, steal_reason: null, other_reason: null,
  });
  assert.deepEqual(machineFigures(noise), {
    machine_steal_server_pct: 5, machine_other_server_pct: 23, machine_steal_k6_pct: 1, machine_other_k6_pct: 0,
  });
  // Both cores one side's (a list as taskset takes it): their ticks add up.
  const both = machineWindow(before, after, { server: { cpus: '0-1', steal_reason: null, other_reason: null }, k6: coreSides(splitCores([0, 1]), LOOPBACK).k6 }, HZ);
  assert.equal(both.server.time_s, 4);
  assert.equal(both.server.steal_pct, 3); // (10 + 2) ÷ 400
  assert.equal(both.server.other_pct, ((320 - 124) / 400) * 100);
  // A window's time is its wall time: the same counters over a window twice as long leave the cores idle the rest of it.
  const longer = machineWindow(before, { ...after, at_ms: 5000 }, coreSides(splitCores([0, 1]), LOOPBACK), HZ);
  assert.deepEqual([longer.server.time_s, longer.server.busy_s, longer.server.other_pct], [4, 3.7, ((370 - 124) / 400) * 100]);
});

test('what a placement cannot measure is null with why, never a number: one core, TARGET=remote, an emulated link, no /proc', () => {
  const one = machineWindow(before, after, coreSides(splitCores([0]), LOOPBACK), HZ);
  for (const side of [one.server, one.k6]) {
    assert.equal(side.cpus, null);
    for (const field of ['time_s', 'idle_s', 'steal_s', 'busy_s', 'ticked_s', 'processes_s', 'other_s', 'steal_pct', 'other_pct']) assert.equal(side[field], null, field);
    assert.match(side.steal_reason, /^one core: the server and k6 share it, not pinned/);
    assert.equal(side.other_reason, side.steal_reason);
  }
  assert.deepEqual(Object.values(machineFigures(one)), [null, null, null, null]);

  // Remote: the server's cores are another machine's; k6's are read.
  const remote = machineWindow({ ...before, server: [] }, { ...after, server: [] }, coreSides(splitCores([0, 1]), { target: 'remote', link: null }), HZ);
  assert.equal(remote.server.steal_pct, null);
  assert.match(remote.server.other_reason, /^TARGET=remote: the server runs on another machine/);
  assert.deepEqual([remote.k6.steal_pct, remote.k6.other_pct], [1, 0]);

  // An emulated link: steal is the hypervisor's on either side; other processes' CPU cannot be told from the link's own work.
  const link = machineWindow(before, after, coreSides(splitCores([0, 1]), { target: 'remote', link: {} }), HZ);
  assert.deepEqual([link.server.steal_pct, link.k6.steal_pct], [5, 1]);
  for (const side of [link.server, link.k6]) {
    assert.equal(side.other_pct, null);
    assert.equal(side.other_s, null);
    assert.match(side.other_reason, /^over an emulated link the link's own work/);
  }

  const noProc = machineWindow({ ...before, stat: null }, { ...after, stat: null }, coreSides(splitCores([0, 1]), LOOPBACK), HZ);
  assert.equal(noProc.server.other_pct, null);
  assert.equal(noProc.k6.steal_reason, 'no /proc/stat (not Linux)');
  const offline = machineWindow(before, after, { ...coreSides(splitCores([0, 1]), LOOPBACK), k6: { cpus: '5', steal_reason: null, other_reason: null } }, HZ);
  assert.equal(offline.k6.steal_reason, 'cpu 5 not in /proc/stat (offline)');
  // The job's own /proc/self/stat unread: k6's time is not known, so neither is what others used of its cores.
  const noJob = machineWindow({ ...before, job: null }, after, coreSides(splitCores([0, 1]), LOOPBACK), HZ);
  assert.equal(noJob.k6.other_pct, null);
  assert.equal(noJob.k6.steal_pct, 1);
  assert.match(noJob.k6.other_reason, /could not be read/);
});

/** A run's figures as bench/records/summary.js gives them, with its `bench.run.machine`. */
function runOf(mode, index, machine) {
  return {
    mode, target: 'local', host: '127.0.0.1:1', file: `k6-${mode}-r${index}.json`, scenario: 'user', connections: 'reuse', model: 'closed',
    rate: null, vus: 4, rps: 1000, requests: 2000, failed: 0, checks_failed: 0, duration_s: 2,
    latency_ms: { p50: 1, p90: 2, p95: 3, p99: 4 }, data_sent_bytes: 1, data_received_bytes: 1,
    sent_per_request: 70, received_per_request: 289, payload_bytes: 117, k6_cpu_pct: 50,
    ...machineFigures(machine), run: { machine },
  };
}

/** A bench.run.machine with these shares (%) on the server's core 0 and k6's core 1. */
const machineOf = ({ serverOther = 0.4, serverSteal = 0, k6Other = 0.5, k6Steal = 0 } = {}) => {
  const side = (cpus, other, steal) => ({
    cpus, time_s: 2, idle_s: 0.5 - steal / 50, steal_s: steal / 50, busy_s: 1.5, ticked_s: 1.4, processes_s: 1.5 - other / 50, other_s: other / 50,
    steal_pct: steal, other_pct: other, steal_reason: null, other_reason: null,
  });
  return { source: 'test', clock_ticks: HZ, window_s: 2, job_cpu_s: 0.02, server: side('0', serverOther, serverSteal), k6: side('1', k6Other, k6Steal) };
};

test('the report: four rows, the disturbed runs named in a DISTURBED note and in the JSON: steal from 5%, other processes from 10%', () => {
  assert.deepEqual(DISTURBED, { steal: 0.05, other: 0.1 });
  const report = buildReport([
    { key: 'http', runs: [runOf('http', 1, machineOf()), runOf('http', 2, machineOf({ serverOther: 23 })), runOf('http', 3, machineOf({ serverOther: 9.9, k6Steal: 4.9 }))] },
    { key: 'grpc', runs: [runOf('grpc', 1, machineOf({ k6Steal: 5 })), runOf('grpc', 2, machineOf({ serverSteal: 7.5, k6Other: 12 }))] },
  ]);
  assert.deepEqual(report.modes.http.disturbed, [{ run: 2, file: 'k6-http-r2.json', side: 'server', what: 'other', cpus: '0', pct: 23 }]);
  assert.deepEqual(report.modes.grpc.disturbed.map((d) => [d.run, d.side, d.what, d.pct]),
    [[1, 'k6', 'steal', 5], [2, 'server', 'steal', 7.5], [2, 'k6', 'other', 12]]);
  const notes = report.notes.filter((n) => n.startsWith('DISTURBED'));
  assert.equal(notes.length, 2, report.notes.join('\n'));
  assert.match(notes[0], /^DISTURBED: http run 2: 23% of the server's cores \(cpu 0\) went to other processes\. A busy machine lowers the RPS/);
  assert.match(notes[0], /\(steal at 5% of the cores' time or more, other processes at 10%: a CPU-bound side loses about that share of its RPS\)/);
  assert.match(notes[1], /^DISTURBED: grpc run 1: 5% of k6's cores \(cpu 1\) went to the hypervisor \(steal\); grpc run 2: 8% of the server's cores \(cpu 0\) went to the hypervisor \(steal\), 12% of k6's cores \(cpu 1\) went to other processes\./);
  // The table's rows: median and min–max of the runs.
  const text = renderMarkdown(report);
  assert.match(text, /^\| other processes' CPU, server cores \(%\) +\| +9\.9 \(0\.4–23\.0\) +\| +0\.4 +\|/m);
  for (const label of ['steal, server cores (%)', 'steal, k6\'s cores (%)', 'other processes\' CPU, k6\'s cores (%)']) {
    assert.ok(text.includes(`| ${label} `), label);
  }
  assert.equal(report.modes.http.machine_other_server_pct, 9.9);
  assert.deepEqual(report.modes.http.spread.machine_other_server_pct, { min: 0.4, max: 23 });
  // A quiet report says nothing.
  const quiet = buildReport([{ key: 'http', runs: [runOf('http', 1, machineOf())] }]);
  assert.ok(!quiet.notes.some((n) => n.startsWith('DISTURBED')), quiet.notes.join('\n'));
  assert.deepEqual(disturbedRuns([{ file: 'x', run: undefined }]), []);
});

test('the report of a run without the figures says which were not measured and why, its cells `not measured`', () => {
  const remote = machineWindow({ ...before, server: [] }, { ...after, server: [] }, coreSides(splitCores([0, 1]), { target: 'remote', link: null }), HZ);
  const report = buildReport([
    { key: 'http', runs: [runOf('http', 1, machineOf())] },
    { key: 'grpc', runs: [runOf('grpc', 1, remote)] },
  ]);
  const missing = report.modes.grpc.not_measured.filter((n) => n.fields.some((f) => f.startsWith('machine_')));
  assert.deepEqual(missing.map((n) => n.fields[0]), ['machine_steal_server_pct', 'machine_other_server_pct']);
  assert.ok(report.notes.includes('grpc: steal on the server\'s cores and other processes\' CPU on the server\'s cores were not measured: '
    + 'TARGET=remote: the server runs on another machine, whose cores are not read from here'), report.notes.join('\n'));
  assert.match(renderMarkdown(report), /^\| steal, server cores \(%\) +\| +0\.0 +\| +not measured +\|/m);
  // A summary from before the job read /proc.
  const old = buildReport([{ key: 'http', runs: [{ ...runOf('http', 1, undefined), run: {} }] }]);
  assert.ok(old.notes.some((n) => /^http: .*steal on k6's cores.* not measured: the run recorded no reading of \/proc$/.test(n)), old.notes.join('\n'));
});
