// The gRPC listeners' two garbage-collection regimes (docs/findings/2026-11-25-profiling.md, "Why ours ÷ peer swung"): per round one
// MODE=grpc,peer-grpc server (SEPARATE=1: a server per listener, as the decomposition runs them; 1 worker, pinned to the
// first core, V8's --trace-gc and the given flags on), each listener loaded in turn by h2load (pinned to the second;
// -c8 -m32), the order alternating per round, after a 1 s warm-up. Per load: req/s and the worker's scavenges and
// mark-compacts with their pause time (ms, from --trace-gc, incremental marking steps included). Not part of npm test.
//   flock /tmp/quiet.lock node test/manual/gc-regimes.js <rounds> <seconds> [v8 flag ...]
//   SEPARATE=1 node test/manual/gc-regimes.js 6 4 --initial-heap-size=512
import { measureCapacity } from '../../bench/passes/capacity.js';
import { freePort, startServer } from '../../bench/processes.js';
import { MANY_STREAMS } from '../../bench/commands/targets.js';

const [roundsArg, secondsArg, ...flags] = process.argv.slice(2);
const rounds = Number(roundsArg);
const durationS = Number(secondsArg);
if (!(rounds >= 1) || !(durationS >= 1)) {
  console.error('usage: node test/manual/gc-regimes.js <rounds> <seconds> [v8 flag ...]');
  process.exit(2);
}
// One --trace-gc line: "[pid:isolate] 3504 ms: Scavenge 112.4 (188.3) -> 70.4 (197.3) MB, pooled: 14 MB, 9.69 / 0.00 ms
// (+ 11.1 ms in 32 steps since start of marking, ...)": the kind, the pause, and the incremental steps before it.
const GC_LINE = /ms: (Scavenge|Mark-Compact(?: \(reduce\))?|Minor Mark-Sweep) .*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(?: {2}\(\+ ([\d.]+) ms in)?/;
const gcOf = (text) => {
  const kinds = {};
  for (const line of text.split('\n')) {
    const m = GC_LINE.exec(line);
    if (!m) continue;
    const kind = (kinds[m[1]] ??= { count: 0, ms: 0 });
    kind.count += 1;
    kind.ms += Number(m[2]) + Number(m[3] ?? 0);
  }
  return kinds;
};
const withFlags = (command, args) => [command, args.flatMap((a) => (a === process.execPath ? [a, '--trace-gc', ...flags] : [a]))];
const separate = process.env.SEPARATE === '1';
const start = async (mode) => startServer({ env: { MODE: mode, ADMIN_PORT: String(await freePort()) }, cpus: '0', wrap: withFlags });
for (let round = 1; round <= rounds; round += 1) {
  const order = round % 2 ? ['grpc', 'peer-grpc'] : ['peer-grpc', 'grpc'];
  const shared = separate ? null : await start('grpc,peer-grpc');
  try {
    for (const listener of order) {
      const server = shared ?? await start(listener);
      try {
        const load = { listener, scenario: 'user', host: `127.0.0.1:${server.ports[listener]}`, ...MANY_STREAMS, cpus: '1' };
        await measureCapacity({ ...load, durationS: 1 });
        const from = server.output().length;
        const { rps } = await measureCapacity({ ...load, durationS });
        const gc = Object.entries(gcOf(server.output().slice(from))).map(([k, { count, ms }]) => `${k} ${count}× ${ms.toFixed(0)} ms`);
        console.log(`round ${round} ${listener.padEnd(9)} ${Math.round(rps)} req/s; ${gc.join(', ') || 'no GC'}`);
      } finally {
        if (!shared) await server.stop();
      }
    }
  } finally {
    await shared?.stop();
  }
}
