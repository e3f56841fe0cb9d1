// npm run certs -- --out <dir> [--name <host or IP> ...]  (bench/cli.js certs, which declares its options)
// A CA and a server certificate for trying TLS outside a job (the Docker flow, a second machine): the same
// certificates a TLS=1 job makes for itself (bench/tls.js), written where the user says. The CA's private key is not
// kept, so nothing else can be signed with it. With a certificate of your own, skip this: the server takes any
// TLS_CERT/TLS_KEY (docs/tls.md).
import { access, chmod, copyFile, mkdir } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { BenchError } from '../errors.js';
import { CLEARTEXT_MODE_NAMES } from '../modes.js';
import { makeRunCertificates } from '../tls.js';
import { ensureTool } from '../tools.js';

// A DNS name as a certificate holds one: labels of letters, digits and hyphens (RFC 1123), dot-separated.
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The names k6 in Compose dials: the server service of each mode Compose starts (server-<mode>, compose.yaml). */
export const COMPOSE_NAMES = Object.freeze(CLEARTEXT_MODE_NAMES.map((mode) => `server-${mode}`));

/** What the command writes, by file name: which of the run's certificates (bench/tls.js) it is, and what it is for. */
export const CERT_FILES = Object.freeze({
  'ca.crt': { from: 'caCert', what: 'the CA certificate clients verify against (k6: -e TLS_CA and SSL_CERT_FILE)' },
  'server.crt': { from: 'cert', what: 'the server certificate, signed by the CA (the server\'s TLS_CERT)' },
  'server.key': { from: 'key', what: 'its private key (the server\'s TLS_KEY), readable by all: the container\'s node user reads it' },
});

/**
 * Writes ca.crt, server.crt and server.key into `out`.
 * @param {null} settings certs reads no settings
 * @param {{values: {out?: string, name?: string[]}}} args as bench/cli.js parsed them: `out`, the folder (made if
 *   missing); `name`, more subject alternative names (IPs or DNS names) besides 127.0.0.1, localhost and COMPOSE_NAMES
 * @returns {Promise<void>}
 * @throws {Error} ERR_USAGE when a name is neither an IP address nor a DNS name, or when `out` already holds one of the
 *   files (nothing is overwritten); BenchError when openssl fails
 */
export async function main(settings, { values }) {
  const names = values.name ?? [];
  const bad = names.find((n) => !isIP(n) && !DNS_NAME.test(n));
  if (bad !== undefined) throw Object.assign(new Error(`--name ${JSON.stringify(bad)} is neither an IP address nor a DNS name`), { code: 'ERR_USAGE' });
  const out = path.resolve(values.out ?? '');
  for (const file of Object.keys(CERT_FILES)) {
    const there = await access(path.join(out, file)).then(() => true, () => false);
    if (there) throw Object.assign(new Error(`${path.join(out, file)} exists: remove it or choose another --out`), { code: 'ERR_USAGE' });
  }
  const certs = await makeRunCertificates({ addresses: [...COMPOSE_NAMES, ...names], openssl: ensureTool('openssl') })
    .catch((err) => { throw new BenchError(err.message); });
  try {
    await mkdir(out, { recursive: true });
    for (const [file, { from }] of Object.entries(CERT_FILES)) await copyFile(certs[from], path.join(out, file));
    // Readable by the container's `node` user (uid 1000), whoever made it on the host: a try-out key, two days long.
    await chmod(path.join(out, 'server.key'), 0o644);
  } finally {
    await certs.remove();
  }
  process.stdout.write(`${Object.entries(CERT_FILES).map(([file, { what }]) => `${path.join(out, file)}: ${what}`).join('\n')}\n`
    + `names: ${certs.addresses.join(', ')}; valid for two days\n`);
}
