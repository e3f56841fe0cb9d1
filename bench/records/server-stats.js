// The server's own accounting of a measured run: its admin endpoint (GET /metrics,
// server/admin.js) read right before and right after the run, the difference between the
// two readings kept in the summary's bench.run.server, and the report's figures made from it.
// bench/passes/scrape.js reads the endpoint; everything here is arithmetic on what it read.
import parsePrometheusText from 'parse-prometheus-text-format';
import { round } from '../format.js';

const MIB = 2 ** 20;

/**
 * @typedef {object} ProcessReading one process's accounting at one scrape
 * @property {number} pid
 * @property {Record<string, number>} served requests served since it started, by kind of
 *   handler (`http`, `grpc`); empty for the primary
 * @property {number} cpu_user_s user CPU time since its accounting started (s)
 * @property {number} cpu_system_s system CPU time since then (s)
 * @property {number} rss_bytes resident set size now (bytes)
 * @property {number} rss_peak_bytes largest RSS sampled since the previous scrape (bytes)
 * @property {number} heap_used_bytes V8 heap used now (bytes)
 * @property {number} heap_total_bytes V8 heap committed now: every space's size, used or not (bytes)
 * @property {number} heap_used_peak_bytes largest heap used sampled since the previous scrape (bytes)
 * @property {number} eventloop_p50_s median of the event-loop samples since the previous scrape,
 *   sampling interval included (s)
 * @property {number} eventloop_p99_s their 99th percentile (s)
 * @property {number} eventloop_resolution_s that sampling interval (s)
 * @property {number} gc_pause_s time in garbage collection since its accounting started (s)
 * @property {number} gc_runs garbage collections since then
 * @property {number} heap_allocated_bytes bytes allocated on its V8 heap since then (heap-used growth plus what each GC freed)
 * @property {string} [node] the Node release it runs on (`process.version`, prom-client's `nodejs_version_info`)
 * @property {Record<string, number>} [tls_handshakes] TLS handshakes completed since it started, by
 *   `<version>|<cipher>|<ALPN>|<resumed>` (server/tls.js); absent or empty without TLS
 * @property {Record<string, number>} [rejected] requests its handlers refused since it started, by `<listener>|<reason>`
 *   (server/served.js); absent until one is
 * @property {Record<string, number>} [stream_messages] messages of streams since it started, by `<listener>|<direction>`
 *   (`sent`, `received`; server/served.js); absent until a stream has one
 * @property {number} [streams_open] streams (server streams, relays) open at the scrape
 * @property {number} [streams_open_peak] most open at once since the previous scrape; both absent from a server without them
 */

/** @typedef {{at_ms: number, primary: ProcessReading|null, workers: ProcessReading[]}} ServerScrape */

/**
 * @typedef {object} WorkerWindow one worker's accounting over a measured window
 * @property {number} pid
 * @property {Record<string, number>} served requests served in the window, by kind of handler
 * @property {number} requests all of them
 * @property {number} cpu_user_s user CPU time in the window (s)
 * @property {number} cpu_system_s system CPU time in the window (s)
 * @property {number} gc_pause_ms time in garbage collection in the window (ms)
 * @property {number} gc_runs garbage collections in the window
 * @property {number} heap_allocated_bytes bytes allocated on its V8 heap in the window
 * @property {number} rss_peak_bytes largest RSS of the samples (every 100 ms) and the end reading (bytes)
 * @property {number} rss_end_bytes RSS at the end (bytes)
 * @property {number} heap_used_peak_bytes largest V8 heap used, sampled likewise (bytes)
 * @property {number} heap_used_end_bytes V8 heap used at the end (bytes)
 * @property {number} heap_total_end_bytes V8 heap committed at the end (bytes): what V8 holds for its spaces, used or
 *   not; RSS less this is the worker's memory outside the V8 heap
 * @property {number} eventloop_p50_ms median event-loop delay in the window, the sampling
 *   interval taken out (ms, at least 0)
 * @property {number} eventloop_p99_ms its 99th percentile (ms)
 * @property {boolean} started_in_window true for a worker forked during the window (a
 *   replacement), whose figures count from its start
 * @property {string|null} node the Node release it reported (e.g. `v24.21.0`; null: a server that does not say)
 * @property {Record<string, number>} tls_handshakes TLS handshakes it completed in the window, by
 *   `<version>|<cipher>|<ALPN>|<resumed>` ({} without TLS)
 * @property {Record<string, number>} [rejected] requests its handlers refused in the window, by `<listener>|<reason>`
 *   ({} when none; absent in a record written before it was counted)
 * @property {number} [rss_start_bytes] RSS at the start of the window (bytes): what the worker held before the run's
 *   streams opened (STREAMS=N: memory per open stream)
 * @property {number|null} [stream_messages_sent] messages its streams sent in the window, every listener's (server streams
 *   and relays' answers; null: a server that does not count them)
 * @property {number|null} [streams_open_peak] most streams it held open at once in the window (null: not counted)
 */

