import assert from 'node:assert/strict';
import test from 'node:test';
import { ALONE, SLOWEST, allTestFiles, phases } from '../suite.js';

test('every file npm test runs alone or first is a test file that exists (the lists cannot drift from the tree)', () => {
  const files = allTestFiles();
  for (const f of [...Object.keys(ALONE), ...SLOWEST]) assert.ok(files.includes(f), f);
  assert.ok(files.some((f) => f.startsWith('test/unit/')) && files.some((f) => f.startsWith('test/integration/')));
});

test('the phases hold every file once: the ALONE ones apart, the slowest first, the rest in their order', () => {
  const files = allTestFiles();
  const { together, alone } = phases(files);
  assert.deepEqual([...together, ...alone].sort(), [...files].sort());
  assert.deepEqual(alone, files.filter((f) => f in ALONE));
  const slowest = SLOWEST.filter((f) => !(f in ALONE));
  assert.deepEqual(together.slice(0, slowest.length), slowest);
  const rest = together.slice(slowest.length);
  assert.deepEqual(rest, files.filter((f) => !(f in ALONE) && !SLOWEST.includes(f)));
});
