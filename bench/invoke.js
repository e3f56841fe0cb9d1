// How the bench starts the server of a measured cell, from the mode registry (bench/modes.js): the server's environment,
// the listener set of some modes and the port a mode loads. Every command and pass builds them here, so that a mode's
// listener is written down once; k6's side of the cell, its command line, is bench/k6/command.js.
//
// Three words, three meanings:
// - a mode (bench/modes.js, the bench's MODES setting) is a way k6 loads a server: a script against a listener;
// - a listener set (the server's MODE setting: `both`, `all`, or listener names) is what one server opens;
// - `both` in the soak's MODE is every mode, one after the other (bench/settings/soak.js).
// A mode's name need not be its listener's: serverEnv maps one to the other.
import { MODES } from './modes.js';
import { serverSettingSpecs } from '../server/settings.js';

/**
 * The listener set (the server's MODE) that serves these modes: each one's listener, once, in the order given.
 * @param {readonly string[]} modes names of MODES
 * @returns {string} e.g. 'http', 'http,grpc'
 */
export const listenerSetOf = (modes) => [...new Set(modes.map((mode) => MODES[mode].listener))].join(',');

/**
 * The port a started server loads a mode on: its listener's.
 * @param {{ports: Record<string, number>}} server a RunningServer (bench/processes.js)
 * @param {string} mode a name of MODES
 * @returns {number}
 */
export const portOfMode = (server, mode) => server.ports[MODES[mode].listener];

const SERVER_SETTINGS = new Set(Object.keys(serverSettingSpecs(1)));

/**
 * The environment the bench starts a server with (bench/processes.js startServer): the listener set that
 * serves the modes, and the server settings the job decides. Settings left out keep the server's default,
 * except COMPRESSION, which startServer sets off.
 * @param {readonly string[]|'all'|{listener: string}|null} modes names of MODES; 'all': every listener; {listener}: that
 *   listener alone (the passes that load the listeners themselves, with wrk and h2load); null: MODE left out (what a
 *   job's provenance records of settings shared by servers of several modes)
 * @param {{workers: number, host?: string, adminPort?: number|null, adminHost?: string, compression?: 'off'|'gzip',
 *   ports?: Record<string, string>, settings?: Record<string, string|number|boolean>}} options adminPort: the admin endpoint's
 *   (null or absent: none); ports: listeners' port settings (default: startServer picks free ones); settings: other
 *   server settings, by name (server/settings.js), e.g. SHUTDOWN_TIMEOUT_MS
 * @returns {Record<string, string>} e.g. `{MODE: 'grpc', WORKERS: '2', ADMIN_PORT: '40123'}`
 * @throws {Error} naming a setting the server does not have
 */
export function serverEnv(modes, { workers, host, adminPort, adminHost, compression, ports = {}, settings = {} }) {
  const unknown = Object.keys({ ...ports, ...settings }).filter((name) => !SERVER_SETTINGS.has(name));
  if (unknown.length) throw new Error(`not a server setting: ${unknown.join(', ')}`);
  const given = {
    ...ports,
    MODE: modes === 'all' || modes === null ? modes ?? undefined : 'listener' in modes ? modes.listener : listenerSetOf(modes),
    WORKERS: workers,
    HOST: host,
    COMPRESSION: compression,
    ADMIN_PORT: adminPort ?? undefined,
    ADMIN_HOST: adminHost,
    ...settings,
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)]));
}
