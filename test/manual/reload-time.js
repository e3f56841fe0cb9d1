// How long a SIGHUP reload takes under k6 load: per round a fresh server (WORKERS=2) serving the mode's listener, or
// with SERVER_MODE (e.g. both) that server MODE, k6 at 8 VUs on the mode's listener for 10 s, SIGHUP 2 s in; then, from the server's log lines, the reload's own `ms` (SIGHUP to
// `reloaded`) and per replaced worker the ms to its replacement's `worker-listening` and to the old worker's
// `worker-retired` (its drain). Median (min–max) of each. Not part of npm test; run it on a quiet machine.
//   node test/manual/reload-time.js 5 [MODE]      SERVER_MODE=both node test/manual/reload-time.js 5 http
import path from 'node:path';
import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODES } from '../../bench/modes.js';
import { EVENT } from '../../server/events.js';
import { k6Run } from '../helpers/k6.js';
import { startServer } from '../helpers/server.js';

const rounds = Number(process.argv[2]);
const mode = process.argv[3] ?? 'http';
if (!(rounds >= 1) || !MODES[mode]) {
  console.error('usage: node test/manual/reload-time.js <rounds> [http|grpc|...]');
  process.exit(2);
}
const dir = await mkdtemp(path.join(os.tmpdir(), 'reload-time-'));
const { scripts, hostVars, listener } = MODES[mode];
const figures = { reload: [], listening: [], retired: [] };
try {
  for (let r = 0; r < rounds; r++) {
    const server = await startServer({ MODE: process.env.SERVER_MODE || listener, WORKERS: '2' });
    try {
      const load = k6Run(['--vus', '8', '--duration', '10s', '-e', `${hostVars.local}=127.0.0.1:${server.ports[listener]}`,
        '-e', `SUMMARY_FILE=${path.join(dir, `r${r}.json`)}`, scripts.local]);
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
        figures.listening.push(up.at - mark);
        figures.retired.push(gone.at - up.at);
        mark = gone.at;
      }
      figures.reload.push(reloaded.ms);
      const { code } = await load;
      if (code !== 0) console.error(`round ${r}: k6 exited ${code}`);
    } finally {
      await server.stop();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
const line = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]} ms, min–max ${s[0]}–${s.at(-1)} (${s.length})`;
};
console.log(`${mode} (server MODE=${process.env.SERVER_MODE || listener}), 2 workers, 8 VUs: reload ${line(figures.reload)}; per worker: to its replacement listening `
  + `${line(figures.listening)}, then the old one's drain ${line(figures.retired)}`);
