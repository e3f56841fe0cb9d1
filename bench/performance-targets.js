// The project's performance targets (issues 5 and 24), in one place: the least RPS ratio each pair must
// reach, measured with one server worker on one core and the load generator on another
// (npm run targets; DECOMPOSE=1 shows the first two too).

/** Least RPS ratio, by pair (numerator/denominator). */
export const PERFORMANCE_TARGETS = Object.freeze({
  /** the project's fastify listener, hardening and accounting on, over a plain fastify app with the same schema (issue 24) */
  'http/peer-http': 0.97,
  /** the project's grpc-js listener, hardening, interceptor and accounting on, over a plain grpc-js server (issue 24) */
  'grpc/peer-grpc': 0.97,
  /** fastify (JSON, HTTP/1.1) over bare node:http with the same body */
  'http/baseline-http': 0.9,
  /** grpc-js over bare node:http2 speaking gRPC framing with the same bytes */
  'grpc/baseline-grpc': 0.6,
  /** the project's k6 HTTP script over a minimal k6 HTTP script */
  'k6-http/k6-minimal-http': 0.95,
  /** the project's k6 gRPC script over a minimal k6 gRPC script */
  'k6-grpc/k6-minimal-grpc': 0.95,
  // Issue 48: each streaming twin over a minimal hand-written server of its kind (bench/commands/targets.js streamTarget).
  /** the grpc-js listener's server stream over route_guide's (call.write each message, then call.end) */
  'grpc/peer-grpc, server streaming': 0.95,
  /** the fastify twin's SSE over a hand-written fastify SSE route (reply.raw writes) */
  'http/peer-http, server streaming': 0.95,
  /** the grpc-js listener's client stream over route_guide's recordRoute pattern */
  'grpc/peer-grpc, client streaming': 0.95,
  /** the fastify twin's NDJSON client stream over a hand-written fastify NDJSON route */
  'http/peer-http, client streaming': 0.95,
  /** the grpc-js listener's relay over route_guide's routeChat pattern */
  'grpc/peer-grpc, bidirectional streaming': 0.95,
  /** the fastify twin's WebSocket relay over a `ws` WebSocketServer answering each text message */
  'http/peer-http, bidirectional streaming': 0.95,
});

/** What each target's ratio compares, for docs/decomposition.md's table of them (npm run docs). */
export const TARGET_TEXTS = Object.freeze({
  'http/peer-http': 'the project\'s fastify listener (hardening and accounting on) ÷ a plain fastify app with the same schema (issue 24), under wrk',
  'grpc/peer-grpc': 'the project\'s grpc-js listener (hardening, interceptor and accounting on) ÷ a plain grpc-js server (issue 24), under h2load `-m1` and `-c8 -m32`',
  'http/baseline-http': 'fastify (JSON, HTTP/1.1) ÷ bare node:http sending the same body, under wrk',
  'grpc/baseline-grpc': 'grpc-js ÷ bare node:http2 speaking gRPC framing with the same bytes, under h2load',
  'k6-http/k6-minimal-http': 'the project\'s k6 HTTP script ÷ a minimal k6 HTTP script (`bench/k6-minimal/`), side by side on k6\'s cores',
  'k6-grpc/k6-minimal-grpc': 'the project\'s k6 gRPC script ÷ a minimal k6 gRPC script, side by side on k6\'s cores',
  'grpc/peer-grpc, server streaming': 'a server stream (issue 48): the grpc-js listener ÷ a grpc-js handler as route_guide writes one (`call.write` each message, then `call.end`), under h2load `-m1` and `-c8 -m32`',
  'http/peer-http, server streaming': 'a server stream (issue 48): the fastify twin\'s SSE ÷ a hand-written fastify SSE route (`reply.raw` writes of `data: <json>\\n\\n`), under wrk',
  'grpc/peer-grpc, client streaming': 'a client stream: the grpc-js listener ÷ route_guide\'s recordRoute pattern (read on `data`, answer on `end`), under h2load',
  'http/peer-http, client streaming': 'a client stream: the fastify twin\'s NDJSON route ÷ a hand-written fastify route reading an NDJSON body, under wrk',
  'grpc/peer-grpc, bidirectional streaming': 'a relay: the grpc-js listener ÷ route_guide\'s routeChat pattern (`call.write` on each `data`), under h2load',
  'http/peer-http, bidirectional streaming': 'a relay (issue 48): the fastify twin\'s WebSocket ÷ a `ws` WebSocketServer answering each text message, under a ws client (bench/passes/relay-load.js)',
});
