// connect-node beside grpc-js and fastify (docs/connect.md): the connect listeners answer every scenario with the payload
// the others send, decoded; the Connect protocol's POST and GET both work; bad requests get the Connect and gRPC codes;
// grpcurl, a client of neither library, calls connect-grpc; both answer the standard health check.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import grpc from '@grpc/grpc-js';
import { methodOf, responseTypeOf, toProto3Json, userServiceDefinition } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';
import { ensureTool } from '../../bench/tools.js';
import { rawGrpcClient } from '../helpers/clients.js';
import { ROOT, startServer } from '../helpers/server.js';

let server;
before(async () => { server = await startServer({ MODE: 'http,grpc,connect-grpc,connect-json' }); });
after(() => server?.stop());

const port = (listener) => server.ports[listener];

/** A unary call with grpc-js's client and the project's protobufjs codecs: the decoded message, or the error. */
function grpcCall(listener, rpc, request) {
  const Client = grpc.makeGenericClientConstructor(userServiceDefinition(), 'UserService');
  const client = new Client(`127.0.0.1:${port(listener)}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  const type = methodOf(rpc).resolvedRequestType;
  return new Promise((resolve, reject) => client[rpc](type.fromObject(request), (err, res) => {
    client.close();
    err ? reject(err) : resolve(res);
  }));
}

/** The Connect protocol's unary POST with JSON, as the connect-json k6 script sends it. */
const connectPost = (rpc, body) => fetch(`http://127.0.0.1:${port('connect-json')}/${rpcPath(rpc)}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
});

/** The Connect protocol's unary GET (methods free of side effects): the message in the query. */
const connectGet = (rpc, message) => fetch(`http://127.0.0.1:${port('connect-json')}/${rpcPath(rpc)}?connect=v1&encoding=json`
  + `&message=${encodeURIComponent(JSON.stringify(message))}`);

/** A decoded payload with the port that served it set to 0: the one field in which listeners differ. */
const withoutPort = (payload, listenerPort) => JSON.parse(JSON.stringify(payload).replaceAll(`"port":${listenerPort}`, '"port":0'));

for (const [name, { httpPath, rpc, request, check }] of Object.entries(SCENARIOS)) {
  test(`scenario ${name}: fastify, grpc-js, connect-grpc and connect-json (POST and GET) answer the same payload`, async () => {
    const type = responseTypeOf(rpc);
    const fastify = await (await fetch(`http://127.0.0.1:${port('http')}${httpPath}`)).json();
    const grpcJs = toProto3Json(type, await grpcCall('grpc', rpc, request));
    const connectGrpc = toProto3Json(type, await grpcCall('connect-grpc', rpc, request));
    const post = await connectPost(rpc, request);
    assert.equal(post.status, 200);
    assert.match(post.headers.get('content-type'), /^application\/json/);
    const connectJson = await post.json();
    const get = await connectGet(rpc, request);
    assert.equal(get.status, 200);
    const connectJsonGet = await get.json();
    // Every answer is the scenario's payload, as the k6 scripts check it...
    for (const payload of [fastify, grpcJs, connectGrpc, connectJson, connectJsonGet]) assert.ok(check(payload));
    // ...and, but for the port that served it, the very same one.
    const reference = withoutPort(fastify, port('http'));
    assert.deepEqual(withoutPort(grpcJs, port('grpc')), reference);
    assert.deepEqual(withoutPort(connectGrpc, port('connect-grpc')), reference);
    assert.deepEqual(withoutPort(connectJson, port('connect-json')), reference);
    assert.deepEqual(withoutPort(connectJsonGet, port('connect-json')), reference);
    assert.ok(JSON.stringify(connectGrpc).includes(`"port":${port('connect-grpc')}`), 'served by connect-grpc');
    assert.ok(JSON.stringify(connectJson).includes(`"port":${port('connect-json')}`), 'served by connect-json');
  });
}

