// The listeners that take the comparison apart serve the same payload as the two compared ones.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, test } from 'node:test';
import grpc from '@grpc/grpc-js';
import { grpcFrame, methodOf, responseTypeOf, toProto3Json, userServiceDefinition } from '../../proto/index.js';
import { rpcPath, SCENARIOS } from '../../proto/payload.js';
import { startServer } from '../helpers/server.js';

let server;
before(async () => { server = await startServer({ MODE: 'all' }); });
after(() => server?.stop());

/** The body with every listener's port replaced by 0, so listeners compare equal. */
const portless = (json) => JSON.parse(JSON.stringify(json).replace(/"port":\d+/g, '"port":0'));

function h2Get(port, path) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': path });
    const chunks = [];
    let status;
    req.on('response', (headers) => { status = headers[':status']; });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => { session.close(); resolve({ status, body: Buffer.concat(chunks) }); });
    req.on('error', (err) => { session.close(); reject(err); });
  });
}

function grpcCall(port, rpc, request) {
  const Client = grpc.makeGenericClientConstructor(userServiceDefinition(), 'UserService');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  return new Promise((resolve, reject) => client[rpc](methodOf(rpc).resolvedRequestType.fromObject(request), (err, res) => {
    client.close();
    err ? reject(err) : resolve(res);
  }));
}

/** The length (bytes) of the gRPC-framed response of one call, read raw over HTTP/2. */
function grpcMessageBytes(port, rpc, request) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const type = methodOf(rpc).resolvedRequestType;
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': `/${rpcPath(rpc)}`, 'content-type': 'application/grpc', te: 'trailers' });
    let size = 0;
    req.on('data', (c) => { size += c.length; });
    req.on('end', () => { session.close(); resolve(size); });
    req.on('error', (err) => { session.close(); reject(err); });
    req.end(grpcFrame(type.encode(type.fromObject(request)).finish()));
  });
}

for (const [name, { httpPath, rpc, request }] of Object.entries(SCENARIOS)) {
  test(`scenario ${name}: every listener serves the same payload`, async () => {
    const { ports } = server;
    const type = responseTypeOf(rpc);
    const fastifyRes = await fetch(`http://127.0.0.1:${ports.http}${httpPath}`);
    const fastifyBody = Buffer.from(await fastifyRes.arrayBuffer());
    const expected = portless(JSON.parse(fastifyBody));

    // Bare node:http and the peer fastify app send the same bytes, but for the port number in them.
    for (const listener of ['baseline-http', 'peer-http']) {
      const res = await fetch(`http://127.0.0.1:${ports[listener]}${httpPath}`);
      assert.equal(res.headers.get('content-type'), fastifyRes.headers.get('content-type'), listener);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(body.toString().replace(/"port":\d+/g, '"port":0'), fastifyBody.toString().replace(/"port":\d+/g, '"port":0'), listener);
    }

    const h2 = await h2Get(ports['json-h2'], httpPath);
    assert.equal(h2.status, 200);
    assert.deepEqual(portless(JSON.parse(h2.body)), expected);

    const protobufRes = await fetch(`http://127.0.0.1:${ports['protobuf-h1']}${httpPath}`);
    assert.equal(protobufRes.headers.get('content-type'), 'application/x-protobuf');
    const decoded = type.decode(Buffer.from(await protobufRes.arrayBuffer()));
    assert.deepEqual(portless(toProto3Json(type, decoded)), expected);

    for (const listener of ['grpc', 'baseline-grpc', 'peer-grpc']) {
      assert.deepEqual(portless(toProto3Json(type, await grpcCall(ports[listener], rpc, request))), expected, listener);
    }
    // The same message bytes on the wire (the ports, all five digits here, encode to as many bytes).
    const sizes = await Promise.all(['grpc', 'baseline-grpc', 'peer-grpc'].map((l) => grpcMessageBytes(ports[l], rpc, request)));
    assert.deepEqual(sizes, [sizes[0], sizes[0], sizes[0]]);
  });
}

test('the bare gRPC server answers an unknown method UNIMPLEMENTED and an unknown request INVALID_ARGUMENT', async () => {
  await assert.rejects(grpcCall(server.ports['baseline-grpc'], 'ListUsers', { count: 3 }), { code: grpc.status.INVALID_ARGUMENT });
  const Client = grpc.makeGenericClientConstructor({
    Nope: { ...userServiceDefinition().GetUser, path: '/user.v1.UserService/Nope' },
  }, 'UserService');
  const client = new Client(`127.0.0.1:${server.ports['baseline-grpc']}`, grpc.credentials.createInsecure());
  await assert.rejects(new Promise((resolve, reject) => client.Nope({}, (err, res) => (err ? reject(err) : resolve(res)))),
    { code: grpc.status.UNIMPLEMENTED });
  client.close();
});

test('GRPC_CODEC=proto-loader serves the same messages as the default protobufjs codec', async () => {
  const loader = await startServer({ MODE: 'grpc', GRPC_CODEC: 'proto-loader' });
  try {
    for (const { rpc, request } of Object.values(SCENARIOS)) {
      const type = responseTypeOf(rpc);
      const viaLoader = toProto3Json(type, await grpcCall(loader.grpcPort, rpc, request));
      const viaDefault = toProto3Json(type, await grpcCall(server.grpcPort, rpc, request));
      // Two servers: the port and the worker's pid differ, everything else must not.
      const anonymous = (json) => JSON.parse(JSON.stringify(portless(json)).replace(/"workerPid":\d+/g, '"workerPid":0'));
      assert.deepEqual(anonymous(viaLoader), anonymous(viaDefault), rpc);
    }
  } finally {
    await loader.stop();
  }
});
