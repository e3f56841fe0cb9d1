// Settings of the main job (bench.sh), read from the environment and checked before anything starts.
import { bool, makeValidator, str } from 'envalid';
import { positiveInt, readEnv, wholeNumber, withDefaultText } from '../../server/env.js';
import { MODE_NAMES, MODES, remoteSettingOf, tlsGap } from '../modes.js';
import { BenchError } from '../errors.js';
import { hostPort } from './hosts.js';
import { linkSpec, PROFILES, rate, rttMs } from './network.js';
import { DEFAULTS as HOSTS } from '../../config.js';
import { COMPRESSIONS, GZIP_LEVEL } from '../../server/compression.js';
import { OWN_SETTING_NAMES, ownServiceGap, sharedSpec } from './shared.js';
import { allowedCpus, splitCores } from './cores.js';
import { duration, nodeReleases } from './validators.js';

/** The most replicas SERVERS may ask for: each gets a loopback address of its own, 127.0.0.2 upwards. */
const MAX_SERVERS = 16;

/** envalid validator of CAPACITY: `auto`, or `1`/`0` (also `true`/`false`, as before `auto`), kept as `'auto'`, `'1'`, `'0'`. */
const capacityMode = makeValidator((input) => {
  const text = String(input).trim().toLowerCase();
  if (text === 'auto') return 'auto';
  if (text === '1' || text === 'true') return '1';
  if (text === '0' || text === 'false') return '0';
  throw new Error('must be auto, 1 or 0');
});


/**
 * The main job's settings, by variable name. What each one means, its unit and default are in
 * benchSettingSpecs (each spec's `desc`); docs/settings.md's table is generated from them (npm run docs).
 * @typedef {object} BenchSettings
 * @property {number} VUS
 * @property {number} REPEATS
 * @property {string} DURATION k6 duration
 * @property {string} WARMUP k6 duration
 * @property {number} WORKERS
 * @property {number} K6_INSTANCES
 * @property {number} SERVERS
 * @property {string[]} MODES
 * @property {string[]} NODE_VERSIONS Node releases the server runs under, one column each per mode ([]: the job's own node)
 * @property {string[]} SCENARIO
 * @property {string|undefined} PROTO
 * @property {string|undefined} PROTO_PATH
 * @property {string|undefined} RPC
 * @property {string|undefined} REQUEST
 * @property {string|undefined} RESPONSE
 * @property {number} STREAM_INTERVAL ms
 * @property {'sse'|'ndjson'} STREAM_FRAMING
 * @property {'text'|'binary'} RELAY_FRAMES
 * @property {number|undefined} STREAMS open streams k6 holds at once (unset: one stream per VU at a time)
 * @property {'reuse'|'per-request'} CONNECTIONS
 * @property {string} REQUEST_TIMEOUT k6 duration
 * @property {'off'|'gzip'} COMPRESSION
 * @property {number|undefined} RATE requests per second
 * @property {string} CALIBRATE k6 duration of the client's ceiling run ('0...' skips it)
 * @property {'0'|'1'|'auto'} CAPACITY when the capacity pass runs: never, after every k6 run, or after a scenario's k6 runs when one of its
 *   columns was client-bound
 * @property {boolean} DECOMPOSE
 * @property {boolean} PROFILE
 * @property {boolean} VERIFY_BYTES
 * @property {boolean} TLS
 * @property {boolean} TLS_SESSION_TICKETS
 * @property {string} TLS_CA path, or ''
 * @property {string} NETWORK
 * @property {number|undefined} BANDWIDTH bit/s
 * @property {number|undefined} DOWN bit/s
 * @property {number|undefined} UP bit/s
 * @property {number|undefined} RTT ms
 * @property {'local'|'remote'} TARGET
 * @property {string} REMOTE_HTTP_HOST host:port (one REMOTE_*_HOST per mode, bench/modes.js)
 * @property {string} REMOTE_GRPC_HOST host:port
 * @property {string} REMOTE_CONNECT_GRPC_HOST host:port
 * @property {string} REMOTE_CONNECT_JSON_HOST host:port
 * @property {string} REMOTE_JSON_H2_HOST host:port
 * @property {string} REMOTE_ADMIN_HOST host:port, or ''
 * @property {boolean} VERBOSE
 * @property {string} K6_BIN
 * @property {string} RESULTS_DIR
 * @property {import('./network.js').LinkSpec|null} link the emulated link (null: loopback), from NETWORK,
 *   BANDWIDTH, DOWN, UP and RTT; not a variable
 */

