// The user's request and response samples (issue 37): files in the proto3 JSON mapping (one object, a JSON array of
// objects, or NDJSON) or binary (length-delimited messages, as ghz's -B takes), each parsed strictly for its message
// by protobufjs (its protojson extension for the proto3 JSON mapping). The JSON twin serves them through
// @bufbuild/protobuf's mapping instead (proto/own/json.js), converted once from the JSON written here.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import protobuf from 'protobufjs';
import protojson from 'protobufjs/ext/protojson.js';
import { median } from 'simple-statistics';
import { OwnServiceError } from './schema.js';

/**
 * The bounds of a sample file: 10,000 messages and 64 MiB a file (issue 37); 4 MiB a message, gRPC's default maximum
 * message size (grpc-js and grpc-go's `grpc.max_receive_message_length` default, 4 × 1024 × 1024 bytes).
 */
export const SAMPLE_LIMITS = Object.freeze({ messages: 10_000, fileBytes: 64 * 1024 * 1024, messageBytes: 4 * 1024 * 1024 });

/** File name endings of binary samples: length-delimited messages (a varint length, then the message, repeated). */
const BINARY = /\.(binpb|pb|bin)$/;

/**
 * The proto3 JSON mapping of a message as text: protobufjs's protojson (canonical names, 64-bit integers as strings,
 * bytes as padded base64, well-known types as the spec writes them; fields at their default left out, as the spec's
 * printers do by default).
 * @param {protobuf.Type} type
 * @param {protobuf.Message|object} message
 * @returns {string}
 */
export const toJsonText = (type, message) => protojson.toJsonString(type, message);

/**
 * Parses a message from its proto3 JSON mapping, strictly: an unknown field, a wrong type, a 64-bit integer out of
 * range, bad base64 or a bad timestamp throws, naming the field (protobufjs names it as `.package.Type.field`).
 * @param {protobuf.Type} type
 * @param {string|object} json the text, or a value JSON.parse made of it
 * @returns {protobuf.Message}
 * @throws {Error} the parser's reason
 */
export const fromJson = (type, json) => (typeof json === 'string' ? protojson.fromJsonString(type, json) : protojson.fromJson(type, json));

/**
 * @typedef {object} Samples
 * @property {string} file the file, as given ('' for the default: one empty message)
 * @property {string|null} sha256 of the file's bytes (null for the default)
 * @property {protobuf.Message[]} messages in the file's order (a streamed side's streams one after the other)
 * @property {number[]} protobufBytes each message's protobuf encoding, in bytes
 * @property {number[]} jsonBytes each message's proto3 JSON mapping (compact, UTF-8), in bytes
 * @property {number[][]} [streams] a streamed side's samples: each stream, the indices of its messages in `messages`
 */

/**
 * Reads a sample file for a message type.
 * @param {string} setting the setting that named it, for errors (REQUEST, RESPONSE)
 * @param {string|undefined} file the path; unset or '': one sample, the empty message (streamed: one stream of it)
 * @param {protobuf.Type} type
 * @param {{messages: number, fileBytes: number, messageBytes: number}} [limits] default SAMPLE_LIMITS (`messages`: of
 *   all streams together when streamed)
 * @param {{streamed?: boolean}} [options] `streamed`: the side of the RPC is a stream (the request of a client-streaming
 *   RPC, the response of a server-streaming one), so a sample is one stream: a JSON array of messages, the file a JSON
 *   array of such arrays or NDJSON with one array a line; default false
 * @returns {Samples}
 * @throws {OwnServiceError} for a missing or empty file, one past the limits, or a sample not valid for its message:
 *   the file, the sample's index (from 0; streamed: the stream's and the message's) and the parser's field path and reason
 */
