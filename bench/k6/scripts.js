// Which files run in k6's JavaScript runtime rather than Node's, named once. The entry scripts' folders come from the
// mode registry, so that a mode with scripts of its own is in every list below without an edit: the lint's k6 globals
// (eslint.config.js imports K6_SOURCES), and, for the files that cannot import JavaScript, the type check against
// k6's API (k6/tsconfig.json) and the build context (.dockerignore), whose globs test/unit/k6-sources.test.js holds
// against this list.
import path from 'node:path';
import { MODES } from '../modes.js';

/**
 * The folders of the k6 entry scripts, each holding a mode's local.js and remote.js (`<name>-tests/`): those MODES
 * names, once each, in registry order.
 * @type {readonly string[]} repository-relative, e.g. ['http-tests', 'grpc-tests', 'connect-json-tests']
 */
export const ENTRY_DIRS = Object.freeze([...new Set(Object.values(MODES)
  .flatMap((mode) => Object.values(mode.scripts)).map((script) => path.posix.dirname(script)))]);

/**
 * Every file that runs in k6's runtime, as globs from the repository's root: the code the scripts share (k6/), the
 * entry scripts, the minimal scripts the targets job measures them against, the tests' k6 fixtures, and config.js
 * (the hosts, which the Node side reads too).
 * @type {readonly string[]} e.g. ['k6/*.js', 'http-tests/*.js', …]
 */
export const K6_SOURCES = Object.freeze(['k6/*.js', ...ENTRY_DIRS.map((dir) => `${dir}/*.js`), 'bench/k6-minimal/*.js',
  'test/fixtures/k6-*.js', 'config.js']);
