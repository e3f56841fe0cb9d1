// freePort: ports outside the ephemeral range (where outgoing connections take theirs), and a
// pick held for the picking process's life, so another process cannot pick it meanwhile.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { freePort, listenPortRanges, PORT_CLAIM_PREFIX } from '../../bench/processes.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);

// A second process tries to claim the port as freePort would, and says what it got.
const claimIn = async (port) => (await run(process.execPath, ['-e', `
  const s = require('node:net').createServer();
  s.on('error', (e) => { console.log(e.code); process.exit(0); });
  s.listen(${JSON.stringify(PORT_CLAIM_PREFIX)} + ${port}, () => { console.log('claimed'); process.exit(0); });
`])).stdout.trim();

test('the ranges leave out the ephemeral range and the ports below 16384 (whose varints are shorter)', async (t) => {
  const dir = await tempDir(t, 'port-range-');
  const file = path.join(dir, 'ip_local_port_range');
  await writeFile(file, '32768\t60999\n');
  assert.deepEqual(listenPortRanges(file), [[16384, 32767], [61000, 65535]]);
  await writeFile(file, '1024 65535\n');
  assert.deepEqual(listenPortRanges(file), []);
  assert.deepEqual(listenPortRanges(path.join(dir, 'missing')), [[16384, 32767], [61000, 65535]]);
});

test('each pick is outside the ephemeral range, distinct, and held against other processes', { skip: process.platform !== 'linux' && 'abstract sockets are Linux only' }, async () => {
  const ranges = listenPortRanges();
  const picks = [];
  for (let i = 0; i < 30; i += 1) picks.push(await freePort());
  assert.equal(new Set(picks).size, picks.length, `a port picked twice: ${picks}`);
  for (const port of picks) assert.ok(ranges.some(([a, b]) => port >= a && port <= b), `${port} is outside ${JSON.stringify(ranges)}`);
  assert.equal(await claimIn(picks[0]), 'EADDRINUSE');
  // The claim is the pick's own: a port below the ranges, which nobody picks, is free to claim.
  assert.equal(await claimIn(9999), 'claimed');
});
