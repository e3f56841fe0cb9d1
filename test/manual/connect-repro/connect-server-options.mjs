// connect-server.mjs with connect-node options from OPTIONS (JSON), for trying a mitigation (README.md).
import http2 from 'node:http2';
import { create } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { UserService, UserSchema } from './gen/user_pb.js';

const user = create(UserSchema, {
  username: 'Ada', premium: true, nextBillingDate: '01-02-2027', country: 1, port: 50061, workerPid: process.pid,
});

const routes = (router) => router.service(UserService, { getUser: () => user });

const port = Number(process.env.PORT ?? 50062);
const options = JSON.parse(process.env.OPTIONS ?? '{}');
http2.createServer(connectNodeAdapter({ ...options, routes })).listen(port, '127.0.0.1', () => console.log(`connect-node on ${port}`));
