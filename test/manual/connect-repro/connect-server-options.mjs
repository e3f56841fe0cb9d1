// connect-server.mjs with connect-node options from OPTIONS (JSON), for trying a mitigation (README.md).
// EMIT_END=1 also emits 'end' on each response's 'finish', which Http2ServerResponse never emits itself (end-event.mjs)
// and connect-node's universalResponseToNodeResponse awaits.
import http2 from 'node:http2';
import { create } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { UserService, UserSchema } from './gen/user_pb.js';

const user = create(UserSchema, {
  username: 'Ada', premium: true, nextBillingDate: '01-02-2027', country: 1, port: 50061, workerPid: process.pid,
});

const routes = (router) => router.service(UserService, { getUser: () => user });

const port = Number(process.env.PORT ?? 50062);
const handler = connectNodeAdapter({ ...JSON.parse(process.env.OPTIONS ?? '{}'), routes });
const emitEnd = (req, res) => {
  res.once('finish', () => res.emit('end'));
  handler(req, res);
};
http2.createServer(process.env.EMIT_END === '1' ? emitEnd : handler)
  .listen(port, '127.0.0.1', () => console.log(`connect-node on ${port}`));
