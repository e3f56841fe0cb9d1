import pino from 'pino';

/**
 * The process's logger: JSON lines on stdout (pino).
 * @param {string} level pino level
 * @returns {import('pino').Logger}
 */
export function createLogger(level) {
  return pino({ level, base: { pid: process.pid } });
}

/** True when the level asks for one line per request. */
export const logsRequests = (level) => level === 'debug' || level === 'trace';
