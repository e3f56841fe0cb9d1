// The settings several jobs read (the main job and the targets: `run`; the soak: `soak`; the fault matrix:
// `faults`), each specced once here: its validator and what it means. What differs from job to job is data in
// the same entry: the job's default, and the few words it adds to the meaning.
import { bool, str } from 'envalid';
import { positiveInt, wholeNumber, withDefaultText } from '../../server/env.js';
import { CONNECTION_POLICIES, DEFAULT_REQUEST_TIMEOUT, STREAM_FRAMINGS } from '../../k6/settings.js';
import { SCENARIOS } from '../../proto/payload.js';
import { BUILT_IN_SERVICES } from '../../proto/own/builtins.js';
import { DEFAULT_MODES, MODE_NAMES } from '../modes.js';
import { SERVER_CORES_TEXT } from './cores.js';
import { duration, listOf } from './validators.js';

/** @typedef {'run'|'soak'|'faults'|'sweep'} Job */

/** REQUEST_TIMEOUT of the soak and the fault matrix, whose faults make requests hang. */
const FAULT_REQUEST_TIMEOUT = '5s';

/**
 * The jobs that read an own service (the main job and the sweep measure it; the fault matrix's slow-stream-readers
 * opens its streams), each leaving the setting unset unless the user sets it; `text` is what unset means, for the docs.
 * @param {string} [text]
 */
const unsetInOwnJobs = (text = 'unset') => ({ run: { default: undefined, text }, sweep: { default: undefined, text },
  faults: { default: undefined, text: 'unset' } });

/** A default of WORKERS that is one per server core (splitCores), shown as SERVER_CORES_TEXT in the docs. */
const SERVER_CORES = Symbol('one worker per server core');

/**
 * @typedef {object} SharedSetting
 * @property {(spec: object) => object} validator an envalid validator (its spec: default, desc, example)
 * @property {string} desc what it means, for every job
 * @property {string} [example]
 * @property {Partial<Record<Job, {default: unknown, more?: string, text?: string}>>} jobs the jobs that read it: each one's
 *   default, what it adds to `desc`, and what the docs show as the default where it is not a value (`unset: …`)
 */