/**
 * @typedef {object} ServerWindow what the main job records in bench.run.server
 * @property {number} window_ms time between the two scrapes (ms)
 * @property {{pid: number, cpu_user_s: number, cpu_system_s: number}|null} primary the primary's
 *   CPU time in the window (s): it hands connections to the workers
 * @property {WorkerWindow[]} workers one per worker alive at the end
 * @property {number[]} workers_gone pids of workers alive at the start and gone at the end,
 *   whose work in the window is missing from the figures
 * @property {string|null} node the Node release the primary and the workers reported at the end, e.g. `v24.21.0`
 *   (`a | b` if they differ; null when none said): what the server really ran on
 */

// The metrics read, and where each goes in a ProcessReading: prom-client's own under their
// names, server/accounting.js's under server_; the primary's carry server_primary_ before either.
const LIBRARY = {
  process_cpu_user_seconds_total: 'cpu_user_s',
  process_cpu_system_seconds_total: 'cpu_system_s',
  process_resident_memory_bytes: 'rss_bytes',
  nodejs_heap_size_used_bytes: 'heap_used_bytes',
  nodejs_heap_size_total_bytes: 'heap_total_bytes',
  nodejs_eventloop_lag_p50_seconds: 'eventloop_p50_s',
  nodejs_eventloop_lag_p99_seconds: 'eventloop_p99_s',
};
const OWN = {
  resident_memory_peak_bytes: 'rss_peak_bytes',
  heap_used_peak_bytes: 'heap_used_peak_bytes',
  eventloop_resolution_seconds: 'eventloop_resolution_s',
  gc_pause_seconds_total: 'gc_pause_s',
  gc_runs_total: 'gc_runs',
  heap_allocated_bytes_total: 'heap_allocated_bytes',
  requests_served_total: 'served', // by its `handlers` label; workers only
  requests_rejected_total: 'rejected', // by its `listener` and `reason` labels, as `listener|reason`; workers only
  tls_handshakes_total: 'tls_handshakes', // by its four labels, as server/tls.js keys them; workers only
  stream_messages_total: 'stream_messages', // by its `listener` and `direction` labels, as `listener|direction`; workers only
  streams_open: 'streams_open', // workers only
  streams_open_peak: 'streams_open_peak', // workers only
};
/** Fields kept by label (a record, not a number), which a process may not have yet: none served, no TLS handshake. */
export const BY_LABEL = new Set(['served', 'tls_handshakes', 'rejected', 'stream_messages']);
/** Fields a server may lack, which the scrape does not insist on: those kept by label, and the open streams (workers only). */
export const OPTIONAL = new Set([...BY_LABEL, 'streams_open', 'streams_open_peak']);
// The labels of server_tls_handshakes_total, in the order of a tls_handshakes key (server/tls.js HANDSHAKE_LABELS).
const HANDSHAKE_KEY = ['version', 'cipher', 'alpn', 'resumed'];
const PRIMARY = 'server_primary_';
// prom-client's gauge of the process's Node release: its value is 1, the release is its `version` label.
const VERSION_INFO = 'nodejs_version_info';
/** @type {Map<string, {field: string, primary?: boolean}>} */
export const READ = new Map(/** @type {Array<[string, {field: string, primary?: boolean}]>} */ ([
  ...Object.entries(LIBRARY).flatMap(([name, field]) => [[name, { field }], [`${PRIMARY}${name}`, { field, primary: true }]]),
  ...Object.entries(OWN).flatMap(([name, field]) => [[`server_${name}`, { field }], [`${PRIMARY}${name}`, { field, primary: true }]]),
]));

