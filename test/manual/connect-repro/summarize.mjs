// Self time of a V8 .cpuprofile (node --cpu-prof) by category, optionally only over a window of the monotonic clock:
//   node summarize.mjs <file.cpuprofile> [startUs endUs] [--top N]
// Or bytes allocated by category, from a sampling heap profile (stats.mjs's ALLOC_PROFILE, a .heapprofile).
// A .cpuprofile is JSON: nodes (id, callFrame {functionName, url}, children), samples (node ids) and timeDeltas (µs
// between samples); a sample's time is the delta that follows it. startUs/endUs are process.hrtime µs (the clock of the
// profile's startTime), as bench.mjs records each run's load window. --top N also lists the N functions of most self time.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 0;
const [file, startArg, endArg] = args;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const start = startArg ? Number(startArg) : -Infinity;
const end = endArg ? Number(endArg) : Infinity;

// First match wins.
export const CATEGORIES = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['DOMException / AbortSignal', (f) => /DOMException|[Aa]bort/.test(f.functionName) || /abort_controller|domexception/.test(f.url)],
  ["connect's async iteration", (f) => /@connectrpc\/connect\/dist\/.*async-iterable/.test(f.url)
    || /^__async|^(fulfill|resume|step|settle|verb|awaitReturn)$/.test(f.functionName) && /@connectrpc/.test(f.url)],
  ['connect, other', (f) => /@connectrpc\//.test(f.url)],
  ['protobuf encode/decode', (f) => /@bufbuild\/protobuf/.test(f.url) || /@grpc\/proto-loader|protobufjs/.test(f.url)],
  ['grpc-js', (f) => /@grpc\/grpc-js/.test(f.url)],
  ['HTTP/2 core', (f) => /internal\/http2\//.test(f.url)],
  ['streams, events, timers', (f) => /internal\/streams\/|node:events|internal\/timers|internal\/process\/task_queues/.test(f.url)],
  ['Fetch Headers / URL', (f) => /internal\/deps\/undici|internal\/url/.test(f.url) || /^Headers$|^URL$/.test(f.functionName)],
  ['(program)', (f) => f.functionName === '(program)'],
  ['other', () => true],
];

const pct = (part, whole) => `${(100 * part / whole).toFixed(1).padStart(5)}%`;
const name = (f) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\//, '')}:${f.lineNumber + 1}`;

if (profile.head) {
  // A sampling heap profile (stats.mjs's ALLOC_PROFILE): a tree of call frames, each with the bytes sampled as
  // allocated by that very frame (selfSize). Bytes by category of the allocating frame, and the top allocators.
  const cats = new Map(CATEGORIES.map(([c]) => [c, 0]));
  const fns = new Map();
  let total = 0;
  const walk = (node) => {
    const f = node.callFrame;
    const c = CATEGORIES.find(([, test]) => test(f))[0];
    cats.set(c, cats.get(c) + node.selfSize);
    fns.set(name(f), (fns.get(name(f)) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(walk);
  };
  walk(profile.head);
  console.log(`${file}: ${(total / 1e6).toFixed(1)} MB sampled as allocated`);
  for (const [c, bytes] of cats) if (bytes > 0) console.log(`${pct(bytes, total)}  ${c}`);
  if (top) {
    console.log(`top ${top} allocating functions:`);
    for (const [key, bytes] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(bytes, total)}  ${key}`);
  }
  process.exit(0);
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
let t = profile.startTime;
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  const dt = profile.timeDeltas[i + 1] ?? 0;
  if (t < start || t >= end) continue;
  selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  total += dt;
}
const cats = new Map(CATEGORIES.map(([name]) => [name, 0]));
const fns = new Map();
for (const [id, us] of selfUs) {
  const f = byId.get(id).callFrame;
  const c = CATEGORIES.find(([, test]) => test(f))[0];
  cats.set(c, cats.get(c) + us);
  fns.set(name(f), (fns.get(name(f)) ?? 0) + us);
}
console.log(`${file}: ${(total / 1e6).toFixed(2)} s of samples${startArg ? ' in the window' : ''}`);
for (const [c, us] of cats) if (us > 0) console.log(`${pct(us, total)}  ${c}`);
if (top) {
  console.log(`top ${top} functions by self time:`);
  for (const [key, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us, total)}  ${key}`);
}
