// The built-in own services: real-world schemas and samples shipped with the project, run by name
// (SCENARIO=otlp-traces, ...) exactly as a user's own would be with PROTO, PROTO_PATH, RPC, REQUEST and RESPONSE
// (docs/own-message.md). Plain data with no imports: paths are relative to proto/.

/**
 * @typedef {object} BuiltInService
 * @property {string} description what it is, for the docs and the SCENARIO setting
 * @property {string} proto the .proto file
 * @property {string[]} protoPath its import directories
 * @property {string} rpc `package.Service/Method`
 * @property {string|null} request the request samples (null: the empty message)
 * @property {string|null} response the response samples (null: the empty message)
 */

/** The OTLP export of each kind, as opentelemetry-proto ships its schema. */
const OTLP = {
  traces: { proto: 'otlp/opentelemetry/proto/collector/trace/v1/trace_service.proto', rpc: 'opentelemetry.proto.collector.trace.v1.TraceService/Export', items: 'spans' },
  logs: { proto: 'otlp/opentelemetry/proto/collector/logs/v1/logs_service.proto', rpc: 'opentelemetry.proto.collector.logs.v1.LogsService/Export', items: 'log records' },
  metrics: { proto: 'otlp/opentelemetry/proto/collector/metrics/v1/metrics_service.proto', rpc: 'opentelemetry.proto.collector.metrics.v1.MetricsService/Export', items: 'histogram data points' },
};

/**
 * The OTLP exports as SDKs send them: one request of n items, 1, 64 or 512 (the batch processors' default
 * maxExportBatchSize), from one service's resource and two instrumentation scopes (proto/otlp/batches, made by
 * scripts/otlp-batches.js); an empty response.
 * @type {Record<string, BuiltInService>}
 */
const OTLP_BATCHES = Object.fromEntries(Object.entries(OTLP).flatMap(([kind, { proto, rpc, items }]) => [1, 64, 512].map((n) => [`otlp-${kind}-${n}`, {
  description: `OTLP ${kind} export as an SDK batches it: ${n} ${n === 1 ? items.replace(/s( |$)/, '$1') : items} a request, an empty response`,
  proto, protoPath: ['otlp'], rpc, request: `otlp/batches/${kind}-${n}.json`, response: null,
}])));

/** @type {Readonly<Record<string, Readonly<BuiltInService>>>} */
export const BUILT_IN_SERVICES = Object.freeze({
  // OTLP export: what an OpenTelemetry SDK sends a collector, over OTLP/gRPC (port 4317) or OTLP/HTTP (4318, protobuf or
  // JSON). The requests are opentelemetry-proto's examples (ids converted to base64, proto/otlp/SOURCE.md); a collector
  // answers an empty Export*ServiceResponse when it accepts everything.
  'otlp-traces': {
    description: 'OTLP trace export (opentelemetry-proto\'s example request; an empty response)',
    proto: 'otlp/opentelemetry/proto/collector/trace/v1/trace_service.proto',
    protoPath: ['otlp'],
    rpc: 'opentelemetry.proto.collector.trace.v1.TraceService/Export',
    request: 'otlp/examples/traces.json',
    response: null,
  },
  'otlp-metrics': {
    description: 'OTLP metrics export (opentelemetry-proto\'s example request; an empty response)',
    proto: 'otlp/opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
    protoPath: ['otlp'],
    rpc: 'opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    request: 'otlp/examples/metrics.json',
    response: null,
  },
  'otlp-logs': {
    description: 'OTLP logs export (opentelemetry-proto\'s example request; an empty response)',
    proto: 'otlp/opentelemetry/proto/collector/logs/v1/logs_service.proto',
    protoPath: ['otlp'],
    rpc: 'opentelemetry.proto.collector.logs.v1.LogsService/Export',
    request: 'otlp/examples/logs.json',
    response: null,
  },
  // A response-heavy RPC: a page of 50 products per answer (proto/examples/catalog, made by scripts/catalog-examples.js).
  catalog: {
    description: 'a product catalog\'s ListProducts: small requests, pages of 50 products (about 22 kB of JSON) in answer',
    proto: 'examples/catalog/v1/catalog.proto',
    protoPath: ['.'],
    rpc: 'examples.catalog.v1.CatalogService/ListProducts',
    request: 'examples/catalog/requests.json',
    response: 'examples/catalog/responses.ndjson',
  },
  ...OTLP_BATCHES,
  // A server stream: an LLM's answer token by token, as Google's Gemini API streams it over gRPC and, with ?alt=sse, over
  // REST (proto/gemini/SOURCE.md; the samples made by scripts/gemini-samples.js).
  'gemini-stream': {
    description: 'Gemini\'s StreamGenerateContent: a prompt in, the answer streamed back a few tokens a chunk (11 to 60 chunks)',
    proto: 'gemini/google/ai/generativelanguage/v1/generative_service.proto',
    protoPath: ['gemini'],
    rpc: 'google.ai.generativelanguage.v1.GenerativeService/StreamGenerateContent',
    request: 'gemini/examples/requests.json',
    response: 'gemini/examples/responses.ndjson',
  },
  // The demo's own server stream, user.v1.UserService/StreamUsers: the 100 Users of users-100, one message each (the
  // samples made by scripts/users-stream-samples.js from proto/payload.js USERS_STREAM).
  'users-stream': {
    description: 'the demo\'s StreamUsers: a server stream of the 100 Users of users-100, one message each',
    proto: 'user.proto',
    protoPath: ['.'],
    rpc: 'user.v1.UserService/StreamUsers',
    request: 'examples/users-stream/requests.json',
    response: 'examples/users-stream/responses.json',
  },
});
