// The project's performance targets (issue 5), in one place: the least RPS ratio each pair must
// reach, measured with one server worker on one core and the load generator on another
// (npm run targets; DECOMPOSE=1 shows the first two too).

/** Least RPS ratio, by pair (numerator/denominator). */
export const PERFORMANCE_TARGETS = Object.freeze({
  /** fastify (JSON, HTTP/1.1) over bare node:http with the same body */
  'http/baseline-http': 0.9,
  /** grpc-js over bare node:http2 speaking gRPC framing with the same bytes */
  'grpc/baseline-grpc': 0.6,
  /** the project's k6 HTTP script over a minimal k6 HTTP script */
  'k6-http/k6-minimal-http': 0.95,
  /** the project's k6 gRPC script over a minimal k6 gRPC script */
  'k6-grpc/k6-minimal-grpc': 0.95,
});