/**
 * Reads the admin endpoint's text into one reading per process.
 * @param {string} text Prometheus text exposition of GET /metrics
 * @param {number} atMs when it was read (ms since the epoch)
 * @returns {ServerScrape}
 * @throws {Error} when the text is not Prometheus' text format
 */
export function parseScrape(text, atMs) {
  const workers = new Map();
  let primary = null;
  const readingOf = (pid, isPrimary) => {
    if (isPrimary) return (primary ??= /** @type {ProcessReading} */ ({ pid, served: {} }));
    if (!workers.has(pid)) workers.set(pid, { pid, served: {} });
    return workers.get(pid);
  };
  for (const family of parsePrometheusText(text)) {
    if (family.name === VERSION_INFO || family.name === `${PRIMARY}${VERSION_INFO}`) {
      for (const { labels = {} } of family.metrics) readingOf(Number(labels.pid), family.name !== VERSION_INFO).node = labels.version;
      continue;
    }
    const read = READ.get(family.name);
    if (!read) continue;
    for (const { labels = {}, value } of family.metrics) {
      const reading = readingOf(Number(labels.pid), read.primary);
      if (read.field === 'served') reading.served[labels.handlers] = Number(value);
      else if (read.field === 'tls_handshakes') (reading.tls_handshakes ??= {})[HANDSHAKE_KEY.map((l) => labels[l]).join('|')] = Number(value);
      else if (read.field === 'rejected') (reading.rejected ??= {})[`${labels.listener}|${labels.reason}`] = Number(value);
      else if (read.field === 'stream_messages') (reading.stream_messages ??= {})[`${labels.listener}|${labels.direction}`] = Number(value);
      else reading[read.field] = Number(value);
    }
  }
  return { at_ms: atMs, primary, workers: [...workers.values()] };
}


/**
 * What the server did between two scrapes: counters as differences, peaks and
 * event-loop percentiles as the end scrape gives them (they cover the time since the
 * previous scrape, the start one), levels at the end.
 * @param {ServerScrape} start read right before the measured run
 * @param {ServerScrape} end read right after it
 * @returns {ServerWindow}
 */
