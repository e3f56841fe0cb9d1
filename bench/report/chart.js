// The report's chart: RPS, p99 latency and bytes per request per mode, as SVG,
// rendered offline by Vega-Lite (no browser, no network). Bars are medians;
// the rules on RPS and p99 span the min-max of the repeated runs.
import * as vega from 'vega';
import { compile } from 'vega-lite';

const PANEL = { width: 160, height: 180 };

function panel(title, field, order) {
  const x = { field: 'mode', type: 'nominal', title: null, sort: order };
  return {
    ...PANEL,
    title,
    layer: [
      { mark: 'bar', encoding: { x, y: { field, type: 'quantitative', title }, color: { field: 'mode', type: 'nominal', legend: null, sort: order } } },
      { mark: { type: 'rule', strokeWidth: 2, color: 'black' }, encoding: { x, y: { field: `${field}_min`, type: 'quantitative' }, y2: { field: `${field}_max` } } },
    ],
  };
}

/**
 * An SVG chart of one scenario's report.
 * @param {{scenario: string, order: string[], modes: Record<string, object>}} report from buildReport
 * @returns {Promise<string>} SVG markup
 */
export async function chartSvg(report) {
  const values = report.order.map((key) => {
    const m = report.modes[key];
    return {
      mode: key,
      rps: m.rps, rps_min: m.spread.rps?.min, rps_max: m.spread.rps?.max,
      p99: m.latency_ms.p99, p99_min: m.spread['latency_ms.p99']?.min, p99_max: m.spread['latency_ms.p99']?.max,
      received: m.received_per_request,
      sent: m.sent_per_request,
    };
  });
  const spec = {
    title: `Scenario ${report.scenario}: medians of ${report.modes[report.order[0]].repeats} run(s), min-max as rules`,
    data: { values },
    resolve: { scale: { color: 'independent' } },
    hconcat: [
      panel('RPS (req/s)', 'rps', report.order),
      panel('latency p99 (ms)', 'p99', report.order),
      {
        ...PANEL,
        title: 'bytes per request',
        transform: [{ fold: ['received', 'sent'], as: ['direction', 'bytes'] }],
        mark: 'bar',
        encoding: {
          x: { field: 'mode', type: 'nominal', title: null, sort: report.order },
          xOffset: { field: 'direction' },
          y: { field: 'bytes', type: 'quantitative', title: 'bytes per request' },
          color: { field: 'direction', type: 'nominal', title: 'direction' },
        },
      },
    ],
  };
  // vega-lite's TopLevelSpec type cannot follow a spec built with spreads; compile() checks it at run time.
  const view = new vega.View(vega.parse(compile(/** @type {any} */ (spec)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
