// ghz's -z (a duration) against -n (a count), with and without a reload: what ghz's error table counts at the end of a
// -z run, set against the calls the server's handlers took (docs/faults.md, "How to read ghz's counts"). Not part of
// npm test. Per run a fresh server (MODE=grpc WORKERS=2 on 127.0.0.1) and ghz v0.120.0, -c 16 --connections 4 on GetUser:
//   node test/manual/ghz-duration.js                     3 runs of each condition, ghz unpaced (16 calls always in flight)
//   RPS=500 CAPTURE=1 node test/manual/ghz-duration.js   paced as the fault matrix paces it; each run captured on lo
// Conditions, in turn within each run (RUNS=3; CONDITIONS=z,z-hup for some of them):
//   z         -z 5s, no signal
//   z-hup     -z 5s, SIGHUP to the primary 2.5 s in (every worker replaced, each drains with a GOAWAY)
//   n-hup     -n N with the same SIGHUP, N the calls of about 5 s (RPS × 5; unpaced N=20000)
//   z-wait    as z-hup with --duration-stop wait (ghz lets the calls in flight end before it closes its connections)
// One JSON line per run, then one per condition with each run's figures: ghz's count and its errors (client addresses
// masked); `served`, the calls the server's handlers took (`served` of every worker's worker-stopped line, retired workers
// included); `unaccounted`, the calls ghz counted (less the attempts "the connection is draining", which grpc-go retried by
// itself) that no handler took. CAPTURE=1 (dumpcap and tshark, from Debian's tshark) decodes each run's connections as
// HTTP/2, packet by packet (connectionsOf): who closed each first (FIN or RST) and when against ghz's deadline (its first
// SYN + 5 s), the calls open on it then, what the server wrote after the client's close. PCAP_DIR=dir keeps the captures.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ROOT, startServer } from '../../bench/processes.js';
import { ensureTool } from '../../bench/tools.js';
import { EVENT } from '../../server/events.js';

const run = promisify(execFile);
const RUNS = Number(process.env.RUNS ?? 3);
const RPS = Number(process.env.RPS ?? 0);
const N = Number(process.env.N ?? (RPS > 0 ? RPS * 5 : 20000));
const CAPTURE = process.env.CAPTURE === '1';
const PCAP_DIR = process.env.PCAP_DIR;
const Z_S = 5;
const SIGNAL_AFTER_MS = 2500;
const CONDITIONS = {
  z: { limit: ['-z', `${Z_S}s`], signal: false },
  'z-hup': { limit: ['-z', `${Z_S}s`], signal: true },
  'n-hup': { limit: ['-n', String(N)], signal: true },
  'z-wait': { limit: ['-z', `${Z_S}s`, '--duration-stop', 'wait'], signal: true },
};
const chosen = (process.env.CONDITIONS ?? 'z,z-hup,n-hup,z-wait').split(',');
if (!(RUNS >= 1) || !(RPS >= 0) || chosen.some((c) => !CONDITIONS[c])) {
  console.error(`usage: [RUNS=3] [RPS=0] [N=…] [CAPTURE=1] [CONDITIONS=${Object.keys(CONDITIONS).join(',')}] node test/manual/ghz-duration.js`);
  process.exit(2);
}
const ghz = ensureTool('ghz');
if (CAPTURE) { ensureTool('dumpcap'); ensureTool('tshark'); }
// ghz's attempt that a GOAWAY left unprocessed and grpc-go retried by itself (docs/faults.md: ghz counts attempts).
const RETRIED = /the connection is draining/;

/**
 * dumpcap on lo for one port, full packets; resolves once it captures (a probe connection shows in its count).
 * @returns {Promise<{file: string, stop: () => Promise<number>}>} stop resolves to the packets dumpcap dropped
 */
