// Where the k6 scripts send load. Edit the defaults here, or override any of
// them with an environment variable of the same name, e.g.
//   k6 run -e REMOTE_GRPC_HOST=10.1.2.3:4000 grpc-tests/remote.js
// Each setting may be host:port, http://host:port or [v6]:port (see parseHost);
// a bad one throws at import, so k6 stops at init with the message.
// Loads in k6 and in Node, so it imports nothing and uses
// no URL (k6 has none): the host forms are parsed by hand below.

// In k6 the hosts come from -e (or the defaults below) and are checked at init. In Node
// the exports are the defaults: the main job reads the environment itself, through
// bench/settings/hosts.js, so that a bad value is its one-line settings error, not an import failure.
const env = typeof __ENV !== 'undefined' ? __ENV : {};

/** The hosts the scripts load when nothing else is given. */
export const DEFAULTS = {
  LOCAL_HTTP_HOST: 'localhost:3000',
  LOCAL_GRPC_HOST: 'localhost:4000',
  REMOTE_HTTP_HOST: '192.168.0.10:3000',
  REMOTE_GRPC_HOST: '192.168.0.10:4000',
  LOCAL_CONNECT_JSON_HOST: 'localhost:3004',
  REMOTE_CONNECT_JSON_HOST: '192.168.0.10:3004',
  // The connect-grpc mode runs the gRPC scripts (-e LOCAL_GRPC_HOST=localhost:4002); the main job's remote server of it:
  REMOTE_CONNECT_GRPC_HOST: '192.168.0.10:4002',
  // The json-h2 mode runs the HTTP scripts over TLS (-e LOCAL_HTTP_HOST=localhost:3001); the main job's remote server of it:
  REMOTE_JSON_H2_HOST: '192.168.0.10:3001',
  REMOTE_ADMIN_HOST: '',
};

const FORMS = 'must be host:port, http://host:port or [v6]:port (e.g. 10.1.2.3:4000)';

const IPV4_OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4 = new RegExp(`^${IPV4_OCTET}(\\.${IPV4_OCTET}){3}$`);
const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^${LABEL}(\\.${LABEL})*$`);

/** True for an IPv6 address without brackets or zone: hex groups, at most one ::, maybe a dotted IPv4 tail. */
function isIPv6(text) {
  // A dotted IPv4 tail (::ffff:10.0.0.1) stands for the last two groups.
  const tail = /^(.*:)([0-9]*\.[0-9.]*)$/.exec(text);
  if (tail && !IPV4.test(tail[2])) return false;
  const groups = tail ? `${tail[1]}0:0` : text;
  const halves = groups.split('::');
  if (halves.length > 2) return false;
  const parts = halves.flatMap((half) => (half === '' ? [] : half.split(':')));
  if (!parts.every((part) => /^[0-9a-f]{1,4}$/.test(part))) return false;
  return halves.length === 2 ? parts.length <= 7 : parts.length === 8;
}

/** Why a lower-cased host (brackets removed, `bracketed` says if it had them) is not one, or ''. */
function hostProblem(host, bracketed) {
  if (host === '') return 'the host is missing';
  if (bracketed) return isIPv6(host) ? '' : `[${host}] is not an IPv6 address`;
  // All digits and dots: meant as IPv4, never as a hostname.
  if (/^[0-9.]+$/.test(host)) return IPV4.test(host) ? '' : `${host} is not an IPv4 address`;
  return host.length <= 253 && HOSTNAME.test(host) ? '' : `${host} is not a hostname (letters, digits, dots, hyphens)`;
}

/** Why `rest` (what follows any http://) does not split into host and port. */
function shapeProblem(rest) {
  if (/\s/.test(rest)) return 'it holds white space';
  if (rest.includes('/')) return 'nothing may follow the port but the / after http://host:port';
  if (!rest.startsWith('[') && (rest.match(/:/g) || []).length > 1) return 'an IPv6 address goes in brackets, e.g. [::1]:4000';
  return /:[0-9]+$/.test(rest) ? '' : 'the port is missing';
}

/**
 * `{host, port, bracketed}` of a setting, or the detail of why it is not one ('' when only the forms apply).
 * @param {unknown} value
 * @returns {{host: string, port: number, bracketed: boolean}|string}
 */
function split(value) {
  if (typeof value !== 'string' || value === '') return '';
  let rest = value;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name === 'https') return 'https:// is not accepted: give host:port; TLS is switched on apart (k6: -e TLS_CA=<the CA certificate>)';
    if (name !== 'http') return `${name}:// is not accepted, only http://`;
    rest = rest.slice(scheme[0].length).replace(/\/$/, '');
  }
  const parts = /^(?:\[([^\]]*)\]|([^:/[\]]*)):([0-9]+)$/.exec(rest);
  if (!parts) return shapeProblem(rest);
  const bracketed = parts[1] !== undefined;
  const host = (bracketed ? parts[1] : parts[2]).toLowerCase();
  const problem = hostProblem(host, bracketed);
  if (problem) return problem;
  const port = Number(parts[3]);
  if (!(port >= 1 && port <= 65535)) return `port ${parts[3]} is not from 1 to 65535`;
  return { host, port, bracketed };
}

