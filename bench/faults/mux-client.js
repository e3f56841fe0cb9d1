// The multiplexing gRPC client: ghz (grpc-go) with several calls in flight on each connection, as gRPC clients
// multiplex. k6 keeps one call in flight per connection, so what a drain does to a call that raced its GOAWAY shows only
// here. The fault matrix runs it beside k6 in gRPC cells; test/integration/multiplexed-drain.test.js across reloads.
// Loopback only; bounded by its call count at a fixed pace, and killed past a margin.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pinned, ROOT } from '../processes.js';
import { ensureTool } from '../tools.js';

const run = promisify(execFile);

/** The default shape: the 16 calls in flight over 4 connections, at a pace that leaves k6 most of its core. */
export const MUX = Object.freeze({ concurrency: 16, connections: 4, rps: 500 });

/**
 * What a call refused at the door ends with in grpc-go: it never reached a worker. Either the dial failed (the port
 * closed: refused, or reset when the connection was still in the closing listener's backlog), or the new connection
 * closed before the server's preface, so no call was ever sent on it (grpc-go 1.34 clientconn.go createTransport:
 * "connection closed"), or a GOAWAY left the call unprocessed and grpc-go's one transparent retry found no connection
 * to take it. The reset and the early close were seen only with the machine loaded (a CI run beside other work, 2026-11-25).
 * ghz v0.120.0 builds on grpc-go 1.56.3, which words two of them otherwise (internal/transport/http2_client.go, read in
 * the Go module cache): "transport: Error while dialing: dial tcp ..." (seen, 2026-11-26) and, for a connection closed
 * before the server's preface, "error reading server preface: EOF" (from the source, not yet seen), or reset there, when
 * the connection was in the closing listener's backlog: "error reading server preface: read tcp …: read: connection reset
 * by peer" (seen with test files run side by side, 2,721 calls on two connections, none taken by a handler, 2026-11-26).
 */
export const REFUSED_AT_THE_DOOR = new RegExp([
  'Error while dialing:? dial tcp [^"]*: connect: connection (refused|reset by peer)',
  'desc = connection closed$',
  'error reading server preface: (EOF|read tcp [^"]*: read: connection reset by peer)',
  'the connection is draining',
].join('|'));

/**
 * Provisions ghz (a pinned go install, scripts/ensure-tool.sh) before a job that runs it starts.
 * @returns {string} its path
 * @throws {import('../errors.js').BenchError} naming the command that installs it
 */
export const requireMuxClient = () => ensureTool('ghz');

/**
 * @typedef {object} MuxResult what ghz counted
 * @property {typeof MUX} shape concurrency, connections and rps of the run
 * @property {number} calls calls made
 * @property {number} answered calls that returned a User
 * @property {number} refused calls refused at the door (REFUSED_AT_THE_DOOR)
 * @property {number} failed every other failed call: one the server took and lost, or one a fault broke
 * @property {Record<string, number>} errors the failed calls' errors, with their counts
 */

/**
 * GetUser calls from ghz, `rps` a second for `loadMs`, `concurrency` in flight over `connections` connections.
 * ghz counts attempts (its stats handler ends a record with each; ghz v0.120.0, grpc-go 1.56.3): a call whose first
 * attempt a GOAWAY refused, and that grpc-go then retried by itself with success, counts once refused and once answered,
 * so `calls` can exceed the calls asked for. The server's own count tells them apart (each worker's `worker-stopped`
 * line: `served`; docs/faults.md). And a call count rather than ghz's -z: at -z's deadline ghz closes its connections
 * with calls still on them, which then fail ("use of closed network connection") whatever the server does, though each
 * reached a handler (docs/faults.md; test/manual/ghz-duration.js).
 * @param {{port: number, loadMs: number, cpus?: string, shape?: Partial<typeof MUX>, caCert?: string|null}} options cpus:
 *   taskset CPU list for ghz; shape: overrides of MUX; caCert: PEM path of the CA that signed the port's TLS certificate
 *   (ghz then speaks TLS and verifies it; null or absent: cleartext)
 * @returns {Promise<MuxResult|{error: string}>} `error` when ghz itself did not run
 */
export async function muxLoad({ port, loadMs, cpus, shape: given = {}, caCert = null }) {
  const shape = { ...MUX, ...given };
  const calls = Math.max(shape.concurrency, Math.round((shape.rps * loadMs) / 1000));
  const args = [...(caCert ? ['--cacert', caCert] : ['--insecure']), '--proto', path.join(ROOT, 'proto/user.proto'), '--call', 'user.v1.UserService/GetUser', '-d', '{}',
    '-c', String(shape.concurrency), '--connections', String(shape.connections), '-n', String(calls), '--rps', String(shape.rps),
    '--timeout', '5s', '-O', 'json', `127.0.0.1:${port}`];
  let stdout;
  try {
    ({ stdout } = await run(...pinned(cpus, ensureTool('ghz'), args), { timeout: loadMs + 30000, maxBuffer: 256 * 1024 * 1024 }));
  } catch (err) {
    return { error: `ghz did not finish: ${(err.stderr || err.message).trim().split('\n')[0]}` };
  }
  const report = JSON.parse(stdout);
  const errors = report.errorDistribution ?? {};
  const refused = Object.entries(errors).filter(([e]) => REFUSED_AT_THE_DOOR.test(e)).reduce((a, [, n]) => a + n, 0);
  const failedAll = Object.values(errors).reduce((a, n) => a + n, 0);
  return { shape, calls: report.count, answered: report.statusCodeDistribution?.OK ?? 0, refused, failed: failedAll - refused, errors };
}
