// Hostile HTTP/2 clients (issue 14), against every HTTP/2 listener of one MODE=all worker:
// protocol errors, malformed headers, resets racing answers, rapid-reset and CONTINUATION floods,
// a peer that stops answering, and the announced bounds. Each attack comes from the raw-frame
// client in helpers/h2-raw.js; afterwards the worker is the same process and still serves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { grpcFrame } from '../../proto/index.js';
import { GET_USER_RPC } from '../../proto/payload.js';
import {
  CODE, continuationFrame, dataFrame, FLAG, getRequestHeaders, grpcRequestHeaders, headerBlock, headersFrame,
  pingFrame, rapidResetFlood, rawH2Connect, rstStreamFrame, SETTING, TYPE, windowUpdateFrame,
} from '../helpers/h2-raw.js';
import { establishedOn, eventually, h2GetUser, h2Request, rssMib } from '../helpers/proc.js';
import { startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';
import { LISTENERS as REGISTRY } from '../../server/listeners.js';

const GRPC_PATH = `/${GET_USER_RPC}`;
// Small bounds, so that a test reaches them quickly; the defaults are checked in settings.test.js.
const BOUNDS = {
  H2_MAX_CONCURRENT_STREAMS: 8, H2_MAX_HEADER_LIST_BYTES: 4096, H2_IDLE_PING_MS: 500, H2_CLOSE_GRACE_MS: 300,
  // Past the PING test's wait (2 sweeps + the grace + 1 s), so that it sees the PINGs, not the idle close.
  H2_IDLE_TIMEOUT_MS: 3000, H2_MIN_PING_INTERVAL_MS: 60000, H2_MAX_PING_STRIKES: 2,
  // Well above what the rapid-reset flood holds at once (its lingering sockets must not meet the cap).
  MAX_CONNECTIONS: 64,
};

// Every hardened HTTP/2 listener (the anchors, bare baselines and peers, run unguarded as their users run them):
// the request it takes, and a check that it still serves.
const LISTENERS = {
  grpc: { headers: grpcRequestHeaders(GRPC_PATH), serves: async (port) => assert.equal((await h2GetUser(port)).grpcStatus, '0') },
  'json-h2': { headers: getRequestHeaders('/'), serves: async (port) => assert.equal((await h2Request(port)).status, 200) },
  'connect-grpc': { headers: grpcRequestHeaders(GRPC_PATH), serves: async (port) => assert.equal((await h2GetUser(port)).grpcStatus, '0') },
};

test('every hardened HTTP/2 listener of the registry is attacked here', () => {
  assert.deepEqual(Object.keys(LISTENERS).sort(), Object.keys(REGISTRY).filter((n) => REGISTRY[n].transport === 'HTTP/2' && REGISTRY[n].hardened).sort());
});

// Frame sequences that once killed the baseline-grpc worker when it was guarded (issue 14, item 1), and more.
const block = (headers) => headerBlock(headers);
const ATTACKS = {
  'WINDOW_UPDATE overflowing the connection window after a stream opened': (h) => [
    headersFrame(1, block(h)), windowUpdateFrame(0, 2 ** 31 - 1), windowUpdateFrame(0, 2 ** 31 - 1)],
  'DATA on stream 0': (h) => [headersFrame(1, block(h)), dataFrame(0, Buffer.from('x'))],
  'HEADERS with a lower stream id than the previous one': (h) => [
    headersFrame(5, block(h), FLAG.END_HEADERS | FLAG.END_STREAM), headersFrame(3, block(h), FLAG.END_HEADERS | FLAG.END_STREAM)],
  'a header name in upper case': (h) => [headersFrame(1, block([...h, ['X-Upper', '1']]), FLAG.END_HEADERS | FLAG.END_STREAM)],
  'a connection-specific header': (h) => [headersFrame(1, block([...h, ['connection', 'keep-alive']]), FLAG.END_HEADERS | FLAG.END_STREAM)],
  'no :path': () => [headersFrame(1, block([[':method', 'POST'], [':scheme', 'http']]), FLAG.END_HEADERS | FLAG.END_STREAM)],
  'RST_STREAM with an unknown error code (255)': (h) => [headersFrame(1, block(h)), rstStreamFrame(1, 255)],
  'cancels racing the answers (50 × HEADERS, DATA with END_STREAM, RST_STREAM CANCEL)': (h) => Array.from({ length: 50 }, (_, i) => [
    headersFrame(2 * i + 1, block(h)), dataFrame(2 * i + 1, grpcFrame(new Uint8Array(0)), FLAG.END_STREAM),
    rstStreamFrame(2 * i + 1, CODE.CANCEL)]).flat(),
  'a CONTINUATION flood (HEADERS without END_HEADERS, then 5000 CONTINUATION frames)': (h) => [
    headersFrame(1, block(h), 0), ...Array.from({ length: 5000 }, () => continuationFrame(1, block([['x-a', 'b']])))],
};

describe('hostile HTTP/2 clients', () => {
  let server;
  let workerPid;
  before(async () => {
    server = await startServer({ MODE: 'all', ...Object.fromEntries(Object.entries(BOUNDS).map(([k, v]) => [k, String(v)])) });
    [workerPid] = server.workerPids();
  });
  after(() => server?.stop());

  /** The worker that served before is the one serving now, and none died. */
  const assertSameWorker = () => {
    assert.deepEqual(server.workerPids(), [workerPid]);
    assert.equal(server.lines.filter((l) => [EVENT.UNCAUGHT_EXCEPTION, EVENT.WORKER_REPLACED, EVENT.WORKER_DIED_EARLY].includes(l.event)).length, 0, server.output());
  };

  for (const [name, listener] of Object.entries(LISTENERS)) {
    describe(name, () => {
      const port = () => server.ports[name];

      test('announces its bounds in its SETTINGS frame', async () => {
        const conn = await rawH2Connect(port());
        const settings = await conn.waitFor((f) => f.type === TYPE.SETTINGS && !(f.flags & FLAG.ACK));
        conn.destroy();
        assert.equal(settings?.settings[SETTING.MAX_CONCURRENT_STREAMS], BOUNDS.H2_MAX_CONCURRENT_STREAMS);
        assert.equal(settings?.settings[SETTING.MAX_HEADER_LIST_SIZE], BOUNDS.H2_MAX_HEADER_LIST_BYTES);
      });

      for (const [attack, frames] of Object.entries(ATTACKS)) {
        test(`survives ${attack}`, async () => {
          const conn = await rawH2Connect(port());
          conn.send(...frames(listener.headers));
          await conn.waitFor((f) => f.type === TYPE.GOAWAY, 500);
          conn.destroy();
          await listener.serves(port());
          assertSameWorker();
        });
      }

      test('serves no stream past the concurrent-stream limit', async () => {
        const conn = await rawH2Connect(port());
        await conn.waitFor((f) => f.type === TYPE.SETTINGS && f.flags & FLAG.ACK); // the limit applies once acknowledged
        const limit = BOUNDS.H2_MAX_CONCURRENT_STREAMS;
        const extra = 2 * limit + 1;
        // Streams left open (no END_STREAM), then one more, in one write: nghttp2 reads them in one
        // pass, before a handler can answer (and so close) an earlier stream.
        conn.send(...Array.from({ length: limit + 1 }, (_, i) => headersFrame(2 * i + 1, block(listener.headers))));
        // nghttp2 answers with a connection error (GOAWAY below the extra stream) where RFC 9113 5.1.2
        // allows a stream error too (RST_STREAM); either way the extra stream is not served.
        const refusal = await conn.waitFor((f) => (f.type === TYPE.RST_STREAM && f.streamId === extra)
          || (f.type === TYPE.GOAWAY && f.goaway.lastStreamId < extra));
        conn.destroy();
        assert.ok(refusal, `no refusal of stream ${extra}: ${JSON.stringify(conn.frames.map((f) => [f.type, f.streamId]))}`);
        assert.ok(!conn.frames.some((f) => f.type === TYPE.HEADERS && f.streamId === extra), `stream ${extra} was answered`);
        await listener.serves(port());
        assertSameWorker();
      });

      test('resets a request whose header list is over the limit, and serves the next', async () => {
        const conn = await rawH2Connect(port());
        await conn.waitFor((f) => f.type === TYPE.SETTINGS && f.flags & FLAG.ACK);
        conn.send(headersFrame(1, block([...listener.headers, ['x-big', 'a'.repeat(BOUNDS.H2_MAX_HEADER_LIST_BYTES)]]),
          FLAG.END_HEADERS | FLAG.END_STREAM));
        const reset = await conn.waitFor((f) => f.streamId === 1);
        conn.destroy();
        assert.equal(reset?.type, TYPE.RST_STREAM, `stream 1 got ${JSON.stringify(reset)}`);
        assert.equal(reset.code, CODE.ENHANCE_YOUR_CALM);
        await listener.serves(port());
      });

      test('drops a connection that stops answering PING, keeps one that answers', async () => {
        const silent = await rawH2Connect(port(), { answerPings: false });
        const answering = await rawH2Connect(port());
        const timeoutMs = 2 * BOUNDS.H2_IDLE_PING_MS + BOUNDS.H2_CLOSE_GRACE_MS + 1000;
        assert.ok(await eventually(() => silent.isClosed(), timeoutMs), `still open after ${timeoutMs} ms`);
        assert.ok(silent.frames.some((f) => f.type === TYPE.PING && !(f.flags & FLAG.ACK)), 'the server sent no PING');
        assert.equal(answering.isClosed(), false);
        answering.destroy();
      });

      test('a rapid-reset flood: GOAWAY ENHANCE_YOUR_CALM, sockets released, memory back, worker serving', async () => {
        const flood = (durationMs) => rapidResetFlood(port(), { durationMs, connections: 4, headers: listener.headers });
        // The same flood first, at least three times and until the worker's RSS stops rising (under 10%
        // from one flood to the next; a flood's strength varies with the CPU the client gets):
        // its allocators then hold their working size, which glibc keeps after a flood
        // (docs/http2-hardening.md). A leak never gets there. The measured flood shows growth past it.
        let rssBefore = rssMib(workerPid);
        const warm = setInterval(() => { rssBefore = Math.max(rssBefore, rssMib(workerPid)); }, 100);
        let previous;
        let warmups = 0;
        do {
          previous = rssBefore;
          await flood(3000);
          await eventually(() => establishedOn(port()) === 0, 3000);
          warmups++;
        } while ((warmups < 3 || rssBefore > previous * 1.1) && warmups < 6);
        clearInterval(warm);
        assert.ok(rssBefore <= previous * 1.1, `worker RSS still rising after ${warmups} floods: ${previous.toFixed(0)} → ${rssBefore.toFixed(0)} MiB`);
        let peakSockets = 0;
        const sampler = setInterval(() => { peakSockets = Math.max(peakSockets, establishedOn(port())); }, 100);
        const stats = await flood(3000);
        clearInterval(sampler);
        assert.ok(stats.goaways[CODE.ENHANCE_YOUR_CALM] > 0, `GOAWAYs by code: ${JSON.stringify(stats.goaways)}`);
        assert.ok(peakSockets <= 8, `${peakSockets} sockets at once for 4 flooding connections`);
        assert.ok(await eventually(() => establishedOn(port()) === 0, 3000), `${establishedOn(port())} sockets left 3 s after the flood`);
        await listener.serves(port());
        assertSameWorker();
        // Back within 20% once the flood's garbage is collected, as the sockets are: within a few seconds.
        const trail = [];
        const settled = await eventually(() => trail.push(rssMib(workerPid)) && trail.at(-1) <= rssBefore * 1.2, 5000);
        assert.ok(settled, `worker RSS ${rssBefore.toFixed(1)} MiB before, then ${trail.filter((_, i) => i % 10 === 0).map((r) => r.toFixed(0)).join(', ')} MiB`);
      });
      // After the flood: its memory check measures growth from a plateau, and connections opened before it
      // (the cap test opens 68) moved that plateau: 3 of 8 runs failed with these tests before it, 0 of 4 after.
      test('PINGs without a call: GOAWAY ENHANCE_YOUR_CALM too_many_pings past the strikes; PINGs between calls are fine', async () => {
        const pinger = await rawH2Connect(port());
        await pinger.waitFor((f) => f.type === TYPE.SETTINGS && f.flags & FLAG.ACK);
        for (let i = 0; i <= BOUNDS.H2_MAX_PING_STRIKES + 1; i++) pinger.send(pingFrame(Buffer.alloc(8, i)));
        const goaway = await pinger.waitFor((f) => f.type === TYPE.GOAWAY);
        assert.deepEqual([goaway?.goaway.code, goaway?.goaway.debug], [CODE.ENHANCE_YOUR_CALM, 'too_many_pings']);
        assert.ok(await eventually(() => pinger.isClosed(), 2000), 'the connection stays open');

        // A call between PINGs resets the strikes (a client's BDP PINGs come with data).
        const caller = await rawH2Connect(port());
        await caller.waitFor((f) => f.type === TYPE.SETTINGS && f.flags & FLAG.ACK);
        for (let i = 0; i < 2 * (BOUNDS.H2_MAX_PING_STRIKES + 1); i++) {
          caller.send(pingFrame(Buffer.alloc(8, i)), headersFrame(2 * i + 1, block(listener.headers), FLAG.END_HEADERS | FLAG.END_STREAM));
          await caller.waitFor((f) => f.type === TYPE.HEADERS && f.streamId === 2 * i + 1);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.ok(!caller.frames.some((f) => f.type === TYPE.GOAWAY), 'GOAWAY although every PING came with a call');
        assert.equal(caller.isClosed(), false);
        caller.destroy();
        assertSameWorker();
      });

      test('an idle connection is closed gracefully after H2_IDLE_TIMEOUT_MS: GOAWAY NO_ERROR', async () => {
        const conn = await rawH2Connect(port());
        conn.send(headersFrame(1, block(listener.headers), FLAG.END_HEADERS | FLAG.END_STREAM));
        await conn.waitFor((f) => f.type === TYPE.HEADERS && f.streamId === 1);
        const answeredAt = Date.now();
        const goaway = await conn.waitFor((f) => f.type === TYPE.GOAWAY, BOUNDS.H2_IDLE_TIMEOUT_MS + 2 * BOUNDS.H2_IDLE_PING_MS + 1000);
        const idleMs = Date.now() - answeredAt;
        assert.deepEqual([goaway?.goaway.code, goaway?.goaway.lastStreamId], [CODE.NO_ERROR, 1]);
        assert.ok(idleMs >= BOUNDS.H2_IDLE_TIMEOUT_MS - 50, `closed after ${idleMs} ms idle`);
        assert.ok(await eventually(() => conn.isClosed(), 2000), 'the socket stays open after the GOAWAY');
      });

      test('connections past MAX_CONNECTIONS are closed at once; the ones within it are served', async () => {
        const conns = [];
        for (let i = 0; i < BOUNDS.MAX_CONNECTIONS + 4; i++) conns.push(await rawH2Connect(port()));
        // The primary accepts each connection and hands it to the worker, which closes it on arrival: on a loaded machine
        // the hand-over can take longer than a fixed wait (0 of 68 closed after 300 ms in CI, 2026-11-27). Up to 2 s, as
        // the HTTP/1.1 listeners' test waits (test/integration/bad-input.test.js).
        const closedCount = () => conns.filter((c) => c.isClosed()).length;
        await eventually(() => closedCount() >= 4, 2000);
        const closed = closedCount();
        for (const c of conns) c.destroy();
        // The other listeners' and earlier tests' sockets of this worker may count too: at least the extra four.
        assert.ok(closed >= 4, `${closed} of ${conns.length} closed`);
        await eventually(() => establishedOn(port()) === 0, 3000);
        await listener.serves(port());
        assertSameWorker();
      });
    });
  }
});
