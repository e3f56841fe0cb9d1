// Server settings, read once from the environment and validated before anything starts.
import os from 'node:os';
import { cleanEnv, host, makeValidator, port, str } from 'envalid';
import { SettingsError } from './errors.js';

const positiveInt = makeValidator((input) => {
  if (!/^[1-9][0-9]*$/.test(String(input))) throw new Error('must be a whole number of at least 1');
  return Number(input);
});

/** Modes the server runs in. */
export const MODES = Object.freeze(['http', 'grpc', 'both']);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * @typedef {object} ServerSettings
 * @property {'http'|'grpc'|'both'} MODE which listeners each worker opens
 * @property {number} HTTP_PORT TCP port of the HTTP/1.1 listener (fastify)
 * @property {number} GRPC_PORT TCP port of the gRPC (HTTP/2 cleartext) listener
 * @property {string} HOST bind address of both listeners
 * @property {number} WORKERS cluster workers to fork
 * @property {string} LOG_LEVEL pino level; 'debug' or 'trace' also log every request
 */

/**
 * Reads and validates the server's settings.
 * @param {Record<string, string|undefined>} [env] environment, default `process.env`
 * @returns {ServerSettings}
 * @throws {SettingsError} naming every invalid variable and why
 */
export function readSettings(env = process.env) {
  return cleanEnv(env, {
    MODE: str({ choices: MODES, default: 'both' }),
    HTTP_PORT: port({ default: 3000 }),
    GRPC_PORT: port({ default: 4000 }),
    HOST: host({ default: '0.0.0.0' }),
    WORKERS: positiveInt({ default: os.availableParallelism() }),
    LOG_LEVEL: str({ choices: LOG_LEVELS, default: 'info' }),
  }, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors)
        .map(([name, err]) => `${name}=${JSON.stringify(env[name])}: ${err.message}`);
      if (problems.length) throw new SettingsError(`invalid setting ${problems.join('; ')}`);
    },
  });
}
