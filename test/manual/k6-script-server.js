// The server the manual k6 script tools load (test/manual/ab-k6-scripts.js, test/manual/k6-cpu-profiles.js): one worker
// with every listener pinned to cpu 0, and the -e variables every script gets. Not part of npm test.
import { portOfMode, serverEnv } from '../../bench/invoke.js';
import { MODE_NAMES, MODES } from '../../bench/modes.js';
import { startServer } from '../../bench/processes.js';
import { prepareOwn, scenariosOf } from '../../bench/own-service.js';

/**
 * Starts the server, serving the built-in own service `scenario` names when it is one (e.g. otlp-traces).
 * @param {string} scratch folder for an own service's request samples
 * @param {string} [scenario] SCENARIO, or '' for the demo's
 * @returns {Promise<{server: Awaited<ReturnType<typeof startServer>>, vars: string[]}>} vars: `NAME=value` for k6's -e:
 *   each mode's host variable once, for the first mode that reads it, and an own service's (RPC, its schema, REQUESTS)
 */
export async function startScriptServer(scratch, scenario = '') {
  const source = scenario ? scenariosOf({ SCENARIO: [scenario] })[0].source : null;
  const own = source ? await prepareOwn(source, scratch, scenario) : null;
  const server = await startServer({ env: serverEnv(MODE_NAMES, { workers: 1, settings: own?.server }), cpus: '0' });
  // Each host variable once, for the first mode that reads it: connect-grpc and json-h2 run the gRPC and HTTP scripts, and
  // a later -e would point those at connect-node and at the HTTP/2 listener instead of grpc-js and fastify.
  const hosts = [...new Map(MODE_NAMES.toReversed().map((mode) => [MODES[mode].hostVars.local, `127.0.0.1:${portOfMode(server, mode)}`]))]
    .map(([name, host]) => `${name}=${host}`);
  return { server, vars: [...hosts, ...(own ? Object.entries(own.k6).map(([k, v]) => `${k}=${v}`) : [])] };
}