export function serverWindow(start, end) {
  const before = new Map(start.workers.map((w) => [w.pid, w]));
  const zero = { served: {}, cpu_user_s: 0, cpu_system_s: 0, gc_pause_s: 0, gc_runs: 0, heap_allocated_bytes: 0 };
  const delayMs = (seconds, w) => round(Math.max(0, seconds - w.eventloop_resolution_s) * 1000, 4);
  const workers = end.workers.map((w) => {
    const b = before.get(w.pid) ?? zero;
    const served = Object.fromEntries(Object.entries(w.served).map(([k, n]) => [k, n - (b.served[k] ?? 0)]));
    return {
      pid: w.pid,
      served,
      requests: Object.values(served).reduce((a, n) => a + n, 0),
      cpu_user_s: round(w.cpu_user_s - b.cpu_user_s, 6),
      cpu_system_s: round(w.cpu_system_s - b.cpu_system_s, 6),
      gc_pause_ms: round((w.gc_pause_s - b.gc_pause_s) * 1000, 4),
      gc_runs: w.gc_runs - b.gc_runs,
      heap_allocated_bytes: w.heap_allocated_bytes - b.heap_allocated_bytes,
      // The end reading is a sample of the window too, and is taken a moment apart from the peak's.
      rss_peak_bytes: Math.max(w.rss_peak_bytes, w.rss_bytes),
      rss_end_bytes: w.rss_bytes,
      heap_used_peak_bytes: Math.max(w.heap_used_peak_bytes, w.heap_used_bytes),
      heap_used_end_bytes: w.heap_used_bytes,
      heap_total_end_bytes: w.heap_total_bytes,
      eventloop_p50_ms: delayMs(w.eventloop_p50_s, w),
      eventloop_p99_ms: delayMs(w.eventloop_p99_s, w),
      started_in_window: !before.has(w.pid),
      node: w.node ?? null,
      tls_handshakes: Object.fromEntries(Object.entries(w.tls_handshakes ?? {})
        .map(([k, n]) => /** @type {[string, number]} */ ([k, n - (b.tls_handshakes?.[k] ?? 0)])).filter(([, n]) => n > 0)),
      rejected: Object.fromEntries(Object.entries(w.rejected ?? {})
        .map(([k, n]) => /** @type {[string, number]} */ ([k, n - (b.rejected?.[k] ?? 0)])).filter(([, n]) => n > 0)),
      rss_start_bytes: b.rss_bytes ?? null,
      stream_messages_sent: w.streams_open === undefined ? null : sentOf(w) - sentOf(b),
      // The end reading's peak covers the window since the start scrape; the start's open streams were open in it too.
      streams_open_peak: w.streams_open_peak === undefined ? null : Math.max(w.streams_open_peak, b.streams_open ?? 0),
    };
  });
  const primary = end.primary && start.primary?.pid === end.primary.pid ? {
    pid: end.primary.pid,
    cpu_user_s: round(end.primary.cpu_user_s - start.primary.cpu_user_s, 6),
    cpu_system_s: round(end.primary.cpu_system_s - start.primary.cpu_system_s, 6),
  } : null;
  const alive = new Set(end.workers.map((w) => w.pid));
  return {
    window_ms: end.at_ms - start.at_ms,
    primary,
    workers,
    workers_gone: start.workers.map((w) => w.pid).filter((pid) => !alive.has(pid)),
    node: releaseOf([end.primary?.node, ...workers.map((w) => w.node)]),
  };
}

/** Messages a process's streams sent since it started, every listener's. */
const sentOf = (reading) => Object.entries(reading.stream_messages ?? {}).reduce((a, [k, n]) => a + (k.endsWith('|sent') ? n : 0), 0);

/** The one Node release of several processes, `a | b` when they differ, null when none said. */
const releaseOf = (releases) => [...new Set(releases.filter(Boolean))].join(' | ') || null;

/**
 * @typedef {object} ServerFigures the report's figures of a ServerWindow (all null without one)
 * @property {number|null} server_requests requests the server's handlers served in the window
 * @property {number|null} server_requests_rejected requests its handlers refused in the window, every listener and
 *   reason (server/served.js); 0 when none
 * @property {string|null} server_rejected_by those by `<listener> <reason>: <count>`, the most first (null when none)
 * @property {number|null} server_cpu_us_per_request server CPU time (user + system, workers and
 *   primary) in the window / requests served in it (µs); null when none was served
 * @property {number|null} server_cpu_user_us_per_request the user part of it (µs)
 * @property {number|null} server_cpu_system_us_per_request the system part of it (µs)
 * @property {number|null} server_cpu_us_per_message with STREAMS, the server's CPU time in the window (workers and primary)
 *   ÷ the messages its streams sent in it (µs); else null: bench/records/summary.js works it out from k6's messages
 * @property {number|null} server_streams_open_peak with STREAMS: the most streams the workers held open at once in the
 *   window, by their own count (summed over the workers; null without STREAMS, as the two below)
 * @property {number|null} server_messages_per_s with STREAMS: the messages the server's streams sent in the window ÷ the
 *   time k6 held them (DURATION): k6 cannot count the messages of an SSE stream the run's end cut (its body never comes)
 * @property {number|null} server_memory_per_open_stream_kib with STREAMS: the workers' RSS peak in the window less their
 *   RSS at its start, before the run's streams opened, ÷ server_streams_open_peak (KiB)
 * @property {number|null} server_rss_peak_mib largest worker's RSS peak in the window (MiB)
 * @property {number|null} server_rss_end_mib largest worker's RSS at the end (MiB)
 * @property {number|null} server_heap_peak_mib largest worker's V8 heap-used peak in the window (MiB)
 * @property {number|null} server_heap_end_mib largest worker's V8 heap used at the end (MiB)
 * @property {number|null} server_eventloop_p50_ms the worst worker's median event-loop delay (ms)
 * @property {number|null} server_eventloop_p99_ms the worst worker's p99 event-loop delay (ms)
 * @property {number|null} server_gc_ms time all workers spent in GC in the window (ms)
 * @property {number|null} server_gc_ms_per_1k_requests server_gc_ms × 1000 / requests (ms)
 * @property {number|null} server_heap_allocated_bytes_per_request bytes all workers allocated on their V8 heaps in the
 *   window / requests (bytes)
 * @property {number|null} server_tls_handshakes_per_1k_requests TLS handshakes the workers completed in the window × 1000 /
 *   requests; null when none was made (cleartext, or every connection opened before the window)
 * @property {number|null} server_tls_resumed_pct share of those handshakes that resumed a session (%); null likewise
 * @property {string|null} server_tls what the handshakes negotiated, `<version> · <cipher> · ALPN <protocol>`, the most
 *   frequent first and the others after `; ` (null likewise)
 * @property {number|null} server_worker_share_min_pct smallest share of the requests one worker served (%)
 * @property {number|null} server_worker_share_max_pct largest such share (%)
 */

