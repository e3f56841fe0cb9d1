// How long a SIGHUP reload takes under k6 load: per round and checkout a fresh server (WORKERS=2) serving the mode's
// listener, or with SERVER_MODE (e.g. both) that server MODE, k6 at 8 VUs on the mode's listener for 10 s, SIGHUP 2 s
// in; then, from the server's log lines, the reload's own `ms` (SIGHUP to `reloaded`) and per replaced worker the ms to
// its replacement's `worker-listening` and the old one's drain to `worker-retired`. The checkouts (git worktrees with
// their node_modules; default: this one) interleaved; median (min–max) of each. Not part of npm test; run it on a
// quiet machine. PIN=1 pins them apart as the jobs do: the server to cpu 0, k6 to cpu 1.
//   node test/manual/reload-time.js 5 http                        this checkout
//   SERVER_MODE=both node test/manual/reload-time.js 5 http /tmp/before "$PWD"
import path from 'node:path';
import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODES } from '../../bench/modes.js';
import { runK6 } from '../../bench/k6/runner.js';
import { k6Bin } from '../helpers/k6.js';

const [rounds, mode, ...given] = [Number(process.argv[2]), process.argv[3] ?? 'http', ...process.argv.slice(4)];
if (!(rounds >= 1) || !MODES[mode]) {
  console.error('usage: node test/manual/reload-time.js <rounds> [http|grpc|...] [checkout...]');
  process.exit(2);
}
const roots = given.length ? given : [path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')];
const dir = await mkdtemp(path.join(os.tmpdir(), 'reload-time-'));
const { scripts, hostVars, listener } = MODES[mode];
const serverMode = process.env.SERVER_MODE || listener;
const pin = process.env.PIN === '1';
const figures = Object.fromEntries(roots.map((root) => [root, { reload: [], listening: [], retired: [] }]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const root of roots) {
      const { startServer } = await import(`${root}/bench/processes.js`);
      const { EVENT } = await import(`${root}/server/events.js`);
      const server = await startServer({ env: { MODE: serverMode, WORKERS: '2' }, cpus: pin ? '0' : undefined });
      try {
        const load = runK6({ k6: k6Bin(), quiet: true, timeoutMs: 60000, cpus: pin ? '1' : undefined, coreCount: 1,
          args: ['--vus', '8', '--duration', '10s', '-e', `${hostVars.local}=127.0.0.1:${server.ports[listener]}`,
            '-e', `SUMMARY_FILE=${path.join(dir, `r${r}.json`)}`, scripts.local] });
        await sleep(2000);
        const from = server.lines.length;
        const sentAt = Date.now();
        server.proc.kill('SIGHUP');
        const reloaded = await server.waitForLine((l) => l.event === EVENT.RELOADED, { from, timeoutMs: 20000 });
        const lines = server.lines.slice(from);
        let mark = sentAt;
        for (const fresh of reloaded.workers) {
          const up = lines.find((l) => l.event === EVENT.WORKER_LISTENING && l.pid === fresh);
          const gone = lines.find((l) => l.event === EVENT.WORKER_RETIRED && l.by === fresh);
          figures[root].listening.push(up.at - mark);
          figures[root].retired.push(gone.at - up.at);
          mark = gone.at;
        }
        figures[root].reload.push(reloaded.ms);
        const { code } = await load;
        if (code !== 0) console.error(`${root} round ${r}: k6 exited ${code}`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
const line = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]} ms, min–max ${s[0]}–${s.at(-1)} (${s.length})`;
};
for (const [root, f] of Object.entries(figures)) {
  console.log(`${root}: ${mode} (server MODE=${serverMode}${pin ? ', on cpu 0, k6 on cpu 1' : ''}), 2 workers, 8 VUs: reload ${line(f.reload)}; per worker: to its `
    + `replacement listening ${line(f.listening)}, then the old one's drain ${line(f.retired)}`);
}
