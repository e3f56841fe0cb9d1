// Loads each server with h2load, interleaved, the server pinned to cpu 0 and h2load to cpu 1, a fresh server per run:
//   node bench.mjs <rounds> <seconds> <warm-up seconds> <servers,comma-separated> <out.json> [profile dir]
// servers: names of SERVERS below. Loads: h2load -c8 -m32 and -c32 -m1 (LOADS). Per run: RPS as h2load counts it, and
// from stats.mjs over the measured load only: GC ms and bytes allocated per request, server CPU µs per request, the
// event loop's idle share. With a profile dir, each server runs under node --cpu-prof; the JSON gives each run's
// window (monotonic µs) for summarize.mjs. ALLOC_PROFILE_DIR=<dir>: each server writes a sampling heap profile of its
// measured load there (stats.mjs), for summarize.mjs.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
export const SERVERS = {
  connect: { file: 'connect-server.mjs', port: 50061 },
  grpc: { file: 'grpc-server.mjs', port: 50051 },
  // Mitigations a user could apply (README.md): the same server with connect-node options, OPTIONS as JSON.
  // Not a fix: what DOMException's stack capture costs (every Error captures no stack frames at all then).
  'connect-nostack': { file: 'connect-server.mjs', port: 50063, nodeArgs: ['--stack-trace-limit=0'] },
  'connect-nocompression': { file: 'connect-server-options.mjs', port: 50062, env: { OPTIONS: '{"acceptCompression":[]}' } },
  // Not a fix either: a young generation large enough that the calls in flight die young (V8 flag, MiB per semi-space).
  'connect-semispace': { file: 'connect-server.mjs', port: 50066, nodeArgs: ['--max-semi-space-size=32'] },
  'connect-emitend': { file: 'connect-server-options.mjs', port: 50065, env: { EMIT_END: '1' } },
  // connect-server.mjs in a copy of this folder whose node_modules has another connect-node release (README.md).
  ...(process.env.CONNECT_NEXT_DIR
    ? { 'connect-next': { file: `${process.env.CONNECT_NEXT_DIR}/connect-server.mjs`, port: 50064, absolute: true } } : {}),
};
const LOADS = { 'c8m32': ['-c8', '-m32'], 'c32m1': ['-c32', '-m1'] };

const [rounds, seconds, warmup, names, out, profileDir] = process.argv.slice(2);
if (!out) {
  console.error('usage: node bench.mjs <rounds> <seconds> <warm-up seconds> <servers> <out.json> [profile dir]');
  process.exit(2);
}
const h2load = execFileSync('bash', ['-c', 'command -v h2load'], { encoding: 'utf8' }).trim();

function h2(port, flags, durationS) {
  const args = ['-c', '1', h2load, ...flags, '-t1', '-D', String(durationS), '-d', `${here}request.bin`,
    '-H', 'content-type: application/grpc', '-H', 'te: trailers', `http://127.0.0.1:${port}/repro.v1.UserService/GetUser`];
  const text = execFileSync('taskset', args, { encoding: 'utf8' });
  const rps = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(text)?.[1]);
  const [, done, succeeded] = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded/.exec(text) ?? [];
  return { rps, done: Number(done), succeeded: Number(succeeded) };
}

async function run(name, load) {
  const server = SERVERS[name];
  const node = [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-${load}-${Date.now()}.cpuprofile`] : []),
    ...(server.nodeArgs ?? []), '--import', `${here}stats.mjs`, server.absolute ? server.file : `${here}${server.file}`];
  const child = spawn('taskset', ['-c', '0', process.execPath, ...node],
    { env: { ...process.env, PORT: String(server.port), ...server.env,
      ...(process.env.ALLOC_PROFILE_DIR ? { ALLOC_PROFILE: `${process.env.ALLOC_PROFILE_DIR}/${name}-${load}.heapprofile` } : {}) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  let wake = () => {};
  let buffer = '';
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let at;
    while ((at = buffer.indexOf('\n')) >= 0) { lines.push(buffer.slice(0, at)); buffer = buffer.slice(at + 1); wake(); }
  });
  const line = async (n) => { while (lines.length < n) await new Promise((resolve) => { wake = resolve; }); return lines[n - 1]; };
  await line(1); // "… on <port>"
  if (Number(warmup) > 0) h2(server.port, LOADS[load], Number(warmup));
  const loadavg = readFileSync('/proc/loadavg', 'utf8').trim();
  child.kill('SIGUSR2');
  const before = JSON.parse(await line(2));
  const result = h2(server.port, LOADS[load], Number(seconds));
  child.kill('SIGUSR2');
  const after = JSON.parse(await line(3));
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  const per = (key) => (after[key] - before[key]) / result.succeeded;
  const idle = after.loopIdleMs - before.loopIdleMs;
  return {
    server: name, load, loadavg, ...result,
    gcMsPer1000: per('gcMs') * 1000, gcRuns: after.gcRuns - before.gcRuns,
    gcMajorMsPer1000: per('gcMajorMs') * 1000, gcMajorRuns: after.gcMajorRuns - before.gcMajorRuns, allocatedBytesPerRequest: per('allocatedBytes'),
    cpuUsPerRequest: per('cpuUs'), loopIdleShare: idle / (idle + after.loopActiveMs - before.loopActiveMs),
    windowUs: [before.monotonicUs, after.monotonicUs],
  };
}

const runs = [];
for (let round = 1; round <= Number(rounds); round++) {
  for (const load of Object.keys(LOADS)) {
    for (const name of names.split(',')) {
      const r = { round, ...(await run(name, load)) };
      runs.push(r);
      console.log(`round ${round} ${name} ${load}: ${r.rps} req/s, ${r.succeeded}/${r.done} ok, GC ${r.gcMsPer1000.toFixed(1)} ms/1000 (${r.gcRuns} runs; `
        + `mark-compact ${r.gcMajorMsPer1000.toFixed(1)} ms/1000, ${r.gcMajorRuns} runs), `
        + `${Math.round(r.allocatedBytesPerRequest)} B/req, CPU ${r.cpuUsPerRequest.toFixed(0)} µs/req, idle ${(100 * r.loopIdleShare).toFixed(1)}% `
        + `[loadavg ${r.loadavg}]`);
    }
  }
}
writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds, seconds, warmup, runs }, null, 2)}\n`);
