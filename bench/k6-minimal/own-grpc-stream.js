// The least a k6 gRPC test of an own streaming RPC can do, as k6's docs show a grpc.Stream: the schema loaded, one
// stream per iteration on a connection opened once per VU, the first request sample written (a client stream's or a
// relay's: its messages, one by one), the stream ended, its messages not decoded (discardResponseMessage, as k6's
// docs offer it, and as the project's script reads its unsampled streams); no checks, no custom metrics. The yardstick
// for the project's script with a stream (npm run targets).
import grpc from 'k6/net/grpc';

const client = new grpc.Client();
if (/\.(binpb|pb|protoset|desc)$/.test(__ENV.PROTO)) client.loadProtoset(__ENV.PROTO);
else client.load((__ENV.PROTO_PATH || '').split(':').filter(Boolean), __ENV.PROTO);
const request = JSON.parse(open(__ENV.REQUESTS))[0];
const messages = __ENV.STREAM === 'server' ? [request] : request;
let connected = false;

export default function () {
  if (!connected) {
    client.connect(__ENV.LOCAL_GRPC_HOST, { plaintext: true });
    connected = true;
  }
  const stream = new grpc.Stream(client, __ENV.RPC, { discardResponseMessage: true });
  stream.on('data', () => {});
  for (const message of messages) stream.write(message);
  stream.end();
}
