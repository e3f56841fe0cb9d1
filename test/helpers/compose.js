// compose.yaml as the tests read it, and the default a `${NAME:-default}` value stands for.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT } from '../../bench/root.js';

/** compose.yaml, parsed (YAML merge keys resolved). */
export const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true });

/**
 * The value of a plain value or of `${NAME:-default}`; null for `${NAME}` without default.
 * @param {unknown} value
 * @returns {string|null}
 */
export const defaultOf = (value) => {
  const match = /^\$\{(\w+)(?::?-([^}]*))?\}$/.exec(String(value));
  return match ? (match[2] ?? null) : String(value);
};
