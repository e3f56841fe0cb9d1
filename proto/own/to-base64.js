// Uint8Array.prototype.toBase64 (TC39 "Uint8Array to/from base64", ES2026; native from V8 14, which Node 24's V8 13.6
// is not), backed by Node's Buffer, where the runtime lacks it. @bufbuild/protobuf encodes a bytes field in the proto3
// JSON mapping with it when it is there, and else with a loop of string concatenations: toJsonString of the demo's
// 1 MiB blob took 45.7 ms (42.6–69.3) that way against 7.3 ms (7.0–11.0) with this (median and range of 5 one-second
// rounds, one core; docs/server.md). A service on a runtime with the native method pays the latter; so do the JSON
// listeners here. Decoding is left to
// @bufbuild/protobuf: Buffer's base64 decoding accepts what the standard refuses. It must run before
// @bufbuild/protobuf is loaded, which reads the method once: server/index.js imports it first.
if (typeof /** @type {any} */ (Uint8Array.prototype).toBase64 !== 'function') {
  Object.defineProperty(Uint8Array.prototype, 'toBase64', {
    /**
     * @this {Uint8Array}
     * @param {{alphabet?: 'base64'|'base64url', omitPadding?: boolean}} [options] as the standard's
     * @returns {string}
     * @throws {TypeError} for another alphabet
     */
    value: function toBase64({ alphabet = 'base64', omitPadding = false } = {}) {
      if (alphabet !== 'base64' && alphabet !== 'base64url') throw new TypeError(`toBase64: unknown alphabet ${String(alphabet)}`);
      // Buffer pads 'base64' and never 'base64url'.
      const text = Buffer.from(this.buffer, this.byteOffset, this.byteLength).toString(alphabet);
      if (alphabet === 'base64') return omitPadding ? text.replace(/=+$/, '') : text;
      return omitPadding ? text : text + '='.repeat((4 - (text.length % 4)) % 4);
    },
    writable: true,
    configurable: true,
  });
}
