// Every file that runs in k6's runtime is linted with k6's globals, type-checked against k6's API by `npm run lint`, and
// kept out of the Docker build context: eslint.config.js, k6/tsconfig.json and .dockerignore are held against the one
// list of those files, K6_SOURCES (bench/k6/scripts.js), whose entry folders come from the mode registry. A mode with
// scripts of its own that a list misses fails here, naming the file.
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { ENTRY_DIRS, K6_SOURCES } from '../../bench/k6/scripts.js';
import { MODES } from '../../bench/modes.js';
import { ROOT } from '../../bench/root.js';

/** Every file that runs in k6's runtime, repository-relative, sorted. */
const K6_FILES = globSync([...K6_SOURCES], { cwd: ROOT }).sort();

test('the k6 sources hold every mode\'s scripts and minimal script', () => {
  assert.deepEqual(ENTRY_DIRS, ['http-tests', 'grpc-tests', 'connect-json-tests']);
  for (const { scripts, minimalScript } of Object.values(MODES)) {
    for (const file of [scripts.local, scripts.remote, minimalScript]) assert.ok(K6_FILES.includes(file), `${file} is not a k6 source`);
  }
});

test('eslint.config.js lints every k6 source with k6\'s globals', async () => {
  const eslint = new ESLint({ cwd: ROOT });
  const without = [];
  for (const file of K6_FILES) {
    const { languageOptions } = await eslint.calculateConfigForFile(path.join(ROOT, file));
    if (['__ENV', '__VU', '__ITER', 'open'].some((name) => languageOptions.globals?.[name] !== 'readonly')) without.push(file);
  }
  assert.deepEqual(without, [], 'linted without k6\'s globals');
});

test('npm run lint type-checks every k6 source against k6\'s API, and no other file by name', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  assert.match(pkg.scripts.lint, /&& tsc -p k6\/tsconfig\.json\b/);
  assert.ok(pkg.devDependencies['@types/k6'], '@types/k6 is a dev dependency');
  // TypeScript's own reading of the file: its include globs expanded as tsc expands them (what the scripts import is
  // checked too, but is not named here).
  const { config, error } = ts.readConfigFile(path.join(ROOT, 'k6/tsconfig.json'), ts.sys.readFile);
  assert.equal(error, undefined);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, path.join(ROOT, 'k6'));
  assert.deepEqual(parsed.options.types, ['k6']);
  assert.equal(parsed.options.checkJs, true);
  const checked = parsed.fileNames.map((f) => path.relative(ROOT, f)).sort();
  assert.deepEqual(K6_FILES.filter((file) => !checked.includes(file)), [], 'not type-checked against k6\'s API (k6/tsconfig.json include)');
  assert.deepEqual(checked, K6_FILES);
});

test('.dockerignore keeps every k6 source out of the build context', () => {
  const patterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#')).map((l) => l.replace(/^\/|\/$/g, ''));
  // The matcher below knows no exceptions (`!pattern`), so the file must have none.
  assert.deepEqual(patterns.filter((p) => p.startsWith('!')), []);
  // A pattern that matches a folder leaves out everything in it, as Docker reads it.
  const ignored = (file) => file.split('/').some((_, i, parts) => patterns.some((p) => path.posix.matchesGlob(parts.slice(0, i + 1).join('/'), p)));
  assert.deepEqual(K6_FILES.filter((file) => !ignored(file)), [], 'in the Docker build context (.dockerignore)');
});
