// An own service (PROTO, PROTO_PATH, RPC, RESPONSE) answers both ways with its samples in turn, each answer the very
// message of its sample, as an independent implementation sees it: Google's Python protobuf (test/helpers/pyproto.py)
// parses the samples, every JSON answer and every gRPC answer, and their deterministic serializations must be equal.
// The schema (test/fixtures/own/) has every proto3 type whose JSON mapping is easy to get wrong, across two import
// directories; the second test gives the server the schema as a FileDescriptorSet that protoc wrote.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { ensureTool } from '../../bench/tools.js';
import { descriptorSet, ensurePyproto, pyproto } from '../helpers/pyproto.js';
import { ROOT, startServer } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');
const INCLUDES = [path.join(OWN, 'a'), path.join(OWN, 'b')];
const PROTO = path.join(OWN, 'a', 'shop', 'v1', 'shop.proto');
const RESPONSES = path.join(OWN, 'responses.json');
const REQUESTS = path.join(OWN, 'requests.ndjson');
const RPC = 'shop.v1.ShopService/GetOrder';
const SCHEMA = { protos: [PROTO], includes: INCLUDES };

/** Python's view of each sample, of each request line, and the request lines as written (JSON text, sent as is). */
let samples;
let requests;
let requestTexts;
before(async () => {
  await ensurePyproto(); // the venv, some 10 s the first time
  samples = await pyproto({ ...SCHEMA, type: 'shop.v1.Order', inputs: [{ json_file: RESPONSES }] });
  requests = await pyproto({ ...SCHEMA, type: 'shop.v1.GetOrderRequest', inputs: [{ json_file: REQUESTS }] });
  requestTexts = readFileSync(REQUESTS, 'utf8').split('\n').filter((line) => line.trim());
  for (const [i, result] of [...samples, ...requests].entries()) assert.ok(!('error' in result), `fixture ${i}: ${JSON.stringify(result)}`);
  assert.ok(samples.length >= 3, 'at least 3 samples');
  assert.equal(requests.length, requestTexts.length);
});

/** The i-th request, cycling through requests.ndjson: JSON text for the HTTP twin, bytes for the gRPC twin. */
const requestText = (i) => requestTexts[i % requestTexts.length];
const requestBytes = (i) => Buffer.from(requests[i % requests.length].binary_b64, 'base64');

