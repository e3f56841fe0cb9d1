// A run's own certificate authority and server certificate (issue 26): made by `openssl` (Debian's, in
// scripts/ensure-tool.sh) into a temporary folder, so that k6 and the tests verify the server against a CA that exists
// for this run only, with the addresses the run uses as subject alternative names.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { BenchError } from './errors.js';
import { ensureTool } from './tools.js';

const run = promisify(execFile);

// How long a run's certificates live, and how far before now they start (clock skew between the machines of a link run).
const VALID_DAYS = 2;
const SKEW_MS = 60 * 60 * 1000;

/**
 * Where a run's certificates are.
 * @typedef {object} RunCertificates
 * @property {string} dir the temporary folder holding them (remove it with `remove`)
 * @property {string} caCert PEM of the CA's certificate: what clients trust (k6's SSL_CERT_FILE, gRPC's `tls.cacerts`)
 * @property {string} cert PEM of the server's certificate, signed by the CA: the server's TLS_CERT
 * @property {string} key PEM of its private key (P-256): the server's TLS_KEY
 * @property {string[]} addresses the subject alternative names: IP addresses, then DNS names
 * @property {() => Promise<void>} remove deletes the folder
 */

/** openssl's time format for `ca -startdate/-enddate`: YYYYMMDDHHMMSSZ (UTC). */
const asn1Time = (ms) => `${new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

/**
 * Makes a CA and a server certificate signed by it, into a new temporary folder.
 * @param {{addresses?: string[], validFrom?: Date, validTo?: Date, openssl?: string, tmpDir?: string}} [options]
 *   addresses: subject alternative names besides 127.0.0.1 and `localhost` (IPs such as a namespace's 198.18.x.2, or
 *   DNS names); validFrom/validTo: the server certificate's validity (default: an hour ago to VALID_DAYS days on; a
 *   past validTo makes an expired certificate, for tests); openssl: its path (default `openssl` on PATH); tmpDir: where
 *   the folder goes (default os.tmpdir())
 * @returns {Promise<RunCertificates>}
 * @throws {Error} one line naming the openssl step that failed and its stderr's last line (the folder is removed)
 */
export async function makeRunCertificates({
  addresses = [], validFrom = new Date(Date.now() - SKEW_MS), validTo = new Date(Date.now() + VALID_DAYS * 86_400_000),
  openssl = 'openssl', tmpDir = os.tmpdir(),
} = {}) {
  const dir = await fs.mkdtemp(path.join(tmpDir, 'bench-tls-'));
  const at = (name) => path.join(dir, name);
  const names = [...new Set(['127.0.0.1', 'localhost', ...addresses])];
  const san = names.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  const step = async (what, args) => {
    try {
      await run(openssl, args, { cwd: dir, timeout: 30_000 });
    } catch (err) {
      const last = String(err.stderr ?? err.message).trim().split('\n').pop();
      throw new Error(`TLS certificates: openssl ${what} failed: ${last}`, { cause: err });
    }
  };
  try {
    const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    await step('making the CA', ['req', '-x509', ...ecKey, '-keyout', at('ca.key'), '-out', at('ca.crt'),
      '-days', String(VALID_DAYS), '-subj', '/CN=json-vs-grpc-bench run CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await step('making the server key', ['req', ...ecKey, '-keyout', at('server.key'), '-out', at('server.csr'),
      '-subj', '/CN=json-vs-grpc-bench server']);
    // `openssl ca` rather than `x509 -req`: only it takes a start and end date (OpenSSL 3.0's x509 takes days from now).
    await fs.writeFile(at('ca.cnf'), [
      '[ca]', 'default_ca = run', '[run]', `database = ${at('index.txt')}`, `new_certs_dir = ${dir}`,
      `serial = ${at('serial')}`, 'default_md = sha256', 'policy = any', 'unique_subject = no', '[any]', 'commonName = supplied', '',
    ].join('\n'));
    await fs.writeFile(at('index.txt'), '');
    await fs.writeFile(at('serial'), '01\n');
    await fs.writeFile(at('server.ext'), [
      'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature', 'extendedKeyUsage = serverAuth',
      `subjectAltName = ${san}`, '',
    ].join('\n'));
    await step('signing the server certificate', ['ca', '-batch', '-notext', '-config', at('ca.cnf'), '-cert', at('ca.crt'),
      '-keyfile', at('ca.key'), '-in', at('server.csr'), '-out', at('server.crt'), '-extfile', at('server.ext'),
      '-startdate', asn1Time(validFrom.getTime()), '-enddate', asn1Time(validTo.getTime())]);
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir, caCert: at('ca.crt'), cert: at('server.crt'), key: at('server.key'), addresses: names,
    remove: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

/**
 * The certificates of a job run with TLS=1: makeRunCertificates with the provisioned openssl, its failure as one line.
 * @param {string[]} [addresses] the addresses k6 loads besides 127.0.0.1 (an emulated link's 198.18.x.2)
 * @returns {Promise<RunCertificates>}
 * @throws {BenchError} `TLS=1: ...` when openssl cannot be had or fails
 */
export async function jobCertificates(addresses = []) {
  try {
    return await makeRunCertificates({ addresses, openssl: ensureTool('openssl') });
  } catch (err) {
    throw new BenchError(`TLS=1: ${err.message}`);
  }
}

/**
 * The server settings that make its listeners serve a job's certificates (server/tls.js); none without.
 * @param {RunCertificates|null} certs
 * @param {boolean} [tickets] TLS_SESSION_TICKETS (default true, the server's own default)
 * @returns {Record<string, string>} TLS_CERT, TLS_KEY and TLS_SESSION_TICKETS, or {}
 */
export const serverTlsSettings = (certs, tickets = true) => (certs
  ? { TLS_CERT: certs.cert, TLS_KEY: certs.key, TLS_SESSION_TICKETS: String(tickets) } : {});