export function readSamples(setting, file, type, limits = SAMPLE_LIMITS, { streamed = false } = {}) {
  if (!file) {
    return measured({ file: '', sha256: null, messages: [type.create({})], ...(streamed ? { streams: [[0]] } : {}) }, type, setting, limits);
  }
  const where = `${setting}=${file}`;
  if (!existsSync(file) || !statSync(file).isFile()) throw new OwnServiceError(`${where}: no such file`);
  const size = statSync(file).size;
  if (size > limits.fileBytes) throw new OwnServiceError(`${where}: ${size} bytes, over the limit of ${limits.fileBytes} (64 MiB)`);
  const bytes = readFileSync(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (streamed && BINARY.test(file)) {
    throw new OwnServiceError(`${where}: a stream's samples are read from the proto3 JSON mapping only (a JSON array of streams, or NDJSON)`);
  }
  if (BINARY.test(file)) return measured({ file, sha256, messages: nonEmpty(where, binarySamples(where, bytes, type, limits)) }, type, setting, limits);
  const values = nonEmpty(where, jsonValues(where, bytes.toString('utf8')));
  if (!streamed) {
    if (values.length > limits.messages) throw new OwnServiceError(`${where}: ${values.length} samples, over the limit of ${limits.messages}`);
    return measured({ file, sha256, messages: values.map((v, i) => messageOf(where, `sample ${i}`, v, type)) }, type, setting, limits);
  }
  const messages = [];
  const streams = values.map((stream, s) => {
    if (!Array.isArray(stream)) {
      throw new OwnServiceError(`${where}: stream ${s}: must be a JSON array of messages (${type.fullName.slice(1)}), one stream a sample`);
    }
    if (stream.length === 0) throw new OwnServiceError(`${where}: stream ${s}: holds no message`);
    if (messages.length + stream.length > limits.messages) {
      throw new OwnServiceError(`${where}: more than ${limits.messages} messages in all, over the limit`);
    }
    return stream.map((value, m) => messages.push(messageOf(where, `stream ${s}, message ${m}`, value, type)) - 1);
  });
  return measured({ file, sha256, messages, streams }, type, setting, limits);
}

const nonEmpty = (where, list) => {
  if (list.length === 0) throw new OwnServiceError(`${where}: holds no sample`);
  return list;
};

function measured(samples, type, setting, limits) {
  const protobufBytes = samples.messages.map((m) => type.encode(m).finish().length);
  const jsonBytes = samples.messages.map((m) => Buffer.byteLength(toJsonText(type, m)));
  protobufBytes.forEach((n, i) => {
    if (n > limits.messageBytes) {
      throw new OwnServiceError(`${setting}=${samples.file}: sample ${i}: ${n} bytes encoded, over the limit of ${limits.messageBytes} (gRPC's default 4 MiB)`);
    }
  });
  return { ...samples, protobufBytes, jsonBytes };
}

/** The file's JSON values: one value, the elements of a JSON array, or NDJSON (one value a line; blank lines skipped). */
function jsonValues(where, text) {
  if (text.trim() === '') return [];
  try {
    const whole = JSON.parse(text);
    return Array.isArray(whole) ? whole : [whole];
  } catch (err) {
    const lines = text.split('\n');
    // Not one JSON value: NDJSON, or a broken file (then the first line that does not parse is named).
    if (lines.filter((l) => l.trim()).length < 2) throw new OwnServiceError(`${where}: not JSON (${err.message})`);
    const values = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        values.push(JSON.parse(line));
      } catch (lineErr) {
        throw new OwnServiceError(`${where}: line ${i + 1}: not JSON (${lineErr.message})`);
      }
    });
    return values;
  }
}

/** One sample, a JSON object, parsed strictly for its message; a refusal names the sample and the path to the field. */
function messageOf(where, label, value, type) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new OwnServiceError(`${where}: ${label}: must be a JSON object (the message ${type.fullName.slice(1)})`);
  }
  try {
    return fromJson(type, value);
  } catch (err) {
    const at = pathText(failingPath(type, value));
    // protobufjs names the type and field it failed in (`.pkg.Msg.field: `): the path from the sample's root says more.
    throw new OwnServiceError(`${where}: ${label}: ${at ? `${at}: ${err.message.replace(/^\.[\w.]+: /, '')}` : err.message}`);
  }
}

/** The field of a type a sample's key names: its name, its JSON name or its .proto name, resolved. */
const fieldByKey = (type, key) => type.fieldsArray.find((f) => f.name === key || f.jsonName === key || f.protoName === key)?.resolve();