test('connect-json sends the bytes fastify sends for the demo\'s User, but for the port', async () => {
  const fastify = await (await fetch(`http://127.0.0.1:${port('http')}/`)).text();
  const connect = await (await connectPost('GetUser', {})).text();
  assert.equal(connect.replace(`"port":${port('connect-json')}`, '"port":0'), fastify.replace(`"port":${port('http')}`, '"port":0'));
});

test('a scenario parameter no listener serves: INVALID_ARGUMENT from connect-grpc, invalid_argument (400) from connect-json', async () => {
  await assert.rejects(grpcCall('connect-grpc', 'ListUsers', { count: 7 }),
    (err) => err.code === grpc.status.INVALID_ARGUMENT && /count must be one of 100/.test(err.details));
  const res = await connectPost('ListUsers', { count: 7 });
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), { code: 'invalid_argument', message: 'count must be one of 100' });
});

// connect-node decodes a unary request before any interceptor or handler runs and answers a message that does not parse
// with INTERNAL (connect-es serialization.js, "parse binary"; changed from INVALID_ARGUMENT in connectrpc/connect-es#1063 to
// follow Connect's conformance suite, as grpc-go answers). Pinned here so that an upgrade that changes it is seen
// (docs/connect.md); the grpc listener answers INVALID_ARGUMENT (bad-input.test.js).
test('a gRPC message that does not decode: connect-grpc answers INTERNAL naming the parse error, and serves on', async () => {
  const client = rawGrpcClient(port('connect-grpc'));
  try {
    // Wire type 7 does not exist.
    const { code, details } = await client.call(`/${rpcPath('GetUser')}`, Buffer.from([0x0f, 0x01]));
    assert.equal(code, grpc.status.INTERNAL, `${grpc.status[code]} ${details}`);
    // connect-node percent-encodes grpc-message's ':' too, and grpc-js decodes it with decodeURI, which leaves %3A.
    assert.match(decodeURIComponent(details), /^parse binary: illegal tag/);
  } finally {
    client.close();
  }
  const user = await grpcCall('connect-grpc', 'GetUser', {});
  assert.ok(SCENARIOS.user.check(toProto3Json(responseTypeOf('GetUser'), user)));
});

test('connect-json speaks only the Connect protocol, connect-grpc only gRPC', async () => {
  // A gRPC-Web call to connect-json: not a protocol it serves.
  const web = await fetch(`http://127.0.0.1:${port('connect-json')}/${rpcPath('GetUser')}`, {
    method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body: new Uint8Array(5),
  });
  assert.equal(web.status, 415);
  const unknown = await connectPost('NoSuchMethod', {});
  assert.equal(unknown.status, 404);
});

test('grpcurl calls connect-grpc with user.proto', async () => {
  const grpcurl = ensureTool('grpcurl');
  const { stdout } = await promisify(execFile)(grpcurl, ['-plaintext', '-emit-defaults', '-import-path', 'proto', '-proto', 'user.proto',
    '-d', '{"count": 100}', `127.0.0.1:${port('connect-grpc')}`, rpcPath('ListUsers')], { cwd: ROOT, timeout: 20_000 });
  assert.ok(SCENARIOS['users-100'].check(JSON.parse(stdout)), stdout.slice(0, 200));
});

test('the health check answers on both connect listeners: SERVING, NOT_FOUND for an unknown service', async () => {
  const { service } = await import('grpc-health-check');
  const Client = grpc.makeGenericClientConstructor(service, 'Health');
  const client = new Client(`127.0.0.1:${port('connect-grpc')}`, grpc.credentials.createInsecure());
  const check = (name) => new Promise((resolve, reject) => client.Check({ service: name }, (err, res) => (err ? reject(err) : resolve(res))));
  try {
    assert.equal((await check('')).status, 'SERVING');
    assert.equal((await check('user.v1.UserService')).status, 'SERVING');
    await assert.rejects(check('nope'), { code: grpc.status.NOT_FOUND });
  } finally {
    client.close();
  }
  const connect = (body) => fetch(`http://127.0.0.1:${port('connect-json')}/grpc.health.v1.Health/Check`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.deepEqual(await (await connect({ service: '' })).json(), { status: 'SERVING' });
  const unknown = await connect({ service: 'nope' });
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).code, 'not_found');
});
