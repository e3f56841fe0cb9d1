// How long a killed worker takes to be replaced, for checkouts side by side: per round and checkout, a fresh server
// (MODE=both, WORKERS=1: the restart policy backs off after a first quick death, so one kill per server), its worker
// killed with SIGKILL 300 ms after ready, and the ms until its replacement logs worker-listening; the checkouts
// interleaved; then each one's median (min–max). A checkout is a folder of the repository (a git worktree) with its
// node_modules. Not part of npm test; run it on a quiet machine.
//   node test/manual/respawn-ab.js 10 /tmp/before "$PWD"
const [rounds, ...roots] = [Number(process.argv[2]), ...process.argv.slice(3)];
if (!(rounds >= 1) || roots.length === 0) {
  console.error('usage: node test/manual/respawn-ab.js <rounds> <checkout>...');
  process.exit(2);
}
const took = Object.fromEntries(roots.map((root) => [root, []]));
for (let r = 0; r < rounds; r++) {
  for (const root of roots) {
    const { startServer } = await import(`${root}/test/helpers/server.js`);
    const { EVENT } = await import(`${root}/server/events.js`);
    const server = await startServer({ MODE: 'both', WORKERS: '1' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [victim] = server.workerPids();
      const from = server.lines.length;
      const killedAt = Date.now();
      process.kill(victim, 'SIGKILL');
      const replacement = await server.waitForLine((l) => l.event === EVENT.WORKER_LISTENING && l.pid !== victim, { from });
      took[root].push(replacement.at - killedAt);
    } finally {
      await server.stop();
    }
  }
}
for (const [root, ms] of Object.entries(took)) {
  ms.sort((a, b) => a - b);
  console.log(`${root}: median ${ms[Math.floor(ms.length / 2)]} ms, min–max ${ms[0]}–${ms.at(-1)}, ${ms.length} kills`);
}
