// End-of-test output shared by the four scripts: k6's metrics as text on stdout,
// and the whole summary as JSON in results/ for `npm run compare`.

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB'];

function bytes(n) {
  let i = 0;
  while (n >= 1000 && i < BYTE_UNITS.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${BYTE_UNITS[i]}`;
}

function ms(n) {
  return n >= 1000 ? `${(n / 1000).toFixed(2)}s` : `${n.toFixed(2)}ms`;
}

function formatMetric(metric, trendStats) {
  const v = metric.values;
  const value = metric.contains === 'data' ? bytes : metric.contains === 'time' ? ms : (n) => `${+n.toFixed(2)}`;
  switch (metric.type) {
    case 'counter': return `${value(v.count)}  ${value(v.rate)}/s`;
    case 'rate': return `${(v.rate * 100).toFixed(2)}%  ${v.passes} out of ${v.passes + v.fails}`;
    case 'gauge': return `${value(v.value)}  min=${value(v.min)} max=${value(v.max)}`;
    default: return trendStats.filter((stat) => stat in v)
      .map((stat) => `${stat}=${stat === 'count' ? v[stat] : value(v[stat])}`).join(' ');
  }
}

/**
 * k6's end-of-test metrics as plain text, one line a metric, sorted by name
 * (k6 prints no summary of its own once `handleSummary` exists).
 * @param {object} data the summary object k6 passes to `handleSummary`
 * @param {string} title first line
 * @returns {string}
 */
export function textSummary(data, title) {
  const names = Object.keys(data.metrics).sort();
  const width = Math.max(...names.map((n) => n.length)) + 3;
  const lines = names.map((name) => `  ${name.padEnd(width, '.')}: ${formatMetric(data.metrics[name], data.options.summaryTrendStats)}`);
  return `\n  ${title}\n\n${lines.join('\n')}\n\n`;
}

/**
 * The `handleSummary` of a script: prints the text summary and writes the JSON
 * summary, with `bench` added (mode, target, host), to `SUMMARY_FILE` or
 * `results/k6-<mode>-<target>-<time>.json`. The file's folder must exist.
 * @param {{mode: string, target: 'local'|'remote', host: string}} run
 * @param {(data: any) => any} [derive] the metrics the script derives at the end from k6's (the gRPC script's
 *   grpc_req_failed), applied before both outputs
 * @returns {(data: object) => Record<string, string>}
 */
export function summaryHandler(run, derive = (data) => data) {
  return (raw) => {
    const data = derive(raw);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = __ENV.SUMMARY_FILE || `results/k6-${run.mode}-${run.target}-${stamp}.json`;
    const out = { ...data, bench: { ...run, summaryFile: file } };
    // setup() returns the sampled payload; without it the run was aborted and there is nothing to compare.
    if (data.setup_data === undefined) {
      return { stdout: textSummary(data, `${run.mode} · ${run.target} · ${run.host} · aborted, no summary file written`) };
    }
    const title = `${run.mode} · ${run.target} · ${run.host} · summary: ${file}`;
    return { stdout: textSummary(data, title), [file]: JSON.stringify(out, null, 2) };
  };
}
