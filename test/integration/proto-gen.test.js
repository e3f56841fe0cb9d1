// The @bufbuild/protobuf code of the connect listeners (proto/gen/) is committed, not generated at build time;
// this regenerates it from user.proto and health.proto with the pinned buf and protoc-gen-es and fails on any difference.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from '../../bench/root.js';

const GEN = 'proto/gen';
/** Every file under a folder, as paths relative to it, sorted. */
const filesUnder = (dir) => readdirSync(dir, { recursive: true }).map(String).filter((f) => statSync(path.join(dir, f)).isFile()).sort();
const scratch = mkdtempSync(path.join(os.tmpdir(), 'proto-gen-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('proto/gen is what npm run gen:proto makes of user.proto (else: run it and commit the output)', () => {
  // buf finds protoc-gen-es on PATH, as npm run puts node_modules/.bin there.
  const bin = path.join(ROOT, 'node_modules/.bin');
  execFileSync(path.join(bin, 'buf'), ['generate', '--template', 'proto/buf.gen.yaml', '-o', scratch], {
    cwd: ROOT, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }, stdio: 'pipe',
  });
  const committed = filesUnder(path.join(ROOT, GEN));
  assert.deepEqual(filesUnder(path.join(scratch, GEN)), committed);
  for (const file of committed) {
    assert.equal(readFileSync(path.join(scratch, GEN, file), 'utf8'), readFileSync(path.join(ROOT, GEN, file), 'utf8'),
      `${GEN}/${file} differs from what user.proto generates: run npm run gen:proto`);
  }
});
