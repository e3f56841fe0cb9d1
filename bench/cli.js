// The one entry point of the bench jobs: `node bench/cli.js <command>`; bench.sh and the npm
// scripts call it. It parses the command's arguments strictly (an unknown option is an error,
// never ignored), reads and checks the command's settings, runs its pre-flight checks (tools,
// root), provisions k6 once (unless K6_BIN names one), then runs the command.
// An expected failure (an error with an ERR_ code) is one line on stderr and a nonzero exit;
// anything else is a bug and keeps its stack. This file runs on import: never import it.
import { parseArgs } from 'node:util';
import { misspeltSettings } from '../server/env.js';
import { serverSettingSpecs } from '../server/settings.js';
import { benchSettingSpecs, readBenchSettings } from './settings/bench.js';
import { faultSettingSpecs, readFaultSettings } from './settings/faults.js';
import { readSoakSettings, soakSettingSpecs } from './settings/soak.js';
import { readSweepSettings, sweepSettingSpecs } from './settings/sweep.js';
import { ensureTool } from './tools.js';

/**
 * @typedef {object} OptionSpec one option of a command: a node:util parseArgs option, and how the usage shows it
 * @property {'boolean'|'string'} type
 * @property {string} [short] one letter
 * @property {string} [default]
 * @property {string} about what it does, for the usage
 * @property {string} [value] name of its value in the usage (string options)
 * @property {boolean} [required] the command refuses to run without it (the usage shows it without brackets)
 * @property {boolean} [multiple] it may be given more than once (its value is then a list)
 */

/**
 * The options of every command that reads settings.
 * @type {Record<string, OptionSpec>}
 */
const CHECK_SETTINGS = {
  'check-settings': { type: 'boolean', about: 'check the settings and the tools the command needs, run nothing' },
};

/**
 * The commands, each declared once; the usages (this command's and the list of all) derive from it.
 * Each module exports `main(settings, {positionals, values})` (values: the options parsed here) and may
 * export `preflight(settings, {positionals, values})`, which may resolve with one line saying what the command would
 * run (--check-settings prints it).
 * via: how one usually runs it; args: its positional arguments, for the usage (none: it takes none);
 * options: its own, besides --help; docs: where its settings are described;
 * exitCode: the exit code of an expected failure.
 * @type {Record<string, {about: string, via: string, args?: string, options: Record<string, OptionSpec>, docs?: string,
 *   load: () => Promise<{main: Function, preflight?: Function}>, settings: (() => object)|null, k6: boolean, exitCode: number}>}
 */
