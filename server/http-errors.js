// Error replies of the HTTP listener: 404 and 405 as JSON, and no internals in a 5xx.
// Not imported: an ESM import of node:http loads undici (server/h1-guard.js).
const { STATUS_CODES } = process.getBuiltinModule('node:http');

/**
 * Registers, on a fastify instance with no routes yet, a not-found handler that
 * answers 405 with `Allow` for a known path asked with another method, 404
 * otherwise, and an error handler that hides the cause of a 5xx from the client
 * (the log keeps it). Bodies have fastify's error shape `{statusCode, error, message}`.
 * @param {import('fastify').FastifyInstance} app
 * @param {import('pino').Logger | null} [log] where a 5xx's cause is logged: this logger, for an app built with no
 *   logger of its own (fastify's then discards everything); null: the request's logger (`request.log`, with its reqId)
 */
export function replyErrorsAsJson(app, log = null) {
  // Filled as routes are added, so the 405's Allow list cannot drift from the routes.
  const methodsOf = new Map();
  app.addHook('onRoute', ({ url, method }) => {
    methodsOf.set(url, [...(methodsOf.get(url) ?? []), ...[method].flat()]);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0];
    const allowed = methodsOf.get(path);
    if (!allowed) return reply.code(404).send(errorBody(404, `no route ${request.method} ${path}`));
    return reply.code(405).header('allow', allowed.join(', '))
      .send(errorBody(405, `${request.method} is not allowed on ${path}; use ${allowed.join(' or ')}`));
  });

  app.setErrorHandler((/** @type {import('fastify').FastifyError} */ err, request, reply) => {
    const status = err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) {
      (log ?? request.log).error({ err, method: request.method, url: request.url }, 'request failed');
      return reply.code(500).send(errorBody(500, 'the server could not answer this request'));
    }
    // fastify's own 4xx errors (body too large, bad content type, ...) say what the client got wrong.
    return reply.code(status).send({ ...errorBody(status, err.message), code: err.code });
  });
}

/**
 * @param {number} statusCode HTTP status
 * @param {string} message one line for the client
 * @returns {{statusCode: number, error: string, message: string}}
 */
const errorBody = (statusCode, message) => ({ statusCode, error: STATUS_CODES[statusCode], message });
