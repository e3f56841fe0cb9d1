// An own service (PROTO, PROTO_PATH, RPC, RESPONSE) answers both ways with its samples in turn, each answer the very
// message of its sample, as an independent implementation sees it: Google's Python protobuf (test/helpers/pyproto.py)
// parses the samples, every JSON answer and every gRPC answer, and their deterministic serializations must be equal.
// The schema (test/fixtures/own/) has every proto3 type whose JSON mapping is easy to get wrong, across two import
// directories; the second test gives the server the schema as a FileDescriptorSet that protoc wrote. The built-in OTLP
// services get the same check, and the project's reading of their example requests is compared with Python's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { ensureTool } from '../../bench/tools.js';
import { BUILT_IN_SERVICES } from '../../proto/own/builtins.js';
import { toJsonText } from '../../proto/own/samples.js';
import { loadOwnService } from '../../proto/own/service.js';
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

/**
 * @typedef {object} Called an own service as these checks call it
 * @property {string} rpc `package.Service/Method`
 * @property {{protos: string[], includes: string[]}} schema its files, for Python
 * @property {string} responseType the response message's full name, for Python
 * @property {import('../helpers/pyproto.js').PyprotoResult[]} samples Python's view of the response samples, in turn
 * @property {(i: number) => string} requestText the i-th request as JSON text, for the HTTP twin
 * @property {(i: number) => Buffer} requestBytes the i-th request's binary encoding, for the gRPC twin
 */

/**
 * The shop's service: the i-th request cycles through requests.ndjson.
 * @returns {Called}
 */
const shop = () => ({
  rpc: RPC, schema: SCHEMA, responseType: 'shop.v1.Order', samples,
  requestText: (i) => requestTexts[i % requestTexts.length],
  requestBytes: (i) => Buffer.from(requests[i % requests.length].binary_b64, 'base64'),
});

