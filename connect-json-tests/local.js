// k6 run connect-json-tests/local.js --duration=60s --vus=32
// Load on connect-node's Connect (JSON) server at LOCAL_CONNECT_JSON_HOST (config.js, or -e LOCAL_CONNECT_JSON_HOST=host:port):
// the Connect protocol's unary POST, the request message and the answer in the proto3 JSON mapping.
import { httpTest } from '../k6/http.js';

const test = httpTest({ hostSetting: 'LOCAL_CONNECT_JSON_HOST', target: 'local', mode: 'connect-json', protocol: 'connect' });

export const options = test.options;
export const setup = test.setup;
export default test.iteration;
export const handleSummary = test.handleSummary;
