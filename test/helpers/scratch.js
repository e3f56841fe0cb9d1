// A scratch copy of the repository, for tests that change the code (add a registry entry, say) and run it:
// the files git knows of (tracked, and new ones not ignored) as they stand in the work tree, node_modules linked.
import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './server.js';

/**
 * Copies the repository into a fresh folder in os.tmpdir(), removed with everything in it by the hook given.
 * @param {(fn: () => Promise<void>) => void} atEnd registers the removal, e.g. `(fn) => t.after(fn)` (from a before() hook, an
 *   after() runs when that hook ends: collect the removals and run them from a top-level after())
 * @returns {Promise<{dir: string, edit: (file: string, from: string, to: string) => Promise<void>}>} dir: the copy;
 *   edit: replaces the one occurrence of `from` in a file of the copy (relative path) by `to`
 * @throws {Error} from edit, when `from` does not occur exactly once (the code it was written against has changed)
 */
export async function scratchCopy(atEnd) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'scratch-'));
  atEnd(() => rm(dir, { recursive: true, force: true }));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0').filter(Boolean);
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await cp(path.join(ROOT, file), path.join(dir, file), { verbatimSymlinks: true }).catch((err) => {
      if (err.code !== 'ENOENT') throw err; // deleted in the work tree, not yet in the index
    });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const edit = async (file, from, to) => {
    const full = path.join(dir, file);
    const text = await readFile(full, 'utf8');
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`${file}: ${JSON.stringify(from)} occurs ${count} times, not once`);
    await writeFile(full, text.replace(from, to));
  };
  return { dir, edit };
}
