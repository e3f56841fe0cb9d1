// The demo's payload and the names both transports use to reach it.
// Plain ES module with no imports, so the server (Node) and the k6 scripts load the same file.

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

/** The .proto file, relative to the `proto/` folder. */
export const PROTO_FILE = 'user.proto';
/** Fully qualified name of the message the servers return. */
export const USER_TYPE = 'user.v1.User';
/** Fully qualified name of the gRPC service. */
export const SERVICE_NAME = 'user.v1.UserService';
/** The unary RPC as k6 names it (`package.Service/Method`). */
export const GET_USER_RPC = `${SERVICE_NAME}/GetUser`;

/**
 * True when a decoded response is the demo's User in the proto3 JSON mapping,
 * every field present, served by some listener port and worker pid.
 * @param {object|null|undefined} user
 * @returns {boolean}
 */
function isTheUser(user) {
  if (!user || typeof user !== 'object') return false;
  for (const key of Object.keys(USER_FIELDS)) if (user[key] !== USER_FIELDS[key]) return false;
  return Number.isInteger(user.port) && user.port > 0 && Number.isInteger(user.workerPid) && user.workerPid > 0;
}

const isPid = (n) => Number.isInteger(n) && n > 0;

// Scenario shapes, one per RPC, parameterised by the value of its one request field.
const users = (count) => ({
  rpc: 'ListUsers', route: '/users', request: { count },
  fields: (who) => ({ users: Array.from({ length: count }, () => ({ ...USER_FIELDS, ...who })) }),
  check: (p) => Array.isArray(p?.users) && p.users.length === count && p.users.every(isTheUser),
});
const blob = (sizeBytes) => ({
  rpc: 'GetBlob', route: '/blob', request: { sizeBytes },
  fields: (who) => ({ data: new Uint8Array(sizeBytes).fill(0x61), ...who }),
  // bytes are base64 in the mapping: 4 characters for every 3 bytes, padded.
  check: (p) => typeof p?.data === 'string' && p.data.length === 4 * Math.ceil(sizeBytes / 3) && isPid(p.workerPid),
});

/**
 * @typedef {object} Scenario
 * @property {string} description what it shows
 * @property {string} rpc the unary RPC that serves it (a method of user.v1.UserService)
 * @property {string} route the HTTP route (GET) that serves it
 * @property {Record<string, number>} request its request message in the proto3 JSON mapping: at most one
 *   field, which is also the HTTP query parameter of the same name
 * @property {string} httpPath route and query, e.g. '/users?count=100' (derived)
 * @property {(who: {port: number, workerPid: number}) => object} fields the response's fields, for the
 *   servers to build the message from (protobufjs fromObject)
 * @property {(payload: object|null|undefined) => boolean} check true when a decoded response (proto3 JSON
 *   mapping) is this scenario's payload; the k6 scripts run it on sampled responses
 */

/**
 * The scenario registry: payloads served identically in both encodings. `user` is the original
 * demo; the others show how the encodings scale with nesting and size. The servers prebuild one
 * response per scenario; the k6 scripts, the capacity pass and the tests derive from this table.
 * Adding a scenario of an existing RPC is one line here (docs/contributing.md).
 * @type {Readonly<Record<string, Readonly<Scenario>>>}
 */
export const SCENARIOS = scenarios({
  user: {
    description: "the demo's User", rpc: 'GetUser', route: '/', request: {},
    fields: (who) => ({ ...USER_FIELDS, ...who }), check: isTheUser,
  },
  'users-100': { description: '100 nested Users in a repeated field', ...users(100) },
  'blob-32k': { description: 'a 32 KiB bytes field', ...blob(32768) },
  'blob-1m': { description: 'a 1 MiB bytes field', ...blob(1048576) },
});

function scenarios(table) {
  const out = {};
  for (const [name, s] of Object.entries(table)) {
    const query = Object.entries(s.request).map(([k, v]) => `${k}=${v}`).join('&');
    out[name] = Object.freeze({ ...s, httpPath: query ? `${s.route}?${query}` : s.route });
  }
  return Object.freeze(out);
}

/** Fully qualified RPC name as k6 names it (`package.Service/Method`). */
export const rpcPath = (rpc) => `${SERVICE_NAME}/${rpc}`;
