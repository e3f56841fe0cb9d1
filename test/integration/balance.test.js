// Balance across workers (issue 12, item 1): node:cluster hands out connections, not requests, so
// a client with one long-lived gRPC connection loads one worker whatever WORKERS says.
// GRPC_MAX_CONNECTION_AGE_MS makes the client reconnect, and its calls spread over the workers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { userServiceDefinition } from '../../proto/index.js';
import { startServer } from '../helpers/server.js';

/**
 * Unary GetUser calls for durationMs on ONE channel (one connection at a time, as ghz's default),
 * counted by the worker pid that answered.
 * @returns {Promise<{byWorker: Map<number, number>, failed: number, total: number}>}
 */
async function oneConnectionLoad(port, durationMs) {
  const Client = grpc.makeGenericClientConstructor(userServiceDefinition(), 'UserService');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const byWorker = new Map();
  let failed = 0;
  const end = Date.now() + durationMs;
  // Four calls in flight, all on the channel's one connection.
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (Date.now() < end) {
      await new Promise((resolve) => client.GetUser({}, { deadline: Date.now() + 5000 }, (err, user) => {
        if (err) failed++;
        else byWorker.set(user.workerPid, (byWorker.get(user.workerPid) ?? 0) + 1);
        resolve(undefined);
      }));
    }
  }));
  client.close();
  return { byWorker, failed, total: [...byWorker.values()].reduce((a, b) => a + b, 0) + failed };
}

const largestShare = ({ byWorker, total }) => Math.max(...byWorker.values()) / total;

test('one gRPC connection, 2 workers: one worker serves (nearly) every call', async () => {
  const server = await startServer({ MODE: 'grpc', WORKERS: '2' });
  try {
    const load = await oneConnectionLoad(server.grpcPort, 2000);
    assert.equal(load.failed, 0);
    assert.ok(load.total > 200, `only ${load.total} calls`);
    assert.ok(largestShare(load) >= 0.95, `largest share ${(100 * largestShare(load)).toFixed(1)}%: ${JSON.stringify([...load.byWorker])}`);
  } finally {
    await server.stop();
  }
});

test('GRPC_MAX_CONNECTION_AGE_MS: the client reconnects and its calls spread, none failing', async () => {
  const server = await startServer({ MODE: 'grpc', WORKERS: '2', GRPC_MAX_CONNECTION_AGE_MS: '200' });
  try {
    const load = await oneConnectionLoad(server.grpcPort, 4000);
    assert.equal(load.failed, 0, 'a call failed across a GOAWAY');
    assert.ok(load.total > 200, `only ${load.total} calls`);
    assert.equal(load.byWorker.size, 2, `served by ${JSON.stringify([...load.byWorker])}`);
    assert.ok(largestShare(load) <= 0.7, `largest share ${(100 * largestShare(load)).toFixed(1)}%: ${JSON.stringify([...load.byWorker])}`);
  } finally {
    await server.stop();
  }
});
