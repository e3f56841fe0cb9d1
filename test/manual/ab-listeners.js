// A/B of server variants on a framework/bare pair of listeners (docs/findings/2026-11-23-frameworks-issue-13.md, "Using it on the
// frameworks"). Per repeat and variant: a fresh server with both listeners (1 worker, pinned to cpu 0),
// the bare one then the framework loaded by wrk or h2load (pinned to cpu 1, 32 connections, one request
// in flight each) for SECONDS after a 1 s warm-up; the variants interleaved. Prints each repeat, then
// the median (min–max) of framework/bare and of each side's req/s. Not part of npm test.
// A variant is a checkout of the repository (a git worktree) and, optionally, server environment:
//   node test/manual/ab-listeners.js http baseline-http 7 5 before=/tmp/wt-before after=/tmp/wt-after
//   node test/manual/ab-listeners.js grpc baseline-grpc 7 5 A=/tmp/wt-a B=/tmp/wt-b,GRPC_CHANNELZ:true
// The pair may be a listener and its peer (grpc peer-grpc). Environment: CONNECTIONS (default 32) and STREAMS (h2load -m,
// default 1; a checkout without the option loads one per connection), ACCOUNTING=1 (each server keeps its accounting,
// an admin port, as the main job's and the targets' servers do), SEPARATE=1 (each listener in a server of its own, as
// the decomposition runs them since listeners sharing a heap were found to tax each other: docs/profiling.md).
//   SEPARATE=1 ACCOUNTING=1 node test/manual/ab-listeners.js grpc peer-grpc 6 4 A=/tmp/wt-a,WORKER_INITIAL_HEAP_MB:512 B=...
import { spread } from '../../bench/report/stats.js';
import { freePort } from '../../bench/processes.js';

const [framework, bare, repeatsArg, secondsArg, ...variantArgs] = process.argv.slice(2);
const repeats = Number(repeatsArg);
const seconds = Number(secondsArg);
if (!framework || !bare || !(repeats >= 1) || !(seconds >= 1) || variantArgs.length === 0) {
  console.error('usage: node test/manual/ab-listeners.js <framework> <bare> <repeats> <seconds> <label>=<checkout>[,VAR:value...] ...');
  process.exit(2);
}
const variants = variantArgs.map((arg) => {
  const [label, rest] = arg.split('=');
  const [root, ...env] = rest.split(',');
  return { label, root, env: Object.fromEntries(env.map((e) => e.split(':'))) };
});
const connections = Number(process.env.CONNECTIONS ?? 32);
const streams = Number(process.env.STREAMS ?? 1);
const results = Object.fromEntries(variants.map((v) => [v.label, { ratio: [], framework: [], bare: [] }]));
for (let r = 1; r <= repeats; r++) {
  for (const v of variants) {
    const { startServer } = await import(`${v.root}/bench/processes.js`);
    // A checkout from before bench/ had folders keeps the pass at bench/capacity.js.
    const { measureCapacity } = await import(`${v.root}/bench/passes/capacity.js`).catch(() => import(`${v.root}/bench/capacity.js`));
    const start = async (mode) => startServer({
      env: { MODE: mode, WORKERS: '1', ...(process.env.ACCOUNTING === '1' ? { ADMIN_PORT: String(await freePort()) } : {}), ...v.env },
      cpus: '0',
    });
    const separate = process.env.SEPARATE === '1';
    const shared = separate ? null : await start(`${framework},${bare}`);
    try {
      const rps = {};
      for (const listener of [bare, framework]) {
        const server = shared ?? await start(listener);
        try {
          const load = { listener, scenario: 'user', host: `127.0.0.1:${server.ports[listener]}`, connections, streams, cpus: '1' };
          await measureCapacity({ ...load, durationS: 1 });
          rps[listener] = (await measureCapacity({ ...load, durationS: seconds })).rps;
        } finally {
          if (!shared) await server.stop();
        }
      }
      const x = results[v.label];
      x.ratio.push(rps[framework] / rps[bare]);
      x.framework.push(rps[framework]);
      x.bare.push(rps[bare]);
      console.error(`r${r} ${v.label}: ${framework} ${Math.round(rps[framework])}, ${bare} ${Math.round(rps[bare])}, ratio ${(rps[framework] / rps[bare]).toFixed(3)}`);
    } finally {
      await shared?.stop();
    }
  }
}
const show = (values, digits) => {
  const { median, min, max } = spread(values);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
};
for (const [label, x] of Object.entries(results)) {
  console.log(`${label}: ratio ${show(x.ratio, 3)}; ${framework} ${show(x.framework, 0)} req/s; ${bare} ${show(x.bare, 0)} req/s`);
}
