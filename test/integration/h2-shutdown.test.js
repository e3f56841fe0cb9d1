// Graceful shutdown on every HTTP/2 listener (issue 14, item 6): a first GOAWAY with the largest
// stream id and a PING, then, once the PING is answered, the final GOAWAY. Requests the client
// sent before it saw the first GOAWAY are served, not refused (RFC 9113 section 6.8).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grpcFrame } from '../../proto/index.js';
import { GET_USER_RPC } from '../../proto/payload.js';
import { MAX_STREAM_ID } from '../../server/h2-guard.js';
import {
  CODE, dataFrame, FLAG, frame, getRequestHeaders, grpcRequestHeaders, headerBlock, headersFrame, rawH2Connect, TYPE,
} from '../helpers/h2-raw.js';
import { startServer } from '../helpers/server.js';
import { EVENT } from '../../server/events.js';

// Each hardened HTTP/2 listener (server/listeners.js) and the frames of one request on a stream.
const REQUESTS = {
  grpc: (id) => [headersFrame(id, headerBlock(grpcRequestHeaders(`/${GET_USER_RPC}`))),
    dataFrame(id, grpcFrame(new Uint8Array(0)), FLAG.END_STREAM)],
  'json-h2': (id) => [headersFrame(id, headerBlock(getRequestHeaders('/')), FLAG.END_HEADERS | FLAG.END_STREAM)],
};

test('SIGTERM: GOAWAY(2^31-1), PING, then GOAWAY(last stream); requests in flight are served', async () => {
  const server = await startServer({ MODE: 'all' });
  const conns = {};
  try {
    for (const name of Object.keys(REQUESTS)) {
      conns[name] = await rawH2Connect(server.ports[name], { answerPings: false });
      await conns[name].waitFor((f) => f.type === TYPE.SETTINGS && f.flags & FLAG.ACK);
    }
    server.proc.kill('SIGTERM');
    await server.waitForLine((l) => l.event === EVENT.DRAINING);
    await Promise.all(Object.entries(conns).map(async ([name, conn]) => {
      // Two requests on the wire before this client can have seen any GOAWAY.
      conn.send(...REQUESTS[name](1), ...REQUESTS[name](3));
      const first = await conn.waitFor((f) => f.type === TYPE.GOAWAY);
      assert.deepEqual(first?.goaway, { lastStreamId: MAX_STREAM_ID, code: CODE.NO_ERROR, debug: '' }, `${name}: first GOAWAY`);
      const ping = await conn.waitFor((f) => f.type === TYPE.PING && !(f.flags & FLAG.ACK));
      assert.ok(ping, `${name}: no PING with the first GOAWAY`);
      conn.send(frame(TYPE.PING, FLAG.ACK, 0, ping.payload));
      const last = await conn.waitFor((f) => f.type === TYPE.GOAWAY && f !== first, 5000);
      assert.deepEqual(last?.goaway, { lastStreamId: 3, code: CODE.NO_ERROR, debug: '' }, `${name}: final GOAWAY`);
      for (const id of [1, 3]) {
        const end = await conn.waitFor((f) => f.streamId === id && (f.flags & FLAG.END_STREAM || f.type === TYPE.RST_STREAM), 5000);
        assert.ok(end && end.type !== TYPE.RST_STREAM, `${name}: stream ${id} was not served: ${JSON.stringify(end)}`);
      }
    }));
    const [code] = await server.exited;
    assert.equal(code, 0);
  } finally {
    for (const conn of Object.values(conns)) conn.destroy();
    await server.stop();
  }
});
