// A sample the proto3 JSON mapping refuses is one line that names its field by its path from the sample's root, for
// every kind of value (proto/own/samples.js failingPath): the keys as the sample writes them, list indices and map keys.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadOwnService } from '../../proto/own/service.js';
import { ROOT } from '../../bench/root.js';
import { tempDir } from '../helpers/tmp.js';

const DIR = path.join(ROOT, 'test/fixtures/own/gateway');
const SETTINGS = { PROTO: path.join(DIR, 'query/v1/query.proto'), PROTO_PATH: DIR, RPC: 'query.v1.QueryService/Echo' };

test('a refused sample names the field by its path, whatever its kind', async (t) => {
  const dir = await tempDir(t, 'own-sample-errors-');
  const cases = [
    [{ stringValue: 'ok', bytesValue: 'a*b' }, /sample 1: bytesValue: invalid encoding$/],
    [{ nested: { nested: { bytes_value: '@@' } } }, /sample 1: nested\.nested\.bytes_value: invalid encoding$/],
    [{ timestampValue: 'yesterday' }, /sample 1: timestampValue: invalid timestamp: "yesterday"$/],
    [{ nested: { durationValue: '5' } }, /sample 1: nested\.durationValue: invalid duration: "5"$/],
    [{ fieldmaskValue: 'a_b' }, /sample 1: fieldmaskValue: field mask path must be lowerCamelCase: "a_b"$/],
    [{ repeatedEnum: ['X', 'W'] }, /sample 1: repeatedEnum\[1\]: unknown enum value: "W"$/],
    [{ int64Value: 'ten' }, /sample 1: int64Value: invalid integer: "ten"$/],
    [{ mapValue2: { a: 'x' } }, /sample 1: mapValue2\["a"\]: invalid integer: "x"$/],
    [{ nestedOneofValueOne: { nested: { int32Value: 1.5 } } }, /sample 1: nestedOneofValueOne\.nested\.int32Value: not an integer: 1\.5$/],
    [{ repeatedMessage: ['1', 'x'] }, /sample 1: repeatedMessage\[1\]: invalid integer: "x"$/],
    [{ nope: 1 }, /sample 1: nope: /],
  ];
  for (const [sample, message] of cases) {
    const file = path.join(dir, 'responses.json');
    writeFileSync(file, JSON.stringify([{}, sample]));
    assert.throws(() => loadOwnService({ ...SETTINGS, RESPONSE: file }), (err) => {
      assert.equal(err.name, 'OwnServiceError');
      assert.doesNotMatch(err.message, /\n/);
      assert.match(err.message, message, JSON.stringify(sample));
      return true;
    });
  }
});
