// The server capacity pass: wrk (HTTP/1.1) and h2load (gRPC over HTTP/2), native
// load generators that need far less CPU per request than k6, so they show the
// server's own ceiling where k6 is client-bound. Both are Debian packages.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { grpcFrame, methodOf } from '../proto/index.js';
import { rpcPath, SCENARIOS } from '../proto/payload.js';
import { BenchError } from './errors.js';
import { pinned } from './processes.js';

const run = promisify(execFile);
const TOOL = { http: 'wrk', grpc: 'h2load' };
const PACKAGE = { wrk: 'wrk', h2load: 'nghttp2-client' };

/**
 * Fails early, naming the Debian package, when a mode's capacity tool is missing.
 * @param {string[]} modes
 * @returns {Promise<void>}
 * @throws {BenchError}
 */
export async function requireCapacityTools(modes) {
  for (const tool of new Set(modes.map((m) => TOOL[m]))) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      throw new BenchError(`CAPACITY=1 needs ${tool}: install it (Debian/Ubuntu: apt-get install ${PACKAGE[tool]})`);
    }
  }
}

/**
 * Loads one mode's server with its native tool for a while, at the same
 * concurrency as k6 (one request in flight per connection).
 * @param {{mode: 'http'|'grpc', scenario: string, host: string, connections: number, durationS: number, cpus?: string}} options
 * @returns {Promise<{tool: string, rps: number, requests: number, failed: number}>}
 *   rps in req/s; failed: non-2xx or socket errors (h2load does not read grpc-status trailers)
 * @throws {BenchError} when the tool fails or prints nothing it can parse
 */
export async function measureCapacity({ mode, scenario, host, connections, durationS, cpus }) {
  const { httpPath, rpc, request } = SCENARIOS[scenario];
  let args;
  if (mode === 'http') {
    args = ['-t1', `-c${connections}`, `-d${durationS}s`, `http://${host}${httpPath}`];
  } else {
    const { resolvedRequestType: type } = methodOf(rpc);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'h2load-'));
    const body = path.join(dir, 'request.bin');
    await writeFile(body, grpcFrame(type.encode(type.fromObject(request)).finish()));
    args = ['-t1', '-c', String(connections), '-m', '1', '-D', String(durationS), '-d', body,
      '-H', 'content-type: application/grpc', '-H', 'te: trailers', `http://${host}/${rpcPath(rpc)}`];
  }
  const tool = TOOL[mode];
  let stdout;
  try {
    ({ stdout } = await run(...pinned(cpus, tool, args), { timeout: (durationS + 30) * 1000 }));
  } catch (err) {
    throw new BenchError(`${tool} against ${host} failed: ${(err.stderr || err.message).trim()}`);
  }
  const parsed = mode === 'http' ? parseWrk(stdout) : parseH2load(stdout);
  if (!parsed) throw new BenchError(`${tool} against ${host} printed no result:\n${stdout}`);
  return { tool, ...parsed };
}

/** wrk's 'N requests in Xs', 'Requests/sec: R', and its error lines. */
function parseWrk(out) {
  const requests = out.match(/(\d+) requests in/);
  const rps = out.match(/Requests\/sec:\s+([\d.]+)/);
  if (!requests || !rps) return null;
  const non2xx = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socketErrors = socket ? socket.slice(1).reduce((a, n) => a + Number(n), 0) : 0;
  return { rps: Number(rps[1]), requests: Number(requests[1]), failed: non2xx + socketErrors };
}

/** h2load's 'finished in Xs, R req/s' and 'requests: ... N succeeded, N failed, N errored'. */
function parseH2load(out) {
  const rps = out.match(/finished in [\d.]+m?s, ([\d.]+) req\/s/);
  const counts = out.match(/requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/);
  const status = out.match(/status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/);
  if (!rps || !counts) return null;
  const non2xx = status ? Number(status[2]) + Number(status[3]) + Number(status[4]) : 0;
  return { rps: Number(rps[1]), requests: Number(counts[1]), failed: Number(counts[3]) + Number(counts[4]) + non2xx };
}
