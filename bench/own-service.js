// The main job's view of an own service (issue 37, docs/own-message.md): which scenarios are own services (RPC, or a
// built-in one named in SCENARIO), and, for each, what every server it starts and every k6 run it makes are given, and
// what every result records of it. Built once per scenario, before its first run; the passes take it as it is.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { sizeSpread, toJsonText } from '../proto/own/samples.js';
import { DESCRIPTOR_SET } from '../proto/own/schema.js';
import { BUILT_IN_SERVICES } from '../proto/own/builtins.js';
import { loadOwnService } from '../proto/own/service.js';
import { ROOT } from './root.js';
import { OWN_MAX_BODY_BYTES } from '../server/settings.js';
import { STREAM_KINDS } from '../k6/settings.js';

/** Where the built-in services' paths are relative to. */
const PROTO_DIR = path.join(ROOT, 'proto');

/**
 * The scenario name of an RPC, safe in file names: `package.Service.Method`.
 * @param {string} rpc `package.Service/Method`
 * @returns {string}
 */
export const scenarioOfRpc = (rpc) => rpc.replace('/', '.');

/**
 * @typedef {object} OwnSource the settings of one own service, paths absolute
 * @property {string} PROTO
 * @property {string} [PROTO_PATH] `:`-separated
 * @property {string} RPC
 * @property {string} [REQUEST]
 * @property {string} [RESPONSE]
 * @property {string} [STREAM_INTERVAL] ms between a server stream's messages (the server's setting)
 * @property {'sse'|'ndjson'} [STREAM_FRAMING] how the HTTP scripts ask for a server stream (default sse)
 * @property {'text'|'binary'} [RELAY_FRAMES] a relay's WebSocket frames (default text)
 */

/**
 * The scenarios the main job measures, each with its own service's settings, or none for the demo's scenarios.
 * @param {{SCENARIO: string[], PROTO?: string, PROTO_PATH?: string, RPC?: string, REQUEST?: string, RESPONSE?: string,
 *   STREAM_INTERVAL?: number, STREAM_FRAMING?: 'sse'|'ndjson', RELAY_FRAMES?: 'text'|'binary'}} settings
 * @returns {Array<{scenario: string, source: OwnSource|null}>} with RPC: that RPC alone, named by scenarioOfRpc
 */
export function scenariosOf(settings) {
  const pacing = {
    ...(settings.STREAM_INTERVAL ? { STREAM_INTERVAL: String(settings.STREAM_INTERVAL) } : {}),
    ...(settings.STREAM_FRAMING ? { STREAM_FRAMING: settings.STREAM_FRAMING } : {}),
    ...(settings.RELAY_FRAMES ? { RELAY_FRAMES: settings.RELAY_FRAMES } : {}),
  };
  if (settings.RPC) {
    // The user's paths are read from where they ran the command (scripts/provision.sh sets BENCH_CWD), not the repository.
    const abs = (p) => (p ? path.resolve(process.env.BENCH_CWD ?? '.', p) : undefined);
    return [{
      scenario: scenarioOfRpc(settings.RPC),
      source: {
        PROTO: abs(settings.PROTO), PROTO_PATH: settings.PROTO_PATH?.split(':').filter(Boolean).map(abs).join(':'),
        RPC: settings.RPC, REQUEST: abs(settings.REQUEST), RESPONSE: abs(settings.RESPONSE), ...pacing,
      },
    }];
  }
  return settings.SCENARIO.map((scenario) => {
    const builtIn = BUILT_IN_SERVICES[scenario];
    if (!builtIn) return { scenario, source: null };
    const abs = (p) => (p ? path.join(PROTO_DIR, p) : undefined);
    return {
      scenario,
      source: {
        PROTO: abs(builtIn.proto), PROTO_PATH: builtIn.protoPath.map((d) => path.join(PROTO_DIR, d)).join(':'), RPC: builtIn.rpc,
        REQUEST: abs(builtIn.request), RESPONSE: abs(builtIn.response), ...pacing,
      },
    };
  });
}

/**
 * @typedef {object} OwnRun an own service as the job runs it
 * @property {import('../proto/own/service.js').OwnService} service loaded and checked
 * @property {Record<string, string>} server the server settings that make every listener serve it (server/settings.js)
 * @property {Record<string, string>} k6 the -e variables that make the k6 scripts send its requests (k6/common.js OWN)
 * @property {boolean} stream a streaming RPC: each call a stream (no calibration, capacity or decomposition pass:
 *   the bare listeners, wrk and h2load load unary calls)
 * @property {OwnRecord} record what every summary of it carries (`bench.run.own`) and the report's sizes table reads
 */