/**
 * The main job's settings as envalid specs, by variable name, in the order docs/settings.md lists them.
 * Each spec has a `desc` (what it does, its unit, where its default comes from), maybe an `example`,
 * and, where the default depends on the machine or on other settings, a `defaultText` the docs show
 * instead of it (withDefaultText).
 * Reading them needs no environment: scripts/gen-docs.js renders docs/settings.md's table from them.
 * @param {ReturnType<typeof splitCores>} [cores] how cores are shared (default: this process's, from splitCores)
 * @returns {Record<string, object>} envalid validators by variable name
 */
export function benchSettingSpecs(cores = splitCores(allowedCpus())) {
  return {
    VUS: sharedSpec('VUS', 'run', cores),
    REPEATS: positiveInt({
      default: 3,
      desc: 'measured runs per mode, interleaved (HTTP, gRPC, HTTP, …); the report gives their median and min–max',
    }),
    DURATION: duration({ allowZero: false })({
      default: '8s',
      desc: 'measured k6 run per mode and repeat (k6 duration: `30s`, `1m`, `1m30s`)',
      example: '1m30s',
    }),
    WARMUP: sharedSpec('WARMUP', 'run', cores),
    WORKERS: sharedSpec('WORKERS', 'run', cores),
    K6_INSTANCES: positiveInt({
      default: 1,
      desc: 'k6 processes per measured run, each running one execution segment (`--execution-segment`) of it, as k6-operator\'s '
        + '`parallelism` does; each gets a core of its own where there are enough. Their results are merged: counters summed, '
        + 'percentiles from all instances\' raw samples (k6\'s CSV output), never averaged; the report shows each instance too. '
        + 'At most VUS',
      example: '2',
    }),
    SERVERS: wholeNumber(1, MAX_SERVERS)({
      default: 1,
      desc: `server replicas (1–${MAX_SERVERS}); above 1, each mode is also measured through HAProxy (\`deploy/haproxy/haproxy.cfg\`, round robin `
        + 'per request) in front of SERVERS replicas, each a cluster of WORKERS on its own loopback address (127.0.0.2, …), beside the '
        + 'usual one-server run for contrast; the report adds each replica\'s share of the requests and HAProxy\'s CPU per request '
        + '(docs/scaling.md; needs `haproxy`)',
      example: '2',
    }),
    MODES: sharedSpec('MODES', 'run', cores),
    NODE_VERSIONS: withDefaultText(nodeReleases({
      default: [],
      desc: 'Node releases the server runs under, comma-separated (`MAJOR`, `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`), each provisioned '
        + 'before anything starts (`scripts/ensure-tool.sh node VERSION`, from the npm registry): every mode gets one column per '
        + 'release, interleaved (`http@node20`, `http@node24.21.0`, `grpc@node20`, …); each column is also divided by the same mode on '
        + 'the first release listed, gRPC by HTTP within each release (docs/report.md). k6 and the report run as usual. Local servers only',
      example: '20,24.21.0',
    }), 'unset: the server runs on the job\'s own Node'),
    SCENARIO: sharedSpec('SCENARIO', 'run', cores),
    // The user's own service (issue 37, docs/own-message.md): checked by the pre-flight, which loads it.
    ...Object.fromEntries(OWN_SETTING_NAMES.map((name) => [name, sharedSpec(name, 'run', cores)])),
    STREAM_INTERVAL: sharedSpec('STREAM_INTERVAL', 'run', cores),
    STREAM_FRAMING: sharedSpec('STREAM_FRAMING', 'run', cores),
    RELAY_FRAMES: sharedSpec('RELAY_FRAMES', 'run', cores),
    STREAMS: sharedSpec('STREAMS', 'run', cores),
    CONNECTIONS: sharedSpec('CONNECTIONS', 'run', cores),
    REQUEST_TIMEOUT: sharedSpec('REQUEST_TIMEOUT', 'run', cores),
    COMPRESSION: str({
      choices: [...COMPRESSIONS],
      default: 'off',
      desc: '`gzip`: each mode is measured twice, interleaved: raw, and with gzip-compressed responses (columns `http+gzip`, '
        + `\`grpc+gzip\`: the server started with COMPRESSION=gzip, zlib level ${GZIP_LEVEL} both ways; k6 asks with \`Accept-Encoding: gzip\`, `
        + 'and its gRPC client lists gzip in `grpc-accept-encoding` on every call); the report adds raw against gzip received bytes '
        + 'and server CPU per request (docs/compression.md). `off`: raw only',
      example: 'gzip',
    }),
    RATE: withDefaultText(positiveInt({
      default: undefined,
      desc: 'open model: k6 starts RATE requests a second (`constant-arrival-rate`, up to 4 × VUS VUs), so that latency is '
        + 'compared at a rate both modes sustain',
      example: '2000',
    }), 'unset: closed model'),
    CAPACITY: capacityMode({
      default: 'auto',
      desc: 'the server capacity pass: wrk (HTTP/1.1) or h2load (gRPC) loads the same server at VUS connections, pinned like k6, for '
        + 'DURATION: the server\'s own ceiling, shown beside k6\'s RPS. `auto`: after a scenario\'s k6 runs, once per column, when k6 '
        + 'was client-bound in any column of it (its median run at 90% of its core or more); `1`: after every k6 run; `0`: never. '
        + 'Needs wrk and h2load (provisioned before anything starts) unless `0`',
      example: '1',
    }),
    CALIBRATE: duration({ allowZero: true })({
      default: '3s',
      desc: 'the client\'s ceiling: right before each measured run (once per mode and compression in each repeat), its k6 script at the same VUs and pinning against '
        + 'its bare listener (node:http or node:http2 sending the same bytes) on loopback, for this long (k6 duration; after a 1 s '
        + 'warm-up). The report shows it beside the RPS with the share (RPS ÷ ceiling); a column at 0.9 of it or more is client-bound. '
        + '`0` skips it, and k6\'s CPU alone then decides',
      example: '5s',
    }),
    TLS: sharedSpec('TLS', 'run', cores),
    TLS_SESSION_TICKETS: bool({
      default: true,
      desc: 'with `TLS=1`: the servers\' TLS_SESSION_TICKETS (docs/server.md): `false` makes every handshake a full one. The report\'s '
        + '"TLS handshakes resumed" row shows what the client made of the tickets (k6 resumed none here: docs/tls.md)',
      example: 'false',
    }),
    TLS_CA: str({
      default: '',
      desc: 'with `TLS=1` and `TARGET=remote`: PEM file of the CA that signed the remote servers\' certificates (their TLS_CERT), which '
        + 'k6 verifies them against; the servers\' certificates must name the addresses of REMOTE_*_HOST',
      example: '/etc/bench/ca.crt',
    }),
    VERIFY_BYTES: bool({
      default: false,
      desc: 'capture each measured run with dumpcap and compare the TCP payload bytes tshark counts with k6\'s counters '
        + '(needs root or the wireshark group)',
      example: '1',
    }),
    DECOMPOSE: bool({
      default: false,
      desc: 'after the k6 runs, load every listener of one server (MODE=all) with wrk/h2load to separate encoding, transport '
        + 'and framework effects (docs/decomposition.md)',
      example: '1',
    }),
    PROFILE: bool({
      default: false,
      desc: 'a V8 CPU profile of every server worker over each measured run (node:inspector, warm-up left out), written to '
        + '`results/profile-<run>-<pid>.cpuprofile` (Chrome DevTools, speedscope); the report adds each mode\'s self time per '
        + 'request by package and its top functions (docs/profiling.md)',
      example: '1',
    }),
    NETWORK: str({
      choices: Object.keys(PROFILES),
      default: 'loopback',
      desc: 'network profile (bench/settings/network.js PROFILES); any but `loopback` runs the server as a second host in its own network '
        + 'namespace behind a shaped link, and k6 runs the remote scripts (docs/network.md; needs root)',
    }),
    BANDWIDTH: withDefaultText(rate({
      default: undefined,
      desc: 'link bandwidth both ways, in bit/s with tc\'s units (`2mbit`, `500kbit`, `1gbit`); any of BANDWIDTH, DOWN, UP '
        + 'and RTT builds a link',
      example: '10mbit',
    }), 'the profile\'s (not limited on `loopback`)'),
    DOWN: withDefaultText(rate({ default: undefined, desc: 'server-to-client bandwidth (bit/s, as BANDWIDTH)' }),
      'BANDWIDTH, else the profile\'s'),
    UP: withDefaultText(rate({ default: undefined, desc: 'client-to-server bandwidth (bit/s, as BANDWIDTH)' }),
      'BANDWIDTH, else the profile\'s'),
    RTT: withDefaultText(rttMs({
      default: undefined,
      desc: 'added round-trip time (ms, at most 10000: `20ms`, `0.5ms` or `20`)',
      example: '20ms',
    }), 'the profile\'s (0 on `loopback`)'),
    TARGET: str({
      choices: ['local', 'remote'],
      default: 'local',
      desc: `\`local\`: the job starts the server; \`remote\`: it measures servers already running on another machine at `
        + `${MODE_NAMES.map(remoteSettingOf).join(' / ')}`,
    }),
    // Each mode's remote host:port (REMOTE_HTTP_HOST, REMOTE_GRPC_HOST), default from config.js.
    ...Object.fromEntries(MODE_NAMES.map((mode) => [remoteSettingOf(mode), hostPort({
      default: HOSTS[remoteSettingOf(mode)],
      desc: `host:port of the remote ${MODES[mode].label} server (TARGET=remote; \`host:port\`, \`http://host:port\` or \`[v6]:port\`); `
        + 'the default is config.js\'s',
    })])),
    REMOTE_ADMIN_HOST: hostPort({
      default: '',
      desc: 'host:port of the remote server\'s admin endpoint (its ADMIN_PORT and ADMIN_HOST), for the server\'s own figures; '
        + 'empty leaves them unmeasured',
      example: '10.1.2.3:9100',
    }),
    VERBOSE: sharedSpec('VERBOSE', 'run', cores),
    K6_BIN: sharedSpec('K6_BIN', 'run', cores),
    RESULTS_DIR: sharedSpec('RESULTS_DIR', 'run', cores),
  };
}

