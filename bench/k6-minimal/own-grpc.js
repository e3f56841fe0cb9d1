// The least a k6 gRPC test of an own RPC can do: the schema loaded as k6's docs show, one unary call of the first
// request sample per iteration on a connection opened once per VU, no checks, no custom metrics. The yardstick for the
// project's script with an own service (npm run targets).
import grpc from 'k6/net/grpc';

const client = new grpc.Client();
if (/\.(binpb|pb|protoset|desc)$/.test(__ENV.PROTO)) client.loadProtoset(__ENV.PROTO);
else client.load((__ENV.PROTO_PATH || '').split(':').filter(Boolean), __ENV.PROTO);
const request = JSON.parse(open(__ENV.REQUESTS))[0];
let connected = false;

export default function () {
  if (!connected) {
    client.connect(__ENV.LOCAL_GRPC_HOST, { plaintext: true });
    connected = true;
  }
  client.invoke(__ENV.RPC, request);
}