/** @type {Readonly<Record<string, SharedSetting>>} */
const SHARED = Object.freeze({
  MODES: {
    validator: listOf(MODE_NAMES),
    desc: `modes to load, comma-separated from ${MODE_NAMES.map((m) => `\`${m}\``).join(', ')} (bench/modes.js), in order`,
    jobs: { run: { default: [...DEFAULT_MODES], more: '; the first is the ratios\' baseline' }, faults: { default: [...DEFAULT_MODES] } },
  },
  VUS: {
    validator: positiveInt,
    desc: 'k6 virtual users, the same for each mode (closed model: each sends its next request when the last is answered)',
    jobs: { run: { default: 32 }, soak: { default: 64 }, faults: { default: 16 } },
  },
  WARMUP: {
    validator: duration({ allowZero: true }),
    desc: 'k6 run before each measured one, left out of every figure (k6 duration); `0s` skips it',
    jobs: { run: { default: '2s' }, soak: { default: '10s' }, sweep: { default: '1s' } },
  },
  WORKERS: {
    validator: positiveInt,
    desc: 'server cluster workers',
    jobs: {
      run: { default: SERVER_CORES },
      soak: { default: SERVER_CORES, more: ' of the sustained run' },
      faults: { default: 2, more: ': 2 keeps one serving while the other is killed or replaced' },
      sweep: { default: SERVER_CORES },
    },
  },
  REQUEST_TIMEOUT: {
    validator: duration(),
    desc: 'how long one request may take, the same for both modes (k6 duration; the HTTP `timeout` param, the gRPC `timeout` in '
      + 'the invoke params); a request past it is ended, counted as failed and as timed out. Raise it for large payloads over a slow link',
    example: '30s',
    jobs: {
      // k6's own default: the scripts then pass no params at all, which k6 would convert on every request (docs/profiling.md).
      run: { default: DEFAULT_REQUEST_TIMEOUT, more: '. At its default, k6\'s own, the scripts pass no timeout param, which costs k6 '
        + 'RPS on every HTTP request; a request still unanswered when the run ends is counted as interrupted' },
      // Hangs are what these two jobs provoke: a short timeout counts them within the run.
      soak: { default: FAULT_REQUEST_TIMEOUT, more: ': a request a killed worker took with it then counts as lost instead of hanging' },
      faults: { default: FAULT_REQUEST_TIMEOUT },
      sweep: { default: DEFAULT_REQUEST_TIMEOUT },
    },
  },
  SCENARIO: {
    validator: listOf([...Object.keys(SCENARIOS), ...Object.keys(BUILT_IN_SERVICES)]),
    desc: `payload scenarios, comma-separated from ${Object.keys(SCENARIOS).map((s) => `\`${s}\``).join(', ')} (proto/payload.js), `
      + `and the built-in own services ${Object.keys(BUILT_IN_SERVICES).map((s) => `\`${s}\``).join(', ')} (proto/own/builtins.js, `
      + 'docs/own-message.md)',
    example: 'users-100,blob-32k',
    jobs: { run: { default: ['user'], more: '; one table each' }, sweep: { default: ['user'], more: '; one heat map each per RTT' } },
  },
  // The user's own service (issue 37, docs/own-message.md): checked by each job's pre-flight, which loads it.
  PROTO: {
    validator: str,
    desc: 'your schema: a .proto file, or a FileDescriptorSet (`.binpb`, `.pb`: `buf build -o`, `protoc --include_imports '
      + '--descriptor_set_out`); with RPC, the job measures that RPC in place of SCENARIO (docs/own-message.md)',
    example: 'api/orders/v1/orders.proto',
    jobs: unsetInOwnJobs(),
  },
  PROTO_PATH: {
    validator: str,
    desc: 'import directories of PROTO, `:`-separated, as protoc\'s `-I`; the well-known types (`google/protobuf/*.proto`) are always there',
    example: 'api:third_party',
    jobs: unsetInOwnJobs('unset: the directory of PROTO'),
  },
  RPC: {
    validator: str,
    desc: 'the RPC of PROTO to measure, `package.Service/Method`: gRPC against JSON over HTTP (`POST /package.Service/Method`, '
      + 'the proto3 JSON mapping both ways); any kind: unary, or a server, client or bidirectional stream (docs/streaming.md); '
      + 'the report names its tables, files and heat maps after it',
    example: 'acme.orders.v1.OrderService/GetOrder',
    jobs: {
      ...unsetInOwnJobs('unset: the SCENARIO list'),
      faults: { default: undefined, text: 'unset', more: '. In the fault matrix: a server-streaming or bidirectional RPC, served '
        + 'beside the demo that k6 loads, whose streams the `slow-stream-readers` fault opens' },
    },
  },
  REQUEST: {
    validator: str,
    desc: 'request samples, sent in turn: the proto3 JSON mapping (one object, a JSON array of objects, or NDJSON), or binary '
      + '(`.binpb`: length-delimited messages, as ghz\'s `-B` takes); at most 10,000 messages and 64 MiB, 4 MiB a message',
    example: 'requests.ndjson',
    jobs: unsetInOwnJobs('unset: the empty request message'),
  },
  RESPONSE: {
    validator: str,
    desc: 'response samples, served in turn by both twins; the same forms and limits as REQUEST',
    example: 'responses.json',
    jobs: unsetInOwnJobs('unset: the empty response message'),
  },
  STREAM_INTERVAL: {
    validator: wholeNumber(0, 2 ** 31 - 1),
    desc: 'with a server-streaming RPC: milliseconds the server waits between two messages of a stream (its STREAM_INTERVAL; '
      + 'a paced stream, as an LLM\'s tokens are), the same for both twins; 0: as fast as the connection takes them (docs/streaming.md)',
    example: '20',
    jobs: { run: { default: 0 } },
  },
  STREAMS: {
    validator: positiveInt,
    desc: 'open streams: with a server-streaming RPC or a relay paced by STREAM_INTERVAL > 0, k6 holds N streams open at once '
      + 'through the measured run, re-opening each as it ends, in place of one stream per VU at a time: spread over '
      + 'max(VUS, ⌈N ÷ 100⌉) VUs (a gRPC VU\'s streams share its one connection, kept under the server\'s '
      + 'H2_MAX_CONCURRENT_STREAMS), each VU holding its share (gRPC: `grpc.Stream`s on the VU\'s connection; SSE or NDJSON: '
      + 'an HTTP/1.1 connection each; a relay over WebSocket: a socket each, the client sending a message every STREAM_INTERVAL '
      + 'ms); the run\'s end cuts those still open. The warm-up holds one stream per VU. The report adds the server\'s peak of '
      + 'open streams, its messages/s and memory per open stream, and takes the server CPU per message from the server\'s own '
      + 'count of messages (docs/streaming.md)',
    example: '1000',
    jobs: { run: { default: undefined, text: 'unset: one stream per VU at a time' } },
  },
  STREAM_FRAMING: {
    validator: (spec) => str({ ...spec, choices: Object.keys(STREAM_FRAMINGS) }),
    desc: 'with a server-streaming RPC: how the HTTP modes ask for the stream and count its messages: `sse`, Server-Sent Events '
      + '(`Accept: text/event-stream`, an event a message), or `ndjson`, newline-delimited JSON (`Accept: application/x-ndjson`, '
      + 'a line a message), the framings the HTTP twin serves (docs/streaming.md)',
    example: 'ndjson',
    jobs: { run: { default: 'sse' } },
  },
  RELAY_FRAMES: {
    validator: (spec) => str({ ...spec, choices: ['text', 'binary'] }),
    desc: 'with a bidirectional RPC: the frames of the HTTP twin\'s WebSocket relay: `text`, each message in the proto3 JSON '
      + 'mapping, or `binary`, each in protobuf (protobuf over WebSocket), the two the relay answers in kind (docs/streaming.md)',
    example: 'binary',
    jobs: { run: { default: 'text' } },
  },
  CONNECTIONS: {
    validator: (spec) => str({ ...spec, choices: [...CONNECTION_POLICIES] }),
    desc: 'connection policy of both modes: `reuse`, one connection per VU (HTTP keep-alive; one gRPC connection opened on the '
      + 'VU\'s first iteration); `per-request`, a new connection every iteration',
    jobs: { run: { default: 'reuse' }, sweep: { default: 'reuse', more: '. Over an emulated link toxiproxy does not delay the TCP '
      + 'handshake, so `per-request` cells understate a new connection\'s cost by one RTT: the sweep flags them' } },
  },
  TLS: {
    validator: bool,
    desc: 'every listener loaded serves TLS (the server\'s TLS_MIN_VERSION, 1.3 by default) with ALPN (`http/1.1` for HTTP/1.1, `h2` '
      + 'for HTTP/2): the job makes a CA and a server certificate for the run with `openssl` (the address k6 loads as a subject '
      + 'alternative name), starts the servers with TLS_CERT/TLS_KEY, and k6 verifies them against that CA alone (no '
      + '`insecureSkipTLSVerify`); wrk and h2load load them over TLS too (docs/tls.md)',
    example: '1',
    jobs: {
      run: { default: false, more: '. The report adds the servers\' count of TLS handshakes per 1000 requests, the share resumed, and '
        + 'the version, cipher and ALPN protocol negotiated. With `TARGET=remote`, the remote servers\' own certificates, verified '
        + 'against TLS_CA. The client\'s ceiling is measured over TLS too (the bare listeners serve it); not with DECOMPOSE or SERVERS > 1' },
      soak: { default: false },
      faults: { default: false, more: '. The misbehaving clients (slow readers, idle connections, malformed frames) complete a TLS '
        + 'handshake first, as a client of the port must, and ghz verifies the same CA' },
    },
  },
  VERBOSE: {
    validator: bool,
    desc: 'k6\'s own output on the terminal too',
    example: '1',
    jobs: {
      run: { default: false, more: '; it always goes to `results/k6-<run>.log`, and its last lines are shown when a run fails' },
      faults: { default: false },
      sweep: { default: false },
    },
  },
  K6_BIN: {
    validator: str,
    desc: 'path of k6; empty: `bench/cli.js` takes k6 from PATH if it is at least the pinned release, else builds that release '
      + '(`scripts/ensure-tool.sh k6`)',
    jobs: { run: { default: '' }, soak: { default: '' }, faults: { default: '' }, sweep: { default: '' } },
  },
  RESULTS_DIR: {
    validator: str,
    desc: 'folder the job writes its reports, k6 summaries and logs to (relative to the repository, or absolute)',
    jobs: { run: { default: 'results' }, soak: { default: 'results' }, faults: { default: 'results' }, sweep: { default: 'results' } },
  },
});

