// When the client's ceiling cannot be measured for a column, and why (bench/passes/calibrate.js calibrationGap).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calibrationGap } from '../../bench/passes/calibrate.js';
import { readBenchSettings } from '../../bench/settings/bench.js';

const settings = { K6_INSTANCES: 1, CALIBRATE: '3s' };
const cores = { k6Cpus: '1', serverCpus: '0' };

test('a raw column on two cores with one k6 is calibrated; CALIBRATE=0, no bare listener, gzip, split k6 and one core say why not', () => {
  assert.equal(calibrationGap({ compression: 'off', bare: 'baseline-http' }, settings, cores), null);
  assert.match(calibrationGap({ compression: 'off' }, settings, cores), /names no bare listener/);
  assert.equal(calibrationGap({ bare: 'baseline-http', compression: 'off' }, { ...settings, CALIBRATE: '0s' }, cores), 'CALIBRATE=0');
  assert.equal(calibrationGap({ bare: 'baseline-http', compression: 'off' }, { ...settings, CALIBRATE: '0' }, cores), 'CALIBRATE=0');
  assert.match(calibrationGap({ bare: 'baseline-http', compression: 'gzip' }, settings, cores), /bare listeners send no gzip/);
  assert.match(calibrationGap({ bare: 'baseline-http', compression: 'off' }, { ...settings, K6_INSTANCES: 2 }, cores), /K6_INSTANCES > 1/);
  assert.match(calibrationGap({ bare: 'baseline-http', compression: 'off' }, settings, {}), /one core/);
});

test('CALIBRATE=0, as the docs write it, is read as 0s (skipped); a word is refused in one line', () => {
  assert.equal(readBenchSettings({ CALIBRATE: '0' }).CALIBRATE, '0s');
  assert.equal(readBenchSettings({ CALIBRATE: '5s' }).CALIBRATE, '5s');
  assert.throws(() => readBenchSettings({ CALIBRATE: 'x' }), /^BenchError: invalid setting CALIBRATE="x": must be a k6 duration/);
});

