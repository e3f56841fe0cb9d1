// The one entry point of the bench jobs: `node bench/cli.js <command>`; bench.sh and the npm
// scripts call it. It reads and checks the command's settings, runs its pre-flight checks
// (tools, root), provisions k6 once (unless K6_BIN names one), then runs the command.
// An expected failure (an error with an ERR_ code) is one line on stderr and a nonzero exit;
// anything else is a bug and keeps its stack. This file runs on import: never import it.
import { parseArgs } from 'node:util';
import { readBenchSettings } from './settings.js';
import { readFaultSettings } from './faults.js';
import { readSoakSettings } from './soak-helpers.js';
import { ensureTool } from './tools.js';

/**
 * The commands. Each module exports `main(settings, args)` and may export `preflight(settings)`.
 * exitCode: the exit code of an expected failure.
 */
const COMMANDS = {
  run: {
    about: 'the main job: each mode measured by k6, side by side (bash bench.sh)',
    load: () => import('./run.js'), settings: readBenchSettings, k6: true, exitCode: 1,
  },
  compare: {
    about: 'the side-by-side table of k6 summaries: compare <summary.json> <summary.json> [more...] [--out DIR]',
    load: () => import('./compare.js'), settings: null, k6: false, exitCode: 2,
  },
  merge: {
    about: 'one summary of a run split over k6 processes: merge <summary.json> <samples.csv> [...] --out <merged.json>',
    load: () => import('./merge.js'), settings: null, k6: false, exitCode: 2,
  },
  targets: {
    about: 'the performance targets, checked by measurement (exit 1 when one is missed)',
    load: () => import('./targets.js'), settings: readBenchSettings, k6: true, exitCode: 2,
  },
  soak: {
    about: 'sustained load with RSS sampling, and worker-kill fault runs',
    load: () => import('./soak.js'), settings: readSoakSettings, k6: true, exitCode: 1,
  },
  faults: {
    about: 'the fault matrix: each fault injected under k6 load in each mode (docs/faults.md)',
    load: () => import('./faults.js'), settings: readFaultSettings, k6: true, exitCode: 1,
  },
};

const USAGE = `usage: node bench/cli.js <command> [--check-settings] [args]
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.about}`).join('\n')}
  --check-settings  check the settings and the tools the command needs, run nothing
Settings are environment variables: docs/settings.md, docs/soak.md, docs/faults.md.`;

/** Ends the process on an expected failure; rethrows a bug. */
function fail(name, err, exitCode) {
  if (!err.code?.startsWith('ERR_')) throw err;
  process.stderr.write(`${name}: ${err.message}\n`);
  process.exit(exitCode);
}

const [name, ...rest] = process.argv.slice(2);
if (name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const command = COMMANDS[name];
if (!command) {
  process.stderr.write(`${name ? `unknown command ${JSON.stringify(name)}` : 'no command'}\n${USAGE}\n`);
  process.exit(2);
}
const label = name === 'run' ? 'bench' : name;
try {
  const { values } = parseArgs({
    args: rest, allowPositionals: true, strict: false, options: { 'check-settings': { type: 'boolean', default: false } },
  });
  const settings = command.settings ? command.settings() : null;
  const module = await command.load();
  await module.preflight?.(settings);
  if (values['check-settings']) process.exit(0);
  // One provisioning of k6 for every job: K6_BIN when given, else found or built (scripts/ensure-tool.sh).
  if (command.k6 && !settings.K6_BIN) settings.K6_BIN = ensureTool('k6');
  await module.main(settings, rest.filter((a) => a !== '--check-settings'));
} catch (err) {
  fail(label, err, command.exitCode);
}