/** The settings of an own service (docs/own-message.md), which the jobs that measure one read and hand on as they are. */
export const OWN_SETTING_NAMES = Object.freeze(['PROTO', 'PROTO_PATH', 'RPC', 'REQUEST', 'RESPONSE']);

/** Names of the shared settings. */
export const SHARED_SETTING_NAMES = Object.freeze(Object.keys(SHARED));

/**
 * A shared setting's envalid spec for one job: the one validator and meaning, the job's default.
 * @param {string} name a key of SHARED
 * @param {Job} job
 * @param {{serverCoreCount: number}} cores how cores are shared (splitCores): the default of a setting that is one per server core
 * @returns {object} an envalid spec
 * @throws {Error} for a setting that is not shared, or that the job does not read
 */
export function sharedSpec(name, job, cores) {
  const setting = SHARED[name];
  const own = setting?.jobs[job];
  if (!own) throw new Error(`${name} is not a shared setting of ${job}`);
  const perCore = own.default === SERVER_CORES;
  const spec = setting.validator({
    default: perCore ? cores.serverCoreCount : own.default,
    desc: `${setting.desc}${own.more ?? ''}`,
    ...(setting.example ? { example: setting.example } : {}),
  });
  if (perCore) return withDefaultText(spec, SERVER_CORES_TEXT);
  return own.text ? withDefaultText(spec, own.text) : spec;
}