/**
 * The report's rows of the server's own figures (bench/report/rows.js puts them in ROWS, its registry of rows; Row there),
 * in table order: the largest or worst worker where per worker.
 * @type {ReadonlyArray<Readonly<{label: string, field: string, digits: number, how: 'median'|'sum', source: 'server',
 *   checkSpread?: boolean, what: string}>>}
 */
export const SERVER_ROWS = Object.freeze([
  { label: 'requests served, server count', field: 'server_requests', digits: 0, how: 'median', source: 'server',
    what: 'the server\'s own count of requests over the measured window, warm-up left out (should equal k6\'s `requests`)' },
  { label: 'requests rejected, server count', field: 'server_requests_rejected', digits: 0, how: 'median', source: 'server',
    what: 'requests the server\'s handlers refused in the window (`server_requests_rejected_total`), the notes naming the listeners and reasons' },
  { label: 'server CPU per request (µs)', field: 'server_cpu_us_per_request', digits: 1, how: 'median', source: 'server', checkSpread: true,
    what: 'CPU time (user + system) of the workers and the primary over the window / requests served' },
  { label: 'server user CPU per request (µs)', field: 'server_cpu_user_us_per_request', digits: 1, how: 'median', source: 'server',
    what: 'its user part' },
  { label: 'server system CPU per request (µs)', field: 'server_cpu_system_us_per_request', digits: 1, how: 'median', source: 'server',
    what: 'its system part' },
  { label: 'server CPU per message (µs)', field: 'server_cpu_us_per_message', digits: 1, how: 'median', source: 'server',
    what: 'a stream\'s run: server CPU per request ÷ the messages per stream k6 received or sent; with `STREAMS`, the server\'s CPU '
      + 'in the window ÷ the messages its streams sent in it, by its own count' },
  // STREAMS=N (docs/streaming.md, "Open streams"): what the server held, and what holding them cost it.
  { label: 'open streams, peak (server count)', field: 'server_streams_open_peak', digits: 0, how: 'median', source: 'server',
    what: 'with `STREAMS`: the most streams the server\'s workers held open at once in the window, counted as each opened' },
  { label: 'messages/s, server count', field: 'server_messages_per_s', digits: 0, how: 'median', source: 'server', checkSpread: true,
    what: 'with `STREAMS`: the messages the server\'s streams sent in the window ÷ DURATION, the time k6 held them; k6\'s own count misses '
      + 'the messages of SSE and NDJSON streams the run\'s end cut, whose bodies k6 never returns' },
  { label: 'memory per open stream (KiB)', field: 'server_memory_per_open_stream_kib', digits: 1, how: 'median', source: 'server',
    what: 'with `STREAMS`: the workers\' RSS peak in the window less their RSS at its start (before the run\'s streams opened) '
      + '÷ the peak of open streams' },
  { label: 'RSS peak, largest worker (MiB)', field: 'server_rss_peak_mib', digits: 1, how: 'median', source: 'server',
    what: 'RSS peak of the largest worker in the window, sampled every 100 ms' },
  { label: 'RSS at end, largest worker (MiB)', field: 'server_rss_end_mib', digits: 1, how: 'median', source: 'server',
    what: 'RSS of the largest worker at the end of the window' },
  { label: 'heap used peak, largest worker (MiB)', field: 'server_heap_peak_mib', digits: 1, how: 'median', source: 'server',
    what: 'V8 heap-used peak of the largest worker in the window, sampled every 100 ms' },
  { label: 'heap used at end, largest worker (MiB)', field: 'server_heap_end_mib', digits: 1, how: 'median', source: 'server',
    what: 'V8 heap used by the largest worker at the end of the window' },
  { label: 'event-loop delay p50, worst worker (ms)', field: 'server_eventloop_p50_ms', digits: 2, how: 'median', source: 'server',
    what: 'median event-loop delay of the worst worker over the window (`monitorEventLoopDelay`, less its 10 ms sampling interval)' },
  { label: 'event-loop delay p99, worst worker (ms)', field: 'server_eventloop_p99_ms', digits: 2, how: 'median', source: 'server',
    what: '99th percentile of the same' },
  { label: 'GC pause in window, all workers (ms)', field: 'server_gc_ms', digits: 1, how: 'median', source: 'server',
    what: 'garbage-collection pauses in the window, summed over the workers, from `perf_hooks` GC entries' },
  { label: 'GC pause per 1000 requests (ms)', field: 'server_gc_ms_per_1k_requests', digits: 2, how: 'median', source: 'server',
    what: 'the same per 1000 requests served' },
  { label: 'bytes allocated on the V8 heap per request', field: 'server_heap_allocated_bytes_per_request', digits: 0, how: 'median', source: 'server',
    what: 'bytes the workers allocated on their V8 heaps in the window (`v8.GCProfiler`) ÷ requests served: the garbage each request makes' },
  // TLS=1 (docs/tls.md): the servers' own count of handshakes, one per new TLS connection.
  { label: 'TLS handshakes per 1000 requests, server count', field: 'server_tls_handshakes_per_1k_requests', digits: 2, how: 'median', source: 'server',
    what: 'with `TLS=1`: TLS handshakes the workers completed in the window × 1000 ÷ requests served, about 1000 × (VUs + 1) ÷ requests '
      + 'with reused connections and 1000 with `CONNECTIONS=per-request`' },
  { label: 'TLS handshakes resumed (%)', field: 'server_tls_resumed_pct', digits: 1, how: 'median', source: 'server',
    what: 'the share of those handshakes that resumed an earlier session (a TLS 1.3 ticket, a 1.2 session id or ticket)' },
  { label: 'requests per worker, smallest share (%)', field: 'server_worker_share_min_pct', digits: 1, how: 'median', source: 'server',
    what: 'smallest share of the window\'s requests one worker served: how evenly the cluster spread the load' },
  { label: 'requests per worker, largest share (%)', field: 'server_worker_share_max_pct', digits: 1, how: 'median', source: 'server',
    what: 'largest such share' },
]);

