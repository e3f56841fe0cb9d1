// The primary's admin endpoint (off unless ADMIN_PORT is set): GET /metrics, the Prometheus
// text exposition of every worker's accounting and the primary's (server/accounting.js), and
// POST /profile/start and /profile/stop, the workers' V8 CPU profiles (server/profiling.js).
import http from 'node:http';
import { createClusterAccounting } from './accounting.js';
import { profileWorkers } from './profiling.js';
import { ListenError } from './errors.js';

/** Path of the Prometheus exposition. */
export const METRICS_PATH = '/metrics';

/** Paths that start and stop the workers' CPU profiles (POST). */
export const PROFILE_PATHS = Object.freeze({ start: '/profile/start', stop: '/profile/stop' });

const reply = (res, status, body, type = 'application/json') => {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
};
const error = (statusCode, code, message) => JSON.stringify({ statusCode, code, message });

/**
 * Starts the admin endpoint in the primary. Answers GET /metrics with 200 and the
 * metrics; anything else with 404 (`ERR_NOT_FOUND`); 503 (`ERR_METRICS_UNAVAILABLE`) when
 * a worker does not answer in time (the log says why). POST /profile/start answers 204 once
 * every worker profiles; POST /profile/stop answers 200 with `{profiles: [{pid, profile}]}`,
 * each a V8 CPU profile (.cpuprofile); either answers 409 (`ERR_PROFILE`) when a worker refuses
 * (a profile running already, or none to stop) or does not answer. Bodies of errors are JSON
 * `{statusCode, code, message}`, without internals.
 * Scraping resets the windowed figures (event-loop delay, memory peaks): they cover the
 * time since the previous scrape, so one reader at a time.
 * @param {{host: string, port: number, log: import('pino').Logger}} options
 * @returns {Promise<{close: () => Promise<void>}>}
 * @throws {ListenError} ERR_PORT_IN_USE or ERR_LISTEN when the port cannot be bound
 */
export async function startAdmin({ host, port, log }) {
  const accounting = createClusterAccounting();
  const server = http.createServer(async (req, res) => {
    const path = req.url.split('?', 1)[0];
    const profile = Object.entries(PROFILE_PATHS).find(([, p]) => p === path)?.[0];
    if (req.method === 'POST' && profile) {
      try {
        const profiles = await profileWorkers(/** @type {'start'|'stop'} */ (profile));
        return profile === 'start' ? reply(res, 204, '') : reply(res, 200, JSON.stringify({ profiles }));
      } catch (err) {
        return reply(res, 409, error(409, 'ERR_PROFILE', err.message));
      }
    }
    if (req.method !== 'GET' || path !== METRICS_PATH) {
      return reply(res, 404, error(404, 'ERR_NOT_FOUND',
        `the admin endpoint serves GET ${METRICS_PATH}, POST ${PROFILE_PATHS.start} and POST ${PROFILE_PATHS.stop}`));
    }
    try {
      reply(res, 200, await accounting.metrics(), accounting.contentType);
    } catch (err) {
      log.warn({ reason: err.message }, 'admin: could not collect the workers\' metrics');
      reply(res, 503, error(503, 'ERR_METRICS_UNAVAILABLE', 'a worker did not answer in time; try again'));
    }
  });
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(undefined));
    });
  } catch (err) {
    throw new ListenError('admin HTTP', `${host}:${port}`, err.code ?? err.message);
  }
  return { close: () => new Promise((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }) };
}
