// The sweep's heat maps (docs/sweep.md): per scenario and RTT, bandwidth across and concurrency up, colour = the
// gRPC/HTTP RPS ratio (blue: gRPC serves more; red: HTTP does), the 1.0 contour drawn and labelled; beside it the
// p99 ratio (measured cells only). Cells the sweep did not measure are the model's, drawn faded with the value in
// parentheses. Rendered offline by Vega-Lite as bench/report/chart.js does.
import * as vega from 'vega';
import { compile } from 'vega-lite';
import { formatRate } from '../settings/network.js';
import { shownRatio } from './sweep.js';

/** The contour's mark name: the SVG carries it as a class (`contour_marks`), which the tests look for. */
export const CONTOUR_NAME = 'contour';

/** The contour's label. */
export const CONTOUR_LABEL = 'gRPC = HTTP (1.0)';

/**
 * Where a row of ratios (ascending bandwidth, at indices 0..n-1) crosses 1, as fractional indices.
 * @param {Array<number|null>} ratios null: no cell there
 * @returns {number[]}
 */
export function rowCrossings(ratios) {
  const out = [];
  for (let i = 0; i + 1 < ratios.length; i++) {
    const [a, b] = [ratios[i], ratios[i + 1]];
    if (a === null || b === null) continue;
    const [la, lb] = [Math.log(a), Math.log(b)];
    if (la === 0 && i === 0) out.push(0);
    if ((la < 0 && lb >= 0) || (la > 0 && lb <= 0)) out.push(i + la / (la - lb));
  }
  return out;
}

/**
 * The 1.0 contour of a grid: in each row, a vertical stroke through the row's band at each crossing, joined to the
 * next row's stroke of the same order (so one crossing per row draws one line up the map).
 * @param {Array<Array<number|null>>} grid grid[row][column] ratio, rows by ascending concurrency
 * @returns {Array<{x: number, y: number, line: number, order: number}>} points in index space (cell centres are integers)
 */
export function contourPoints(grid) {
  const points = [];
  let order = 0;
  for (const [row, ratios] of grid.entries()) {
    for (const [k, x] of rowCrossings(ratios).entries()) {
      points.push({ x, y: row - 0.5, line: k, order: order++ }, { x, y: row + 0.5, line: k, order: order++ });
    }
  }
  return points;
}

function heatPanel({ title, field, values, xs, ys, contour, yTitle, domain, reverse = false }) {
  const index = (labels) => ({ values: labels.map((_, i) => i), labelExpr: `${JSON.stringify(labels)}[datum.value]` });
  const x = { type: 'quantitative', scale: { domain: [-0.5, xs.length - 0.5], nice: false, zero: false } };
  const y = { type: 'quantitative', scale: { domain: [-0.5, ys.length - 0.5], nice: false, zero: false } };
  /** @type {any[]} vega-lite layers (their type cannot follow the spreads; compile() checks them) */
  const layers = [
    {
      mark: { type: 'rect', stroke: 'white', strokeWidth: 1 },
      transform: [{ filter: `isValid(datum.${field})` }, { calculate: 'datum.xi - 0.5', as: 'x0' }, { calculate: 'datum.xi + 0.5', as: 'x1' },
        { calculate: 'datum.yi - 0.5', as: 'y0' }, { calculate: 'datum.yi + 0.5', as: 'y1' }],
      encoding: {
        x: { ...x, field: 'x0', title: 'bandwidth, both ways', axis: { ...index(xs.map(formatRate)), grid: false, labelAngle: -30 } },
        x2: { field: 'x1' },
        y: { ...y, field: 'y0', title: yTitle, axis: { ...index(ys.map(String)), grid: false } },
        y2: { field: 'y1' },
        color: {
          field, type: 'quantitative', title: 'gRPC ÷ HTTP',
          scale: { type: 'log', scheme: 'redblue', domain, domainMid: 1, reverse },
        },
        // Predicted cells faded (the subtitle says so): a value per cell, no scale.
        opacity: { field: 'opacity', type: 'quantitative', scale: null, legend: null },
      },
    },
    {
      mark: { type: 'text', fontSize: 10 },
      transform: [{ filter: `isValid(datum.${field})` }],
      encoding: {
        x: { ...x, field: 'xi' }, y: { ...y, field: 'yi' },
        text: { field: `${field}_label`, type: 'nominal' },
      },
    },
  ];
  if (contour.length) {
    layers.push({
      name: `${CONTOUR_NAME}_${field}`,
      data: { values: contour },
      mark: { type: 'line', color: 'black', strokeWidth: 2.5, interpolate: 'linear' },
      encoding: { x: { ...x, field: 'x' }, y: { ...y, field: 'y' }, detail: { field: 'line' }, order: { field: 'order' } },
    }, {
      data: { values: [contour.reduce((a, b) => (b.y > a.y ? b : a))] },
      mark: { type: 'text', align: 'left', dx: 4, dy: 8, fontWeight: 'bold', fontSize: 11 },
      encoding: { x: { ...x, field: 'x' }, y: { ...y, field: 'y' }, text: { value: CONTOUR_LABEL } },
    });
  }
  return { title, width: Math.max(160, 48 * xs.length), height: Math.max(90, 40 * ys.length), data: { values }, layer: layers };
}

