// What the k6 scripts and the jobs' settings both know of the scripts' -e settings, in a module that imports
// nothing, so that k6 (k6/common.js) and Node (bench/settings/) read the same text: the duration syntax, the
// default request timeout and the connection policies.

/** k6's duration syntax (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#duration), e.g. 30s, 1m30s, 500ms. */
export const K6_DURATION = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;

/**
 * How long one request may take when REQUEST_TIMEOUT is not given: k6's own default for HTTP and gRPC
 * requests (https://grafana.com/docs/k6/latest/javascript-api/k6-http/params/,
 * https://grafana.com/docs/k6/latest/javascript-api/k6-net-grpc/params/), so the scripts pass nothing.
 */
export const DEFAULT_REQUEST_TIMEOUT = '60s';

/**
 * The k6 sub-metric that counts HTTP requests ended by their timeout: k6 tags every request's
 * `http_reqs` sample with `error_code`, 1050 for a request timeout
 * (https://grafana.com/docs/k6/latest/javascript-api/error-codes/).
 */
export const HTTP_TIMED_OUT = 'http_reqs{error_code:1050}';

/**
 * The system tags the scripts keep (k6's `systemTags` option,
 * https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#system-tags): only `error_code`, which
 * HTTP_TIMED_OUT reads. k6 builds every enabled tag on every request, and the summaries read no other: the default set
 * cost 2-3% of k6's CPU per HTTP request here (docs/profiling.md). `--system-tags` on k6's command line overrides it,
 * for an output of one's own that wants them.
 */
export const SYSTEM_TAGS = Object.freeze(['error_code']);

/** The connection policies (CONNECTIONS): `reuse` one connection per VU, or a new one `per-request`. */
export const CONNECTION_POLICIES = Object.freeze(['reuse', 'per-request']);

/**
 * The metrics the scripts add for a streaming RPC (-e STREAM), read back by bench/records/summary.js: a server stream's
 * messages received (a Counter) and the time from the start of the call to its first message (a Trend, ms); a client
 * stream's messages sent (a Counter); a relay's both, and, over WebSocket, the sessions that failed (a Counter); where a
 * script sees each message arrive (gRPC, WebSocket: not k6's HTTP client, which returns a body whole), each stream's largest
 * gap between two messages (a Trend, ms, one sample a stream of two or more messages). The time
 * to the last message, or to the answer, is k6's own request duration: http_req_duration, which ends with the body's
 * last byte, and grpc_req_duration, which k6 records for a stream as for a unary call, from its start to its end; a
 * WebSocket relay's is k6's ws_session_duration, from the connection's start to its close. With STREAMS=N
 * (k6/open-streams.js), the gRPC script's streams opened (a Counter: the calls, as an iteration is one otherwise) and every
 * script's streams the run's end cut (a Counter: not failures).
 */
export const STREAM_METRICS = Object.freeze({
  messages: 'stream_messages', firstMessage: 'stream_first_message', sent: 'stream_messages_sent', failed: 'stream_sessions_failed',
  largestGap: 'stream_largest_gap', opened: 'streams_opened', cut: 'streams_cut',
});

/**
 * How an HTTP script asks for a server stream (-e STREAM_FRAMING, the job's setting): `sse`, Server-Sent Events
 * (`Accept: text/event-stream`, an event a message), or `ndjson`, newline-delimited JSON (`Accept: application/x-ndjson`,
 * a line a message); the first is the default. Each with the content type the server answers it with (server/http.js).
 */
export const STREAM_FRAMINGS = Object.freeze({ sse: 'text/event-stream', ndjson: 'application/x-ndjson' });

/** The values of -e STREAM, by the RPC's kind: the job sets it for a streaming RPC (bench/own-service.js). */
export const STREAM_KINDS = Object.freeze({ 'server streaming': 'server', 'client streaming': 'client', 'bidirectional streaming': 'bidi' });
