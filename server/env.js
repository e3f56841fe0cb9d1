// What every settings reader here shares (the server's, the main job's, the soak's):
// envalid validators, one way to report bad values, and the check for misspelt settings.
import { cleanEnv, makeValidator } from 'envalid';
import leven from 'leven';

/** envalid validator: a whole number of at least 1. */
export const positiveInt = makeValidator((input) => {
  if (!/^[1-9][0-9]*$/.test(String(input))) throw new Error('must be a whole number of at least 1');
  return Number(input);
});

/**
 * envalid validator of whole numbers from `min` to `max`.
 * @param {number} min smallest accepted value
 * @param {number} max largest accepted value
 */
export const wholeNumber = (min, max) => makeValidator((input) => {
  const value = /^[0-9]+$/.test(String(input)) ? Number(input) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`must be a whole number from ${min} to ${max}`);
  return value;
});

/**
 * Why a variable is invalid, in the words of the project's own validators ("must be ..."). envalid checks a
 * spec's `choices` itself, after the validator, and says `Value "x" not in choices [a,b]`: that one is reworded.
 * @param {{choices?: readonly unknown[]}} spec the variable's envalid spec
 * @param {string|undefined} raw the variable's value
 * @param {Error} err what envalid reported
 * @returns {string}
 */
function reason(spec, raw, err) {
  if (spec?.choices && !spec.choices.map(String).includes(raw)) return `must be one of ${spec.choices.join(', ')}`;
  return err.message;
}

/**
 * envalid's cleanEnv, with every invalid variable reported in one error:
 * `invalid setting NAME="value": why; OTHER="value": why`, each why in the project's style (`must be ...`).
 * @param {Record<string, string|undefined>} env
 * @param {object} specs envalid validators by variable name
 * @param {new (message: string) => Error} ErrorClass the named error to throw
 * @returns {object} the clean settings
 * @throws {Error} an ErrorClass naming every invalid variable
 */
export function readEnv(env, specs, ErrorClass) {
  return cleanEnv(env, specs, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors).map(([name, err]) => `${name}=${JSON.stringify(env[name])}: ${reason(specs[name], env[name], err)}`);
      if (problems.length) throw new ErrorClass(`invalid setting ${problems.join('; ')}`);
    },
  });
}

/**
 * An envalid spec whose default the docs show as `text` rather than as its value: a default that
 * depends on the machine or on other settings, or whose absence means something (scripts/gen-docs.js).
 * Every settings reader uses it (server, main job, soak).
 * @template T
 * @param {T} spec
 * @param {string} text Markdown
 * @returns {T & {defaultText: string}} the spec itself
 */
export const withDefaultText = (spec, text) => Object.assign(spec, { defaultText: text });

// Settings are upper case; a lower-case variable (npm_config_*, http_proxy) is someone else's.
const SETTING_SHAPE = /^[A-Z][A-Z0-9_]*$/;

// Variables a few edits from a setting that are set for another reason: npm sets NODE for every script
// (`npm run soak`), one letter from MODE. The length rule of maxEdits keeps out the shell's and CI's own
// (HOME, PATH, PORT, TTY, TZ, CI, ...), which are 2 edits from HOST, MODE, RATE, RTT or UP.
const NOT_SETTINGS = new Set(['NODE']);

/**
 * Edits within which a variable is taken for a misspelt `setting`: about one in three letters, at most 2.
 * Any 2-letter name is 2 edits from UP, and a 4-letter one sharing 2 letters in place is 2 from MODE (HOME):
 * short names allow fewer.
 * @param {string} setting
 * @returns {number}
 */
const maxEdits = (setting) => Math.min(2, Math.floor(setting.length / 3));

/**
 * Edits from `a` to `b`: Levenshtein's (insertions, deletions, substitutions), except that one swap of two
 * neighbouring letters is one edit (as Damerau counts it): MDOE is 1 from MODE, not 2.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function edits(a, b) {
  if (a.length === b.length) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    if (i < a.length - 1 && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2)) return 1;
  }
  return leven(a, b);
}

/**
 * Environment variables that look like a misspelt setting: upper case, not a setting, not one of NOT_SETTINGS,
 * and within maxEdits of one (`VU` for VUS, `WORKER` for WORKERS).
 * @param {Record<string, string|undefined>} env
 * @param {Iterable<string>} settings every setting's name
 * @returns {Array<{name: string, meant: string}>} each such variable, with the nearest setting (the first of equals)
 */
export function misspeltSettings(env, settings) {
  const known = [...new Set(settings)];
  const found = [];
  for (const name of Object.keys(env).sort()) {
    if (known.includes(name) || NOT_SETTINGS.has(name) || !SETTING_SHAPE.test(name)) continue;
    let nearest = null;
    for (const setting of known) {
      const distance = edits(name, setting);
      if (distance <= maxEdits(setting) && (!nearest || distance < nearest.distance)) nearest = { distance, setting };
    }
    if (nearest) found.push({ name, meant: nearest.setting });
  }
  return found;
}