/** Names of the figures serverFigures gives: its rows' fields, and the TLS parameters the notes give (`server_tls`). */
export const SERVER_FIELDS = Object.freeze(SERVER_ROWS.flatMap(({ field }) => (field === 'server_tls_resumed_pct' ? [field, 'server_tls']
  : field === 'server_requests_rejected' ? [field, 'server_rejected_by'] : [field])));

/**
 * The report's figures of one measured window.
 * @param {ServerWindow|undefined} window bench.run.server of a summary, if the run recorded one
 * @param {{held_s: number}} [open] bench.run.open_streams of a STREAMS run: the open streams' figures, and the CPU per
 *   message from the server's own count of messages
 * @returns {ServerFigures}
 */
export function serverFigures(window, open) {
  const workers = window?.workers ?? [];
  if (workers.length === 0) {
    return /** @type {ServerFigures} */ (Object.fromEntries(SERVER_FIELDS.map((f) => [f, null])));
  }
  // A figure some worker's reading lacks (a server whose admin endpoint left a metric out; NaN, recorded in JSON, reads
  // back as null) is null, never a sum or maximum of the others, nor NaN.
  const known = (values) => (values.every((v) => typeof v === 'number' && Number.isFinite(v)) ? values : null);
  const sum = (pick) => known(workers.map(pick))?.reduce((a, n) => a + n, 0) ?? null;
  const most = (pick) => { const values = known(workers.map(pick)); return values ? Math.max(...values) : null; };
  const scaled = (v, factor) => (v === null ? null : v * factor);
  const requests = sum((w) => w.requests);
  const perRequest = (total) => (requests > 0 && total !== null ? total / requests : null);
  const primary = (field) => window.primary?.[field] ?? 0;
  const userWorkers = sum((w) => w.cpu_user_s);
  const systemWorkers = sum((w) => w.cpu_system_s);
  const user = userWorkers === null ? null : userWorkers + primary('cpu_user_s');
  const system = systemWorkers === null ? null : systemWorkers + primary('cpu_system_s');
  const gcMs = sum((w) => w.gc_pause_ms);
  const shares = workers.map((w) => (requests > 0 ? (w.requests / requests) * 100 : null));
  const tls = handshakesOf(workers);
  const rejected = rejectedOf(workers);
  return {
    server_requests: requests,
    server_requests_rejected: rejected.total,
    server_rejected_by: rejected.by,
    server_cpu_us_per_request: perRequest(user === null || system === null ? null : (user + system) * 1e6),
    server_cpu_user_us_per_request: perRequest(scaled(user, 1e6)),
    server_cpu_system_us_per_request: perRequest(scaled(system, 1e6)),
    ...openStreamFigures(workers, open, user === null || system === null ? null : user + system),
    server_rss_peak_mib: scaled(most((w) => w.rss_peak_bytes), 1 / MIB),
    server_rss_end_mib: scaled(most((w) => w.rss_end_bytes), 1 / MIB),
    server_heap_peak_mib: scaled(most((w) => w.heap_used_peak_bytes), 1 / MIB),
    server_heap_end_mib: scaled(most((w) => w.heap_used_end_bytes), 1 / MIB),
    server_eventloop_p50_ms: most((w) => w.eventloop_p50_ms),
    server_eventloop_p99_ms: most((w) => w.eventloop_p99_ms),
    server_gc_ms: gcMs,
    server_gc_ms_per_1k_requests: perRequest(scaled(gcMs, 1000)),
    server_heap_allocated_bytes_per_request: perRequest(sum((w) => w.heap_allocated_bytes)),
    server_tls_handshakes_per_1k_requests: tls.total > 0 ? perRequest(tls.total * 1000) : null,
    server_tls_resumed_pct: tls.total > 0 ? (tls.resumed / tls.total) * 100 : null,
    server_tls: tls.total > 0 ? tls.negotiated : null,
    server_worker_share_min_pct: requests > 0 ? Math.min(...shares) : null,
    server_worker_share_max_pct: requests > 0 ? Math.max(...shares) : null,
  };
}

