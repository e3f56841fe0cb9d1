// The fault matrix (node bench/cli.js faults; npm run faults): each fault of bench/faults/registry.js injected into a
// fresh server under k6 load, in each mode; the report (bench/report/faults.js) written to RESULTS_DIR.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileStamp } from '../format.js';
import { FAULTS } from '../faults/registry.js';
import { STREAM_FAULTS } from '../faults/names.js';
import { ownStreamOf } from '../faults/own-stream.js';
import { BenchError } from '../errors.js';
import { LISTENERS } from '../../server/listeners.js';
import { MODES } from '../modes.js';
import { cell, protocolOf, serverSettingsOf } from '../passes/faults.js';
import { requireMuxClient } from '../faults/mux-client.js';
import { serverEnv } from '../invoke.js';
import { ROOT } from '../processes.js';
import { provenanceOf } from '../provenance.js';
import { renderFaults } from '../report/faults.js';
import { jobCertificates } from '../tls.js';
import { allowedCpus, splitCores } from '../settings/cores.js';

const log = (message) => console.error(`faults: ${message}`);

/**
 * Checks, before anything starts, that slow-stream-readers can open the own RPC's streams in every mode: a server stream
 * or a relay (ownStreamOf), on a listener whose twin its readers speak (gRPC, SSE, a WebSocket over HTTP/1.1).
 * @param {import('../settings/faults.js').FaultSettings} settings
 * @returns {void}
 * @throws {BenchError} one line naming the RPC or the mode
 */
function streamGap(settings) {
  const { kind, rpc } = ownStreamOf(settings);
  for (const mode of settings.MODES) {
    const listener = LISTENERS[MODES[mode].listener];
    if (!listener.streams?.includes(kind)) {
      throw new BenchError(`MODES=${settings.MODES.join(',')}: ${mode} serves no ${kind} RPC (${rpc}; docs/streaming.md); `
        + 'leave it out of MODES');
    }
    if (listener.load.request === 'connect') {
      throw new BenchError(`MODES=${settings.MODES.join(',')}: ${mode} serves streams in the Connect protocol, which `
        + 'slow-stream-readers does not speak (gRPC, SSE, WebSocket); leave it out of MODES');
    }
  }
}

/**
 * Runs the matrix (bench/cli.js faults), prints it and writes it to RESULTS_DIR.
 * @param {import('../settings/faults.js').FaultSettings} settings checked by bench/cli.js, K6_BIN provisioned
 * @returns {Promise<void>}
 * @throws {BenchError} when a server or k6 fails
 */
export async function main(settings) {
  process.chdir(ROOT);
  await mkdir(settings.RESULTS_DIR, { recursive: true });
  // gRPC cells run ghz beside k6: provisioned before anything starts.
  if (settings.MODES.some((m) => protocolOf(m) === 'grpc')) requireMuxClient();
  if (settings.FAULTS.some((f) => STREAM_FAULTS.includes(f))) streamGap(settings);
  const cores = splitCores(allowedCpus());
  const stamp = fileStamp();
  const cells = [];
  const total = settings.FAULTS.length * settings.MODES.length;
  // With TLS=1 one CA and server certificate for the job, every cell's server serving it.
  const certs = settings.TLS ? await jobCertificates() : null;
  try {
    for (const name of settings.FAULTS) {
      for (const mode of settings.MODES) {
        log(`[${cells.length + 1}/${total}] ${name} · ${mode}${certs ? ' · TLS' : ''}`);
        cells.push(await cell(name, mode, settings, cores, stamp, certs));
      }
    }
  } finally {
    await certs?.remove();
  }
  const pinning = cores.description;
  // The cells' listener sets differ by mode: the provenance records what they share.
  const shared = serverEnv(null, { workers: settings.WORKERS, settings: serverSettingsOf(settings) });
  const provenance = provenanceOf({ settings: /** @type {any} */ (settings), pinning, serverEnv: shared });
  const report = { generated_at: new Date().toISOString(), provenance, settings, pinning, cells };
  const markdown = renderFaults(report, Object.fromEntries(Object.entries(FAULTS).map(([name, f]) => [name, f.about])));
  const base = path.join(settings.RESULTS_DIR, `faults-${stamp}`);
  await writeFile(`${base}.md`, markdown);
  await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${markdown}\nwritten: ${base}.md, ${base}.json\n`);
}
