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
 * Payload scenarios, each served identically in both encodings: the HTTP route
 * (GET; its one query parameter, if any, is the request's field of the same
 * name) and the unary RPC with its request, in the proto3 JSON mapping.
 * `user` is the original demo; the others show how the encodings scale with
 * nesting and size. The servers prebuild one response per scenario.
 * @type {Readonly<Record<string, {description: string, httpPath: string, rpc: string, request: object}>>}
 */
export const SCENARIOS = Object.freeze({
  user: { description: "the demo's User", httpPath: '/', rpc: 'GetUser', request: {} },
  'users-100': { description: '100 nested Users in a repeated field', httpPath: '/users?count=100', rpc: 'ListUsers', request: { count: 100 } },
  'blob-32k': { description: 'a 32 KiB bytes field', httpPath: '/blob?sizeBytes=32768', rpc: 'GetBlob', request: { sizeBytes: 32768 } },
  'blob-1m': { description: 'a 1 MiB bytes field', httpPath: '/blob?sizeBytes=1048576', rpc: 'GetBlob', request: { sizeBytes: 1048576 } },
});

/** Fully qualified RPC name as k6 names it (`package.Service/Method`). */
export const rpcPath = (rpc) => `${SERVICE_NAME}/${rpc}`;