/** A message field whose JSON is an object of its fields: not an enum, not a well-known type (those have JSON of their own). */
const plainMessage = (field) => field.resolvedType && !field.resolvedType.values && !field.resolvedType.fullName.startsWith('.google.protobuf.');

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Where the proto3 JSON mapping refuses a JSON sample: the keys as the sample writes them, and list indices and map keys,
 * from its root to the first value that does not parse on its own. Called only once the whole sample was refused.
 * @param {protobuf.Type} type
 * @param {Record<string, unknown>} json
 * @returns {string[]} e.g. ['resourceSpans', '[0]', 'scopeSpans', '[2]', 'spans', '[0]', 'traceId']; [] where no one key fails alone
 */
export function failingPath(type, json) {
  for (const [key, value] of Object.entries(json)) {
    try {
      fromJson(type, { [key]: value });
      continue;
    } catch { /* this key: where inside it */ }
    const field = fieldByKey(type, key);
    if (!field) return [key];
    const inner = (v) => (plainMessage(field) && isObject(v) ? failingPath(/** @type {protobuf.Type} */ (field.resolvedType), v) : []);
    if (field.map && isObject(value)) {
      for (const [k, v] of Object.entries(value)) {
        try {
          fromJson(type, { [key]: { [k]: v } });
        } catch {
          return [key, `[${JSON.stringify(k)}]`, ...inner(v)];
        }
      }
    } else if (field.repeated && Array.isArray(value)) {
      for (const [i, v] of value.entries()) {
        try {
          fromJson(type, { [key]: [v] });
        } catch {
          return [key, `[${i}]`, ...inner(v)];
        }
      }
    } else if (isObject(value)) {
      return [key, ...inner(value)];
    }
    return [key];
  }
  return [];
}

/** A failing path as one text: `resourceSpans[0].scopeSpans[2].spans[0].traceId`. */
const pathText = (path) => path.reduce((text, segment) => (segment.startsWith('[') || !text ? `${text}${segment}` : `${text}.${segment}`), '');

/** Length-delimited messages: each a varint length, then that many bytes (protobuf's writeDelimited). */
function binarySamples(where, bytes, type, limits) {
  const reader = protobuf.Reader.create(bytes);
  const messages = [];
  while (reader.pos < reader.len) {
    if (messages.length === limits.messages) throw new OwnServiceError(`${where}: more than ${limits.messages} samples, over the limit`);
    const i = messages.length;
    try {
      const length = reader.uint32();
      if (reader.pos + length > reader.len) throw new Error(`the length ${length} runs past the end of the file`);
      messages.push(type.decode(bytes.subarray(reader.pos, reader.pos + length)));
      reader.skip(length);
    } catch (err) {
      throw new OwnServiceError(`${where}: sample ${i}: not a length-delimited ${type.fullName.slice(1)} (${err.message})`);
    }
  }
  return messages;
}

/**
 * Where two messages of one type differ, as a path into their proto3 JSON mapping, or null when they are the same
 * message: each is taken through its binary encoding first, so that a `float` field compares as the 32-bit value the
 * wire carries (a JSON 0.1 and a decoded 0.10000000149011612 are one float), and map entries and JSON object members
 * compare without regard to order.
 * @param {protobuf.Type} type
 * @param {protobuf.Message|object} a
 * @param {protobuf.Message|object} b
 * @returns {string|null} e.g. 'resourceSpans[0].scopeSpans[1].spans[3].traceId'
 */
export function firstDifference(type, a, b) {
  const wire = (m) => protojson.toJson(type, type.decode(type.encode(m).finish()));
  return differ(wire(a), wire(b), '');
}

function differ(x, y, at) {
  if (x === y) return null;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return at || '(the message)';
  if (Array.isArray(x) !== Array.isArray(y)) return at || '(the message)';
  if (Array.isArray(x)) {
    if (x.length !== y.length) return `${at} (${x.length} vs ${y.length} elements)`;
    for (let i = 0; i < x.length; i++) {
      const d = differ(x[i], y[i], `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) {
    const d = differ(x[key], y[key], at ? `${at}.${key}` : key);
    if (d) return d;
  }
  return null;
}

/**
 * min, median and max of a list of byte counts.
 * @param {number[]} values at least one
 * @returns {{min: number, median: number, max: number}}
 */
export const sizeSpread = (values) => ({ min: Math.min(...values), median: median(values), max: Math.max(...values) });
