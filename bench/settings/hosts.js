// Host settings on the Node side, with the same forms and messages as the k6 scripts (config.js).
import { makeValidator } from 'envalid';
import { parseHost } from '../../config.js';

/**
 * envalid validator of a host setting: `host:port`, `http://host:port` (a
 * trailing `/` is fine), `[v6]:port` or `http://[v6]:port`, e.g.
 * `REMOTE_HTTP_HOST: hostPort({ default: '192.168.0.10:3000' })`.
 * Like every envalid default, `default` is not checked; `hostPort({ default: '' })`
 * therefore declares an optional host that is '' when unset (a variable set to ''
 * is refused, as the other settings refuse it).
 * @returns the normalised authority `host:port`, IPv6 in brackets (e.g. `[::1]:4000`)
 * @throws {Error} `must be host:port, http://host:port or [v6]:port (e.g. 10.1.2.3:4000)`
 *   plus ` — <detail>` (https://, port out of range, ...); readEnv (server/env.js) prefixes `NAME="value": `
 */
export const hostPort = makeValidator((input) => {
  try {
    return parseHost('', input).authority;
  } catch (err) {
    // readEnv names the variable itself; keep only the why.
    throw new Error(err.reason, { cause: err });
  }
});
