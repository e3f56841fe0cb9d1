// The least a k6 gRPC test can do: one unary call per iteration on a connection
// opened once per VU, no checks, no custom metrics. The yardstick for the
// project's own script (npm run targets).
import grpc from 'k6/net/grpc';

const client = new grpc.Client();
client.load(['../../proto'], 'user.proto');
let connected = false;

export default function () {
  if (!connected) {
    client.connect(__ENV.LOCAL_GRPC_HOST, { plaintext: true });
    connected = true;
  }
  client.invoke('user.v1.UserService/GetUser', {});
}
