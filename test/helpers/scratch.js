// A scratch copy of the repository, for tests that change the code (add a registry entry, say) and run it:
// the files git knows of (tracked, and new ones not ignored) as they stand in the work tree, node_modules linked.
// And a copy a user other than root can run, for tests that drop root (runnableBy).
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './server.js';

/**
 * Copies the files git knows of (tracked, and new ones not ignored), as they stand in the work tree, into a folder.
 * @param {string} dir an empty folder
 * @returns {Promise<void>}
 */
async function copyTree(dir) {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0').filter(Boolean);
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await cp(path.join(ROOT, file), path.join(dir, file), { verbatimSymlinks: true }).catch((err) => {
      if (err.code !== 'ENOENT') throw err; // deleted in the work tree, not yet in the index
    });
  }
}

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
  await copyTree(dir);
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

/**
 * Whether a user can run a Node binary and read some paths with it (setpriv, as the tests that drop root run it).
 * @param {{uid: number, gid: number}} user
 * @param {string} node the Node binary
 * @param {string[]} paths files or folders it must read (folders: and search)
 * @returns {boolean}
 */
function reaches({ uid, gid }, node, paths) {
  const check = 'const fs = require("node:fs"); for (const p of process.argv.slice(1)) fs.accessSync(p, fs.constants.R_OK | '
    + '(fs.statSync(p).isDirectory() ? fs.constants.X_OK : 0))';
  const res = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', node, '-e', check, ...paths], { stdio: 'ignore' });
  return res.status === 0;
}

/**
 * Where a user other than root can run the repository's code, for a test that drops root (setpriv): the repository
 * itself and this Node when the user can read and run them, else a copy in os.tmpdir() readable by all: the files
 * copyTree copies, node_modules (linked where the user can read it, else copied) and, where the user cannot run this
 * Node (a clone under /root, whose .tools/ holds it), the Node binary. A clone under /root (mode 700) is out of
 * every other user's reach, and so is what it holds. Needs root.
 * @param {{uid: number, gid: number}} user e.g. nobody, {uid: 65534, gid: 65534}
 * @param {(fn: () => Promise<void>) => void} atEnd registers the removal of the copy, e.g. `(fn) => t.after(fn)`
 * @returns {Promise<{dir: string, node: string}>} dir: the repository or its copy; node: the Node binary to run it with
 * @throws {Error} in one line, when the user cannot reach even the copy (os.tmpdir() out of its reach): says what to set
 */
export async function runnableBy(user, atEnd) {
  let node = await realpath(process.execPath);
  const modules = await realpath(path.join(ROOT, 'node_modules'));
  if (reaches(user, node, [path.join(ROOT, 'bench/cli.js'), modules])) return { dir: ROOT, node };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'runnable-'));
  atEnd(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755);
  if (!reaches(user, node, [])) {
    await mkdir(path.join(dir, '.node'), { mode: 0o755 });
    await cp(node, path.join(dir, '.node/node'));
    node = path.join(dir, '.node/node');
    await chmod(node, 0o755);
  }
  await copyTree(dir);
  if (reaches(user, node, [modules])) await symlink(modules, path.join(dir, 'node_modules'));
  else execFileSync('cp', ['-a', modules, path.join(dir, 'node_modules')]);
  // Files checked out under a umask of 077 are the owner's only: readable by all here, folders searchable.
  execFileSync('chmod', ['-R', 'a+rX', dir]);
  if (!reaches(user, node, [path.join(dir, 'bench/cli.js'), path.join(dir, 'node_modules/')])) {
    throw new Error(`user ${user.uid} cannot run a copy of the repository in ${os.tmpdir()} (${dir}): `
      + 'set TMPDIR to a folder every user can search, e.g. TMPDIR=/tmp');
  }
  return { dir, node };
}
