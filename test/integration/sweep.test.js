// npm run sweep end to end: a 2 × 1 × 1 sweep (two bandwidths, one RTT, one concurrency, short cells) over real
// emulated links, with real servers and k6; its JSON, the heat map's 1.0 contour, the verdict, and --link answered
// from the sweep (measured and predicted). Needs root for ip netns and tc (CI runs as root). It runs alone in npm test
// (test/suite.js ALONE); the sweep's tests that read no timing are in sweep-own.test.js, which runs beside others.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { CONTOUR_LABEL, CONTOUR_NAME } from '../../bench/report/sweep-map.js';
import { sweep, skipUnlessRoot } from '../helpers/sweep.js';
import { tempDir } from '../helpers/tmp.js';

const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (err) { return err.code === 'EPERM'; } };
/** Link namespaces whose job has ended (other sessions' running jobs have theirs: jvgb-<pid>-<n>). */
const orphans = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n')
  .map((l) => /^jvgb-(\d+)-\d+/.exec(l)).filter((m) => m && !alive(Number(m[1]))).map((m) => m[0]);

test('a 2 × 1 × 1 sweep: both modes per cell, the model beside, the contour on the map, the verdict, and --link', { skip: skipUnlessRoot, timeout: 300000 }, async (t) => {
  const dir = await tempDir(t, 'sweep-');
  // 2 Mbit/s is bandwidth-bound at 32 VUs and 20 ms (docs/network.md: gRPC 1.74× HTTP); 200 Mbit/s is not.
  const env = { SWEEP_BANDWIDTH: '2mbit,200mbit', SWEEP_RTT: '20ms', SWEEP_VUS: '32', DURATION: '2s', WARMUP: '1s', RESULTS_DIR: dir };
  const result = await sweep(env);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(orphans(), [], 'the sweep left a namespace behind');
  // One progress line per cell, with the time left.
  const progress = result.stderr.split('\n').filter((l) => /^\[\d\/2\] user · .* · 32 VUs · .* elapsed · about \d+m\d\ds left$/.test(l));
  assert.equal(progress.length, 2, result.stderr);

  const files = await readdir(dir);
  const json = files.find((f) => /^sweep-.*\.json$/.test(f));
  assert.ok(json, `no sweep JSON in ${files.join(', ')}`);
  assert.ok(files.includes(json.replace(/\.json$/, '.md')));
  const report = JSON.parse(await readFile(path.join(dir, json), 'utf8'));
  assert.match(report.provenance.commit ?? '', /^[0-9a-f]{40}$|^$/);
  assert.equal(report.cells.length, 2);
  for (const cell of report.cells) {
    assert.equal(cell.kind, 'measured');
    assert.equal(cell.rtt_ms, 20);
    assert.equal(cell.vus, 32);
    assert.equal(cell.scenario, 'user');
    for (const mode of ['http', 'grpc']) {
      const m = cell.modes[mode];
      assert.ok(m.rps > 0 && m.predicted_rps > 0, `${mode} at ${cell.bandwidth_bps}: ${m.rps} / ${m.predicted_rps}`);
      assert.ok(m.link_down_per_request > 0 && m.link_down_packets_per_request > 0);
      assert.ok(m.server_cpu_us_per_request > 0 && m.client_us > 0);
      assert.equal(m.failed, 0);
      assert.equal(typeof m.limit, 'string');
    }
    assert.ok(Math.abs(cell.ratio - cell.modes.grpc.rps / cell.modes.http.rps) < 1e-9);
    assert.ok(cell.predicted_ratio > 0);
    // flagged: null, or why, with a cause; and it agrees with the 15% rule on each mode's RPS.
    const off = ['http', 'grpc'].some((m) => Math.abs(cell.modes[m].rps / cell.modes[m].predicted_rps - 1) > 0.15)
      || Math.abs(cell.ratio / cell.predicted_ratio - 1) > 0.15;
    assert.equal(cell.flagged !== null, off, JSON.stringify(cell.flagged));
    if (cell.flagged) assert.ok(cell.flagged.likely_causes.length > 0);
  }
  const [thin, wide] = report.cells;
  assert.equal(thin.bandwidth_bps, 2e6);
  // At 2 Mbit/s bytes decide: gRPC's smaller responses buy it more requests, and the model says so too. The measured
  // ratio of 2 s runs is noisy (1.175 in one CI run of 2026-11-25, 1.74 in docs/network.md's 8 s runs): its direction
  // is what this checks; how far it goes is the benchmark's (docs/sweep.md).
  assert.ok(thin.ratio > 1, `ratio at 2 Mbit/s ${thin.ratio}`);
  assert.ok(thin.predicted_ratio > 1.2, `predicted ratio at 2 Mbit/s ${thin.predicted_ratio}`);
  assert.equal(thin.modes.http.limit, 'bandwidth');
  assert.ok(wide.ratio < thin.ratio);
  // Past what the machine emulates, the map is predicted: 10 Gbit/s, 300 ms, 10,000 VUs.
  assert.ok(report.predicted.some((c) => c.bandwidth_bps === 1e10 && c.rtt_ms === 300 && c.vus === 10000 && c.kind === 'predicted'));

  // The heat map of 20 ms: the 1.0 contour drawn and labelled (gRPC wins at 2 Mbit/s, loses where the server's CPU decides).
  const svg = await readFile(report.maps.find((m) => m.endsWith('-user-20ms.svg')), 'utf8');
  assert.match(svg, new RegExp(`class="mark-line role-mark ${CONTOUR_NAME}_ratio_marks"`));
  assert.ok(svg.includes(CONTOUR_LABEL));
  assert.ok(svg.includes('p99 latency ratio'), 'the p99 panel beside the RPS one');
  assert.ok(report.maps.some((m) => m.endsWith('-user-300ms.svg')));

  // The verdict of the measured row.
  const verdict = report.verdicts.find((v) => v.rtt_ms === 20 && v.vus === 32);
  assert.ok(verdict.measured);
  assert.match(verdict.line, /^at 20 ms with 32 concurrent clients, gRPC serves more requests below about [0-9.]+ [MG]bit\/s \(bandwidth\); /);
  const markdown = await readFile(path.join(dir, json.replace(/\.json$/, '.md')), 'utf8');
  assert.ok(markdown.includes(verdict.line));
  assert.match(markdown, /Largest disagreement of measured and predicted: (http|grpc) at /);

  // --link: the measured cell when there is one, the model's otherwise; each says which.
  const measured = await sweep({ RESULTS_DIR: dir }, ['--link', '2mbit/20ms', '--vus', '32']);
  assert.equal(measured.code, 0, measured.stderr);
  assert.match(measured.stdout, /^user at 2 Mbit\/s and 20 ms with 32 concurrent clients: measured, gRPC\/HTTP RPS [0-9.]+: gRPC serves more/m);
  const predicted = await sweep({ RESULTS_DIR: dir }, ['--link', '20mbit/60ms', '--vus', '64']);
  assert.equal(predicted.code, 0, predicted.stderr);
  assert.match(predicted.stdout, /^user at 20 Mbit\/s and 60 ms with 64 concurrent clients: predicted \(no measured cell there/m);
  const bad = await sweep({ RESULTS_DIR: dir }, ['--link', '20mb/60ms', '--vus', '64']);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);

  // --render: the same measured runs give the same cells again, with the measurement's provenance and the rendering's commit.
  const rendered = await sweep({ RESULTS_DIR: dir }, ['--render', path.join(dir, json)]);
  assert.equal(rendered.code, 0, rendered.stderr);
  const again = JSON.parse(await readFile(path.join(dir, json.replace(/\.json$/, '-rendered.json')), 'utf8'));
  assert.deepEqual(again.provenance, report.provenance);
  assert.match(again.rendered.commit, /^[0-9a-f]{40}$/);
  assert.deepEqual(again.cells.map((c) => [c.ratio, c.predicted_ratio]), report.cells.map((c) => [c.ratio, c.predicted_ratio]));
  assert.match(rendered.stdout, /^Rendered again from the measured runs \(`npm run sweep -- --render`\) at commit [0-9a-f]{40}, /m);
  assert.ok(again.maps.length === report.maps.length && again.maps.every((m) => m.includes('-rendered-')));
  const notSweep = await sweep({ RESULTS_DIR: dir }, ['--render', path.join(dir, 'nothing.json')]);
  assert.equal(notSweep.code, 1);
  assert.match(notSweep.stderr.trim(), /^[^\n]*cannot read the sweep .*nothing\.json: ENOENT$/);
});
