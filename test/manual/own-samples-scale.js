// 10,000 response samples at start (issue 49): how long `node server` with one worker takes from spawn to ready, and the
// RSS of the primary and the worker once ready, for catalog pages of about 1 kB and about 3 kB (made here from the shipped
// catalog example, proto/examples/catalog).
// With BEFORE=<a checkout of another commit>, each start there is interleaved with one here. Then, in this process, the
// CPU time of the job's reading of each file and of its proof of every sample through the codecs.
//   node test/manual/own-samples-scale.js [ROUNDS]     default 3 rounds of each size, interleaved
// Prints one JSON line per start, then the medians with min–max; `none` is a start with no RESPONSE (the empty message).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CATALOG = path.join(ROOT, 'proto/examples/catalog');
const rounds = Number(process.argv[2] ?? 3);

/** 10,000 ListProductsResponse pages of `perPage` products each, taken in turn from the shipped example's products. */
function pages(perPage) {
  const products = readFileSync(path.join(CATALOG, 'responses.ndjson'), 'utf8').split('\n').filter(Boolean)
    .flatMap((line) => JSON.parse(line).products);
  const lines = [];
  for (let i = 0; i < 10_000; i++) {
    const page = Array.from({ length: perPage }, (_, j) => ({ ...products[(i * perPage + j) % products.length], id: `prod_${i}_${j}` }));
    lines.push(JSON.stringify({ products: page, nextPageToken: `page-${i + 1}` }));
  }
  return `${lines.join('\n')}\n`;
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const childrenOf = (pid) => execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='], { encoding: 'utf8' }).trim().split(/\s+/).map(Number);

/** One start of the server in `root`: spawn → the primary's `ready` line, then the RSS of each process. */
function start(root, file, port) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['server'], {
      cwd: root,
      env: {
        ...process.env, WORKERS: '1', MODE: 'both', HOST: '127.0.0.1', HTTP_PORT: String(port), GRPC_PORT: String(port + 1),
        PROTO: path.join(CATALOG, 'v1/catalog.proto'), RPC: 'examples.catalog.v1.CatalogService/ListProducts', RESPONSE: file ?? '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let ready = false;
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      if (ready || !/"event":"ready"/.test(out)) return;
      ready = true;
      const ms = performance.now() - t0;
      const worker = childrenOf(child.pid)[0];
      const result = { ms: Math.round(ms), primary_rss_mib: Math.round(rssKb(child.pid) / 1024), worker_rss_mib: Math.round(rssKb(worker) / 1024) };
      child.once('exit', () => resolve(result));
      child.kill('SIGTERM');
    });
    child.once('exit', (code) => ready || reject(new Error(`server exited ${code} before ready: ${err.slice(-500)}`)));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'own-scale-'));
try {
  const sizes = { '1kB': 2, '3kB': 6 };
  const files = Object.fromEntries(Object.entries(sizes).map(([name, perPage]) => {
    const file = path.join(dir, `${name}.ndjson`);
    const text = pages(perPage);
    writeFileSync(file, text);
    console.log(JSON.stringify({ file: name, mean_sample_bytes: Math.round(Buffer.byteLength(text) / 10_000) }));
    return [name, file];
  }));
  files.none = undefined; // the empty message: what the samples add is the difference
  const roots = { here: ROOT, ...(process.env.BEFORE ? { before: path.resolve(process.env.BEFORE) } : {}) };
  const results = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, file] of Object.entries(files)) {
      for (const [at, root] of Object.entries(roots)) {
        const res = await start(root, file, 20000 + Math.floor(Math.random() * 20000));
        console.log(JSON.stringify({ at, samples: name, ...res }));
        (results[`${at} ${name}`] ??= []).push(res);
      }
    }
  }
  const spread = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[Math.floor(s.length / 2)]} (${s[0]}–${s.at(-1)})`;
  };
  for (const [name, list] of Object.entries(results)) {
    console.log(`${name}: ready ${spread(list.map((x) => x.ms))} ms; primary RSS ${spread(list.map((x) => x.primary_rss_mib))} MiB; `
      + `worker RSS ${spread(list.map((x) => x.worker_rss_mib))} MiB`);
  }
  const { loadOwnService } = await import('../../proto/own/service.js');
  const { proveCodecs } = await import('../../bench/passes/equality.js');
  const cpuMs = (f) => {
    const before = process.cpuUsage();
    const value = f();
    const used = process.cpuUsage(before);
    return [value, Math.round((used.user + used.system) / 1000)];
  };
  for (const [name, file] of Object.entries(files)) {
    if (!file) continue;
    const [own, readMs] = cpuMs(() => loadOwnService({
      PROTO: path.join(CATALOG, 'v1/catalog.proto'), RPC: 'examples.catalog.v1.CatalogService/ListProducts', RESPONSE: file,
    }));
    const [, proveMs] = cpuMs(() => proveCodecs(own));
    console.log(`${name}: the job's read ${readMs} ms of CPU, its proof through the codecs ${proveMs} ms of CPU`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
