// k6 run http-tests/remote.js --duration=60s --vus=32
// Load on the HTTP server at REMOTE_HTTP_HOST (config.js, or -e REMOTE_HTTP_HOST=host:port).
import { httpTest } from '../k6/http.js';

const test = httpTest({ hostSetting: 'REMOTE_HTTP_HOST', target: 'remote' });

export const options = test.options;
export const setup = test.setup;
export default test.iteration;
export const handleSummary = test.handleSummary;
