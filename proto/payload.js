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
/** The HTTP route that serves the same `User` as JSON. */
export const HTTP_PATH = '/';