/**
 * A STREAMS run's figures from the server's own counts: its peak of open streams, the messages its streams sent, the RSS
 * the streams took and the CPU per message; all null without STREAMS (the CPU per message then comes from k6's messages,
 * in bench/records/summary.js).
 * @param {WorkerWindow[]} workers
 * @param {{held_s: number}|undefined} open bench.run.open_streams
 * @param {number|null} cpuS the server's CPU time in the window, workers and primary (s)
 * @returns {Pick<ServerFigures, 'server_cpu_us_per_message'|'server_streams_open_peak'|'server_messages_per_s'|'server_memory_per_open_stream_kib'>}
 */
function openStreamFigures(workers, open, cpuS) {
  // A figure a worker's reading lacks (a server that does not count it) is null, never the others' sum.
  const sum = (pick) => {
    const values = workers.map(pick);
    return values.every((v) => typeof v === 'number' && Number.isFinite(v)) ? values.reduce((a, v) => a + v, 0) : null;
  };
  const peak = open ? sum((w) => w.streams_open_peak) : null;
  const sent = open ? sum((w) => w.stream_messages_sent) : null;
  const growth = open ? sum((w) => w.rss_peak_bytes - w.rss_start_bytes) : null;
  return {
    server_cpu_us_per_message: cpuS !== null && sent > 0 ? (cpuS * 1e6) / sent : null,
    server_streams_open_peak: peak,
    // Over the time k6 held them: k6's test run duration adds setup()'s one stream, seconds long when paced.
    server_messages_per_s: sent !== null && open.held_s > 0 ? sent / open.held_s : null,
    server_memory_per_open_stream_kib: growth !== null && peak > 0 ? growth / peak / 1024 : null,
  };
}

