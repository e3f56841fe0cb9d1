// How the bench starts the two processes of a measured cell, from the mode registry (bench/modes.js):
// the server's environment and k6's command line. Every command and pass builds them here, so that a
// mode's listener and a script's -e variables are written down once.
//
// Three words, three meanings:
// - a mode (bench/modes.js, the bench's MODES setting) is a way k6 loads a server: a script against a listener;
// - a listener set (the server's MODE setting: `both`, `all`, or listener names) is what one server opens;
// - `both` in the soak's MODE is every mode, one after the other (bench/settings/soak.js).
// A mode's name need not be its listener's: serverEnv maps one to the other.
import { MODES } from './modes.js';
import { serverSettingSpecs } from '../server/settings.js';

/**
 * The listener set (the server's MODE) that serves these modes: each one's listener, once, in the order given.
 * @param {readonly string[]} modes names of MODES
 * @returns {string} e.g. 'http', 'http,grpc'
 */
export const listenerSetOf = (modes) => [...new Set(modes.map((mode) => MODES[mode].listener))].join(',');

/**
 * The port a started server loads a mode on: its listener's.
 * @param {{ports: Record<string, number>}} server a RunningServer (bench/processes.js)
 * @param {string} mode a name of MODES
 * @returns {number}
 */
export const portOfMode = (server, mode) => server.ports[MODES[mode].listener];

const SERVER_SETTINGS = new Set(Object.keys(serverSettingSpecs(1)));

/**
 * The environment the bench starts a server with (bench/processes.js startServer): the listener set that
 * serves the modes, and the server settings the job decides. Settings left out keep the server's default,
 * except COMPRESSION, which startServer sets off.
 * @param {readonly string[]|'all'|{listener: string}|null} modes names of MODES; 'all': every listener; {listener}: that
 *   listener alone (the passes that load the listeners themselves, with wrk and h2load); null: MODE left out (what a
 *   job's provenance records of settings shared by servers of several modes)
 * @param {{workers: number, host?: string, adminPort?: number|null, adminHost?: string, compression?: 'off'|'gzip',
 *   ports?: Record<string, string>, settings?: Record<string, string|number>}} options adminPort: the admin endpoint's
 *   (null or absent: none); ports: listeners' port settings (default: startServer picks free ones); settings: other
 *   server settings, by name (server/settings.js), e.g. SHUTDOWN_TIMEOUT_MS
 * @returns {Record<string, string>} e.g. `{MODE: 'grpc', WORKERS: '2', ADMIN_PORT: '40123'}`
 * @throws {Error} naming a setting the server does not have
 */
export function serverEnv(modes, { workers, host, adminPort, adminHost, compression, ports = {}, settings = {} }) {
  const unknown = Object.keys({ ...ports, ...settings }).filter((name) => !SERVER_SETTINGS.has(name));
  if (unknown.length) throw new Error(`not a server setting: ${unknown.join(', ')}`);
  const given = {
    ...ports,
    MODE: modes === 'all' || modes === null ? modes ?? undefined : 'listener' in modes ? modes.listener : listenerSetOf(modes),
    WORKERS: workers,
    HOST: host,
    COMPRESSION: compression,
    ADMIN_PORT: adminPort ?? undefined,
    ADMIN_HOST: adminHost,
    ...settings,
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]));
}

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
  DURATION: 'open model: how long (k6 duration)',
  VUS: 'open model: VUs allocated up front',
  MAX_VUS: 'open model: VUs at most',
  RPC: 'an own service\'s RPC, `package.Service/Method` (bench/own-service.js; docs/own-message.md)',
  PROTO: 'an own service: its .proto relative to one of PROTO_PATH, or its FileDescriptorSet',
  PROTO_PATH: 'an own service: the import directories, `:`-separated',
  REQUESTS: 'an own service: a JSON array of its request messages in the proto3 JSON mapping, sent in turn',
  TLS_CA: 'TLS: the run\'s CA certificate (PEM path) the scripts verify the server against; HTTP also needs SSL_CERT_FILE set to it in k6\'s environment',
});

/**
 * The arguments of one `k6 run` of a mode's script (runK6 in bench/processes.js adds `run` and the rest).
 * Closed model (default): `--vus` and `--duration`. Open model (rate given): RATE, DURATION and VUS through -e,
 * since --vus/--duration would replace the script's scenario.
 * @param {string} mode a name of MODES
 * @param {{target?: 'local'|'remote', script?: 'project'|'minimal', host: string, vus: number, duration: string,
 *   rate?: number|null, summaryFile: string, vars?: Record<string, string|number>, flags?: string[]}} run
 *   target: which of the mode's scripts (default local); script 'minimal': the mode's minimal script, which reads its
 *   host alone and writes its summary through --summary-export (vars are then refused); vars: more of K6_VARS;
 *   flags: k6 options put first (execution segments, outputs)
 * @returns {string[]}
 * @throws {Error} for a variable no script reads
 */
export function k6Args(mode, { target = 'local', script = 'project', host, vus, duration, rate = null, summaryFile, vars = {}, flags = [] }) {
  const { scripts, hostVars, minimalScript } = MODES[mode];
  const model = rate ? { RATE: rate, DURATION: duration, VUS: vus } : {};
  const all = { ...vars, ...model, ...(script === 'project' ? { SUMMARY_FILE: summaryFile, SUMMARY_MODE: mode } : {}) };
  const unknown = Object.keys(all).filter((name) => !Object.hasOwn(K6_VARS, name) || (script === 'minimal'));
  if (unknown.length) throw new Error(`not a variable the ${script} ${mode} script reads: ${unknown.join(', ')}`);
  const env = [`${hostVars[target]}=${host}`, ...Object.entries(all).map(([k, v]) => `${k}=${v}`)].flatMap((e) => ['-e', e]);
  const closed = rate ? [] : ['--vus', String(vus), '--duration', duration];
  const summary = script === 'minimal' ? ['--summary-export', summaryFile] : [];
  return [...flags, ...env, ...closed, ...summary, script === 'minimal' ? minimalScript : scripts[target]];
}

/**
 * What k6 needs to verify a TLS server against a CA: the scripts' TLS_CA (-e; the gRPC scripts trust it alone), and
 * SSL_CERT_FILE in k6's environment, which Go's crypto/tls reads in place of the system's roots for the HTTP client
 * (k6 has no per-request CA option).
 * @param {{caCert: string}|null} tls a cell's (bench/placement/placement.js), null for cleartext
 * @returns {{vars: Record<string, string>, env: Record<string, string>}} both empty for cleartext
 */
export const k6Tls = (tls) => (tls ? { vars: { TLS_CA: tls.caCert }, env: { SSL_CERT_FILE: tls.caCert } } : { vars: {}, env: {} });
