// Writes the built-in OTLP scenarios' batches (proto/own/builtins.js `otlp-<kind>-<n>`): one Export request each, of 1,
// 64 and 512 spans, log records or metric data points, the sizes an OpenTelemetry SDK's batch processor exports (512
// is its default maxExportBatchSize; 64 a batch a busy service fills between exports). Made up but plausible: one
// service's resource (service, SDK, host, process and Kubernetes attributes, as the SDKs' resource detectors fill
// them), two instrumentation scopes (an HTTP server's and a PostgreSQL client's), and per item the attributes those
// instrumentations set under OpenTelemetry's semantic conventions. Deterministic (a seeded generator), so rerunning
// this rewrites the committed files byte for byte (test/unit/otlp-batches.test.js):
//
//   node scripts/otlp-batches.js [out-dir]      (default: proto/otlp/batches)
//
// Each file is one request in the proto3 JSON mapping, as the project reads samples: ids in base64 (the mapping's
// bytes), 64-bit integers as strings, enums by name.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32 } from '../bench/report/stats.js';

/** The batch sizes shipped. */
export const BATCH_SIZES = Object.freeze([1, 64, 512]);
/** The kinds of export, each with its request's top-level field. */
/** @type {ReadonlyArray<'traces'|'logs'|'metrics'>} */
export const KINDS = Object.freeze(['traces', 'logs', 'metrics']);