async function capture(port, dir) {
  const file = path.join(dir, 'run.pcapng');
  const proc = spawn('dumpcap', ['-i', 'lo', '-f', `tcp port ${port}`, '-w', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (c) => { stderr += c; });
  const exited = once(proc, 'exit');
  const deadline = Date.now() + 10000;
  while (!/Packets: [1-9]/.test(stderr)) {
    if (proc.exitCode !== null || Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error(`dumpcap did not capture:\n${stderr}`); }
    await new Promise((resolve) => { const s = net.connect(port, '127.0.0.1', () => s.destroy()); s.on('close', resolve); s.on('error', resolve); });
    await sleep(200);
  }
  let stopping = null;
  const stop = async () => {
    await sleep(500); // what the kernel still buffers
    proc.kill('SIGINT');
    await exited;
    return Number(stderr.match(/received\/dropped on interface '[^']*': \d+\/(\d+)/)?.[1] ?? NaN);
  };
  return { file, stop: () => (stopping ??= stop()) };
}

const FIELDS = ['frame.time_epoch', 'tcp.stream', 'tcp.srcport', 'tcp.flags.syn', 'tcp.flags.ack', 'tcp.flags.fin', 'tcp.flags.reset',
  'tcp.len', 'tcp.analysis.retransmission', 'http2.type', 'http2.streamid', 'http2.flags', 'http2.goaway.last_stream_id'];
const FRAME = ['DATA', 'HEADERS', 'PRIORITY', 'RST_STREAM', 'SETTINGS', 'PUSH_PROMISE', 'PING', 'GOAWAY', 'WINDOW_UPDATE', 'CONTINUATION'];
const END_STREAM = 0x1;
const SIDES = ['client', 'server'];
const tally = (counts, key) => { counts[key] = (counts[key] ?? 0) + 1; };

/**
 * Each connection ghz made, packet by packet, against ghz's deadline: its first SYN + Z_S s (ghz starts its -z timer
 * just before it dials; a few ms early at most). Connections the client sent no HTTP/2 frame on (the capture's probes)
 * are left out; retransmitted segments are not counted again. A connection is closed first by the side whose FIN or RST
 * came first. A call is open at that moment when the client sent its HEADERS and no END_STREAM came back yet; one above
 * the last GOAWAY's last-stream-id is one the server refused unprocessed (grpc-go retries it by itself). A client that
 * closes with bytes unread in its socket sends an RST instead of a FIN: then the calls answered after its last frame
 * were answered whole and never read (counted only on a connection without a GOAWAY).
 */
async function connectionsOf(file, port) {
  const { stdout } = await run('tshark', ['-r', file, '-d', `tcp.port==${port},http2`, '-T', 'fields', '-E', 'separator=\t',
    '-E', 'aggregator=,', ...FIELDS.flatMap((f) => ['-e', f])], { maxBuffer: 1 << 30 });
  const conns = new Map();
  for (const line of stdout.split('\n')) {
    if (!line) continue;
    const [time, stream, src, syn, ack, fin, rst, len, retransmission, types, ids, flags, lastIds] = line.split('\t');
    if (retransmission) continue;
    const t = Number(time);
    const from = Number(src) === port ? 'server' : 'client';
    let c = conns.get(stream);
    if (!c) {
      c = { port: null, synAt: null, fin: {}, rst: {}, goaways: [], lastStreamId: Infinity, calls: new Map(), clientFrames: 0,
        lastClientFrameAt: 0, after: { server_packets: 0, server_frames: {}, server_fin: false, client_rst: false } };
      conns.set(stream, c);
    }
    if (from === 'client') c.port = Number(src);
    if (syn === '1' && ack === '0') c.synAt = t;
    const clientClosed = c.fin.client !== undefined || c.rst.client !== undefined;
    if (clientClosed && from === 'server' && Number(len) > 0) c.after.server_packets += 1;
    if (clientClosed && from === 'server' && fin === '1') c.after.server_fin = true;
    if (clientClosed && from === 'client' && rst === '1') c.after.client_rst = true;
    if (types) {
      const idList = ids.split(',').map(Number);
      const flagList = flags.split(',').map(Number);
      const lastIdList = (lastIds || '').split(',').map(Number);
      let goaway = 0;
      types.split(',').map(Number).forEach((type, i) => {
        const id = idList[i];
        if (from === 'client') {
          c.clientFrames += 1;
          c.lastClientFrameAt = t;
          if (FRAME[type] === 'HEADERS' && id % 2 === 1 && !c.calls.has(id)) c.calls.set(id, { id, sentAt: t });
          return;
        }
        if (clientClosed) tally(c.after.server_frames, FRAME[type] ?? type);
        const call = c.calls.get(id);
        if (call && (FRAME[type] === 'HEADERS' || FRAME[type] === 'DATA')) {
          if (clientClosed) call.answeredAfterClientClose = true;
          if (flagList[i] & END_STREAM) call.endedAt ??= t;
        }
        if (FRAME[type] === 'GOAWAY') {
          c.goaways.push(t);
          c.lastStreamId = Math.min(c.lastStreamId, lastIdList[goaway++]);
        }
      });
    }
    if (fin === '1') c.fin[from] ??= t;
    if (rst === '1') c.rst[from] ??= t;
  }
  const all = [...conns.values()].filter((c) => c.clientFrames > 0);
  const deadline = Math.min(...all.map((c) => c.synAt ?? Infinity)) + Z_S;
  const ms = (t) => (t === undefined ? null : Math.round((t - deadline) * 10000) / 10);
  return all.map((c) => {
    const closes = SIDES.flatMap((side) => [['FIN', c.fin[side]], ['RST', c.rst[side]]].filter(([, t]) => t !== undefined)
      .map(([kind, t]) => ({ side, kind, t }))).sort((a, b) => a.t - b.t);
    const first = closes[0] ?? { side: null, kind: null, t: undefined };
    const open = [...c.calls.values()].filter((call) => !(call.endedAt < (first.t ?? Infinity)));
    // A client that had a GOAWAY closes once its last call ended (grpc-go's graceful close): its RST is for later frames.
    const unread = first.side === 'client' && first.kind === 'RST' && !(c.goaways[0] < first.t)
      ? [...c.calls.values()].filter((call) => call.endedAt > c.lastClientFrameAt && call.endedAt < first.t) : [];
    return {
      client_port: c.port,
      opened_ms: ms(c.synAt),
      calls: c.calls.size,
      closed_first_by: first.side && `${first.side} ${first.kind}`,
      closed_ms: ms(first.t),
      server_goaways: c.goaways.length,
      first_goaway_ms: ms(c.goaways[0]),
      open_at_close: open.length,
      open_above_goaway: open.filter((call) => call.id > c.lastStreamId).length,
      open_sent_ms_before_close: first.t === undefined ? [] : open.map((call) => Math.round((first.t - call.sentAt) * 10000) / 10),
      open_answered_after_client_close: open.filter((call) => call.answeredAfterClientClose).length,
      answered_unread_at_client_rst: unread.length,
      after_client_close: first.side === 'client' ? c.after : undefined,
    };
  });
}

/** One run of a condition on a fresh server: one JSON object. */
async function runOnce(name, { limit, signal }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ghz-duration-'));
  const server = await startServer({ env: { MODE: 'grpc', WORKERS: '2' } });
  const port = server.ports.grpc;
  let cap = null;
  try {
    if (CAPTURE) cap = await capture(port, dir);
    const out = path.join(dir, 'ghz.json');
    const args = ['--insecure', '--proto', path.join(ROOT, 'proto/user.proto'), '--import-paths', path.join(ROOT, 'proto'),
      '--call', 'user.v1.UserService/GetUser', '-d', '{}', '--connections', '4', '-c', '16', ...(RPS > 0 ? ['--rps', String(RPS)] : []),
      ...limit, '-O', 'json', '-o', out, `127.0.0.1:${port}`];
    const loading = run(ghz, args, { timeout: 30000 });
    let reloaded = null;
    if (signal) {
      await sleep(SIGNAL_AFTER_MS);
      const from = server.lines.length;
      server.proc.kill('SIGHUP');
      reloaded = await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 15000 });
    }
    await loading;
    const report = JSON.parse(await readFile(out, 'utf8'));
    const code = await server.stop();
    const dropped = cap ? await cap.stop() : undefined;
    if (cap && PCAP_DIR) await copyFile(cap.file, path.join(PCAP_DIR, `${name}-${port}.pcapng`));
    const errors = {};
    for (const [e, n] of Object.entries(report.errorDistribution ?? {})) {
      const key = e.replace(/127\.0\.0\.1:\d+->/g, '127.0.0.1:*->');
      errors[key] = (errors[key] ?? 0) + n;
    }
    const retried = Object.entries(errors).filter(([e]) => RETRIED.test(e)).reduce((a, [, n]) => a + n, 0);
    const stopped = server.lines.filter((l) => l.event === EVENT.WORKER_STOPPED);
    const served = stopped.reduce((a, l) => a + l.served.grpc, 0);
    const row = {
      condition: name, ghz: ['-c', '16', '--connections', '4', ...(RPS > 0 ? ['--rps', String(RPS)] : []), ...limit].join(' '),
      reloaded_ms: reloaded?.ms, count: report.count, ok: report.statusCodeDistribution?.OK ?? 0, errors, served,
      unaccounted: report.count - retried - served, drained_lost: stopped.reduce((a, l) => a + l.drained.lost, 0), server_exit: code,
    };
    if (cap) {
      const conns = await connectionsOf(cap.file, port);
      const by = (who) => conns.filter((c) => c.closed_first_by?.startsWith(who));
      const sum = (list, key) => list.reduce((a, c) => a + c[key], 0);
      Object.assign(row, {
        dropped_packets: dropped,
        connections: conns.length,
        calls_on_the_wire: sum(conns, 'calls'),
        closed_first_by_client: by('client').length,
        closed_first_by_server: by('server').length,
        // calls a close cut off: open on the wire (less those a GOAWAY refused), or answered and left unread
        open_at_client_close: sum(by('client'), 'open_at_close') - sum(by('client'), 'open_above_goaway'),
        answered_unread_at_client_rst: sum(by('client'), 'answered_unread_at_client_rst'),
        open_at_server_close: sum(by('server'), 'open_at_close') - sum(by('server'), 'open_above_goaway'),
        // calls a GOAWAY refused unprocessed, still open when their connection closed (grpc-go retries them)
        refused_by_goaway: sum(conns, 'open_above_goaway'),
        server_wrote_after_client_close: by('client').filter((c) => c.after_client_close.server_packets > 0).length,
        server_frames_after_client_close: by('client').reduce((a, c) => {
          for (const [type, n] of Object.entries(c.after_client_close.server_frames)) a[type] = (a[type] ?? 0) + n;
          return a;
        }, {}),
        // the connections that carried a call open at its close
        cut: conns.filter((c) => c.open_at_close + c.answered_unread_at_client_rst > 0),
      });
    }
    return row;
  } finally {
    if (server.proc.exitCode === null) await server.kill();
    if (cap) await cap.stop().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (let i = 1; i <= RUNS; i += 1) {
  for (const name of chosen) {
    const row = { run: i, ...await runOnce(name, CONDITIONS[name]) };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
const errorsOf = (row, match) => Object.entries(row.errors).filter(([e]) => match === RETRIED.test(e)).reduce((a, [, n]) => a + n, 0);
for (const name of chosen) {
  const mine = rows.filter((r) => r.condition === name);
  const each = (f) => mine.map(f);
  console.log(JSON.stringify({
    condition: name, ghz: mine[0].ghz, runs: mine.length, failed: each((r) => errorsOf(r, false)), retried: each((r) => errorsOf(r, true)),
    unaccounted: each((r) => r.unaccounted), drained_lost: each((r) => r.drained_lost),
    ...(CAPTURE ? {
      cut_at_client_close: each((r) => r.open_at_client_close + r.answered_unread_at_client_rst),
      cut_at_server_close: each((r) => r.open_at_server_close), refused_by_goaway: each((r) => r.refused_by_goaway),
      dropped_packets: each((r) => r.dropped_packets),
    } : {}),
  }));
}
