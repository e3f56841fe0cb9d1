// proto/own/to-base64.js against @bufbuild/protobuf's own encoder, loaded before it (so its JS loop, not the shim): the
// same text for every length's padding, in each encoding @bufbuild/protobuf asks for, and in the encoding it never asks
// for (base64url with padding) against Node's Buffer plus the padding the standard writes.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { base64Encode } from '@bufbuild/protobuf/wire';

test('Uint8Array.prototype.toBase64 where the runtime lacks it: the text @bufbuild/protobuf\'s own loop writes', async () => {
  const native = typeof (/** @type {any} */ (Uint8Array.prototype)).toBase64 === 'function';
  await import('../../proto/own/to-base64.js');
  const toBase64 = (/** @type {any} */ (Uint8Array.prototype)).toBase64;
  assert.equal(typeof toBase64, 'function');
  // A view into a larger buffer, not at its start: the shim must read the view's bytes only.
  const samples = [...Array.from({ length: 40 }, (_, n) => randomBytes(n + 3).subarray(3)), new Uint8Array(0), randomBytes(1 << 20)];
  for (const bytes of samples) {
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(toBase64.call(view), base64Encode(view, 'std'), `std, ${view.length} bytes`);
    assert.equal(toBase64.call(view, { omitPadding: true }), base64Encode(view, 'std_raw'), `std_raw, ${view.length} bytes`);
    assert.equal(toBase64.call(view, { alphabet: 'base64url', omitPadding: true }), base64Encode(view, 'url'), `url, ${view.length} bytes`);
    const padded = base64Encode(view, 'std').replaceAll('+', '-').replaceAll('/', '_');
    assert.equal(toBase64.call(view, { alphabet: 'base64url' }), padded, `base64url with padding, ${view.length} bytes`);
  }
  if (!native) assert.throws(() => toBase64.call(new Uint8Array(1), { alphabet: 'hex' }), TypeError);
});
