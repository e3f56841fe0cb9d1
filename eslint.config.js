// ESLint (npm run lint): the recommended rules, with the globals each part runs with.
import js from '@eslint/js';
import globals from 'globals';

export default [
  // proto/gen/ is generated (npm run gen:proto), and checked against user.proto by test/unit/proto-gen.test.js.
  { ignores: ['node_modules/', '.tools/', 'results/', 'proto/gen/'] },
  js.configs.recommended,
  { files: ['**/*.js'], languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: globals.node } },
  // k6's JavaScript runtime: __ENV, open() and its modules, not Node's.
  { files: ['k6/**/*.js', 'http-tests/**/*.js', 'grpc-tests/**/*.js', 'bench/k6-minimal/**/*.js', 'test/fixtures/k6-*.js', 'config.js'],
    languageOptions: { globals: { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly', open: 'readonly' } } },
  { rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }] } },
];
