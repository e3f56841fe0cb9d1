// The server capacity pass: wrk (HTTP/1.1) and h2load (HTTP/2, gRPC framing),
// native load generators that need far less CPU per request than k6, so they
// show a server's own ceiling where k6 is client-bound. Both are Debian packages.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { grpcFrame, methodOf } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';
import { toJsonText } from '../../proto/own/samples.js';
import { BenchError } from '../errors.js';
import { pinned } from '../processes.js';
import { LISTENERS } from '../../server/listeners.js';
import { ensureTools } from '../tools.js';
import { MODES } from '../modes.js';
import { serverRun } from './lifecycle.js';

const run = promisify(execFile);
const WRK_BYTES = fileURLToPath(new URL('wrk-bytes.lua', import.meta.url));

/**
 * Provisions the listeners' capacity tools before anything starts (scripts/ensure-tool.sh).
 * @param {readonly string[]} listeners listener names (server/listeners.js)
 * @param {string} [why] what needs them, put before the reason
 * @returns {void}
 * @throws {BenchError} naming the command that installs a missing tool
 */
export function requireCapacityTools(listeners, why = 'the capacity pass') {
  ensureTools(new Set(listeners.map((l) => LISTENERS[l].load.tool)), why);
}

/**
 * The capacity pass of CAPACITY=auto, for one column after its scenario's k6 runs: the column's server started afresh
 * where the placement puts it, warmed up for WARMUP and measured for DURATION by its native tool (pinned like k6, at
 * VUS connections), then stopped.
 * @param {{mode: string, scenario: string, compression?: 'off'|'gzip', node?: {path: string}|null,
 *   own?: import('../own-service.js').OwnRun|null}} column
 * @param {import('../plans.js').CellPlan} plan its cell's: WORKERS, VUS, the warm-up and the duration
 * @param {ReturnType<typeof import('../settings/cores.js').splitCores>} cores
 * @param {import('../placement/placement.js').Placement} placement
 * @returns {Promise<Awaited<ReturnType<typeof measureCapacity>> & {pass: 'auto'}>} as measureCapacity; pass: which setting ran it
 * @throws {BenchError} when the server does not start or the tool fails
 */
export async function measureColumnCapacity({ mode, scenario, compression = 'off', node = null, own = null }, plan, cores, placement) {
  const loadOf = (cell) => ({
    listener: MODES[mode].listener, scenario, host: cell.host, connections: plan.VUS, cpus: cores.k6Cpus, compression, tls: Boolean(cell.tls), own,
  });
  return serverRun({
    start: () => placement.start(mode, { workers: plan.WORKERS, cpus: cores.serverCpus, compression, node: node?.path, settings: own?.server }),
    warmup: plan.warmupS > 0 ? async (cell) => { await measureCapacity({ ...loadOf(cell), durationS: Math.max(1, Math.round(plan.warmupS)) }); } : undefined,
    measure: async (cell) => ({ ...(await measureCapacity({ ...loadOf(cell), durationS: plan.durationS })), pass: /** @type {'auto'} */ ('auto') }),
    after: async (cell, { run }) => run,
  });
}

/**
 * Loads one listener with its native tool for a while, at a fixed concurrency
 * (one request in flight per connection, like a k6 VU, unless `streams` says more).
 * @param {{listener: string, scenario: string, host: string, connections: number, durationS: number, cpus?: string,
 *   compression?: 'off'|'gzip', streams?: number, tls?: boolean, own?: import('../own-service.js').OwnRun|null}} options
 *   listener: a listener's name (server/listeners.js: its `load` says which tool and request); cpus: taskset CPU list for the tool;
 *   streams: requests in flight per HTTP/2 connection (h2load -m; default 1; wrk has one per connection whatever it says);
 *   compression: gzip asks for gzipped responses as k6 does (`Accept-Encoding: gzip`, or gzip in `grpc-accept-encoding`);
 *   tls: the listener serves TLS (https://; h2load takes h2 by ALPN; neither tool verifies the certificate); own: an own
 *   service's RPC is loaded instead of the scenario, every request its first request sample (JSON POSTed to
 *   `/package.Service/Method`, or gRPC-framed protobuf): wrk and h2load send one body
 * @returns {Promise<{tool: string, rps: number, requests: number, failed: number, received_per_request: number,
 *   headers_per_request: number|null}>} rps in req/s; bytes per request as the tool counts them
 *   (h2load: all HTTP/2 traffic, with the header share; wrk: bytes read); failed: non-2xx
 *   or socket errors (h2load does not read grpc-status trailers)
 * @throws {BenchError} when the tool fails or prints nothing it can parse
 */