/**
 * The jobs that read each shared setting, and their defaults (SERVER_CORES as the text the docs show).
 * @returns {Record<string, Partial<Record<Job, unknown>>>}
 */
export const sharedDefaults = () => Object.fromEntries(Object.entries(SHARED).map(([name, { jobs }]) => [name,
  Object.fromEntries(Object.entries(jobs).map(([job, own]) => [job, own.default === SERVER_CORES ? SERVER_CORES_TEXT : own.text ?? own.default]))]));

/**
 * Why the settings of an own service (RPC and what goes with it) cannot run as asked, in one line, or null.
 * @param {object} settings the job's, read
 * @param {Record<string, string|undefined>} env what was set
 * @returns {string|null}
 */
export function ownServiceGap(settings, env) {
  const given = OWN_SETTING_NAMES.filter((name) => name !== 'RPC' && settings[name] !== undefined);
  if (!settings.RPC && given.length) return `${given.join(', ')} ${given.length > 1 ? 'are' : 'is'} read with RPC (package.Service/Method): set RPC too`;
  if (settings.RPC && !settings.PROTO) return `RPC=${settings.RPC} needs PROTO, the .proto file or FileDescriptorSet that defines it`;
  if (settings.RPC && env.SCENARIO) return 'RPC measures that RPC in place of SCENARIO: set one or the other';
  return null;
}
