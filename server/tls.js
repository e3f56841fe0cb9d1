// TLS for the listeners compared (issue 26): the certificate and key of TLS_CERT/TLS_KEY, read and checked once per
// process (the primary's readSettings, each worker's), and the options each listener's server takes, with the ALPN
// protocol the listener registry gives it (server/listeners.js `alpn`).
import fs from 'node:fs';
import { X509Certificate, constants, createPrivateKey } from 'node:crypto';
import tls from 'node:tls';
import { SettingsError } from './errors.js';

/**
 * The TLS material of a server, checked.
 * @typedef {object} TlsMaterial
 * @property {Buffer} cert PEM certificate chain (the leaf first)
 * @property {Buffer} key PEM private key of the leaf
 * @property {'TLSv1.2'|'TLSv1.3'} minVersion lowest TLS version accepted
 * @property {number} secureOptions OpenSSL options: SSL_OP_NO_TICKET when TLS_SESSION_TICKETS is off, else 0
 */

// By path pair: a worker reads its files once, whatever number of listeners it opens.
const cache = new Map();

/**
 * Reads and checks TLS_CERT and TLS_KEY: both or neither, readable, PEM, the key the certificate's, the certificate
 * valid now (an expired one is refused here, at start, rather than by every client later).
 * @param {{TLS_CERT?: string, TLS_KEY?: string, TLS_MIN_VERSION: 'TLSv1.2'|'TLSv1.3', TLS_SESSION_TICKETS?: boolean}} settings
 * @returns {TlsMaterial|null} null when TLS is off (neither set)
 * @throws {SettingsError} one line naming the variable and what is wrong
 */
export function tlsMaterial(settings) {
  const { TLS_CERT: certPath, TLS_KEY: keyPath } = settings;
  if (!certPath && !keyPath) return null;
  if (!certPath || !keyPath) {
    throw new SettingsError(`invalid setting ${certPath ? 'TLS_KEY' : 'TLS_CERT'}: TLS_CERT and TLS_KEY go together `
      + `(${certPath ? 'TLS_CERT' : 'TLS_KEY'} is set)`);
  }
  const tickets = settings.TLS_SESSION_TICKETS ?? true;
  const id = `${certPath}\0${keyPath}\0${settings.TLS_MIN_VERSION}\0${tickets}`;
  if (cache.has(id)) return cache.get(id);
  const read = (name, path) => {
    try { return fs.readFileSync(path); } catch (err) {
      throw new SettingsError(`invalid setting ${name}="${path}": cannot read it (${err.code ?? err.message})`);
    }
  };
  const cert = read('TLS_CERT', certPath);
  const key = read('TLS_KEY', keyPath);
  let x509;
  try { x509 = new X509Certificate(cert); } catch (err) {
    throw new SettingsError(`invalid setting TLS_CERT="${certPath}": not a PEM certificate (${err.message})`);
  }
  let privateKey;
  try { privateKey = createPrivateKey(key); } catch (err) {
    throw new SettingsError(`invalid setting TLS_KEY="${keyPath}": not a PEM private key (${err.message})`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new SettingsError(`invalid setting TLS_KEY="${keyPath}": it is not the key of the certificate in TLS_CERT`);
  }
  const now = Date.now();
  if (Date.parse(x509.validTo) < now) {
    throw new SettingsError(`invalid setting TLS_CERT="${certPath}": the certificate expired on ${x509.validTo}`);
  }
  if (Date.parse(x509.validFrom) > now) {
    throw new SettingsError(`invalid setting TLS_CERT="${certPath}": the certificate is not valid before ${x509.validFrom}`);
  }
  const material = Object.freeze({ cert, key, minVersion: settings.TLS_MIN_VERSION, secureOptions: tickets ? 0 : constants.SSL_OP_NO_TICKET });
  cache.set(id, material);
  return material;
}

/**
 * The options of a listener's TLS server (tls.createServer's, which https and http2.createSecureServer take), or null
 * when TLS is off.
 * @param {{TLS_CERT?: string, TLS_KEY?: string, TLS_MIN_VERSION: 'TLSv1.2'|'TLSv1.3', TLS_SESSION_TICKETS?: boolean}} settings
 * @param {'http/1.1'|'h2'} alpn the one protocol it offers in ALPN (its registry entry's `alpn`)
 * @returns {{cert: Buffer, key: Buffer, minVersion: import('node:tls').SecureVersion, secureOptions: number, ALPNProtocols: string[]}|null}
 * @throws {SettingsError} as tlsMaterial
 */
export function tlsServerOptions(settings, alpn) {
  const material = tlsMaterial(settings);
  if (!material) return null;
  // One protocol only: the listener speaks one, and says which (a client that offers only others gets no ALPN answer
  // or a handshake failure, as its TLS stack decides).
  return { cert: material.cert, key: material.key, minVersion: material.minVersion, secureOptions: material.secureOptions, ALPNProtocols: [alpn] };
}

/**
 * TLS handshakes this process's listeners completed since it started, by what was negotiated: key
 * `<version>|<cipher>|<ALPN protocol or none>|<resumed: true|false>` (e.g. `TLSv1.3|TLS_AES_128_GCM_SHA256|h2|false`),
 * value the count. Bumped once per connection, never per request; server/accounting.js reads it at scrape time.
 * @type {Map<string, number>}
 */
export const tlsHandshakes = new Map();

/** The fields of a tlsHandshakes key, in order: what server/accounting.js labels its counter with. */
export const HANDSHAKE_LABELS = Object.freeze(['version', 'cipher', 'alpn', 'resumed']);

/**
 * Counts every handshake a listener's server completes into tlsHandshakes (its 'secureConnection' event); a server
 * that is not a TLS server (no TLS_CERT) is left alone. The guards call it, so every hardened listener is counted.
 * @param {import('node:net').Server} server an http.Server, https.Server, Http2Server or Http2SecureServer
 */
export function countHandshakes(server) {
  if (!(server instanceof tls.Server)) return;
  server.on('secureConnection', (/** @type {import('node:tls').TLSSocket} */ socket) => {
    const key = [socket.getProtocol(), socket.getCipher()?.standardName, socket.alpnProtocol || 'none', socket.isSessionReused()].join('|');
    tlsHandshakes.set(key, (tlsHandshakes.get(key) ?? 0) + 1);
  });
}
