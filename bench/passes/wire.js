// Wire-byte verification (VERIFY_BYTES=1): captures the measured run on the
// loopback interface with dumpcap, filtered to the server's port, and sums the
// TCP payload bytes in each direction with tshark, to check k6's data_sent and
// data_received against an independent counter. Both tools come with Debian's tshark.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { BenchError } from '../errors.js';
import { ensureTools } from '../tools.js';

const run = promisify(execFile);

/**
 * Provisions dumpcap and tshark before anything starts (scripts/ensure-tool.sh); capturing also
 * needs root or the wireshark group.
 * @returns {void}
 * @throws {BenchError} naming the command that installs a missing tool
 */
export function requireCaptureTools() {
  ensureTools(['dumpcap', 'tshark'], 'VERIFY_BYTES=1');
}

/** Opens and closes one TCP connection to the port. */
function probe(port, host) {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => socket.destroy());
    socket.on('close', resolve);
    socket.on('error', resolve);
  });
}

/**
 * Starts capturing TCP to and from one port on an interface (loopback, or the veth of an
 * emulated link); resolves once dumpcap captures. Only headers are kept (snap length
 * 128): tshark's tcp.len comes from the IP length, not from the bytes kept.
 * @param {number} port the server's port
 * @param {{iface?: string, host?: string}} [where] interface to capture on (default lo) and the
 *   server's address there (default 127.0.0.1)
 * @returns {Promise<{stop: () => Promise<{sent_bytes: number, received_bytes: number, packets: number, dropped: number}>}>}
 *   sent: client to server TCP payload bytes; received: server to client; dropped: packets dumpcap lost
 * @throws {BenchError} when dumpcap cannot capture
 */
export async function startCapture(port, { iface = 'lo', host = '127.0.0.1' } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capture-'));
  const file = path.join(dir, 'run.pcapng');
  const proc = spawn('dumpcap', ['-i', iface, '-f', `tcp port ${port}`, '-s', '128', '-w', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (c) => { stderr += c; });
  const exited = once(proc, 'exit');
  // dumpcap says "Capturing on" before its filter sees traffic; until a probe
  // connection (a handshake, no payload) shows up in its packet count, k6 would lose bytes.
  const deadline = Date.now() + 10000;
  try {
    while (!/Packets: [1-9]/.test(stderr)) {
      if (proc.exitCode !== null) throw new BenchError(`dumpcap exited with ${proc.exitCode}:\n${stderr.trim()}`);
      if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new BenchError(`dumpcap captured nothing in 10 s:\n${stderr.trim()}`); }
      await probe(port, host);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true }); // nothing was captured: nothing to keep
    throw err;
  }
  return {
    async stop() {
      await new Promise((r) => setTimeout(r, 500)); // let dumpcap read what the kernel still buffers
      proc.kill('SIGINT');
      await exited;
      try {
        const dropped = Number(stderr.match(/received\/dropped on interface '[^']*': \d+\/(\d+)/)?.[1] ?? 0);
        const { stdout } = await run('tshark', ['-r', file, '-T', 'fields', '-e', 'tcp.srcport', '-e', 'tcp.len'],
          { maxBuffer: 1 << 30 });
        let sent = 0;
        let received = 0;
        let packets = 0;
        for (const line of stdout.split('\n')) {
          if (!line) continue;
          const [src, len] = line.split('\t');
          packets++;
          if (Number(src) === port) received += Number(len); else sent += Number(len);
        }
        return { sent_bytes: sent, received_bytes: received, packets, dropped };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
