// A plain connect-node server, as connect-es's docs write one: http2.createServer(connectNodeAdapter({ routes })).
// One unary method answering a small fixed message. PORT (default 50061).
import http2 from 'node:http2';
import { create } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { UserService, UserSchema } from './gen/user_pb.js';

const user = create(UserSchema, {
  username: 'Ada', premium: true, nextBillingDate: '01-02-2027', country: 1, port: 50061, workerPid: process.pid,
});

const routes = (router) => router.service(UserService, { getUser: () => user });

const port = Number(process.env.PORT ?? 50061);
http2.createServer(connectNodeAdapter({ routes })).listen(port, '127.0.0.1', () => console.log(`connect-node on ${port}`));