/** 2026-11-28T09:00:00Z in ns, the batches' clock. */
const T0 = 1795856400n * 1_000_000_000n;
const ROUTES = ['/api/users/{id}', '/api/orders', '/api/orders/{id}', '/api/cart', '/api/products', '/api/products/{id}/reviews', '/healthz'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const QUERIES = ['SELECT * FROM users WHERE id = $1', 'SELECT id, total FROM orders WHERE user_id = $1 ORDER BY created_at DESC LIMIT 20',
  'INSERT INTO orders (user_id, total) VALUES ($1, $2) RETURNING id', 'UPDATE carts SET items = $2 WHERE id = $1',
  'SELECT p.id, p.name, p.price FROM products p WHERE p.category = $1'];
const MESSAGES = ['request completed', 'cache miss for product {id}', 'retrying upstream call after timeout', 'order placed',
  'payment authorised', 'slow query detected', 'user session refreshed'];

const str = (key, value) => ({ key, value: { stringValue: value } });
const int = (key, value) => ({ key, value: { intValue: String(value) } });

/** The one service every batch comes from, as the SDKs' resource detectors describe it. */
const RESOURCE = Object.freeze({
  attributes: [str('service.name', 'checkout'), str('service.version', '2.14.1'), str('service.namespace', 'shop'),
    str('deployment.environment.name', 'production'), str('telemetry.sdk.name', 'opentelemetry'), str('telemetry.sdk.language', 'nodejs'),
    str('telemetry.sdk.version', '2.2.0'), str('host.name', 'checkout-7d9f8b6c5-x2k4p'), str('host.arch', 'amd64'),
    str('os.type', 'linux'), int('process.pid', 1), str('process.runtime.name', 'nodejs'), str('process.runtime.version', '24.11.1'),
    str('k8s.namespace.name', 'shop'), str('k8s.pod.name', 'checkout-7d9f8b6c5-x2k4p'), str('k8s.deployment.name', 'checkout'),
    str('cloud.provider', 'gcp'), str('cloud.region', 'europe-west1')],
});
const HTTP_SCOPE = Object.freeze({ name: '@opentelemetry/instrumentation-http', version: '0.208.0' });
const DB_SCOPE = Object.freeze({ name: '@opentelemetry/instrumentation-pg', version: '0.60.0' });

/**
 * One Export request of a kind, with n items.
 * @param {'traces'|'logs'|'metrics'} kind
 * @param {number} n spans, log records or metric data points
 * @returns {object} the request in the proto3 JSON mapping
 */
export function exportRequest(kind, n) {
  const random = mulberry32(0x07e1 + n + KINDS.indexOf(kind) * 1000);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const bytes = (length) => Buffer.from(Array.from({ length }, () => Math.floor(random() * 256))).toString('base64');
  // Items alternate between the HTTP server's scope (two thirds) and the database client's, as a request and its query.
  const items = Array.from({ length: n }, (_, i) => {
    const db = i % 3 === 2;
    const start = T0 + BigInt(i) * 7_000_000n + BigInt(Math.floor(random() * 5_000_000));
    const durationNs = BigInt(Math.floor((db ? 0.4 : 2) * 1e6 + random() * (db ? 8e6 : 120e6)));
    const method = pick(METHODS);
    const route = pick(ROUTES);
    const status = random() < 0.04 ? 500 : random() < 0.08 ? 404 : method === 'POST' ? 201 : 200;
    return { db, start, end: start + durationNs, method, route, status, traceId: bytes(16), spanId: bytes(8), query: pick(QUERIES), message: pick(MESSAGES) };
  });
  const scoped = (build) => [HTTP_SCOPE, DB_SCOPE]
    .map((scope) => ({ scope, items: items.filter((item) => item.db === (scope === DB_SCOPE)).map(build) }))
    .filter((s) => s.items.length);
  const httpAttributes = (item) => [str('http.request.method', item.method), str('url.path', item.route.replace('{id}', String(1000 + (Number(item.start % 9000n))))),
    str('http.route', item.route), int('http.response.status_code', item.status), str('url.scheme', 'https'),
    str('server.address', 'checkout.shop.svc.cluster.local'), int('server.port', 8080), str('network.protocol.version', '1.1'),
    str('user_agent.original', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36')];
  const dbAttributes = (item) => [str('db.system.name', 'postgresql'), str('db.namespace', 'shop'), str('db.query.text', item.query),
    str('db.operation.name', item.query.split(' ')[0]), str('server.address', 'postgres.shop.svc.cluster.local'), int('server.port', 5432)];
  if (kind === 'traces') {
    return {
      resourceSpans: [{
        resource: RESOURCE,
        scopeSpans: scoped((item) => ({
          traceId: item.traceId, spanId: item.spanId,
          name: item.db ? `${item.query.split(' ')[0]} shop` : `${item.method} ${item.route}`,
          kind: item.db ? 'SPAN_KIND_CLIENT' : 'SPAN_KIND_SERVER',
          startTimeUnixNano: String(item.start), endTimeUnixNano: String(item.end),
          attributes: item.db ? dbAttributes(item) : httpAttributes(item),
          ...(item.status >= 500 && !item.db ? { status: { code: 'STATUS_CODE_ERROR' } } : {}),
        })).map(({ scope, items: spans }) => ({ scope, spans, schemaUrl: 'https://opentelemetry.io/schemas/1.37.0' })),
        schemaUrl: 'https://opentelemetry.io/schemas/1.37.0',
      }],
    };
  }
  if (kind === 'logs') {
    const severity = (item) => (item.status >= 500 ? ['SEVERITY_NUMBER_ERROR', 'ERROR'] : item.status >= 400 ? ['SEVERITY_NUMBER_WARN', 'WARN']
      : ['SEVERITY_NUMBER_INFO', 'INFO']);
    return {
      resourceLogs: [{
        resource: RESOURCE,
        scopeLogs: scoped((item) => ({
          timeUnixNano: String(item.end), observedTimeUnixNano: String(item.end + 150_000n),
          severityNumber: severity(item)[0], severityText: severity(item)[1],
          body: { stringValue: item.db ? `query took ${(Number(item.end - item.start) / 1e6).toFixed(3)} ms` : item.message },
          attributes: item.db ? dbAttributes(item).slice(0, 3) : httpAttributes(item).slice(0, 4),
          traceId: item.traceId, spanId: item.spanId, flags: 1,
        })).map(({ scope, items: logRecords }) => ({ scope, logRecords })),
      }],
    };
  }
  // Metrics: the HTTP server's request-duration histogram per route, method and status, and the client's query
  // durations, each data point a histogram over the SDK's default export interval (60 s).
  const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
  const point = (item) => {
    const count = 1 + Math.floor(random() * 400);
    const counts = BOUNDS.map(() => 0).concat([0]);
    let sum = 0;
    for (let k = 0; k < count; k++) {
      const seconds = Number(item.end - item.start) / 1e9 * (0.2 + random() * 1.6);
      sum += seconds;
      const bucket = BOUNDS.findIndex((b) => seconds <= b);
      counts[bucket < 0 ? BOUNDS.length : bucket]++;
    }
    return {
      attributes: item.db ? dbAttributes(item).filter((a) => a.key !== 'db.query.text') : httpAttributes(item).slice(0, 4),
      startTimeUnixNano: String(T0), timeUnixNano: String(T0 + 60_000_000_000n), count: String(count), sum: Number(sum.toFixed(6)),
      bucketCounts: counts.map(String), explicitBounds: BOUNDS, min: Number((sum / count / 2).toFixed(6)), max: Number((2 * sum / count).toFixed(6)),
    };
  };
  return {
    resourceMetrics: [{
      resource: RESOURCE,
      scopeMetrics: scoped(point).map(({ scope, items: dataPoints }) => ({
        scope,
        metrics: [{
          name: scope === DB_SCOPE ? 'db.client.operation.duration' : 'http.server.request.duration', unit: 's',
          description: scope === DB_SCOPE ? 'Duration of database client operations.' : 'Duration of HTTP server requests.',
          histogram: { dataPoints, aggregationTemporality: 'AGGREGATION_TEMPORALITY_CUMULATIVE' },
        }],
      })),
    }],
  };
}

/** The file of a kind's batch of n, relative to proto/. */
export const batchFile = (kind, n) => `otlp/batches/${kind}-${n}.json`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../proto/otlp/batches'));
  mkdirSync(out, { recursive: true });
  for (const kind of KINDS) {
    for (const n of BATCH_SIZES) writeFileSync(path.join(out, `${kind}-${n}.json`), `${JSON.stringify(exportRequest(kind, n))}\n`);
  }
  console.log(`wrote ${KINDS.length * BATCH_SIZES.length} batches to ${out}`);
}
