// proto/own/to-base64.js against RFC 4648's algorithm, written out here, and against @bufbuild/protobuf's encoder (its own
// loop where it loaded before the shim, in a process of its own): the same text for every length's padding, in each
// encoding @bufbuild/protobuf asks for, and in base64url with padding, which it never asks for.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { base64Encode } from '@bufbuild/protobuf/wire';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** RFC 4648 section 4: each 3 bytes as 4 characters of 6 bits, the last group padded with '='. */
function rfc4648(bytes) {
  let text = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const group = (a << 16) | (b << 8) | c;
    const chars = [18, 12, 6, 0].map((shift) => ALPHABET[(group >> shift) & 63]);
    const kept = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    text += chars.slice(0, kept).join('') + '='.repeat(4 - kept);
  }
  return text;
}

test('Uint8Array.prototype.toBase64 where the runtime lacks it: the text @bufbuild/protobuf\'s own loop writes', async () => {
  const native = typeof (/** @type {any} */ (Uint8Array.prototype)).toBase64 === 'function';
  await import('../../proto/own/to-base64.js');
  const toBase64 = (/** @type {any} */ (Uint8Array.prototype)).toBase64;
  assert.equal(typeof toBase64, 'function');
  // A view into a larger buffer, not at its start: the shim must read the view's bytes only.
  const samples = [...Array.from({ length: 40 }, (_, n) => randomBytes(n + 3).subarray(3)), new Uint8Array(0), randomBytes(1 << 20)];
  for (const bytes of samples) {
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    assert.equal(toBase64.call(view), rfc4648(view), `RFC 4648, ${view.length} bytes`);
    assert.equal(toBase64.call(view), base64Encode(view, 'std'), `std, ${view.length} bytes`);
    assert.equal(toBase64.call(view, { omitPadding: true }), base64Encode(view, 'std_raw'), `std_raw, ${view.length} bytes`);
    assert.equal(toBase64.call(view, { alphabet: 'base64url', omitPadding: true }), base64Encode(view, 'url'), `url, ${view.length} bytes`);
    const padded = rfc4648(view).replaceAll('+', '-').replaceAll('/', '_');
    assert.equal(toBase64.call(view, { alphabet: 'base64url' }), padded, `base64url with padding, ${view.length} bytes`);
  }
  if (!native) assert.throws(() => toBase64.call(new Uint8Array(1), { alphabet: 'hex' }), TypeError);
});