/**
 * The SVG heat maps of one scenario at one RTT.
 * @param {object} report buildSweep's result
 * @param {string} scenario
 * @param {number} rttMs
 * @returns {Promise<string>} SVG markup
 */
export async function sweepMapSvg(report, scenario, rttMs) {
  const key = report.model === 'open' ? 'rate' : 'vus';
  const cells = [...report.cells, ...report.predicted].filter((c) => c.scenario === scenario && c.rtt_ms === rttMs);
  const xs = [...new Set(cells.map((c) => c.bandwidth_bps))].sort((a, b) => a - b);
  const ys = [...new Set(cells.map((c) => c[key]))].sort((a, b) => a - b);
  const fmt = (v, kind) => (kind === 'measured' ? v.toFixed(2) : `(${v.toFixed(2)})`);
  const values = cells.map((c) => {
    const ratio = shownRatio(c);
    const p99 = c.kind === 'measured' ? c.p99_ratio : null;
    return {
      xi: xs.indexOf(c.bandwidth_bps), yi: ys.indexOf(c[key]), kind: c.kind, opacity: c.kind === 'measured' ? 1 : 0.4,
      ratio, ratio_label: fmt(ratio, c.kind), p99, p99_label: p99 === null ? '' : fmt(p99, c.kind),
    };
  });
  const gridOf = (field) => ys.map((_, yi) => xs.map((__, xi) => values.find((v) => v.xi === xi && v.yi === yi)?.[field] ?? null));
  const span = (field) => {
    const all = values.map((v) => v[field]).filter((v) => typeof v === 'number' && v > 0);
    const m = Math.max(1.5, ...all.map((v) => Math.max(v, 1 / v)));
    return [1 / m, m];
  };
  const yTitle = key === 'vus' ? 'concurrent clients (VUs)' : 'offered rate (req/s)';
  const spec = {
    title: { text: `${scenario} at ${rttMs} ms RTT: gRPC ÷ HTTP`, subtitle: 'blue: gRPC serves more; red: HTTP/1.1 JSON does; '
      + 'faded, in parentheses: predicted by the model, not measured' },
    hconcat: [
      heatPanel({ title: 'RPS ratio', field: 'ratio', values, xs, ys, contour: contourPoints(gridOf('ratio')), yTitle, domain: span('ratio') }),
      // A shorter p99 is gRPC's gain: the scale is reversed, so blue still means gRPC does better.
      heatPanel({ title: 'p99 latency ratio (measured cells; below 1: gRPC\'s is shorter)', field: 'p99', values, xs, ys,
        contour: contourPoints(gridOf('p99')), yTitle, domain: span('p99'), reverse: true }),
    ],
    resolve: { scale: { color: 'independent' } },
  };
  const view = new vega.View(vega.parse(compile(/** @type {any} */ (spec)).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
