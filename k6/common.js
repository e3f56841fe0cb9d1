// What the HTTP and gRPC scripts share: options, response sampling, payload check.
import { USER_FIELDS } from '../proto/payload.js';

function positiveIntEnv(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) throw new Error(`${name}=${JSON.stringify(raw)}: must be a whole number of at least 1`);
  return Number(raw);
}

/**
 * One response in SAMPLE_EVERY (default 100) per VU is decoded and checked;
 * the others are only counted. A check() on every iteration costs k6 a
 * measurable share of its RPS, and k6 sits on the measured path.
 */
export const SAMPLE_EVERY = positiveIntEnv('SAMPLE_EVERY', 100);

/** Options common to all four scripts; VUs and duration come from the command line. */
export const baseOptions = {
  // count gives the number of requests for gRPC, which has no grpc_reqs counter.
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  // Bodies are read off the wire (data_received counts them) but not kept, except on sampled requests.
  discardResponseBodies: true,
  setupTimeout: '15s',
};

/**
 * Returns a per-VU sampler: true on the VU's first call and every SAMPLE_EVERY-th after.
 * @returns {() => boolean}
 */
export function sampler() {
  let n = 0;
  return () => n++ % SAMPLE_EVERY === 0;
}

/**
 * True when a decoded response is the demo's User in the proto3 JSON mapping,
 * every field present, served by some listener port and worker pid.
 * @param {object|null|undefined} user
 * @returns {boolean}
 */
export function isTheUser(user) {
  if (!user || typeof user !== 'object') return false;
  for (const key of Object.keys(USER_FIELDS)) if (user[key] !== USER_FIELDS[key]) return false;
  return Number.isInteger(user.port) && user.port > 0 && Number.isInteger(user.workerPid) && user.workerPid > 0;
}
