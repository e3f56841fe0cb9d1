// The built-in users-stream (scripts/users-stream-samples.js, proto/own/builtins.js): the committed samples are the
// generator's output byte for byte, so they follow proto/payload.js's User, and they load as the job loads them: one
// request, one stream of the 100 Users of users-100.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { requestsText, responsesText, SAMPLE_FILES, SAMPLE_WHO } from '../../scripts/users-stream-samples.js';
import { BUILT_IN_SERVICES } from '../../proto/own/builtins.js';
import { SCENARIOS, USER_FIELDS, USERS_STREAM } from '../../proto/payload.js';
import { loadOwnService } from '../../proto/own/service.js';
import { ROOT } from '../../bench/root.js';

const inProto = (file) => path.join(ROOT, 'proto', file);
const builtIn = BUILT_IN_SERVICES['users-stream'];

test('the samples are the generator\'s, and the built-in names them', () => {
  assert.equal(builtIn.request, SAMPLE_FILES.request);
  assert.equal(builtIn.response, SAMPLE_FILES.response);
  assert.equal(readFileSync(inProto(SAMPLE_FILES.request), 'utf8'), requestsText(), 'rerun node scripts/users-stream-samples.js');
  assert.equal(readFileSync(inProto(SAMPLE_FILES.response), 'utf8'), responsesText(), 'rerun node scripts/users-stream-samples.js');
});

test('they load as a server stream of users-100\'s Users, one a message, with users-100\'s request', () => {
  const { rpc, requests, responses } = loadOwnService({ PROTO: inProto(builtIn.proto), PROTO_PATH: builtIn.protoPath.map(inProto).join(':'),
    RPC: builtIn.rpc, REQUEST: inProto(builtIn.request), RESPONSE: inProto(builtIn.response) });
  assert.equal(rpc.kind, 'server streaming');
  assert.deepEqual(USERS_STREAM.request, SCENARIOS['users-100'].request);
  assert.equal(requests.messages.length, 1);
  assert.equal(requests.messages[0].count, 100);
  assert.deepEqual(responses.streams, [Array.from({ length: 100 }, (_, i) => i)]);
  const users = SCENARIOS['users-100'].fields(SAMPLE_WHO).users;
  assert.equal(responses.messages.length, users.length);
  for (const m of responses.messages) {
    assert.deepEqual({ ...rpc.responseType.toObject(m, { enums: String, defaults: true }) },
      { ...USER_FIELDS, port: SAMPLE_WHO.port, workerPid: SAMPLE_WHO.workerPid });
  }
  // Every User the same, so every message the same size.
  assert.ok(responses.protobufBytes.every((b) => b === responses.protobufBytes[0]));
});
