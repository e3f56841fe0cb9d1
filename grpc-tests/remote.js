// k6 run grpc-tests/remote.js --duration=60s --vus=32
// Load on the gRPC server at REMOTE_GRPC_HOST (config.js, or -e REMOTE_GRPC_HOST=host:port).
import { grpcTest } from '../k6/grpc.js';

const test = grpcTest({ hostSetting: 'REMOTE_GRPC_HOST', target: 'remote' });

export const options = test.options;
export const setup = test.setup;
export default test.iteration;
export const handleSummary = test.handleSummary;
