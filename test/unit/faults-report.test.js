// The fault matrix's report names the cells that ran past FAULT_DURATION (bench/report/faults.js), from synthetic cells.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { overranCells, renderFaults } from '../../bench/report/faults.js';

/** A cell as bench/passes/faults.js records it, with only what the report reads. */
const cellOf = (fault, mode, elapsedS, ended) => ({
  fault, mode, completed: 1000, failed: 0, timed_out: 0, p99_ms: 5, rss_before_mib: 100, rss_peak_mib: 120, rss_end_mib: 110,
  worker_rss_peak_mib: 60, worker_memory_mb: 512, refused_answers: 0, recycled: 0, multiplexed: null, observed: {},
  elapsed_s: elapsedS, ended_s: ended,
});
const settings = { FAULTS: ['none', 'idle-connections'], FAULT_DURATION: '12s', WORKERS: 2, VUS: 32, REQUEST_TIMEOUT: '10s',
  WORKER_MEMORY_MB: 512, TLS: true };

test('a cell that ran past FAULT_DURATION by more than the margin is named, with how far and what ended last', () => {
  const cells = [
    cellOf('none', 'http', 13.4, { k6: 13.4, fault: 1.0 }), // k6's start-up and summary: within the margin
    cellOf('idle-connections', 'http', 15, { k6: 13.5, fault: 15 }), // exactly 3 s past (12 s × 25%): not past it
    cellOf('idle-connections', 'grpc', 24.3, { k6: 13.6, fault: 24.3, ghz: 13.1 }), // twice the duration
    { ...cellOf('none', 'grpc', undefined), elapsed_s: undefined, ended_s: undefined }, // a report from before elapsed_s
  ];
  assert.deepEqual(overranCells(cells, '12s'), [{ fault: 'idle-connections', mode: 'grpc', elapsed_s: 24.3, over_s: 12.3, last: 'fault' }]);
  // The margin is the larger of 3 s and a quarter of the duration: 15 s past a 60 s run is not named, 15.1 s is; past 8 s, 3 s.
  assert.deepEqual(overranCells([cellOf('none', 'http', 75, null), cellOf('none', 'grpc', 75.1, null)], '1m').map((c) => [c.mode, c.last]),
    [['grpc', null]]);
  assert.deepEqual(overranCells([cellOf('none', 'http', 11, null), cellOf('none', 'grpc', 11.1, null)], '8s').map((c) => c.mode), ['grpc']);

  const markdown = renderFaults({ cells, settings, pinning: 'server on cpu 0' }, { none: 'no fault', 'idle-connections': 'idle' });
  const lines = markdown.split('\n').filter((l) => l.startsWith('**Ran past'));
  assert.equal(lines.length, 1, markdown);
  assert.match(lines[0], /^\*\*Ran past FAULT_DURATION \(12s\):\*\* `idle-connections` · .+ took 24\.3 s, 12\.3 s past it \(the fault ended last\)\./);
  assert.doesNotMatch(lines[0], /`none`|took 15 s/);
  // No overrun, no note.
  assert.doesNotMatch(renderFaults({ cells: cells.slice(0, 2), settings, pinning: 'x' }, {}), /Ran past/);
});

test('a FAULT_DURATION that is no k6 duration is one line', () => {
  assert.throws(() => overranCells([], 'twelve'), { message: 'must be a k6 duration such as 20s, 1m or 1m30s' });
});
