// The additions docs/contributing.md describes, made in a scratch copy of the repository (test/helpers/scratch.js) the
// way a contributor makes them: a registry entry written into its file.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Adds a scenario of an existing RPC: 10 users.
 * @param {{edit: Function}} copy a scratch copy
 * @returns {Promise<void>}
 */
export const addScenario = (copy) => copy.edit('proto/payload.js', "  'users-100': {",
  "  'users-10': { description: '10 nested Users in a repeated field', ...users(10) },\n  'users-100': {");

/**
 * Adds a listener at the registry's end: the JSON one (fastify, HTTP/1.1) again, on a port of its own.
 * @param {{edit: Function}} copy a scratch copy
 * @param {string} name e.g. 'json-alt'
 * @returns {Promise<void>}
 */
export function addListener(copy, name) {
  const last = "    start: async (options) => (await import('./peer-grpc.js')).startPeerGrpc(options),\n  },\n";
  return copy.edit('server/listeners.js', last, `${last}  '${name}': {
    portSetting: '${name.toUpperCase().replace(/-/g, '_')}_PORT', defaultPort: 3009, protocol: 'HTTP (${name})',
    label: 'JSON · HTTP/1.1 · fastify, another port',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, hardened: true, probe: null,
    start: async (options) => (await import('./http.js')).startHttp(options),
  },
`);
}

/**
 * Adds a listener on a server library the project does not serve with yet: its start module (which imports the
 * library; nothing loads it unless a MODE opens the listener), its entry, the library in package.json and
 * package-lock.json as npm install writes it, and in the libraries each run records (bench/provenance.js).
 * @param {{edit: Function, dir: string}} copy a scratch copy
 * @param {string} name the listener's name, e.g. 'lib-alt'; its start module is server/<name>.js
 * @returns {Promise<string[]>} the files it added
 */
export async function addServerLibrary(copy, name) {
  const library = 'example-server';
  const start = `start${name.replace(/(^|-)(\w)/g, (_, __, c) => c.toUpperCase())}`;
  await writeFile(path.join(copy.dir, `server/${name}.js`), `import { createServer } from '${library}';\n\n`
    + `export async function ${start}({ host, port }) {\n  const server = await createServer().listen(port, host);\n`
    + '  return { close: () => server.close(), forceClose: () => server.close() };\n}\n');
  const last = "    start: async (options) => (await import('./peer-grpc.js')).startPeerGrpc(options),\n  },\n";
  await copy.edit('server/listeners.js', last, `${last}  '${name}': {
    portSetting: '${name.toUpperCase().replace(/-/g, '_')}_PORT', defaultPort: 3010, protocol: '${library}',
    label: 'JSON · HTTP/1.1 · ${library}',
    transport: 'HTTP/1.1', load: { tool: 'wrk', request: 'get' }, alpn: null, hardened: false, probe: null,
    start: async (options) => (await import('./${name}.js')).${start}(options),
  },
`);
  await copy.edit('package.json', '"dependencies": {', `"dependencies": {\n    "${library}": "^1.0.0",`);
  const root = '"version": "0.1.0",\n      "license": "MIT",\n      "dependencies": {';
  await copy.edit('package-lock.json', root, `${root}\n        "${library}": "^1.0.0",`);
  await copy.edit('package-lock.json', '"packages": {', `"packages": {\n    "node_modules/${library}": {\n      "version": "1.0.0",\n`
    + `      "resolved": "https://registry.npmjs.org/${library}/-/${library}-1.0.0.tgz",\n      "license": "MIT"\n    },`);
  await copy.edit('bench/provenance.js', "'@connectrpc/connect-node', ", `'@connectrpc/connect-node', '${library}', `);
  return [`server/${name}.js`];
}

/**
 * Adds a mode at the registry's end that loads a listener over HTTP/1.1 with JSON, as the http mode does. With
 * `ownScripts` it gets its two k6 scripts (copies of the HTTP ones reading its own host variables) and those variables
 * in config.js; without, it runs the HTTP scripts.
 * @param {{dir: string, edit: Function}} copy a scratch copy
 * @param {{name: string, listener: string, ownScripts?: boolean}} mode
 * @returns {Promise<string[]>} the files it added
 */
export async function addMode(copy, { name, listener, ownScripts = false }) {
  const upper = name.toUpperCase();
  const scripts = ownScripts ? `${name}-tests` : 'http-tests';
  const hostOf = (target) => `${target.toUpperCase()}_${ownScripts ? upper : 'HTTP'}_HOST`;
  // The registry's end: its last entry's close and its own.
  const end = '  },\n});\n';
  await copy.edit('bench/modes.js', end, `  },\n  ${name}: {
    label: 'HTTP (JSON), ${name}',
    listener: '${listener}',
    scripts: { local: '${scripts}/local.js', remote: '${scripts}/remote.js' },
    hostVars: { local: '${hostOf('local')}', remote: '${hostOf('remote')}' },
    minimalScript: 'bench/k6-minimal/http.js',
    metrics: { requests: ['http_reqs', 'count'], latency: 'http_req_duration', failed: 'http_req_failed' },
    payload: 'json-body',
  },
});
`);
  if (!ownScripts) return [];
  await mkdir(path.join(copy.dir, scripts));
  for (const target of ['local', 'remote']) {
    const http = await readFile(path.join(copy.dir, `http-tests/${target}.js`), 'utf8');
    await writeFile(path.join(copy.dir, `${scripts}/${target}.js`), http.replaceAll(`${target.toUpperCase()}_HTTP_HOST`, hostOf(target)));
  }
  await copy.edit('config.js', "  REMOTE_ADMIN_HOST: '',\n",
    `  ${hostOf('local')}: 'localhost:3000',\n  ${hostOf('remote')}: '192.168.0.10:3000',\n  REMOTE_ADMIN_HOST: '',\n`);
  await copy.edit('config.js', 'export const REMOTE_ADMIN_HOST = ', `export const ${hostOf('local')} = pick('${hostOf('local')}');\n`
    + `export const ${hostOf('remote')} = pick('${hostOf('remote')}');\nexport const REMOTE_ADMIN_HOST = `);
  return [`${scripts}/local.js`, `${scripts}/remote.js`];
}

/**
 * Adds a report row of a k6 figure: requests per VU, computed where the summary reader makes k6's figures
 * (bench/records/summary.js figuresOf) and listed in ROWS beside the VUs.
 * @param {{edit: Function}} copy a scratch copy
 * @returns {Promise<void>}
 */
export async function addReportRow(copy) {
  await copy.edit('bench/records/summary.js', '    rps: durationS > 0 ? requests / durationS : 0,\n',
    '    rps: durationS > 0 ? requests / durationS : 0,\n    requests_per_vu: requests / Math.max(1, data.metrics.vus_max?.values?.max ?? 1),\n');
  await copy.edit('bench/report/rows.js', "  { label: 'VUs', field: 'vus',",
    "  { label: 'requests per VU', field: 'requests_per_vu', digits: 0, how: 'median', source: 'k6',\n"
      + "    what: 'requests ÷ VUs' },\n  { label: 'VUs', field: 'vus',");
}
