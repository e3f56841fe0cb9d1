// Requests served by this process, by kind of handler: plain numbers the handlers bump
// with `++`. Nothing else happens on the request path; server/accounting.js reads them
// when the admin endpoint is scraped.

/**
 * Requests that reached a route or RPC handler of this process since it started:
 * `http` counts fastify's scenario routes (on every listener startHttp serves: http,
 * json-h2, protobuf-h1), `grpc` the grpc-js scenario RPCs, `connect` connect-node's (connect-grpc, connect-json). Health checks, reflection,
 * and requests refused before a handler (404, 413, malformed) are not counted; a
 * handler's 400 answer is. A listener of another kind adds its own key.
 * @type {Record<string, number>}
 */
export const servedRequests = { http: 0, grpc: 0, connect: 0 };
