// The Connect protocol's streams as the HTTP scripts send and read them (https://connectrpc.com/docs/protocol/#streaming-rpcs):
// each message in an envelope, a flags byte and a 4-byte big-endian length before the message's JSON, and the response's
// last envelope the end of the stream (flag 0x02), whose JSON holds an `error` when the call failed. Loaded only by a
// streaming RPC's run on connect-json (k6/http.js): k6 has no TextEncoder, so the JSON is encoded to UTF-8 here, once per
// request sample.

/** The end-of-stream flag of an envelope. */
const END_STREAM = 0x02;

/**
 * UTF-8 bytes of a string, appended to `out`.
 * @param {string} text
 * @param {number[]} out
 * @returns {void}
 */
function utf8(text, out) {
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
}

/**
 * A Connect streaming request's body: each message's JSON in an envelope.
 * @param {object[]} messages in the proto3 JSON mapping
 * @returns {ArrayBuffer}
 */
export function connectEnvelopes(messages) {
  const bytes = [];
  for (const message of messages) {
    const json = [];
    utf8(JSON.stringify(message), json);
    const n = json.length;
    bytes.push(0, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
    for (let i = 0; i < n; i++) bytes.push(json[i]);
  }
  return new Uint8Array(bytes).buffer;
}

/**
 * Reads a Connect streaming response's envelopes: how many messages it holds, and whether it ended as the protocol
 * says a stream ends, with an end-of-stream envelope whose JSON has no `error`.
 * @param {ArrayBuffer|string|null|undefined} body k6's response body, asked for as binary
 * @returns {{messages: number, ok: boolean}}
 */
export function connectMessages(body) {
  if (!body || typeof body === 'string') return { messages: 0, ok: false };
  const bytes = new Uint8Array(body);
  let messages = 0;
  for (let at = 0; at + 5 <= bytes.length;) {
    const n = ((bytes[at + 1] << 24) >>> 0) + (bytes[at + 2] << 16) + (bytes[at + 3] << 8) + bytes[at + 4];
    if (bytes[at] & END_STREAM) {
      // `{}` or `{"metadata": …}` ends it well, `{"error": …}` not (its bytes read as Latin-1: only the key matters).
      let end;
      try {
        end = JSON.parse(String.fromCharCode.apply(null, Array.from(bytes.subarray(at + 5, at + 5 + n))));
      } catch {
        end = null;
      }
      return { messages, ok: at + 5 + n === bytes.length && end !== null && typeof end === 'object' && !('error' in end) };
    }
    messages++;
    at += 5 + n;
  }
  return { messages, ok: false };
}
