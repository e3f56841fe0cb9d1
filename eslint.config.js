// ESLint (npm run lint): the recommended rules, with the globals each part runs with.
import js from '@eslint/js';
import globals from 'globals';
import { K6_SOURCES } from './bench/k6/scripts.js';

export default [
  // proto/gen/ is generated (npm run gen:proto), and checked against user.proto by test/integration/proto-gen.test.js.
  { ignores: ['node_modules/', '.tools/', 'results/', 'proto/gen/', 'test/manual/connect-repro/gen/'] },
  js.configs.recommended,
  // test/manual/connect-repro/ is written to be filed upstream as it stands, hence .mjs (no package.json of its own).
  { files: ['**/*.js', 'test/manual/connect-repro/*.mjs'], languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: globals.node } },
  // k6's JavaScript runtime: __ENV, open() and its modules, not Node's. Its files are named once, every mode's scripts in.
  { files: [...K6_SOURCES],
    languageOptions: { globals: { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly', open: 'readonly' } } },
  { rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }] } },
];
