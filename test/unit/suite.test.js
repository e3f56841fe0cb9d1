import assert from 'node:assert/strict';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { ALONE, SLOWEST, allTestFiles, phases, waitForFile } from '../suite.js';

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

test('TEST_ALONE_AFTER\'s wait: true at once for a file that exists, false once the time is up for one that never appears', async () => {
  assert.equal(await waitForFile(fileURLToPath(import.meta.url), 0), true);
  const started = Date.now();
  assert.equal(await waitForFile('/nonexistent/test-alone-after', 50), false);
  assert.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
});
