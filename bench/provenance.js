// Where a result came from: the commit, the tools and libraries, the machine, and every
// setting of the bench and of the server. The main job records it in each k6 summary
// (bench.run.provenance) and in compare-*.json; the report prints it and names what
// differs between the columns it compares.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { readSettings } from '../server/settings.js';
import { ROOT } from './processes.js';

const require = createRequire(import.meta.url);
/** The libraries whose versions shape the figures. */
const LIBRARIES = ['@grpc/grpc-js', 'fastify', 'protobufjs'];

const git = (args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

function commit() {
  try {
    return { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '' };
  } catch {
    return { commit: null, dirty: null }; // not a git checkout (a copy or an image)
  }
}

function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')).version;
  } catch {
    return null;
  }
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
 *   @grpc/grpc-js, fastify, protobufjs
 * @property {{kernel: string, cpu_model: string, cpu_count: number}} machine
 * @property {string} pinning how cores were shared between server and k6
 * @property {Record<string, unknown>} bench every setting of the job (bench/settings.js), K6_BIN left out
 * @property {Record<string, unknown>|null} server every setting the server ran with (server/settings.js), defaults
 *   included; null when the server ran elsewhere (TARGET=remote)
 */

/**
 * The provenance of one run of the main job.
 * @param {{settings: import('./settings.js').BenchSettings, pinning: string, serverEnv: Record<string, string>|null, node?: string}} run
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

/** Dotted paths and values of a nested object. */
function flatten(object, prefix = '') {
  return Object.entries(object ?? {}).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v)
    ? flatten(v, `${prefix}${k}.`) : [[`${prefix}${k}`, JSON.stringify(v)]]));
}

// Expected to differ between modes and runs without changing a figure: which server mode ran, where files went.
const PER_MODE = new Set(['server.MODE', 'bench.MODES', 'bench.RESULTS_DIR']);
// Differ between the raw and gzip columns of COMPRESSION=gzip, and between the releases of NODE_VERSIONS, by design; each
// summary records them (bench.compression, bench.run.node) and the report flags columns that differ in them without
// their keys naming it, and a column whose runs differ in them (bench/report.js SHAPE, nodeMismatch).
const IN_SHAPE = new Set(['server.COMPRESSION', 'versions.node']);

/**
 * What differs between the provenance of the columns of a report.
 * @param {Record<string, Array<Provenance|undefined>>} byColumn each column's runs' provenance
 * @returns {{missing: string[], differences: Array<{field: string, values: Record<string, string>}>}}
 *   missing: columns with a run that recorded none; differences: each field whose value is not the same in
 *   every run, with the values by column (`a | b` when a column's runs differ among themselves)
 */
export function provenanceDifferences(byColumn) {
  const missing = Object.entries(byColumn).filter(([, list]) => list.some((p) => !p)).map(([k]) => k);
  const fields = new Map();
  for (const [column, list] of Object.entries(byColumn)) {
    for (const p of list.filter(Boolean)) {
      for (const [field, value] of flatten(p)) {
        if (PER_MODE.has(field) || IN_SHAPE.has(field)) continue;
        if (!fields.has(field)) fields.set(field, new Map());
        const values = fields.get(field);
        if (!values.has(column)) values.set(column, new Set());
        values.get(column).add(value);
      }
    }
  }
  const differences = [];
  for (const [field, values] of fields) {
    const all = new Set([...values.values()].flatMap((s) => [...s]));
    const everywhere = values.size === Object.keys(byColumn).length - missing.length;
    if (all.size > 1 || !everywhere) {
      differences.push({ field, values: Object.fromEntries([...values].map(([c, s]) => [c, [...s].join(' | ')])) });
    }
  }
  return { missing, differences };
}