const COMMANDS = {
  run: {
    about: 'the main job: each mode measured by k6, side by side',
    via: 'bash bench.sh', options: CHECK_SETTINGS, docs: 'docs/settings.md',
    load: () => import('./commands/run.js'), settings: readBenchSettings, k6: true, exitCode: 1,
  },
  compare: {
    about: 'the side-by-side table of k6 summaries (summaries of the same mode and target are repeats of one column)',
    via: 'npm run compare --', args: '<summary.json> <summary.json> [more...]',
    options: { out: { type: 'string', default: 'results', value: 'DIR', about: 'folder the table is written to, as Markdown, JSON and SVG' } },
    load: () => import('./commands/compare.js'), settings: null, k6: false, exitCode: 2,
  },
  merge: {
    about: 'one summary of a run split over k6 processes (k6-operator\'s parallelism, or --execution-segment by hand)',
    via: 'npm run merge --', args: '<summary.json> <samples.csv> [<summary.json> <samples.csv> ...]',
    options: { out: { type: 'string', value: 'FILE', required: true, about: 'the merged summary to write' } },
    load: () => import('./commands/merge.js'), settings: null, k6: false, exitCode: 2,
  },
  certs: {
    about: 'a CA and a server certificate for trying TLS by hand or in Docker (a TLS=1 job makes its own)',
    via: 'npm run certs --',
    options: {
      out: { type: 'string', value: 'DIR', required: true, about: 'folder to write ca.crt, server.crt and server.key to (none may exist)' },
      name: { type: 'string', multiple: true, value: 'HOST', about: 'one more name the certificate holds (an IP or DNS name; repeat it); '
        + '127.0.0.1, localhost and Compose\'s server services are always in' },
    },
    load: () => import('./commands/certs.js'), settings: null, k6: false, exitCode: 1,
  },
  targets: {
    about: 'the performance targets, checked by measurement (exit 1 when one is missed)',
    via: 'npm run targets --', options: CHECK_SETTINGS, docs: 'docs/settings.md',
    load: () => import('./commands/targets.js'), settings: readBenchSettings, k6: true, exitCode: 2,
  },
  soak: {
    about: 'sustained load with RSS sampling, and worker-kill fault runs',
    via: 'npm run soak --', options: CHECK_SETTINGS, docs: 'docs/soak.md',
    load: () => import('./commands/soak.js'), settings: readSoakSettings, k6: true, exitCode: 1,
  },
  faults: {
    about: 'the fault matrix: each fault injected under k6 load in each mode',
    via: 'npm run faults --', options: CHECK_SETTINGS, docs: 'docs/faults.md',
    load: () => import('./commands/faults.js'), settings: readFaultSettings, k6: true, exitCode: 1,
  },
  sweep: {
    about: 'where gRPC pays off: both modes over emulated links of SWEEP_BANDWIDTH × SWEEP_RTT × SWEEP_VUS, a model beside, heat maps',
    via: 'npm run sweep --', docs: 'docs/sweep.md',
    options: {
      ...CHECK_SETTINGS,
      link: { type: 'string', value: 'BW/RTT', about: 'answer for one link (e.g. 20mbit/60ms) from the newest sweep, running nothing' },
      vus: { type: 'string', value: 'N', about: 'with --link: the concurrency asked about' },
      rate: { type: 'string', value: 'N', about: 'with --link: the offered rate asked about (an open-model sweep)' },
      from: { type: 'string', value: 'FILE', about: 'with --link: the sweep JSON to answer from (default the newest results/sweep-*.json)' },
      render: { type: 'string', value: 'FILE', about: 'the model, verdicts, report and maps again from a sweep JSON\'s measured runs, running nothing' },
    },
    load: () => import('./commands/sweep.js'), settings: readSweepSettings, k6: true, exitCode: 1,
  },
};

/**
 * Every command's own option.
 * @type {Record<string, OptionSpec>}
 */
const HELP = { help: { type: 'boolean', short: 'h', about: 'print this usage and exit, running nothing' } };

/**
 * An option as the usage writes it: `--out DIR`, `-h, --help`.
 * @param {string} name
 * @param {OptionSpec} spec
 */
const optionText = (name, { short, value }) => `${short ? `-${short}, ` : ''}--${name}${value ? ` ${value}` : ''}`;

/**
 * One line: how to run a command, with its arguments and options.
 * @param {string} name a key of COMMANDS
 * @param {string} [via] how it is run (default the command's `via`)
 */
const synopsis = (name, via = COMMANDS[name].via) => {
  const { args, options } = COMMANDS[name];
  const opts = Object.entries(options).map(([o, spec]) => (spec.required ? optionText(o, spec) : `[${optionText(o, spec)}]`));
  return [via, args, ...opts].filter(Boolean).join(' ');
};

/**
 * A command's usage: how to run it, what it does, its options and where its settings are described.
 * @param {string} name a key of COMMANDS
 * @returns {string} lines, without a final newline
 */
function commandUsage(name) {
  const { about, options, docs } = COMMANDS[name];
  const all = { ...options, ...HELP };
  const width = Math.max(...Object.entries(all).map(([o, spec]) => optionText(o, spec).length)) + 2;
  return [
    `usage: ${synopsis(name)}`,
    `   or: ${synopsis(name, `node bench/cli.js ${name}`)}`,
    `${about[0].toUpperCase()}${about.slice(1)}.`,
    'options:',
    ...Object.entries(all).map(([o, spec]) => `  ${optionText(o, spec).padEnd(width)}${spec.about}${
      spec.default === undefined ? '' : ` (default ${spec.default})`}`),
    docs ? `Settings are environment variables: ${docs}.` : 'It reads no settings.',
  ].join('\n');
}

