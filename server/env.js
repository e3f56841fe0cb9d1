// What every settings reader here shares (the server's, the main job's, the soak's):
// envalid validators and one way to report bad values.
import { cleanEnv, makeValidator } from 'envalid';

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
