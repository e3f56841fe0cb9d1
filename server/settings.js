// Server settings, read once from the environment and validated before anything starts.
import os from 'node:os';
import { cleanEnv, host, makeValidator, port, str } from 'envalid';
import { SettingsError } from './errors.js';

/**
 * A validator of whole numbers from `min` to `max`.
 * @param {number} min smallest accepted value
 * @param {number} max largest accepted value
 */
const wholeNumber = (min, max) => makeValidator((input) => {
  const value = /^[0-9]+$/.test(String(input)) ? Number(input) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`must be a whole number from ${min} to ${max}`);
  return value;
});

const positiveInt = makeValidator((input) => {
  if (!/^[1-9][0-9]*$/.test(String(input))) throw new Error('must be a whole number of at least 1');
  return Number(input);
});
// setTimeout fires at once for delays past 2^31-1 ms, so no duration may exceed it.
const durationMs = wholeNumber(1, 2 ** 31 - 1);

/** Modes the server runs in. */
export const MODES = Object.freeze(['http', 'grpc', 'both']);

/**
 * Names of the listeners a mode opens.
 * @param {'http'|'grpc'|'both'} mode
 * @returns {Array<'http'|'grpc'>}
 */
export const listenersOf = (mode) => (mode === 'both' ? ['http', 'grpc'] : [mode]);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * @typedef {object} ServerSettings
 * @property {'http'|'grpc'|'both'} MODE which listeners each worker opens
 * @property {number} HTTP_PORT TCP port of the HTTP/1.1 listener (fastify)
 * @property {number} GRPC_PORT TCP port of the gRPC (HTTP/2 cleartext) listener
 * @property {string} HOST bind address of both listeners
 * @property {number} WORKERS cluster workers to fork
 * @property {string} LOG_LEVEL pino level; 'debug' or 'trace' also log every request
 * @property {number} SHUTDOWN_TIMEOUT_MS after SIGTERM or SIGINT, how long (ms) a worker lets
 *   in-flight requests finish before it closes the connections still open; default 10000
 * @property {number} MAX_CONNECTIONS open HTTP connections one worker keeps; a connection past
 *   it is closed at once, before any byte is read; default 4096 (the gRPC listener has no such cap)
 * @property {number} MAX_BODY_BYTES largest HTTP request body (413 past it) and largest gRPC
 *   request message (RESOURCE_EXHAUSTED past it), in bytes; default 65536
 * @property {number} HEADERS_TIMEOUT_MS how long (ms) an HTTP client may take to send a request's
 *   head before it gets 408 and the connection is closed (Slowloris guard); default 10000
 * @property {number} REQUEST_TIMEOUT_MS how long (ms) an HTTP client may take to send a whole
 *   request, head and body; at least HEADERS_TIMEOUT_MS; default 30000
 */

/**
 * Reads and validates the server's settings.
 * @param {Record<string, string|undefined>} [env] environment, default `process.env`
 * @returns {ServerSettings}
 * @throws {SettingsError} naming every invalid variable and why
 */
export function readSettings(env = process.env) {
  const settings = cleanEnv(env, {
    MODE: str({ choices: MODES, default: 'both' }),
    HTTP_PORT: port({ default: 3000 }),
    GRPC_PORT: port({ default: 4000 }),
    HOST: host({ default: '0.0.0.0' }),
    WORKERS: positiveInt({ default: os.availableParallelism() }),
    LOG_LEVEL: str({ choices: LOG_LEVELS, default: 'info' }),
    SHUTDOWN_TIMEOUT_MS: durationMs({ default: 10000 }),
    MAX_CONNECTIONS: wholeNumber(1, 1_000_000)({ default: 4096 }),
    // grpc-js takes a signed 32-bit length.
    MAX_BODY_BYTES: wholeNumber(1, 2 ** 31 - 1)({ default: 65536 }),
    HEADERS_TIMEOUT_MS: durationMs({ default: 10000 }),
    REQUEST_TIMEOUT_MS: durationMs({ default: 30000 }),
  }, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors)
        .map(([name, err]) => `${name}=${JSON.stringify(env[name])}: ${err.message}`);
      if (problems.length) throw new SettingsError(`invalid setting ${problems.join('; ')}`);
    },
  });
  // Node's http.Server refuses a head deadline past the whole request's (ERR_OUT_OF_RANGE):
  // say so here, in one line, before any worker starts.
  if (settings.HEADERS_TIMEOUT_MS > settings.REQUEST_TIMEOUT_MS) {
    throw new SettingsError(`invalid setting HEADERS_TIMEOUT_MS="${settings.HEADERS_TIMEOUT_MS}": `
      + `must not exceed REQUEST_TIMEOUT_MS (${settings.REQUEST_TIMEOUT_MS})`);
  }
  return settings;
}
