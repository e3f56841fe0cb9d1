// The link between k6 and the server: which one a run uses (NETWORK, BANDWIDTH,
// DOWN, UP, RTT), one definition of each profile, and the units they are read in.
// Building the link is bench/placement/link.js; this module only reads and checks settings.
import { makeValidator } from 'envalid';

/** How far a measured RTT or bandwidth of the link may be off its setting before the report warns (a fraction; bench/placement/link.js checkLink). */
export const LINK_TOLERANCE = 0.2;

/**
 * The network profiles. Bandwidth in bit/s, RTT in ms; `null` means "not shaped".
 * `down` is server to client (what the client downloads), `up` client to server.
 * The figures are round numbers for the kind of link, not measurements of one; the
 * `source` says what each is set against.
 */
export const PROFILES = Object.freeze({
  loopback: { down: null, up: null, rttMs: null, source: 'no link: k6 and the server on 127.0.0.1 (the default)' },
  lan: { down: 1e9, up: 1e9, rttMs: 0.5, source: 'gigabit Ethernet (IEEE 802.3ab); 0.5 ms is a same-building RTT' },
  wan: { down: 100e6, up: 100e6, rttMs: 40, source: 'a 100 Mbit/s access link to a server in the same region (about 40 ms RTT)' },
  mobile: { down: 20e6, up: 5e6, rttMs: 60,
    source: 'a typical 4G link; for scale, WebPageTest\'s LTE preset is 12 Mbit/s each way at 70 ms (connectivity.ini.sample)' },
});

const RATE_UNITS = { bit: 1, kbit: 1e3, mbit: 1e6, gbit: 1e9 };

/**
 * Bits per second in a rate such as `10mbit`, `500kbit`, `1gbit` or `2000000bit`
 * (tc's bit units; tc's `kbps` means kilobytes, so byte units are refused).
 * @param {string} text
 * @returns {number} bit/s
 * @throws {Error} when the text is not such a rate, or below 8 kbit/s (tbf's burst would exceed a second)
 */
export function parseRate(text) {
  const m = /^([0-9]+(?:\.[0-9]+)?)(bit|kbit|mbit|gbit)$/i.exec(String(text).trim());
  if (!m) throw new Error('must be a rate in bits such as 2mbit, 500kbit or 1gbit');
  const bps = Number(m[1]) * RATE_UNITS[m[2].toLowerCase()];
  if (bps < 8000) throw new Error('must be at least 8kbit');
  return bps;
}

/**
 * Milliseconds in an RTT such as `20ms`, `20` or `0.5ms`.
 * @param {string} text
 * @returns {number} ms, 0 to 10000
 * @throws {Error} when it is not a number of ms in that range
 */
export function parseRttMs(text) {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms)?$/.exec(String(text).trim());
  if (!m || Number(m[1]) > 10000) throw new Error('must be a round-trip time in ms such as 20ms, 0.5ms or 20 (at most 10000)');
  return Number(m[1]);
}

/** envalid validators of the link settings. */
export const rate = makeValidator(parseRate);
export const rttMs = makeValidator(parseRttMs);

/**
 * A rate for people: `2 Mbit/s`, `500 kbit/s`.
 * @param {number} bps bit/s
 * @returns {string}
 */
export function formatRate(bps) {
  if (bps >= 1e9) return `${+(bps / 1e9).toFixed(2)} Gbit/s`;
  if (bps >= 1e6) return `${+(bps / 1e6).toFixed(2)} Mbit/s`;
  return `${+(bps / 1e3).toFixed(1)} kbit/s`;
}

/**
 * @typedef {object} LinkSpec the link a run emulates
 * @property {string} name profile name, or `custom` when only BANDWIDTH/DOWN/UP/RTT were given
 * @property {number|null} down server-to-client bandwidth (bit/s); null: not limited
 * @property {number|null} up client-to-server bandwidth (bit/s); null: not limited
 * @property {number} rttMs added round-trip time (ms); 0: none
 */

/**
 * The link a run asks for: the profile, with BANDWIDTH (both ways), DOWN, UP and RTT
 * overriding its values. null for loopback with no override: k6 and the server on 127.0.0.1.
 * @param {{NETWORK: string, BANDWIDTH?: number, DOWN?: number, UP?: number, RTT?: number}} settings
 *   bandwidths in bit/s, RTT in ms, already checked
 * @returns {LinkSpec|null}
 */
export function linkSpec({ NETWORK, BANDWIDTH, DOWN, UP, RTT }) {
  const profile = PROFILES[NETWORK];
  const overridden = [BANDWIDTH, DOWN, UP, RTT].some((v) => v !== undefined);
  if (NETWORK === 'loopback' && !overridden) return null;
  return {
    name: NETWORK === 'loopback' ? 'custom' : NETWORK,
    down: DOWN ?? BANDWIDTH ?? profile.down,
    up: UP ?? BANDWIDTH ?? profile.up,
    rttMs: RTT ?? profile.rttMs ?? 0,
  };
}
