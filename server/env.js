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
 * envalid's cleanEnv, with every invalid variable reported in one error:
 * `invalid setting NAME="value": why; OTHER="value": why`.
 * @param {Record<string, string|undefined>} env
 * @param {object} specs envalid validators by variable name
 * @param {new (message: string) => Error} ErrorClass the named error to throw
 * @returns {object} the clean settings
 * @throws {Error} an ErrorClass naming every invalid variable
 */
export function readEnv(env, specs, ErrorClass) {
  return cleanEnv(env, specs, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors).map(([name, err]) => `${name}=${JSON.stringify(env[name])}: ${err.message}`);
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
