// When the client's ceiling cannot be measured for a column, and why (bench/passes/calibrate.js calibrationGap).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calibrationGap } from '../../bench/passes/calibrate.js';

const settings = { K6_INSTANCES: 1, CALIBRATE: '3s' };
const cores = { k6Cpus: '1', serverCpus: '0' };

test('a raw column on two cores with one k6 is calibrated; CALIBRATE=0, gzip, split k6 and one core say why not', () => {
  assert.equal(calibrationGap({ compression: 'off' }, settings, cores), null);
  assert.equal(calibrationGap({ compression: 'off' }, { ...settings, CALIBRATE: '0s' }, cores), 'CALIBRATE=0');
  assert.equal(calibrationGap({ compression: 'off' }, { ...settings, CALIBRATE: '0' }, cores), 'CALIBRATE=0');
  assert.match(calibrationGap({ compression: 'gzip' }, settings, cores), /bare listeners send no gzip/);
  assert.match(calibrationGap({ compression: 'off' }, { ...settings, K6_INSTANCES: 2 }, cores), /K6_INSTANCES > 1/);
  assert.match(calibrationGap({ compression: 'off' }, settings, {}), /one core/);
});
