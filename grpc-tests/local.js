// k6 run grpc-tests/local.js --duration=60s --vus=32
// Load on the gRPC server at LOCAL_GRPC_HOST (config.js, or -e LOCAL_GRPC_HOST=host:port).
import { grpcTest } from '../k6/grpc.js';

const test = grpcTest({ hostSetting: 'LOCAL_GRPC_HOST', target: 'local' });

export const options = test.options;
export const setup = test.setup;
export default test.iteration;
export const handleSummary = test.handleSummary;