/** N unary calls in a row on one grpc-js channel, with identity codecs: the raw answer bytes of each. */
async function grpcAnswers(port, count, { rpc, requestBytes }) {
  const [service, method] = rpc.split('/');
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
async function jsonAnswers(port, count, { rpc, requestText }) {
  const answers = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/${rpc}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: requestText(i),
    });
    const body = await res.text();
    assert.equal(res.status, 200, `POST /${rpc} (call ${i}): ${res.status} ${body.slice(0, 300)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `call ${i}`);
    answers.push(body);
  }
  return answers;
}

/**
 * Starts the own service with `env` (its schema and RESPONSE), calls each twin once per sample, and has Python parse
 * every answer: answer i of each twin must be sample i. Compared as Python's canonical JSON first (the readable
 * difference: map order and number formatting do not count there) and then as Python's deterministic serialization
 * (the exact message).
 * @param {import('node:test').TestContext} t
 * @param {Record<string, string>} env the server's settings beside MODE, WORKERS and RPC
 * @param {Called} called
 */
async function checkTwins(t, env, called) {
  const { samples } = called;
  const server = await startServer({ MODE: 'http,grpc', WORKERS: '1', RPC: called.rpc, ...env });
  t.after(() => server.stop());
  const count = samples.length;
  // Each twin in turn, each call after the last: sample 0, 1, ... N-1 whether the worker counts per twin or for both.
  const fromJson = await jsonAnswers(server.httpPort, count, called);
  const fromGrpc = await grpcAnswers(server.grpcPort, count, called);

  const parsed = await pyproto({ ...called.schema, type: called.responseType, inputs: [
    ...fromJson.map((json_text) => ({ json_text })),
    ...fromGrpc.map((bytes) => ({ binary_b64: Buffer.from(bytes).toString('base64') })),
  ] });
  const twins = { 'JSON over HTTP': parsed.slice(0, count), gRPC: parsed.slice(count) };
  for (const [twin, answers] of Object.entries(twins)) {
    for (const [i, answer] of answers.entries()) {
      const raw = twin === 'gRPC' ? `${fromGrpc[i].length} bytes` : fromJson[i].slice(0, 300);
      assert.ok(!('error' in answer), `${twin} answer ${i} is not a ${called.responseType} to Python: ${answer.error} (${raw})`);
      assert.deepEqual(answer.json, samples[i].json, `${twin} answer ${i} is not sample ${i} (canonical JSON, by Python)`);
      assert.equal(answer.binary_b64, samples[i].binary_b64,
        `${twin} answer ${i} is not sample ${i} (deterministic serialization, by Python)`);
    }
  }
}

test('PROTO as a .proto with imports in two PROTO_PATH directories: both twins answer sample i at call i', async (t) => {
  await checkTwins(t, { PROTO, PROTO_PATH: INCLUDES.join(':'), RESPONSE: RESPONSES }, shop());
});

test('PROTO as a FileDescriptorSet written by protoc (--include_imports): the same answers, no PROTO_PATH needed',
  async (t) => {
    const dir = await tempDir(t, 'own-service-');
    const set = await descriptorSet({ ...SCHEMA, out: path.join(dir, 'shop.binpb') });
    await checkTwins(t, { PROTO: set, RESPONSE: RESPONSES }, shop());
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

// The built-in OTLP services (issue 37). Their requests are opentelemetry-proto's examples with the ids converted to
// base64 (proto/otlp/SOURCE.md): the project must read each as Python reads it, and both twins must take it. A collector
// answers an empty response, or a partial success: the response samples are both, the count past 2^53, which the
// mapping writes as a string and a JavaScript number would round.
// And the batches of 64 as SDKs send them (scripts/otlp-batches.js), the same way.
const REJECTED = { 'otlp-traces': 'rejectedSpans', 'otlp-metrics': 'rejectedDataPoints', 'otlp-logs': 'rejectedLogRecords',
  'otlp-traces-64': 'rejectedSpans', 'otlp-metrics-64': 'rejectedDataPoints', 'otlp-logs-64': 'rejectedLogRecords' };
for (const [name, rejected] of Object.entries(REJECTED)) {
  test(`${name}: the project reads the example request as Python does, and both twins answer response sample i at call i`, async (t) => {
    const builtIn = BUILT_IN_SERVICES[name];
    const inProto = (file) => path.join(ROOT, 'proto', file);
    const schema = { protos: [inProto(builtIn.proto)], includes: builtIn.protoPath.map(inProto) };
    const env = { PROTO: schema.protos[0], PROTO_PATH: schema.includes.join(':') };
    const requestFile = inProto(/** @type {string} */ (builtIn.request));
    const { rpc, requests: ours } = loadOwnService({ ...env, RPC: builtIn.rpc, REQUEST: requestFile });
    const requestType = rpc.requestType.fullName.slice(1);
    const responseType = rpc.responseType.fullName.slice(1);

    // The example as Python reads the file, and the project's reading of it, as its binary and as its JSON.
    const [python, ourBinary, ourJson] = await pyproto({ ...schema, type: requestType, inputs: [
      { json_file: requestFile },
      { binary_b64: Buffer.from(rpc.requestType.encode(ours.messages[0]).finish()).toString('base64') },
      { json_text: toJsonText(rpc.requestType, ours.messages[0]) },
    ] });
    assert.ok(!('error' in python), `${requestFile} is not a ${requestType} to Python: ${python.error}`);
    assert.ok(python.binary_b64.length > 100, 'the example request is not empty');
    for (const [what, result] of [['binary encoding', ourBinary], ['JSON', ourJson]]) {
      assert.deepEqual(result.json, python.json, `the project's ${what} of the example is not Python's (canonical JSON)`);
      assert.equal(result.binary_b64, python.binary_b64, `the project's ${what} of the example is not Python's (deterministic serialization)`);
    }

    const dir = await tempDir(t, `own-${name}-`);
    const responses = path.join(dir, 'responses.ndjson');
    writeFileSync(responses, `{}\n${JSON.stringify({ partialSuccess: { [rejected]: '9007199254740993', errorMessage: 'over quota' } })}\n`);
    const samples = await pyproto({ ...schema, type: responseType, inputs: [{ json_file: responses }] });
    assert.equal(samples[1].json?.partialSuccess?.[rejected], '9007199254740993', JSON.stringify(samples[1]));
    const text = readFileSync(requestFile, 'utf8');
    const bytes = Buffer.from(python.binary_b64, 'base64');
    await checkTwins(t, { ...env, RESPONSE: responses },
      { rpc: builtIn.rpc, schema, responseType, samples, requestText: () => text, requestBytes: () => bytes });
  });
}
