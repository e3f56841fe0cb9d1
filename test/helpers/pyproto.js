// The tests' independent protobuf implementation: Google's Python protobuf (test/helpers/pyproto.py), in a venv
// under .tools/ (git-ignored) made on first use, like the one scripts/lint-docker.sh makes for hadolint: Debian's
// Python is externally managed (PEP 668), so nothing goes into the system's.
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './server.js';

const run = promisify(execFile);

/** The packages, pinned together: grpcio-tools 1.85.1 wants protobuf >=7.35.1,<8 and grpcio >=1.85.1. */
export const PYPROTO_PINS = ['protobuf==7.36.2', 'grpcio-tools==1.85.1', 'grpcio==1.85.1'];
export const PYPROTO_VENV = path.join(ROOT, '.tools', 'pyproto-venv');
const SCRIPT = path.join(ROOT, 'test', 'helpers', 'pyproto.py');
const PINS_FILE = 'pyproto-pins.txt';
const BASE_PYTHON = 'python3';

let ensuring;

/**
 * Makes sure the venv has the pinned packages, making it (python3 -m venv, then pip install) if it is missing or
 * holds other pins. A new venv is built beside the old and renamed into place, so that two processes at once do not
 * see a half-made one. Takes some 10-20 s the first time, nothing after.
 * @returns {Promise<string>} the venv's python
 * @throws {Error} one line naming the command that failed
 */
export function ensurePyproto() {
  ensuring ??= ensure().catch((err) => { ensuring = undefined; throw err; });
  return ensuring;
}

async function ensure() {
  const python = path.join(PYPROTO_VENV, 'bin', 'python');
  const pins = PYPROTO_PINS.join(' ');
  const marker = path.join(PYPROTO_VENV, PINS_FILE);
  const ready = () => existsSync(python) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === pins;
  if (ready()) return python;

  const building = `${PYPROTO_VENV}.${process.pid}`;
  await mkdir(path.dirname(PYPROTO_VENV), { recursive: true });
  await rm(building, { recursive: true, force: true });
  const step = async (command, args, timeout) => {
    try {
      await run(command, args, { timeout, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const why = String(err.stderr || err.message).trim().split('\n').filter(Boolean).at(-1) ?? `exit ${err.code}`;
      await rm(building, { recursive: true, force: true });
      // Named as it would run in place: the half-made venv is gone.
      const shown = [command, ...args].join(' ').replaceAll(building, PYPROTO_VENV);
      throw new Error(`pyproto: could not install the Python packages: \`${shown}\` failed: ${why}`,
        { cause: err });
    }
  };
  await step(BASE_PYTHON, ['-m', 'venv', building], 120_000);
  await step(path.join(building, 'bin', 'python'),
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...PYPROTO_PINS], 600_000);
  await writeFile(path.join(building, PINS_FILE), `${pins}\n`);
  // `python -m ...` works from a moved venv (its prefix is where pyvenv.cfg is); its bin/ scripts' shebangs do not,
  // and nothing here uses them.
  // Another process may have put its venv there meanwhile: then that one is used, else a stale one is replaced.
  if (!ready()) await rm(PYPROTO_VENV, { recursive: true, force: true });
  try {
    if (!ready()) await rename(building, PYPROTO_VENV);
  } catch (err) {
    if (!ready()) throw err;
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return python;
}

/**
 * @typedef {{json: unknown} | {json_text: string} | {binary_b64: string} | {json_file: string} | {binary_file: string}}
 *   PyprotoInput json: one message's proto3 JSON (any form Python's json_format.ParseDict takes; note that
 *   JSON.stringify turns -0 into 0 and a JavaScript number loses integers beyond 2^53); json_text: the same as JSON
 *   text, read by Python (an HTTP body as it came); binary_b64: its binary encoding in base64; json_file, binary_file:
 *   every sample of a file as RESPONSE reads it (a JSON object, a JSON array of them or NDJSON; length-delimited
 *   binary), each giving its own result
 * @typedef {{json: unknown, binary_b64: string} | {error: string}} PyprotoResult json: the canonical proto3 JSON
 *   (json_format.MessageToDict with the defaults: lowerCamelCase or json_name, enums by name, zero values of fields
 *   without presence left out, 64-bit integers as strings, floats to the fewest digits, 6 or more, that give the same
 *   32-bit float, NaN/Infinity as strings);
 *   binary_b64: SerializeToString(deterministic=True) in base64; error: why Python refused the input
 */

/**
 * Has Python parse each input as a `type` of the protos and give back its canonical JSON and deterministic binary.
 * @param {{protos: string[], includes?: string[], type: string, inputs: PyprotoInput[]}} request protos: .proto
 *   files (found through includes, then grpc_tools' well-known types) or FileDescriptorSet files (.binpb, .pb);
 *   type: the full name of a message, e.g. 'shop.v1.Order'
 * @returns {Promise<PyprotoResult[]>} one per input (one per sample of a file input), in order
 * @throws {Error} when the protos do not compile, the type is not there, or Python cannot be installed
 */
export async function pyproto({ protos, includes = [], type, inputs }) {
  const answer = await ask({ protos, includes, type, inputs });
  return answer.results;
}

/**
 * Writes the FileDescriptorSet of the protos and of everything they import (protoc --include_imports
 * --descriptor_set_out, through grpc_tools.protoc), as `PROTO=<file>.binpb` takes it.
 * @param {{protos: string[], includes?: string[], out: string}} request out: the file to write
 * @returns {Promise<string>} out
 * @throws {Error} when the protos do not compile or Python cannot be installed
 */
export async function descriptorSet({ protos, includes = [], out }) {
  await ask({ protos, includes, descriptor_set_out: out });
  return out;
}

/** One run of pyproto.py: the request on stdin, the answer from stdout. */
async function ask(request) {
  const python = await ensurePyproto();
  const child = spawn(python, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  const exited = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(JSON.stringify(request));
  const code = await exited;
  let answer;
  try {
    answer = JSON.parse(stdout);
  } catch {
    throw new Error(`pyproto.py exited ${code} without an answer: ${stderr.trim() || stdout.trim()}`);
  }
  if (code !== 0 || answer.error) throw new Error(`pyproto.py: ${answer.error ?? `exit ${code}`}`);
  return answer;
}
