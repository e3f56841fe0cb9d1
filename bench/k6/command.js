// k6's command line of one run, from the mode registry (bench/modes.js): which script, its host variable, and every
// -e variable a script reads, written down once. Every command, pass and test that runs a mode's script builds its
// arguments here; the runner (bench/k6/runner.js) adds `run` and runs them.
import { MODES } from '../modes.js';

/**
 * Every -e variable the project's k6 scripts read besides their host (k6/common.js, k6/summary.js); a mode's
 * host variable is in MODES[mode].hostVars. k6Args refuses any other, so that a script's inputs are listed here once.
 */
export const K6_VARS = Object.freeze({
  SCENARIO: 'the payload scenario (proto/payload.js)',
  CONNECTIONS: '`reuse` or `per-request`',
  REQUEST_TIMEOUT: 'how long one request may take (k6 duration)',
  COMPRESSION: 'response compression asked of the server',
  SUMMARY_FILE: 'where handleSummary writes the summary',
  SUMMARY_MODE: 'the mode the summary names (bench/modes.js), set for every run: a mode may run another mode\'s scripts',
  SAMPLE_EVERY: 'one response in this many per VU is decoded and checked',
  RATE: 'open model: iterations started per second',
  DURATION: 'open model, and STREAMS: how long (k6 duration)',
  STREAMS: 'open streams: the streams the VUs hold open at once through the run (k6/open-streams.js)',
  STREAM_INTERVAL: 'with STREAMS: ms between two messages a relay\'s client sends',
  VUS: 'open model: VUs allocated up front; both models: how many shares of the request samples the VUs send (ownShare)',
  MAX_VUS: 'open model: VUs at most',
  RPC: 'an own service\'s RPC, `package.Service/Method` (bench/own-service.js; docs/own-message.md)',
  PROTO: 'an own service: its .proto relative to one of PROTO_PATH, or its FileDescriptorSet',
  PROTO_PATH: 'an own service: the import directories, `:`-separated',
  OWN_DIR: 'an own service: the absolute folder PROTO, PROTO_PATH and REQUESTS are relative to (Compose\'s /own; docs/docker.md)',
  STREAM: 'an own service: `server`, `client` or `bidi` for a streaming RPC of that kind (k6/common.js OWN)',
  STREAM_FRAMING: 'an own service\'s server stream: how the HTTP scripts ask for it, `sse` or `ndjson` (k6/settings.js STREAM_FRAMINGS)',
  REQUESTS: 'an own service: a JSON array of its request messages in the proto3 JSON mapping, sent in turn',
  FRAMES: 'an own relay with RELAY_FRAMES=binary: a JSON array of its request streams, each an array of base64 protobuf messages',
  TLS_CA: 'TLS: the run\'s CA certificate (PEM path) the scripts verify the server against; HTTP also needs SSL_CERT_FILE set to it in k6\'s environment',
});

/** What a minimal script of an own service reads (bench/k6-minimal/own-*.js), of K6_VARS; a stream's, STREAM's too. */
const MINIMAL_OWN_VARS = Object.freeze(['RPC', 'PROTO', 'PROTO_PATH', 'REQUESTS', 'STREAM', 'STREAM_FRAMING']);

/**
 * The arguments of one `k6 run` of a mode's script (runK6 in bench/k6/runner.js adds `run` and the rest).
 * Closed model (default): `--vus` and `--duration` (and VUS through -e, which the scripts share samples out by). Open
 * model (rate given): RATE, DURATION and VUS through -e, since --vus/--duration would replace the script's scenario.
 * @param {string} mode a name of MODES
 * @param {{target?: 'local'|'remote', script?: 'project'|'minimal', host: string, vus: number, duration: string,
 *   rate?: number|null, summaryFile: string, vars?: Record<string, string|number>, flags?: string[]}} run
 *   target: which of the mode's scripts (default local); script 'minimal': the mode's minimal script (its own-service
 *   one when vars has RPC, which reads RPC, PROTO, PROTO_PATH and REQUESTS too), which reads its
 *   host alone and writes its summary through --summary-export (vars are then refused); vars: more of K6_VARS;
 *   flags: k6 options put first (execution segments, outputs)
 * @returns {string[]}
 * @throws {Error} for a variable no script reads
 */
export function k6Args(mode, { target = 'local', script = 'project', host, vus, duration, rate = null, summaryFile, vars = {}, flags = [] }) {
  const { scripts, hostVars, minimalScript, minimalOwnScript, minimalStreamScript } = MODES[mode];
  // A minimal script reads its host alone, or with an own service (RPC) the schema and the request samples too.
  const minimalReads = 'RPC' in vars ? MINIMAL_OWN_VARS : [];
  // VUS in the closed model too: the scripts share the user's request samples out by it (k6/own.js ownShare).
  const model = rate ? { RATE: rate, DURATION: duration, VUS: vus } : script === 'project' ? { VUS: vus } : {};
  const all = { ...vars, ...model, ...(script === 'project' ? { SUMMARY_FILE: summaryFile, SUMMARY_MODE: mode } : {}) };
  const unknown = Object.keys(all).filter((name) => !Object.hasOwn(K6_VARS, name) || (script === 'minimal' && !minimalReads.includes(name)));
  if (unknown.length) throw new Error(`not a variable the ${script} ${mode} script reads: ${unknown.join(', ')}`);
  const env = [`${hostVars[target]}=${host}`, ...Object.entries(all).map(([k, v]) => `${k}=${v}`)].flatMap((e) => ['-e', e]);
  const closed = rate ? [] : ['--vus', String(vus), '--duration', duration];
  const summary = script === 'minimal' ? ['--summary-export', summaryFile] : [];
  const minimal = 'STREAM' in vars ? minimalStreamScript : 'RPC' in vars ? minimalOwnScript : minimalScript;
  if (script === 'minimal' && !minimal) throw new Error(`the ${mode} mode has no minimal script of a stream`);
  return [...flags, ...env, ...closed, ...summary, script === 'minimal' ? minimal : scripts[target]];
}

/**
 * What k6 needs to verify a TLS server against a CA: the scripts' TLS_CA (-e; the gRPC scripts trust it alone), and
 * SSL_CERT_FILE in k6's environment, which Go's crypto/tls reads in place of the system's roots for the HTTP client
 * (k6 has no per-request CA option).
 * @param {{caCert: string}|null} tls a cell's (bench/placement/placement.js), null for cleartext
 * @returns {{vars: Record<string, string>, env: Record<string, string>}} both empty for cleartext
 */
export const k6Tls = (tls) => (tls ? { vars: { TLS_CA: tls.caCert }, env: { SSL_CERT_FILE: tls.caCert } } : { vars: {}, env: {} });