/**
 * Parses a host setting: `host:port`, `http://host:port` (a trailing `/` is
 * fine), `[v6]:port` or `http://[v6]:port`. The host is a hostname (letters,
 * digits, dots, hyphens), a dotted IPv4 address, or an IPv6 address in
 * brackets; the port is 1 to 65535. https:// is refused: the servers are plaintext.
 * @param {string} name the setting's name, for the error message
 * @param {string} value
 * @returns {{host: string, port: number, authority: string}} host lower-cased and
 *   without brackets (e.g. `::1`); authority the normalised `host:port` the scripts
 *   connect to, IPv6 in brackets (e.g. `[::1]:4000`)
 * @throws {Error} one line, `NAME="value": must be host:port, http://host:port or
 *   [v6]:port (e.g. 10.1.2.3:4000)` plus ` — <detail>` when there is more to say;
 *   its `reason` property is the message without the `NAME="value": ` prefix
 */
export function parseHost(name, value) {
  const parsed = split(value);
  if (typeof parsed === 'string') {
    const reason = parsed ? `${FORMS} — ${parsed}` : FORMS;
    throw Object.assign(new Error(`${name}=${JSON.stringify(value)}: ${reason}`), { reason });
  }
  const { host, port, bracketed } = parsed;
  return { host, port, authority: `${bracketed ? `[${host}]` : host}:${port}` };
}

// An empty setting (k6's -e NAME=) means the default, as an unset one does.
const pick = (name) => {
  const value = env[name] || DEFAULTS[name];
  return value === '' ? '' : parseHost(name, value).authority;
};

/** host:port of the HTTP server on this machine. */
export const LOCAL_HTTP_HOST = pick('LOCAL_HTTP_HOST');
/** host:port of the gRPC server on this machine. */
export const LOCAL_GRPC_HOST = pick('LOCAL_GRPC_HOST');
/** host:port of the HTTP server on the machine under test. */
export const REMOTE_HTTP_HOST = pick('REMOTE_HTTP_HOST');
/** host:port of the gRPC server on the machine under test. */
export const REMOTE_GRPC_HOST = pick('REMOTE_GRPC_HOST');
/** host:port of the Connect (JSON) server of connect-node on this machine. */
export const LOCAL_CONNECT_JSON_HOST = pick('LOCAL_CONNECT_JSON_HOST');
/** host:port of the Connect (JSON) server of connect-node on the machine under test. */
export const REMOTE_CONNECT_JSON_HOST = pick('REMOTE_CONNECT_JSON_HOST');
/** host:port of the remote server's Prometheus admin endpoint (ADMIN_PORT); '' when not set. */
export const REMOTE_ADMIN_HOST = pick('REMOTE_ADMIN_HOST');
