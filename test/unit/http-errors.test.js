// The HTTP listener's error replies (server/http-errors.js), by fastify's inject(): 404 and 405 as JSON, a 5xx without
// its cause, and that cause in the log even when fastify was built with no logger (the listener at LOG_LEVEL info).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { replyErrorsAsJson } from '../../server/http-errors.js';

/** A pino logger whose lines land in `lines`, parsed. */
function capturingLogger() {
  const lines = [];
  const sink = new Writable({ write(chunk, encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: 'warn' }, sink), lines };
}

/** An app as the listener builds it with request logging off: no fastify logger, one route that fails. */
async function appWith(log) {
  const app = Fastify({ logger: false });
  replyErrorsAsJson(app, log);
  app.get('/fails', () => { throw new Error('the database password is hunter2'); });
  app.get('/user', () => ({ id: 1 }));
  await app.ready();
  return app;
}

test('a 5xx hides its cause from the client and logs it through the given logger', async () => {
  const { log, lines } = capturingLogger();
  const app = await appWith(log);
  const res = await app.inject({ method: 'GET', url: '/fails?x=1' });
  assert.equal(res.statusCode, 500);
  assert.deepEqual(res.json(), { statusCode: 500, error: 'Internal Server Error', message: 'the server could not answer this request' });
  assert.doesNotMatch(res.body, /hunter2/);
  assert.equal(lines.length, 1, 'one log line for the 5xx');
  assert.equal(lines[0].msg, 'request failed');
  assert.equal(lines[0].err.message, 'the database password is hunter2');
  assert.equal(lines[0].url, '/fails?x=1');
  assert.equal(lines[0].method, 'GET');
  await app.close();
});

test('404 and 405 as JSON, the 405 with Allow; neither is logged', async () => {
  const { log, lines } = capturingLogger();
  const app = await appWith(log);
  const missing = await app.inject({ method: 'GET', url: '/nowhere' });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { statusCode: 404, error: 'Not Found', message: 'no route GET /nowhere' });
  const wrong = await app.inject({ method: 'POST', url: '/user' });
  assert.equal(wrong.statusCode, 405);
  assert.match(String(wrong.headers.allow), /GET/);
  assert.equal(wrong.json().error, 'Method Not Allowed');
  assert.equal(lines.length, 0);
  await app.close();
});
