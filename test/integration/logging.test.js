// Request logging of the HTTP listener: off at LOG_LEVEL info (fastify is then built with no logger,
// server/http.js), one line per request with fastify's reqId at debug.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startServer } from '../helpers/server.js';

async function requestLines(level) {
  const server = await startServer({ MODE: 'http', LOG_LEVEL: level });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`http://127.0.0.1:${server.httpPort}/`)).status, 200);
    await sleep(200); // the worker's stdout reaches the test through the primary
    return server.lines.filter((l) => /request/.test(l.msg ?? '') && l.reqId !== undefined);
  } finally {
    await server.stop();
  }
}

test('LOG_LEVEL=debug logs each request with its reqId; info logs none', async () => {
  const debug = await requestLines('debug');
  assert.ok(debug.filter((l) => l.msg === 'incoming request').length >= 3, JSON.stringify(debug.slice(0, 2)));
  assert.equal(new Set(debug.map((l) => l.reqId)).size >= 3, true, 'each request its own reqId');
  assert.deepEqual(await requestLines('info'), []);
});
