// What a decoded answer of each demo scenario, or of an own service, must be (proto3 JSON mapping), as functions of
// plain data. It imports nothing and builds nothing but two frozen objects when loaded: every iterating k6 VU loads it
// for its sampled checks (k6/http.js, k6/grpc.js), and what a module builds at load is kept by every VU
// (docs/profiling.md). proto/payload.js gives each scenario its check from here.

/**
 * The fields of the demo's `User` that do not depend on who serves it, in the
 * proto3 JSON mapping (lowerCamelCase names, enum values by name).
 * `port` and `workerPid` are added by the listener that answers.
 * @type {Readonly<{username: string, premium: boolean, nextBillingDate: string, country: string}>}
 */
export const USER_FIELDS = Object.freeze({
  username: 'Bob',
  premium: true,
  nextBillingDate: '01-01-2023',
  country: 'COUNTRY_KE',
});

const isPid = (n) => Number.isInteger(n) && n > 0;

/**
 * True when a decoded response is the demo's User in the proto3 JSON mapping,
 * every field present, served by some listener port and worker pid.
 * @param {object|null|undefined} user
 * @returns {boolean}
 */
export function isTheUser(user) {
  if (!user || typeof user !== 'object') return false;
  for (const key in USER_FIELDS) if (user[key] !== USER_FIELDS[key]) return false;
  return isPid(user.port) && isPid(user.workerPid);
}

/**
 * @typedef {{kind: 'user'} | {kind: 'users', count: number} | {kind: 'blob', sizeBytes: number} | {kind: 'message'}} AnswerShape
 *   what a scenario's answer holds: one User; `count` Users in a repeated field; a bytes field of `sizeBytes` bytes; or,
 *   for an own service, a message at all (MESSAGE_ANSWER)
 */

/**
 * An own service's answer: the job proved before measuring that both twins answer the same messages
 * (docs/own-message.md), so a sampled answer only has to be a message, a JSON object.
 * @type {Readonly<AnswerShape>}
 */
export const MESSAGE_ANSWER = Object.freeze({ kind: 'message' });

const isMessage = (payload) => payload !== null && typeof payload === 'object' && !Array.isArray(payload);

/**
 * The check of a scenario's answer.
 * @param {AnswerShape} shape
 * @returns {(payload: object|null|undefined) => boolean} true when a decoded response (proto3 JSON mapping) is that answer
 * @throws {Error} for a kind it does not know
 */
export function checkOf(shape) {
  if (shape.kind === 'user') return isTheUser;
  if (shape.kind === 'users') {
    const { count } = shape;
    return (p) => Array.isArray(p?.users) && p.users.length === count && p.users.every(isTheUser);
  }
  if (shape.kind === 'message') return isMessage;
  if (shape.kind === 'blob') {
    // bytes are base64 in the mapping: 4 characters for every 3 bytes, padded.
    const length = 4 * Math.ceil(shape.sizeBytes / 3);
    return (p) => typeof p?.data === 'string' && p.data.length === length && isPid(p.workerPid);
  }
  throw new Error(`no check for an answer of kind ${/** @type {{kind: string}} */ (shape).kind}`);
}