/**
 * The workers' refused requests in a window, added up.
 * @param {Array<{rejected?: Record<string, number>}>} workers
 * @returns {{total: number, by: string|null}} by: `<listener> <reason>: <count>`, the most first, joined by `; `
 */
function rejectedOf(workers) {
  const by = new Map();
  for (const [key, n] of workers.flatMap((w) => Object.entries(w.rejected ?? {}))) by.set(key, (by.get(key) ?? 0) + n);
  const total = [...by.values()].reduce((a, n) => a + n, 0);
  return { total, by: total ? [...by].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k.replace('|', ' ')}: ${n}`).join('; ') : null };
}

/**
 * The workers' TLS handshakes in a window, added up.
 * @param {Array<{tls_handshakes?: Record<string, number>}>} workers
 * @returns {{total: number, resumed: number, negotiated: string}} negotiated: `<version> · <cipher> · ALPN <protocol>` per
 *   kind, the most frequent first, joined by `; ` (resumption left out: it has its own figure)
 */
function handshakesOf(workers) {
  const kinds = new Map();
  let total = 0;
  let resumed = 0;
  for (const [key, n] of workers.flatMap((w) => Object.entries(w.tls_handshakes ?? {}))) {
    const [version, cipher, alpn, reused] = key.split('|');
    total += n;
    if (reused === 'true') resumed += n;
    const kind = `${version} · ${cipher} · ALPN ${alpn}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + n);
  }
  return { total, resumed, negotiated: [...kinds].sort((a, b) => b[1] - a[1]).map(([kind]) => kind).join('; ') };
}

/**
 * One window of several servers (replicas behind a balancer) measured over the same run: workers
 * of all of them, each tagged with its replica (1-based), and their primaries' CPU summed.
 * @param {ServerWindow[]} windows one per replica, in order
 * @returns {ServerWindow & {replicas?: Array<{requests: number}>}} the one window itself when there is one
 */
export function combineWindows(windows) {
  if (windows.length === 1) return windows[0];
  const primaries = windows.map((w) => w.primary);
  return {
    window_ms: Math.max(...windows.map((w) => w.window_ms)),
    primary: primaries.every(Boolean) ? {
      pid: primaries[0].pid,
      cpu_user_s: round(primaries.reduce((a, p) => a + p.cpu_user_s, 0), 6),
      cpu_system_s: round(primaries.reduce((a, p) => a + p.cpu_system_s, 0), 6),
    } : null,
    workers: windows.flatMap((w, i) => w.workers.map((worker) => ({ ...worker, replica: i + 1 }))),
    workers_gone: windows.flatMap((w) => w.workers_gone),
    replicas: windows.map((w) => ({ requests: w.workers.reduce((a, worker) => a + worker.requests, 0) })),
    node: releaseOf(windows.flatMap((w) => (w.node ?? '').split(' | '))),
  };
}
