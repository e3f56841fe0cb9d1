// The demo's payload and the names both transports use to reach it.
// Plain ES module with no imports but proto/checks.js, so the server (Node) and the k6 scripts load the same file.
import { checkOf, USER_FIELDS } from './checks.js';

export { USER_FIELDS };

/** The .proto file, relative to the `proto/` folder. */
export const PROTO_FILE = 'user.proto';
/** Fully qualified name of the message the servers return. */
export const USER_TYPE = 'user.v1.User';
/** Fully qualified name of the gRPC service. */
export const SERVICE_NAME = 'user.v1.UserService';
/** The unary RPC as k6 names it (`package.Service/Method`). */
export const GET_USER_RPC = `${SERVICE_NAME}/GetUser`;

// Scenario shapes, one per RPC, parameterised by the value of its one request field.
const users = (count) => ({
  rpc: 'ListUsers', route: '/users', request: { count },
  fields: (who) => ({ users: Array.from({ length: count }, () => ({ ...USER_FIELDS, ...who })) }),
  answer: { kind: 'users', count },
});
const blob = (sizeBytes) => ({
  rpc: 'GetBlob', route: '/blob', request: { sizeBytes },
  fields: (who) => ({ data: new Uint8Array(sizeBytes).fill(0x61), ...who }),
  answer: { kind: 'blob', sizeBytes },
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
 * @property {import('./checks.js').AnswerShape} answer what its answer holds, as plain data (the k6 scripts' VU 0 passes
 *   it to the iterating VUs, which build the check from it: proto/checks.js checkOf)
 * @property {(payload: object|null|undefined) => boolean} check true when a decoded response (proto3 JSON
 *   mapping) is this scenario's payload (derived from answer)
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
    fields: (who) => ({ ...USER_FIELDS, ...who }), answer: { kind: 'user' },
  },
  'users-100': { description: '100 nested Users in a repeated field', ...users(100) },
  'blob-32k': { description: 'a 32 KiB bytes field', ...blob(32768) },
  'blob-1m': { description: 'a 1 MiB bytes field', ...blob(1048576) },
});

function scenarios(table) {
  const out = {};
  for (const [name, s] of Object.entries(table)) {
    const query = Object.entries(s.request).map(([k, v]) => `${k}=${v}`).join('&');
    out[name] = Object.freeze({ ...s, httpPath: query ? `${s.route}?${query}` : s.route, check: checkOf(s.answer) });
  }
  return Object.freeze(out);
}

/**
 * The demo's server stream, user.v1.UserService/StreamUsers: the users of `users-100` one message each, so that a
 * stream of `count` Users sits beside the one message of `count` Users in a repeated field. Not a SCENARIO: the demo's
 * k6 scripts make unary calls; the job measures it as the built-in own service `users-stream` (proto/own/builtins.js),
 * from samples scripts/users-stream-samples.js writes with `messages`.
 * @type {Readonly<{rpc: string, request: Readonly<{count: number}>,
 *   messages: (who: {port: number, workerPid: number}) => object[]}>} `request`: its request in the proto3 JSON mapping,
 *   the one users-100 sends; `messages`: the stream's Users, each the demo's User from that listener port and worker pid
 */
export const USERS_STREAM = streamOf(users(100));

function streamOf({ request, fields }) {
  return Object.freeze({ rpc: 'StreamUsers', request: Object.freeze(request), messages: (who) => fields(who).users });
}

/** Fully qualified RPC name as k6 names it (`package.Service/Method`). */
export const rpcPath = (rpc) => `${SERVICE_NAME}/${rpc}`;
