// The listener registry: every listener a worker can open, and everything the rest of the
// project needs to know of it. The server's settings, the worker, the health check, the
// capacity and decomposition passes, the bench's port plumbing and the tests derive from
// this table; adding a listener is one entry here (docs/contributing.md).
// Start functions are imported when a worker opens the listener, so reading this table
// loads no server library.

/**
 * @typedef {object} Listener
 * @property {string} portSetting the setting (environment variable) that holds its TCP port
 * @property {number} defaultPort its port when the setting is unset
 * @property {string} protocol how it names itself in errors ("HTTP port … cannot be bound")
 * @property {string} label what it serves, for tables: encoding · transport · implementation
 * @property {'HTTP/1.1'|'HTTP/2'} transport what its clients speak
 * @property {readonly string[]} [streams] the kinds of streaming RPC it serves (proto/own/schema.js RpcKind); a listener
 *   refuses to start with another (streamlessListeners). json-h2 serves no bidirectional stream: its WebSocket would need
 *   RFC 8441's extended CONNECT, which Node's http2 server does not offer
 * @property {boolean} hardened whether the project's hardening applies (server/h1-guard.js or server/h2-guard.js, the
 *   drain): the listeners compared are; the anchors (bare baselines, peers) are run as their library's users run them,
 *   and the hostile-client and HTTP/2 shutdown tests leave them out
 * @property {{tool: 'wrk'|'h2load', request: 'get'|'grpc'|'connect', ownBody?: 'protobuf'}} load the native load
 *   generator of the capacity and decomposition passes, and how it asks: 'get' the scenario's HTTP path, 'grpc' its
 *   request message POSTed in gRPC framing, 'connect' its request message POSTed in the proto3 JSON mapping as the
 *   Connect protocol's unary call (Content-Type application/json). An own RPC is always POSTed to its path: gRPC-framed
 *   where `request` is 'grpc', else as JSON, or as protobuf (`application/x-protobuf`) where `ownBody` says so
 * @property {'http/1.1'|'h2'|null} alpn the protocol it offers in ALPN when TLS_CERT/TLS_KEY are set (server/tls.js);
 *   null: it serves no TLS (the peers, anchors run as their library's users run them), and a MODE that opens it with
 *   TLS set is refused. The bare baselines serve it: the client's ceiling under TLS is measured against them
 * @property {'http'|'grpc'|'connect'|null} probe how the container health check asks it (null: not probed; the
 *   listeners that take the comparison apart are for benchmarks, not deployments): 'http' GET /health, 'grpc'
 *   grpc.health.v1.Health/Check over gRPC, 'connect' the same Check with the Connect protocol (POST, JSON)
 * @property {(options: {host: string, port: number, log: object, health: object, settings: object,
 *   tls: ReturnType<typeof import('./tls.js').tlsServerOptions>, own: import('../proto/own/service.js').OwnService|null,
 *   listener?: string}) => Promise<{close: () => Promise<import('./h1-guard.js').DrainCounts|void>, forceClose: () => void}>}
 *   start binds it and serves (over TLS when `tls` is set: the worker makes it from `alpn` and TLS_CERT/TLS_KEY; the user's
 *   RPC too when `own` is set; `listener` its name, under which its refusals are counted); a hardened listener's close resolves
 *   with how the requests in flight when it began, and those that came during it, ended
 */

/** Every kind of streaming RPC. */
const ALL_KINDS = Object.freeze(['server streaming', 'client streaming', 'bidirectional streaming']);

/**
 * Every listener, in the decomposition table's order. `http` and `grpc` are the comparison;
 * the others take it apart (encoding vs transport, framework vs bare protocol), or anchor it: the peers are what a user
 * would write instead with the same library (issue 24), so "ours ÷ peer" is the cost of the project's own code; the
 * connect ones put connect-node beside grpc-js and fastify (docs/connect.md).
 * @type {Readonly<Record<string, Readonly<Listener>>>}
 */
