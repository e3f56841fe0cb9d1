// The mode registry: each way the comparison loads a server with k6, and everything the
// jobs need to know of it. The main job, the soak, the targets, the fault matrix, the summary
// reader and the report derive from this table, the server's environment through bench/invoke.js and k6's command line
// through bench/k6/command.js; adding a mode is one entry here plus its k6 scripts (docs/contributing.md).
// A mode is not a listener set (the server's MODE): its `listener` says which listener it loads.

/**
 * @typedef {object} Mode
 * @property {string} label column label in reports
 * @property {string} listener the server listener it loads (server/listeners.js)
 * @property {string} [bare] the listener that sends the same bytes at next to no cost (node:http or node:http2 alone): what
 *   the client's ceiling is measured against (bench/passes/calibrate.js; without one, none is measured)
 * @property {string} [peer] the listener a user would run instead, with the same library and payload and nothing of the
 *   project's on it: what `npm run targets` measures the mode's listener against (ours ÷ peer, peer ÷ bare, ours ÷ bare)
 * @property {{local: string, remote: string}} scripts its k6 scripts, by target (local: loopback;
 *   remote: another address), relative to the repository
 * @property {{local: string, remote: string}} hostVars the variable each script reads its host:port from
 *   (config.js holds their defaults)
 * @property {string} [remoteSetting] the main job's setting of the remote server's host:port (TARGET=remote), when it is
 *   not hostVars.remote: a mode that runs another mode's scripts loads a server of its own (config.js holds its default)
 * @property {string} minimalScript the minimal k6 script the targets job measures the project's one against
 * @property {string} minimalOwnScript the same with an own service (RPC): it sends the first request sample
 * @property {string} [minimalStreamScript] the same with an own streaming RPC (-e STREAM): one stream of the first request
 *   sample per iteration; without one, the targets measure no k6 row for a stream
 * @property {{requests: [string, string], latency: string, failed: string}} metrics k6 metrics of its summary:
 *   the [metric, value] whose value is the number of requests (value 'passes+fails': every sample of a rate),
 *   the request duration trend and the failure rate
 * @property {'json-body'|'protobuf-message'} payload how its summary holds the sampled payload:
 *   the body's byte count, or the decoded message (re-encoded to count its bytes)
 * @property {string} [tlsOnly] why the mode runs only with TLS=1 (the jobs refuse it otherwise, naming this)
 * @property {string[]} streams the kinds of streaming RPC its k6 scripts load (proto/own/schema.js rpcKind)
 */

// What a mode takes from the k6 scripts it runs: the modes that run another mode's scripts share its entry.
/** @type {Pick<Mode, 'scripts'|'hostVars'|'minimalScript'|'minimalOwnScript'|'minimalStreamScript'|'metrics'|'payload'|'streams'>} */
const HTTP_SCRIPTS = {
  scripts: { local: 'http-tests/local.js', remote: 'http-tests/remote.js' },
  hostVars: { local: 'LOCAL_HTTP_HOST', remote: 'REMOTE_HTTP_HOST' },
  minimalScript: 'bench/k6-minimal/http.js',
  minimalOwnScript: 'bench/k6-minimal/own-http.js',
  minimalStreamScript: 'bench/k6-minimal/own-http-stream.js',
  metrics: { requests: ['http_reqs', 'count'], latency: 'http_req_duration', failed: 'http_req_failed' },
  payload: 'json-body',
  // The kinds of streaming RPC the scripts load (k6/http.js: SSE, an NDJSON POST, a WebSocket).
  streams: ['server streaming', 'client streaming', 'bidirectional streaming'],
};
/** @type {Pick<Mode, 'scripts'|'hostVars'|'minimalScript'|'minimalOwnScript'|'minimalStreamScript'|'metrics'|'payload'|'streams'>} */
const GRPC_SCRIPTS = {
  scripts: { local: 'grpc-tests/local.js', remote: 'grpc-tests/remote.js' },
  hostVars: { local: 'LOCAL_GRPC_HOST', remote: 'REMOTE_GRPC_HOST' },
  minimalScript: 'bench/k6-minimal/grpc.js',
  minimalOwnScript: 'bench/k6-minimal/own-grpc.js',
  minimalStreamScript: 'bench/k6-minimal/own-grpc-stream.js',
  // k6 has no grpc_reqs counter, and its grpc_req_duration leaves out calls that reached their deadline:
  // the project's grpc_req_failed counts every call, setup()'s included, like http_reqs (k6/grpc.js withRequestsFailed).
  metrics: { requests: ['grpc_req_failed', 'passes+fails'], latency: 'grpc_req_duration', failed: 'grpc_req_failed' },
  payload: 'protobuf-message',
  streams: ['server streaming', 'client streaming', 'bidirectional streaming'], // k6/grpc.js: k6's grpc.Stream
};

/**
 * Every mode, in report order; the first is the baseline of the ratios.
 * @type {Readonly<Record<string, Readonly<Mode>>>}
 */
