// Where a result came from: the commit, the tools and libraries, the machine, and every
// setting of the bench and of the server. The main job records it in each k6 summary
// (bench.run.provenance) and in compare-*.json; the report prints it and names what
// differs between the columns it compares.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { readSettings } from '../server/settings.js';
import { ROOT } from './root.js';

const require = createRequire(import.meta.url);
/** The libraries whose versions shape the figures. */
const LIBRARIES = ['@grpc/grpc-js', 'fastify', 'protobufjs', '@connectrpc/connect-node', '@bufbuild/protobuf'];

const git = (args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function commit() {
  try {
    return { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '' };
  } catch {
    return { commit: null, dirty: null }; // not a git checkout (a copy or an image)
  }
}

function versionOf(pkg) {
  // Packages whose exports leave out ./package.json (@connectrpc, @bufbuild) are read where npm put them.
  for (const file of [() => require.resolve(`${pkg}/package.json`), () => path.join(ROOT, 'node_modules', pkg, 'package.json')]) {
    try {
      return JSON.parse(readFileSync(file(), 'utf8')).version;
    } catch { /* the next place */ }
  }
  return null;
}

function k6Version(k6Bin) {
  try {
    return execFileSync(k6Bin, ['version'], { encoding: 'utf8' }).match(/k6 (v[0-9][^ \n]*)/)?.[1] ?? null;
  } catch {
    return null;
  }
}

// What stays the same for the whole job (git, versions, machine): read once, not per measured run.
const once = new Map();
function unchanging(k6Bin) {
  if (!once.has(k6Bin)) {
    const cpus = os.cpus();
    once.set(k6Bin, {
      ...commit(),
      versions: { node: process.version, k6: k6Version(k6Bin), ...Object.fromEntries(LIBRARIES.map((p) => [p, versionOf(p)])) },
      machine: { kernel: `${os.type()} ${os.release()}`, cpu_model: cpus[0]?.model ?? 'unknown', cpu_count: cpus.length },
    });
  }
  return once.get(k6Bin);
}

const plain = (settings) => Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, v ?? null]));

/**
 * @typedef {object} Provenance
 * @property {string|null} commit git HEAD of the checkout (null outside git)
 * @property {boolean|null} dirty whether tracked files differed from it
 * @property {Record<string, string|null>} versions node (the server's: the release it was started with, NODE_VERSIONS), k6,
 *   @grpc/grpc-js, fastify, protobufjs, @connectrpc/connect-node, @bufbuild/protobuf
 * @property {{kernel: string, cpu_model: string, cpu_count: number}} machine
 * @property {string} pinning how cores were shared between server and k6
 * @property {Record<string, unknown>} bench every setting of the job (bench/settings/bench.js), K6_BIN left out
 * @property {Record<string, unknown>|null} server every setting the server ran with (server/settings.js), defaults
 *   included; null when the server ran elsewhere (TARGET=remote)
 */

/**
 * The provenance of one run of the main job.
 * @param {{settings: import('./settings/bench.js').BenchSettings, pinning: string, serverEnv: Record<string, string>|null, node?: string}} run
 *   serverEnv: what the job set in the server's environment (null when it started no server); node: the Node release the
 *   server ran on, e.g. `v20.19.5` (default the job's own, process.version)
 * @returns {Provenance}
 */
export function provenanceOf({ settings, pinning, serverEnv, node = process.version }) {
  const { K6_BIN, link, ...bench } = settings;
  const same = unchanging(K6_BIN);
  return {
    ...same,
    versions: { ...same.versions, node },
    pinning,
    bench: plain({ ...bench, link: link ? `${link.name}: down ${link.down}, up ${link.up} bit/s, RTT ${link.rttMs} ms` : null }),
    // The server reads the same environment the job gave it; ports are per run and left out.
    server: serverEnv ? plain(withoutPorts(readSettings({ ...process.env, ...serverEnv }))) : null,
  };
}

function withoutPorts(settings) {
  return Object.fromEntries(Object.entries(settings).filter(([k]) => !/_PORT$/.test(k)));
}

