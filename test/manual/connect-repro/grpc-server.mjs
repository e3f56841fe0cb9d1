// The same method with @grpc/grpc-js, as grpc-node's examples write a server. PORT (default 50051).
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

const definition = protoLoader.loadSync(new URL('user.proto', import.meta.url).pathname);
const { UserService } = grpc.loadPackageDefinition(definition).repro.v1;

// proto-loader's default options name the fields in lowerCamelCase, as @bufbuild/protobuf does.
const user = {
  username: 'Ada', premium: true, nextBillingDate: '01-02-2027', country: 1, port: 50051, workerPid: process.pid,
};

const port = Number(process.env.PORT ?? 50051);
const server = new grpc.Server();
server.addService(UserService.service, { getUser: (_call, callback) => callback(null, user) });
server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), () => console.log(`grpc-js on ${port}`));