export const LISTENERS = Object.freeze({
  http: {
    portSetting: 'HTTP_PORT', defaultPort: 3000, protocol: 'HTTP', label: 'JSON · HTTP/1.1 · fastify',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, alpn: 'http/1.1', hardened: true, streams: ALL_KINDS, probe: 'http',
    start: async (options) => (await import('./http.js')).startHttp(options),
  },
  'protobuf-h1': {
    portSetting: 'PROTOBUF_H1_PORT', defaultPort: 3002, protocol: 'HTTP protobuf', label: 'protobuf · HTTP/1.1 · fastify',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get', ownBody: 'protobuf' }, alpn: 'http/1.1', hardened: true, probe: null,
    start: async (options) => (await import('./http.js')).startHttp({ ...options, encoding: 'protobuf' }),
  },
  'json-h2': {
    portSetting: 'JSON_H2_PORT', defaultPort: 3001, protocol: 'HTTP/2 JSON', label: 'JSON · HTTP/2 (h2c) · fastify',
    transport: 'HTTP/2', load: { tool: 'h2load', request: 'get' }, alpn: 'h2', hardened: true, streams: ['server streaming', 'client streaming'], probe: null,
    start: async (options) => (await import('./http.js')).startHttp({ ...options, http2: true }),
  },
  grpc: {
    portSetting: 'GRPC_PORT', defaultPort: 4000, protocol: 'gRPC', label: 'protobuf · gRPC (HTTP/2) · grpc-js',
    transport: 'HTTP/2', load: { tool: 'h2load', request: 'grpc' }, alpn: 'h2', hardened: true, streams: ALL_KINDS, probe: 'grpc',
    start: async (options) => (await import('./grpc.js')).startGrpc(options),
  },
  'baseline-http': {
    portSetting: 'BASELINE_HTTP_PORT', defaultPort: 3003, protocol: 'baseline node:http',
    label: 'same JSON bytes · HTTP/1.1 · bare node:http',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, alpn: 'http/1.1', hardened: false, probe: null,
    start: async (options) => (await import('./baseline-http.js')).startBaselineHttp(options),
  },
  'baseline-grpc': {
    portSetting: 'BASELINE_GRPC_PORT', defaultPort: 4001, protocol: 'baseline node:http2 gRPC',
    label: 'same protobuf bytes · gRPC framing · bare node:http2',
    transport: 'HTTP/2', load: { tool: 'h2load', request: 'grpc' }, alpn: 'h2', hardened: false, probe: null,
    start: async (options) => (await import('./baseline-grpc.js')).startBaselineGrpc(options),
  },
  'peer-http': {
    portSetting: 'PEER_HTTP_PORT', defaultPort: 3005, protocol: 'peer fastify',
    label: 'same JSON · HTTP/1.1 · plain fastify app (peer)',
    // Streams as a fastify user writes them by hand: SSE on reply.raw, an NDJSON body, a \`ws\` relay (server/peer-http.js).
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, alpn: null, hardened: false, streams: ALL_KINDS, probe: null,
    start: async (options) => (await import('./peer-http.js')).startPeerHttp(options),
  },
  'peer-grpc': {
    portSetting: 'PEER_GRPC_PORT', defaultPort: 4005, protocol: 'peer grpc-js',
    label: 'same protobuf · gRPC (HTTP/2) · plain grpc-js, proto-loader (peer)',
    // Streams as grpc-node's route_guide example serves each kind (server/peer-grpc.js).
    transport: 'HTTP/2', load: { tool: 'h2load', request: 'grpc' }, alpn: null, hardened: false, streams: ALL_KINDS, probe: null,
    start: async (options) => (await import('./peer-grpc.js')).startPeerGrpc(options),
  },
  'connect-grpc': {
    portSetting: 'CONNECT_GRPC_PORT', defaultPort: 4002, protocol: 'connect-node gRPC', label: 'protobuf · gRPC (HTTP/2) · connect-node',
    transport: 'HTTP/2', load: { tool: 'h2load', request: 'grpc' }, alpn: 'h2', hardened: true, streams: ALL_KINDS, probe: 'grpc',
    start: async (options) => (await import('./connect.js')).startConnectGrpc(options),
  },
  'connect-json': {
    portSetting: 'CONNECT_JSON_PORT', defaultPort: 3004, protocol: 'connect-node Connect', label: 'JSON · Connect (HTTP/1.1) · connect-node',
    // The Connect protocol's bidirectional streams need HTTP/2 (its spec); server and client streams run on HTTP/1.1.
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'connect' }, alpn: 'http/1.1', hardened: true, streams: ['server streaming', 'client streaming'],
    probe: 'connect',
    start: async (options) => (await import('./connect.js')).startConnectJson(options),
  },
});

/** Names of every listener, in the registry's order. */
export const LISTENER_NAMES = Object.freeze(Object.keys(LISTENERS));

/**
 * Every listener's port setting with its default port, as the environment of a server would set them.
 * @param {(name: string, listener: Listener) => number} [portFor] the port to give each (default: its default port)
 * @returns {Record<string, string>} e.g. `{HTTP_PORT: '3000', GRPC_PORT: '4000', ...}`
 */
export const portEnv = (portFor = (name, l) => l.defaultPort) => Object.fromEntries(
  Object.entries(LISTENERS).map(([name, l]) => [l.portSetting, String(portFor(name, l))]),
);

/**
 * The listeners of a list that cannot serve an RPC: for a streaming RPC, those whose `streams` lack its kind.
 * @param {string[]} names listener names
 * @param {{kind: string}} rpc
 * @returns {string[]} [] when every one serves it
 */
export const streamlessListeners = (names, { kind }) => (kind === 'unary' ? [] : names.filter((n) => !LISTENERS[n].streams?.includes(kind)));