/**
 * @typedef {object} OwnRecord
 * @property {string} rpc `package.Service/Method`
 * @property {import('../proto/own/schema.js').RpcKind} kind
 * @property {{min: number, median: number, max: number}} [messages_per_stream] of the response streams (server streaming),
 *   or the request streams (client streaming)
 * @property {number} [stream_interval_ms] the server's STREAM_INTERVAL (server streaming)
 * @property {'sse'|'ndjson'} [stream_framing] how the HTTP modes asked for a server stream (STREAM_FRAMING)
 * @property {'text'|'binary'} [relay_frames] a relay's WebSocket frames: the proto3 JSON mapping, or protobuf (RELAY_FRAMES)
 * @property {Array<{path: string, sha256: string}>} schema the schema's files with the SHA-256 of their bytes
 * @property {{request: {file: string, sha256: string|null, count: number}, response: {file: string, sha256: string|null, count: number}}} samples
 * @property {{request: SizeRow, response: SizeRow}} sizes bytes of each sample, over the samples
 * @property {{json: number, protobuf: number}} payload_bytes the median response sample, in bytes: what the report's
 *   payload row shows (one response's payload alone)
 * @property {OwnMemory} memory what each server worker holds for the schema and the response samples (ownMemory)
 */

/** @typedef {{json: {min: number, median: number, max: number}, protobuf: {min: number, median: number, max: number}}} SizeRow */

/**
 * The -e variables that make the k6 scripts load a scenario: an own service's (RPC, its schema, its requests), or the
 * demo's SCENARIO.
 * @param {string} scenario
 * @param {OwnRun|null} own
 * @returns {Record<string, string>}
 */
export const scenarioVars = (scenario, own) => (own ? own.k6 : { SCENARIO: scenario });

/**
 * Loads an own service and prepares its runs: the k6 request file (the request samples in the proto3 JSON mapping,
 * binary ones converted) in `scratch`, the server settings and the record.
 * @param {OwnSource} source
 * @param {string} scratch a folder for the request file
 * @param {string} scenario its name, for the file
 * @returns {Promise<OwnRun>}
 * @throws {import('../proto/own/schema.js').OwnServiceError} one line for a bad schema, RPC or sample
 */
export async function prepareOwn(source, scratch, scenario) {
  const service = loadOwnService(source);
  const { rpc, requests, responses } = service;
  const requestsFile = path.join(scratch, `requests-${scenario}.json`);
  const json = requests.messages.map((m) => toJsonText(rpc.requestType, m));
  // A client stream's samples are streams: k6 sends each as its messages (k6/common.js OWN).
  const samples = requests.streams ? requests.streams.map((stream) => `[${stream.map((i) => json[i]).join(',')}]`) : json;
  await writeFile(requestsFile, `[${samples.join(',\n')}]\n`);
  // A relay in protobuf over WebSocket: its request streams' binary encodings, base64, in the same order (k6/common.js FRAMES).
  const relay = rpc.requestStream && rpc.responseStream;
  const binaryFrames = relay && source.RELAY_FRAMES === 'binary';
  const framesFile = path.join(scratch, `frames-${scenario}.json`);
  if (binaryFrames) {
    const b64 = requests.messages.map((m) => Buffer.from(rpc.requestType.encode(m).finish()).toString('base64'));
    await writeFile(framesFile, `${JSON.stringify(requests.streams.map((stream) => stream.map((i) => b64[i])))}\n`);
  }
  const largest = Math.max(...requests.jsonBytes, ...requests.protobufBytes);
  const framing = source.STREAM_FRAMING ?? 'sse';
  const server = Object.fromEntries(Object.entries({
    PROTO: source.PROTO, PROTO_PATH: source.PROTO_PATH, RPC: source.RPC, RESPONSE: source.RESPONSE, STREAM_INTERVAL: source.STREAM_INTERVAL,
    // Both twins take a request as large as the largest sample (grpc-js's grpc.max_receive_message_length, fastify's
    // bodyLimit): an own service's default, 4 MiB, unless a sample's JSON is larger still.
    MAX_BODY_BYTES: largest > OWN_MAX_BODY_BYTES ? String(largest) : undefined,
  }).filter(([, v]) => v));
  const k6 = {
    RPC: rpc.name, REQUESTS: requestsFile, SCENARIO: scenario,
    ...(Object.hasOwn(STREAM_KINDS, rpc.kind) ? { STREAM: STREAM_KINDS[rpc.kind] } : {}),
    ...(rpc.responseStream && !rpc.requestStream ? { STREAM_FRAMING: framing } : {}),
    ...(binaryFrames ? { FRAMES: framesFile } : {}),
    ...k6Schema(source),
  };
  const memory = await ownMemory(server);
  const sizeRow = (s) => ({ json: sizeSpread(s.jsonBytes), protobuf: sizeSpread(s.protobufBytes) });
  const sampleOf = (s) => ({ file: s.file, sha256: s.sha256, count: s.messages.length });
  return {
    service,
    server,
    k6,
    stream: rpc.responseStream || rpc.requestStream,
    record: {
      rpc: rpc.name,
      kind: rpc.kind,
      ...(rpc.responseStream ? { stream_interval_ms: Number(source.STREAM_INTERVAL ?? 0) } : {}),
      ...(rpc.responseStream && !rpc.requestStream ? { stream_framing: framing } : {}),
      ...(relay ? { relay_frames: binaryFrames ? 'binary' : 'text' } : {}),
      ...((responses.streams ?? requests.streams) ? { messages_per_stream: sizeSpread((responses.streams ?? requests.streams).map((st) => st.length)) } : {}),
      schema: service.files,
      samples: { request: sampleOf(requests), response: sampleOf(responses) },
      sizes: { request: sizeRow(requests), response: sizeRow(responses) },
      payload_bytes: { json: sizeSpread(responses.jsonBytes).median, protobuf: sizeSpread(responses.protobufBytes).median },
      memory,
    },
  };
}

