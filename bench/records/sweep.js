// What a sweep keeps of each measured run, and the modes it compares: bench/passes/sweep.js records them,
// bench/report/sweep.js builds the report from them.
/** The modes a sweep compares, baseline first: the ratio is the second's RPS over the first's. */
export const SWEEP_MODES = Object.freeze(['http', 'grpc']);

/**
 * One measured run, reduced to what the sweep keeps (from bench/records/summary.js figuresOf).
 * @param {import('./summary.js').ModeFigures & Record<string, any>} f
 * @returns {Record<string, number|string|null>}
 */
export function runRecord(f) {
  const per = (seconds) => (typeof seconds === 'number' && f.requests > 0 ? (seconds * 1e6) / f.requests : null);
  const proxyUs = per(f.run?.link?.counters?.proxy_cpu_s);
  return {
    rps: f.rps,
    p50_ms: f.latency_ms.p50,
    p99_ms: f.latency_ms.p99,
    requests: f.requests,
    failed: f.failed,
    received_per_request: f.received_per_request,
    sent_per_request: f.sent_per_request,
    link_down_per_request: f.link_down_per_request,
    link_up_per_request: f.link_up_per_request,
    link_down_packets_per_request: f.link_down_packets_per_request,
    link_up_packets_per_request: f.link_up_packets_per_request,
    server_cpu_us_per_request: f.server_cpu_us_per_request,
    proxy_cpu_us_per_request: proxyUs,
    // The server's cores hold toxiproxy too: the model's server ceiling counts both.
    server_us: f.server_cpu_us_per_request === null ? null : f.server_cpu_us_per_request + (proxyUs ?? 0),
    client_us: per(f.run?.k6_cpu?.seconds),
    k6_cpu_pct: f.k6_cpu_pct,
    limit_text: f.limit,
    summary: f.file,
  };
}
