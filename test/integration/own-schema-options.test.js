// A schema's custom options checked as protoc checks them (proto/own/schema.js checkCustomOptions): each fixture of
// test/fixtures/own/options compiled by protoc (grpc_tools, Google's Python build of it) and loaded by the project, the
// two agreeing on which they take; and `node server` refusing the ones protoc refuses in one line that names the file,
// the line and the reason, before any worker starts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { loadSchema } from '../../proto/own/schema.js';
import { descriptorSet, ensurePyproto } from '../helpers/pyproto.js';
import { freePort, ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const run = promisify(execFile);
const DIR = path.join(ROOT, 'test/fixtures/own/options');
const CASES = [
  ['good.proto', true],
  ['relative.proto', true],
  ['misplaced.proto', false, /misplaced\.proto:11: Option "\(my\.api\.resource\)" is an extension of "google\.protobuf\.MessageOptions", not of the "google\.protobuf\.FieldOptions" a field takes\./],
  ['unknown.proto', false, /unknown\.proto:9: Option "\(my\.api\.nothere\)" unknown\./],
];

test('protoc and the project take and refuse the same schemas', { timeout: 120_000 }, async (t) => {
  await ensurePyproto();
  const dir = await tempDir(t, 'own-options-');
  for (const [file, takes, message] of CASES) {
    const proto = path.join(DIR, file);
    const protoc = await descriptorSet({ protos: [proto], includes: [DIR], out: path.join(dir, `${file}.binpb`) }).then(() => true, () => false);
    assert.equal(protoc, takes, `protoc ${takes ? 'takes' : 'refuses'} ${file}`);
    if (takes) assert.doesNotThrow(() => loadSchema({ proto, protoPath: [DIR] }), file);
    else assert.throws(() => loadSchema({ proto, protoPath: [DIR] }), message, file);
  }
});

test('node server refuses a schema protoc refuses, in one line, before any worker starts', async () => {
  for (const [file, , message] of CASES.filter(([, takes]) => !takes)) {
    const env = { PATH: process.env.PATH, PROTO: path.join(DIR, file), PROTO_PATH: DIR, RPC: 'my.v1.Library/GetBook', HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
    const err = await run(process.execPath, ['server'], { cwd: ROOT, env, timeout: 30_000 }).then(() => null, (e) => e);
    assert.ok(err, `${file}: the server started`);
    assert.equal(err.code, 1, file);
    const lines = err.stderr.trim().split('\n');
    assert.equal(lines.length, 1, err.stderr);
    assert.match(lines[0], message, file);
  }
});
