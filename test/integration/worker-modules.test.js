// What a worker loads to start (issue 47, docs/findings/2026-11-28-worker-start.md): only the libraries of the listeners
// its MODE opens, the gRPC health and reflection libraries only once called, no undici (an ESM import of node:http
// loads it), and the modules compiled with the compile cache on (server/index.js). Evidence from inside the worker:
// test/helpers/worker-modules.js, preloaded.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { grpcHealthClient } from '../helpers/clients.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const PRELOAD = path.join(ROOT, 'test/helpers/worker-modules.js');
/** Packages as their folder under node_modules, matched anywhere in a path (nested copies too). */
const pkg = (name) => `${path.sep}node_modules${path.sep}${name}${path.sep}`;

/**
 * Starts a server with MODE, does `during` with it, stops it, and reads what its one worker had loaded by then.
 * @returns {Promise<{packages: (name: string) => boolean, builtins: string[], compileCacheDir: string|null}>}
 */
async function loadedBy(t, mode, during = async () => {}) {
  const dir = await tempDir(t, 'worker-modules-');
  const server = await startServer({ MODE: mode, WORKER_MODULES_DIR: dir,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${PRELOAD}`.trim() });
  try {
    await during(server);
  } finally {
    await server.stop();
  }
  const files = await readdir(dir);
  assert.equal(files.length, 1, `one worker's evidence, not ${files.length}`);
  const evidence = JSON.parse(await readFile(path.join(dir, files[0]), 'utf8'));
  return { ...evidence, packages: (name) => evidence.files.some((f) => f.includes(pkg(name))) };
}

test('an HTTP worker loads fastify and no gRPC library, nor undici', async (t) => {
  const loaded = await loadedBy(t, 'http');
  assert.ok(loaded.packages('fastify'), 'fastify is loaded (else the evidence is empty)');
  for (const name of ['@grpc/grpc-js', '@grpc/proto-loader', 'grpc-health-check', '@grpc/reflection']) {
    assert.ok(!loaded.packages(name), `${name} is loaded`);
  }
  assert.ok(!loaded.builtins.some((m) => m.includes('undici')), 'undici is loaded');
});

test('a gRPC worker loads grpc-js and neither fastify nor its health and reflection libraries until they are called', async (t) => {
  const loaded = await loadedBy(t, 'grpc');
  assert.ok(loaded.packages('@grpc/grpc-js'));
  for (const name of ['fastify', '@grpc/proto-loader', 'grpc-health-check', '@grpc/reflection']) {
    assert.ok(!loaded.packages(name), `${name} is loaded`);
  }
  const called = await loadedBy(t, 'grpc', async (server) => {
    const health = grpcHealthClient(server.ports.grpc);
    try {
      assert.equal(await health.check(''), 'SERVING');
    } finally {
      health.close();
    }
  });
  assert.ok(called.packages('grpc-health-check'), 'a health check loads its library');
  assert.ok(!called.packages('@grpc/reflection'));
});

test('a worker compiles with the compile cache on, in node_modules/.cache', async (t) => {
  // Either variable, inherited by the server, overrides server/index.js's choice (Node's documented precedence).
  if (process.env.NODE_COMPILE_CACHE !== undefined || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) {
    t.skip('NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE is set here');
    return;
  }
  const loaded = await loadedBy(t, 'http');
  assert.ok(loaded.compileCacheDir?.startsWith(path.join(ROOT, 'node_modules/.cache/node-compile-cache')),
    `compile cache folder: ${loaded.compileCacheDir}`);
});