export const MODES = Object.freeze({
  http: {
    label: 'HTTP (JSON)',
    listener: 'http',
    bare: 'baseline-http',
    peer: 'peer-http',
    ...HTTP_SCRIPTS,
  },
  grpc: {
    label: 'gRPC (protobuf)',
    listener: 'grpc',
    bare: 'baseline-grpc',
    peer: 'peer-grpc',
    ...GRPC_SCRIPTS,
  },
  // connect-node beside grpc-js: the gRPC scripts unchanged, against connect-node's gRPC protocol (docs/connect.md).
  'connect-grpc': {
    label: 'gRPC (protobuf), connect-node',
    listener: 'connect-grpc',
    remoteSetting: 'REMOTE_CONNECT_GRPC_HOST',
    ...GRPC_SCRIPTS,
  },
  // JSON over HTTP/2 from the same k6 client as gRPC, so that transport and encoding separate (docs/tls.md): the HTTP
  // scripts unchanged, against fastify's HTTP/2 listener, which offers only h2 in ALPN; k6 offers h2 first.
  'json-h2': {
    label: 'JSON over HTTP/2 (fastify)',
    listener: 'json-h2',
    remoteSetting: 'REMOTE_JSON_H2_HOST',
    tlsOnly: 'k6\'s HTTP client speaks HTTP/2 only over TLS, by ALPN (no h2c: grafana/k6#970, #2348)',
    ...HTTP_SCRIPTS,
  },
  // connect-node beside fastify: the Connect protocol's unary POST, JSON both ways (docs/connect.md).
  'connect-json': {
    label: 'Connect (JSON), connect-node',
    listener: 'connect-json',
    scripts: { local: 'connect-json-tests/local.js', remote: 'connect-json-tests/remote.js' },
    hostVars: { local: 'LOCAL_CONNECT_JSON_HOST', remote: 'REMOTE_CONNECT_JSON_HOST' },
    minimalScript: 'bench/k6-minimal/connect-json.js',
    minimalOwnScript: 'bench/k6-minimal/own-http.js',
    metrics: { requests: ['http_reqs', 'count'], latency: 'http_req_duration', failed: 'http_req_failed' },
    payload: 'json-body',
    // The Connect protocol's server and client streams (k6/connect.js); its bidirectional ones need HTTP/2.
    streams: ['server streaming', 'client streaming'],
  },
});

/** Names of every mode, in report order. */
export const MODE_NAMES = Object.freeze(Object.keys(MODES));

/** Names of the modes that run in cleartext too (every mode but the `tlsOnly` ones), in report order. */
export const CLEARTEXT_MODE_NAMES = Object.freeze(MODE_NAMES.filter((mode) => !MODES[mode].tlsOnly));

/**
 * Why these modes cannot run as asked: a `tlsOnly` mode without TLS.
 * @param {readonly string[]} modes names of MODES
 * @param {boolean} tls whether the job runs them over TLS (TLS=1)
 * @param {string} setting the job's setting that listed them, for the message (e.g. 'MODES')
 * @returns {string|null} one line naming the mode, why, and what to set; null when they can
 */
export function tlsGap(modes, tls, setting) {
  const mode = tls ? undefined : modes.find((m) => MODES[m].tlsOnly);
  return mode ? `${setting}=${modes.join(',')}: the ${mode} mode needs TLS=1: ${MODES[mode].tlsOnly}` : null;
}

/** The comparison itself, the jobs' default modes: JSON over HTTP/1.1 with fastify against protobuf over gRPC with grpc-js.
 * The others are there to be chosen (MODES=grpc,connect-grpc), so the first answer a user gets stays the comparison's. */
export const DEFAULT_MODES = Object.freeze(['http', 'grpc']);

/**
 * The main job's setting that holds the host:port of a mode's remote server (TARGET=remote).
 * @param {string} mode a name of MODES
 * @returns {string} e.g. 'REMOTE_HTTP_HOST', 'REMOTE_CONNECT_GRPC_HOST'
 */
export const remoteSettingOf = (mode) => MODES[mode].remoteSetting ?? MODES[mode].hostVars.remote;

/**
 * A mode's column label, or the name itself for a mode this version does not know
 * (a summary written by another version).
 * @param {string} mode
 * @returns {string}
 */
export const modeLabel = (mode) => MODES[mode]?.label ?? mode;

/**
 * A report column's key: the mode, with `@node<release>` when its server ran under a Node release of
 * NODE_VERSIONS, and `+gzip` last when its responses were gzip-compressed (COMPRESSION=gzip), so that no
 * column, ratio or file name takes a compressed run for a raw one, or one release's run for another's.
 * @param {string} mode (or any column key without the two, e.g. `http-local`)
 * @param {string} [compression] 'off' (default) or 'gzip'
 * @param {string|null} [node] the NODE_VERSIONS release as listed, e.g. '20' (default null: none named)
 * @returns {string} e.g. 'http', 'grpc+gzip', 'http@node20', 'grpc@node24.21.0+gzip'
 */
export const columnKey = (mode, compression = 'off', node = null) => `${mode}${node ? `@node${node}` : ''}`
  + `${compression === 'off' ? '' : `+${compression}`}`;

/**
 * A column key with its Node release replaced by another (or added, or removed with null): the same mode and
 * compression on another release.
 * @param {string} key e.g. 'grpc@node24.21.0+gzip'
 * @param {string|null} node e.g. '20'
 * @returns {string} e.g. 'grpc@node20+gzip'
 */
export const onNode = (key, node) => {
  const [, base, compressed = ''] = /** @type {RegExpMatchArray} */ (key.replace(/@node[0-9.]+/, '').match(/^(.*?)(\+[a-z]+)?$/));
  return `${base}${node ? `@node${node}` : ''}${compressed}`;
};

/**
 * The Node release a column key names (`@node<release>`), or null.
 * @param {string} key
 * @returns {string|null}
 */
export const nodeOfKey = (key) => key.match(/@node([0-9.]+)/)?.[1] ?? null;
