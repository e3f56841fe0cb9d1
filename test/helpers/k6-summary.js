// A k6 summary as the project's scripts write it (handleSummary), for the tests of what reads one.

/**
 * A summary of 10 s and 1,000 HTTP requests at 32 VUs, every one answered in 25 ms (median), 71 kB sent and 289 kB received.
 * @param {object} bench the summary's `bench` (mode, target, host, model; the job's `run`, if any)
 * @returns {object}
 */
export const k6Summary = (bench) => ({
  state: { testRunDurationMs: 10000 },
  setup_data: { mode: 'http', sampleBytes: 117 },
  bench,
  metrics: {
    http_reqs: { values: { count: 1000 } },
    http_req_failed: { values: { passes: 0 } },
    http_req_duration: { values: { med: 25, 'p(90)': 30, 'p(95)': 31, 'p(99)': 40 } },
    data_sent: { values: { count: 71000 } },
    data_received: { values: { count: 289000 } },
    vus_max: { values: { max: 32 } },
  },
});