/**
 * How k6's gRPC client loads the schema: a FileDescriptorSet by its path (client.loadProtoset), or the .proto relative
 * to the import directory that holds it (client.load resolves the file and its imports against the directories).
 * @param {OwnSource} source
 * @returns {{PROTO: string, PROTO_PATH?: string}}
 */
function k6Schema({ PROTO, PROTO_PATH }) {
  if (DESCRIPTOR_SET.test(PROTO)) return { PROTO };
  const dirs = PROTO_PATH ? PROTO_PATH.split(':') : [path.dirname(PROTO)];
  const home = dirs.find((d) => !path.relative(d, PROTO).startsWith('..'));
  // A .proto outside every import directory: its own directory is searched first, as protoc does for its argument.
  const all = home ? dirs : [path.dirname(PROTO), ...dirs];
  return { PROTO: path.relative(home ?? path.dirname(PROTO), PROTO), PROTO_PATH: all.join(':') };
}

/**
 * @typedef {object} OwnMemory
 * @property {number|null} worker_rss_bytes what the schema and the response samples add to a server worker's RSS, in
 *   bytes: the pages V8 kept from reading them included (null when not measured)
 * @property {number|null} worker_heap_bytes the part of it that stays reachable in V8's heap, in bytes
 * @property {string} [reason] why it was not measured
 */

/**
 * The memory a server worker holds for an own service: its schema and response samples loaded as the worker loads them,
 * in a fresh Node process, against the same process with the empty message, a full garbage collection on each side
 * (proto/own/memory-probe.js). test/integration/own-memory.test.js holds it to a real worker's RSS. Every worker holds
 * its own copy.
 * @param {Record<string, string>} server the server settings of the service (prepareOwn's: PROTO, PROTO_PATH, RPC, RESPONSE, MAX_BODY_BYTES)
 * @returns {Promise<OwnMemory>} nulls with the reason when the probe failed
 */
export async function ownMemory(server) {
  try {
    // The settings as a worker gets them: loadOwnService reads its own names of them (no REQUEST: a worker holds none).
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', path.join(ROOT, 'proto/own/memory-probe.js'),
      JSON.stringify(server)], { timeout: 120000, maxBuffer: 1 << 20 });
    const { rss_bytes: rss, heap_bytes: heap } = JSON.parse(stdout);
    return { worker_rss_bytes: rss, worker_heap_bytes: heap };
  } catch (err) {
    return { worker_rss_bytes: null, worker_heap_bytes: null, reason: `the memory probe failed: ${String(err.stderr || err.message).trim().split('\n').at(-1)}` };
  }
}