export async function measureCapacity({ listener, scenario, host, connections, durationS, cpus, compression = 'off', streams = 1, tls = false, own = null }) {
  const { tool, request, ownBody } = LISTENERS[listener].load;
  // A relay over HTTP/1.1 is a WebSocket, which wrk does not speak: the ws client loads it (relay-load.js says why).
  if (own?.service.rpc.requestStream && own.service.rpc.responseStream && tool === 'wrk') {
    return measureRelay({ own, host, connections, durationS, cpus, tls });
  }
  const gzip = compression === 'gzip' ? ['-H', request === 'grpc' ? 'grpc-accept-encoding: gzip' : 'Accept-Encoding: gzip'] : [];
  const scheme = tls ? 'https' : 'http';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capacity-'));
  try {
    let args;
    if (own) {
      args = await ownLoadArgs({
        tool, request, ownBody, own, dir, connections, durationS, streams, gzip, url: `${scheme}://${host}${own.service.rpc.path}`,
      });
    } else if (tool === 'wrk' && request === 'connect') {
      const { rpc, request: message } = SCENARIOS[scenario];
      // The Connect protocol's unary call: a POST of the request message in the proto3 JSON mapping.
      const script = path.join(dir, 'connect.lua');
      await writeFile(script, `wrk.method = "POST"\nwrk.body = ${luaString(JSON.stringify(message))}\n`
        + `wrk.headers["Content-Type"] = "application/json"\ndofile(${luaString(WRK_BYTES)})\n`);
      args = ['-t1', `-c${connections}`, `-d${durationS}s`, '-s', script, ...gzip, `${scheme}://${host}/${rpcPath(rpc)}`];
    } else if (tool === 'wrk') {
      args = ['-t1', `-c${connections}`, `-d${durationS}s`, '-s', WRK_BYTES, ...gzip, `${scheme}://${host}${SCENARIOS[scenario].httpPath}`];
    } else if (request === 'get') {
      args = ['-t1', '-c', String(connections), '-m', String(streams), '-D', String(durationS), ...gzip, `${scheme}://${host}${SCENARIOS[scenario].httpPath}`];
    } else {
      const { rpc, request: message } = SCENARIOS[scenario];
      const { resolvedRequestType: type } = methodOf(rpc);
      const body = path.join(dir, 'request.bin');
      await writeFile(body, grpcFrame(type.encode(type.fromObject(message)).finish()));
      args = ['-t1', '-c', String(connections), '-m', String(streams), '-D', String(durationS), '-d', body,
        '-H', 'content-type: application/grpc', '-H', 'te: trailers', ...gzip, `${scheme}://${host}/${rpcPath(rpc)}`];
    }
    let stdout;
    try {
      ({ stdout } = await run(...pinned(cpus, tool, args), { timeout: (durationS + 30) * 1000 }));
    } catch (err) {
      throw new BenchError(`${tool} against ${host} failed: ${(err.stderr || err.message).trim()}`);
    }
    const parsed = tool === 'wrk' ? parseWrk(stdout) : parseH2load(stdout);
    if (!parsed) throw new BenchError(`${tool} against ${host} printed no result:\n${stdout}`);
    return { tool, ...parsed };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * wrk's or h2load's arguments for an own service's RPC: its first request sample POSTed, as JSON (the HTTP listeners:
 * `Content-Type: application/json`), as protobuf (`application/x-protobuf`, where the listener's `load.ownBody` says so)
 * or gRPC-framed protobuf (the gRPC listeners). The body is a file both tools read (wrk's script opens it: it may be binary).
 * @returns {Promise<string[]>}
 */
async function ownLoadArgs({ tool, request, ownBody, own, dir, connections, durationS, streams, gzip, url }) {
  const { rpc } = own.service;
  const first = firstCall(own);
  const bytes = (m) => Buffer.from(rpc.requestType.encode(m).finish());
  // A request stream goes as one body: its messages gRPC-framed one after another, or NDJSON a line each. A server stream
  // (or a relay over gRPC) is one request answered by many DATA frames, which both tools read to the stream's end.
  const [content, type] = request === 'grpc' ? [Buffer.concat(first.map((m) => grpcFrame(bytes(m)))), 'application/grpc']
    : ownBody === 'protobuf' ? [bytes(first[0]), 'application/x-protobuf']
      : rpc.requestStream ? [first.map((m) => `${toJsonText(rpc.requestType, m)}\n`).join(''), 'application/x-ndjson']
        : [toJsonText(rpc.requestType, first[0]), 'application/json'];
  // The HTTP twin answers a server stream as SSE when asked (the k6 script asks so; the peer answers SSE alone).
  const accept = rpc.responseStream && request !== 'grpc' ? 'text/event-stream' : null;
  const body = path.join(dir, 'request.bin');
  await writeFile(body, content);
  if (tool === 'wrk') {
    const script = path.join(dir, 'own.lua');
    await writeFile(script, `local f = assert(io.open(${luaString(body)}, "rb"))\nwrk.method = "POST"\nwrk.body = f:read("*a")\nf:close()\n`
      + `wrk.headers["Content-Type"] = "${type}"\n${accept ? `wrk.headers["Accept"] = "${accept}"\n` : ''}dofile(${luaString(WRK_BYTES)})\n`);
    return ['-t1', `-c${connections}`, `-d${durationS}s`, '-s', script, ...gzip, url];
  }
  const headers = ['-H', `content-type: ${type}`, ...(request === 'grpc' ? ['-H', 'te: trailers'] : []), ...(accept ? ['-H', `accept: ${accept}`] : [])];
  return ['-t1', '-c', String(connections), '-m', String(streams), '-D', String(durationS), '-d', body, ...headers, ...gzip, url];
}

/**
 * The messages of the one call the native tools repeat: an own service's first request sample, or its first request
 * stream (a client stream's or a relay's sample is a stream).
 * @param {import('../own-service.js').OwnRun} own
 * @returns {import('protobufjs').Message[]}
 */
const firstCall = ({ service: { requests } }) => (requests.streams ? requests.streams[0].map((i) => requests.messages[i]) : [requests.messages[0]]);

const RELAY_LOAD = fileURLToPath(new URL('relay-load.js', import.meta.url));

/**
 * Loads a WebSocket relay with the ws client (relay-load.js), in a process of its own pinned to `cpus`: the first request
 * stream's messages as text frames in the proto3 JSON mapping, one call a connection, `connections` at once.
 * @param {{own: import('../own-service.js').OwnRun, host: string, connections: number, durationS: number, cpus?: string, tls: boolean}} options
 * @returns {Promise<{tool: string, rps: number, requests: number, failed: number, received_per_request: number,
 *   headers_per_request: null, client_cpu: number}>} rps: calls/s; client_cpu: the client's CPU ÷ wall time (1: a core)
 * @throws {BenchError} over TLS (the client speaks ws:// only), or when the client fails or completes no call
 */
async function measureRelay({ own, host, connections, durationS, cpus, tls }) {
  if (tls) throw new BenchError('the WebSocket relay\'s load client speaks ws:// only: measure a relay without TLS=1');
  const { rpc } = own.service;
  const options = { url: `ws://${host}${rpc.path}`, connections, durationS, messages: firstCall(own).map((m) => toJsonText(rpc.requestType, m)) };
  let stdout;
  try {
    ({ stdout } = await run(...pinned(cpus, process.execPath, [RELAY_LOAD, JSON.stringify(options)]), { timeout: (durationS + 30) * 1000 }));
  } catch (err) {
    throw new BenchError(`the WebSocket relay client against ${host} failed: ${String(err.stderr || err.message).trim().split('\n').at(-1)}`);
  }
  const r = JSON.parse(stdout);
  if (!r.calls) throw new BenchError(`the WebSocket relay client against ${host} completed no call (${r.failed} failed)`);
  return {
    tool: 'ws', rps: r.calls / r.seconds, requests: r.calls, failed: r.failed, received_per_request: r.bytes / (r.calls + r.failed),
    headers_per_request: null, client_cpu: r.cpu,
  };
}

/** A Lua string literal of a text (JSON.stringify's escapes are Lua's for what a path or a JSON body holds). */
const luaString = (text) => JSON.stringify(text);

/** wrk's 'N requests in Xs', 'Requests/sec: R', its error lines and wrk-bytes.lua's count. */
function parseWrk(out) {
  const requests = Number(out.match(/(\d+) requests in/)?.[1]);
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const bytes = Number(out.match(/bytes_read: (\d+)/)?.[1]);
  if (!requests || !rps || !bytes) return null;
  const non2xx = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socketErrors = socket ? socket.slice(1).reduce((a, n) => a + Number(n), 0) : 0;
  return { rps, requests, failed: non2xx + socketErrors, received_per_request: bytes / requests, headers_per_request: null };
}

/** h2load's 'finished in Xs, R req/s', request counts, status codes and traffic line. */
function parseH2load(out) {
  const rps = Number(out.match(/finished in [\d.]+m?s, ([\d.]+) req\/s/)?.[1]);
  const counts = out.match(/requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/);
  const status = out.match(/status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/);
  const traffic = out.match(/traffic: .*?\((\d+)\) total, .*?\((\d+)\) headers .*?, .*?\((\d+)\) data/);
  if (!rps || !counts || !traffic) return null;
  const requests = Number(counts[1]);
  const non2xx = status ? Number(status[2]) + Number(status[3]) + Number(status[4]) : 0;
  return {
    rps,
    requests,
    failed: Number(counts[3]) + Number(counts[4]) + non2xx,
    received_per_request: Number(traffic[1]) / requests,
    headers_per_request: Number(traffic[2]) / requests,
  };
}
