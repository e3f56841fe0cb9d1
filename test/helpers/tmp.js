// Temporary folders of the tests: each is removed by the test that made it, so that no run leaves
// anything in os.tmpdir().
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A fresh folder in os.tmpdir(), removed with everything in it when test `t` ends, passed or failed.
 * @param {import('node:test').TestContext} t the test that uses it
 * @param {string} prefix the folder's name before mkdtemp's six characters, e.g. 'compare-'
 * @returns {Promise<string>} its path
 */
export async function tempDir(t, prefix) {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