/** N unary calls in a row on one grpc-js channel, with identity codecs: the raw answer bytes of each. */
async function grpcAnswers(port, count) {
  const [service, method] = RPC.split('/');
  const identity = (bytes) => bytes;
  const Client = grpc.makeGenericClientConstructor({
    [method]: { path: `/${service}/${method}`, requestStream: false, responseStream: false,
      requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  }, service);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  try {
    const answers = [];
    for (let i = 0; i < count; i++) {
      answers.push(await new Promise((resolve, reject) => client[method](requestBytes(i), { deadline: Date.now() + 5000 },
        (err, bytes) => (err ? reject(new Error(`gRPC call ${i}: ${err.code} ${err.details}`)) : resolve(bytes)))));
    }
    return answers;
  } finally {
    client.close();
  }
}

/** N POSTs in a row (fetch keeps the connection alive): the body text of each, checked to be a 200 with JSON. */
async function jsonAnswers(port, count) {
  const answers = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/${RPC}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: requestText(i),
    });
    const body = await res.text();
    assert.equal(res.status, 200, `POST /${RPC} (call ${i}): ${res.status} ${body.slice(0, 300)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `call ${i}`);
    answers.push(body);
  }
  return answers;
}

/**
 * Starts the own service with `env`, calls each twin once per sample, and has Python parse every answer: answer i of
 * each twin must be sample i. Compared as Python's canonical JSON first (the readable difference: map order and
 * number formatting do not count there) and then as Python's deterministic serialization (the exact message).
 */
async function checkTwins(t, env) {
  const server = await startServer({ MODE: 'http,grpc', WORKERS: '1', RPC, RESPONSE: RESPONSES, ...env });
  t.after(() => server.stop());
  const count = samples.length;
  // Each twin in turn, each call after the last: sample 0, 1, ... N-1 whether the worker counts per twin or for both.
  const fromJson = await jsonAnswers(server.httpPort, count);
  const fromGrpc = await grpcAnswers(server.grpcPort, count);

  const parsed = await pyproto({ ...SCHEMA, type: 'shop.v1.Order', inputs: [
    ...fromJson.map((json_text) => ({ json_text })),
    ...fromGrpc.map((bytes) => ({ binary_b64: Buffer.from(bytes).toString('base64') })),
  ] });
  const twins = { 'JSON over HTTP': parsed.slice(0, count), gRPC: parsed.slice(count) };
  for (const [twin, answers] of Object.entries(twins)) {
    for (const [i, answer] of answers.entries()) {
      const raw = twin === 'gRPC' ? `${fromGrpc[i].length} bytes` : fromJson[i].slice(0, 300);
      assert.ok(!('error' in answer), `${twin} answer ${i} is not an Order to Python: ${answer.error} (${raw})`);
      assert.deepEqual(answer.json, samples[i].json, `${twin} answer ${i} is not sample ${i} (canonical JSON, by Python)`);
      assert.equal(answer.binary_b64, samples[i].binary_b64,
        `${twin} answer ${i} is not sample ${i} (deterministic serialization, by Python)`);
    }
  }
}

test('PROTO as a .proto with imports in two PROTO_PATH directories: both twins answer sample i at call i', async (t) => {
  await checkTwins(t, { PROTO, PROTO_PATH: INCLUDES.join(':') });
});

test('PROTO as a FileDescriptorSet written by protoc (--include_imports): the same answers, no PROTO_PATH needed',
  async (t) => {
    const dir = await tempDir(t, 'own-service-');
    const set = await descriptorSet({ ...SCHEMA, out: path.join(dir, 'shop.binpb') });
    await checkTwins(t, { PROTO: set });
  });

test('server reflection serves the own schema: grpcurl, given no .proto, lists the service and calls the RPC, and Python reads the sample it answered',
  async (t) => {
    const grpcurl = ensureTool('grpcurl');
    const dir = await tempDir(t, 'own-reflection-');
    const set = await descriptorSet({ ...SCHEMA, out: path.join(dir, 'shop.binpb') });
    // The second request line: grpcurl's JSON reader takes no google.protobuf.FieldMask string (the first has one), with
    // or without reflection.
    const request = requestTexts[1];
    for (const [form, env] of [['.proto', { PROTO, PROTO_PATH: INCLUDES.join(':') }], ['FileDescriptorSet', { PROTO: set }]]) {
      const server = await startServer({ MODE: 'grpc', WORKERS: '1', RPC, RESPONSE: RESPONSES, ...env });
      try {
        const target = `127.0.0.1:${server.grpcPort}`;
        const run = (args, input) => new Promise((resolve, reject) => {
          const child = execFile(grpcurl, ['-plaintext', ...args], { timeout: 15000, maxBuffer: 16 * 1024 * 1024 },
            (err, stdout, stderr) => (err ? reject(new Error(`${form}: grpcurl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout)));
          child.stdin.end(input ?? '');
        });
        const listed = (await run([target, 'list'])).split('\n').filter(Boolean);
        assert.ok(listed.includes('shop.v1.ShopService') && listed.includes('user.v1.UserService'), `${form}: ${listed.join(', ')}`);
        // Call i answers sample i. Samples 0 and 1 hold a FieldMask, which grpcurl prints as {"paths": [...]}, not as the
        // mapping's string (it reads none either, see above): the third call's answer, sample 2, is the one compared.
        let printed = '';
        for (let i = 0; i < 3; i++) printed = await run(['-d', '@', target, RPC], request);
        const [answer] = await pyproto({ ...SCHEMA, type: 'shop.v1.Order', inputs: [{ json_text: printed }] });
        assert.ok(!('error' in answer), `${form}: grpcurl's output is not an Order to Python: ${answer.error}`);
        assert.deepEqual(answer.json, samples[2].json, `${form}: grpcurl's answer, by reflection, is not sample 2`);
        assert.equal(answer.binary_b64, samples[2].binary_b64, `${form}: not sample 2 (deterministic serialization, by Python)`);
      } finally {
        await server.stop();
      }
    }
  });