/**
 * Why STREAMS cannot run with the other settings, in one line, or null. What it asks of the RPC is checked where the RPC
 * is loaded (bench/commands/run.js streamPreflight).
 * @param {{STREAMS?: number, RATE?: number, CONNECTIONS: string, K6_INSTANCES: number}} settings
 * @param {Record<string, string|undefined>} env what was set
 * @returns {string|null}
 */
export function openStreamsGap(settings, env) {
  if (!settings.STREAMS) return null;
  if (settings.RATE) return 'STREAMS holds N streams open through the run, RATE starts requests at a rate: set one or the other';
  if (settings.CONNECTIONS !== 'reuse') return 'STREAMS holds each VU\'s gRPC streams on its one connection: run it with CONNECTIONS=reuse';
  if (env.REQUEST_TIMEOUT) return 'STREAMS holds each stream until it ends or the run does: run it without REQUEST_TIMEOUT';
  if (settings.K6_INSTANCES > 1) return 'STREAMS holds the streams from one k6 process: run it with K6_INSTANCES=1';
  return null;
}

/**
 * Reads and checks the main job's settings.
 * @param {Record<string, string|undefined>} [env] default `process.env`
 * @returns {BenchSettings}
 * @throws {BenchError} naming every invalid variable
 */
export function readBenchSettings(env = process.env) {
  const settings = readEnv(env, benchSettingSpecs(), BenchError);
  const link = linkSpec(settings);
  if (link && settings.TARGET === 'remote') {
    throw new BenchError('TARGET=remote loads servers on another machine over the real link; NETWORK, BANDWIDTH, DOWN, UP and RTT '
      + 'emulate a link to a local server: set one or the other');
  }
  if (settings.DECOMPOSE && (link || settings.TARGET === 'remote')) {
    throw new BenchError('DECOMPOSE=1 loads every listener of a local server on loopback: run it without NETWORK/BANDWIDTH/RTT and TARGET=remote');
  }
  if (settings.SERVERS > 1 && (link || settings.TARGET === 'remote')) {
    throw new BenchError('SERVERS runs the replicas and HAProxy on this machine\'s loopback: run it without NETWORK/BANDWIDTH/RTT and TARGET=remote');
  }
  if (settings.COMPRESSION === 'gzip' && settings.TARGET === 'remote') {
    throw new BenchError('COMPRESSION=gzip starts each mode\'s server twice, raw and with COMPRESSION=gzip (k6\'s gRPC client always '
      + 'asks for gzip, so only the server can keep a column raw): run it without TARGET=remote');
  }
  if (settings.NODE_VERSIONS.length && settings.TARGET === 'remote') {
    throw new BenchError('NODE_VERSIONS starts the server under each Node release listed; a remote server runs on its own: '
      + 'run it without TARGET=remote');
  }
  const gap = tlsGap(settings.MODES, settings.TLS, 'MODES');
  if (gap) throw new BenchError(gap);
  if (settings.TLS && settings.DECOMPOSE) {
    throw new BenchError('DECOMPOSE=1 loads the peers, which serve no TLS (they anchor the comparison as their users run them): run it without TLS=1');
  }
  if (settings.TLS && settings.SERVERS > 1) {
    throw new BenchError('SERVERS > 1 balances cleartext connections through HAProxy: run it without TLS=1');
  }
  if (settings.TLS && settings.TARGET === 'remote' && !settings.TLS_CA) {
    throw new BenchError('TLS=1 with TARGET=remote verifies the remote servers against their CA: set TLS_CA to its PEM file');
  }
  if (settings.TLS_CA && !(settings.TLS && settings.TARGET === 'remote')) {
    throw new BenchError('TLS_CA is the remote servers\' CA, read with TLS=1 and TARGET=remote only; a local run makes its own');
  }
  if (settings.K6_INSTANCES > settings.VUS) {
    throw new BenchError(`K6_INSTANCES=${settings.K6_INSTANCES} is more than VUS=${settings.VUS}: each k6 instance needs at least one VU`);
  }
  const streamsGap = openStreamsGap(settings, env);
  if (streamsGap) throw new BenchError(streamsGap);
  const ownGap = ownServiceGap(settings, env);
  if (ownGap) throw new BenchError(ownGap);
  // WORKERS's default is one per server core, and with K6_INSTANCES the server may keep fewer.
  const workers = env.WORKERS ? settings.WORKERS : splitCores(allowedCpus(), settings.K6_INSTANCES).serverCoreCount;
  return { ...settings, WORKERS: workers, link };
}