const USAGE = `usage: node bench/cli.js <command> [options]   (node bench/cli.js <command> --help: its usage)
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.about}\n           ${synopsis(name)}`).join('\n')}
Settings are environment variables: docs/settings.md, docs/soak.md, docs/faults.md, docs/sweep.md.`;

/**
 * Parses a command's arguments strictly: every option must be one it declares, and each required one given.
 * @param {string} name a key of COMMANDS
 * @param {string[]} args what follows the command's name
 * @returns {{values: {[option: string]: unknown}, positionals: string[]}}
 * @throws {Error} ERR_BAD_ARGS, one line naming the unknown option, the unexpected argument or the missing option
 */
function parseCommandArgs(name, args) {
  const { args: positionals, options, via } = COMMANDS[name];
  const all = { ...options, ...HELP };
  /** @type {import('node:util').ParseArgsConfig['options']} */
  const config = {};
  // parseArgs refuses a key set to undefined (short, default): only the ones given.
  for (const [o, { type, short, multiple, default: fallback }] of Object.entries(all)) {
    config[o] = { type, ...(short && { short }), ...(multiple && { multiple }), ...(fallback !== undefined && { default: fallback }) };
  }
  const bad = (what) => Object.assign(new Error(`${what}; ${via} --help lists the options`), { code: 'ERR_BAD_ARGS' });
  let parsed;
  try {
    parsed = parseArgs({ args, options: config, strict: true, allowPositionals: Boolean(positionals) });
  } catch (err) {
    if (!err.code?.startsWith('ERR_PARSE_ARGS_')) throw err;
    const quoted = err.message.match(/'([^']*)'/)?.[1];
    throw bad({
      ERR_PARSE_ARGS_UNKNOWN_OPTION: `unknown option ${quoted}`,
      ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL: `${name} takes no arguments, got ${JSON.stringify(quoted)}`,
    }[err.code] ?? err.message.split('\n')[0]); // a value missing or not wanted: Node's first line names the option
  }
  const missing = Object.entries(all).find(([o, spec]) => spec.required && parsed.values[o] === undefined && !parsed.values.help);
  if (missing) throw bad(`${optionText(...missing)} is required`);
  return parsed;
}

/**
 * Ends the process on an expected failure, in one line; rethrows a bug. Bad arguments exit 2, and a
 * command's own usage error (ERR_USAGE: what is wrong with its arguments) is followed by its synopsis.
 */
function fail(name, label, err, exitCode) {
  if (!err.code?.startsWith('ERR_')) throw err;
  const usage = err.code === 'ERR_USAGE' ? `; usage: ${synopsis(name)}` : '';
  process.stderr.write(`${label}: ${err.message}${usage}\n`);
  process.exit(err.code === 'ERR_USAGE' || err.code === 'ERR_BAD_ARGS' ? 2 : exitCode);
}

const [name, ...rest] = process.argv.slice(2);
if (name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const command = Object.hasOwn(COMMANDS, name ?? '') ? COMMANDS[name] : undefined;
if (!command) {
  process.stderr.write(`${name ? `unknown command ${JSON.stringify(name)}` : 'no command'}\n${USAGE}\n`);
  process.exit(2);
}
const label = name === 'run' ? 'bench' : name;
try {
  const { values, positionals } = parseCommandArgs(name, rest);
  if (values.help) {
    process.stdout.write(`${commandUsage(name)}\n`);
    process.exit(0);
  }
  if (command.settings) {
    // A misspelt setting would be ignored: say so (a warning; the command still runs). Every reader's names count,
    // the servers' too (the jobs start them with their environment).
    const names = [benchSettingSpecs, soakSettingSpecs, faultSettingSpecs, sweepSettingSpecs, serverSettingSpecs].flatMap((specs) => Object.keys(specs()));
    for (const { name: typo, meant } of misspeltSettings(process.env, names)) {
      process.stderr.write(`${label}: ${typo} is not a setting; did you mean ${meant}?\n`);
    }
  }
  const settings = command.settings ? command.settings() : null;
  const module = await command.load();
  const plan = await module.preflight?.(settings, { values, positionals });
  if (values['check-settings']) {
    // A line on success too: a newcomer's first command should say that it did something.
    process.stdout.write(`${label}: settings and tools checked, nothing run${typeof plan === 'string' ? `; ${plan}` : ''}\n`);
    process.exit(0);
  }
  // One provisioning of k6 for every job: K6_BIN when given, else found or built (scripts/ensure-tool.sh).
  if (command.k6 && !settings.K6_BIN) settings.K6_BIN = ensureTool('k6');
  await module.main(settings, { values, positionals });
} catch (err) {
  fail(name, label, err, command.exitCode);
}
