// What the ghz column and the multiplexed-drain tests count as refused at the door (bench/faults/mux-client.js): the
// errors grpc-go 1.34 and 1.56 give a call that never reached a worker, and not those of a call lost on a live connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REFUSED_AT_THE_DOOR } from '../../bench/faults/mux-client.js';

test('refused at the door: a failed dial, a connection closed before the server\'s preface, a GOAWAY\'s unprocessed call', () => {
  // As ghz printed them (CI, 2026-11-25).
  for (const error of [
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:23235: connect: connection refused"',
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:23235: connect: connection reset by peer"',
    'rpc error: code = Unavailable desc = connection closed',
    'rpc error: code = Unavailable desc = the connection is draining',
    // ghz v0.120.0 (grpc-go 1.56.3): as it printed it here (2026-11-26), and the early close as its source words it.
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:20851: connect: connection refused"',
    'rpc error: code = Unavailable desc = connection error: desc = "error reading server preface: EOF"',
  ]) assert.match(error, REFUSED_AT_THE_DOOR);
  // A call on a connection that broke under it is lost, not refused.
  for (const error of [
    'rpc error: code = Unavailable desc = transport is closing',
    'rpc error: code = Unavailable desc = connection error: desc = "transport: error while reading: read tcp 127.0.0.1:40000->127.0.0.1:23235: read: connection reset by peer"',
    'rpc error: code = Internal desc = stream terminated by RST_STREAM with error code: INTERNAL_ERROR',
  ]) assert.doesNotMatch(error, REFUSED_AT_THE_DOOR);
});
