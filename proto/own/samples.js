// The user's request and response samples (issue 37): files in the proto3 JSON mapping (one object, a JSON array of
// objects, or NDJSON) or binary (length-delimited messages, as ghz's -B takes), each parsed strictly for its message
// by protobufjs (its protojson extension for the proto3 JSON mapping). The JSON twin serves them through
// @bufbuild/protobuf's mapping instead (proto/own/json.js), converted once from the JSON written here.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fromJson as esFromJson, ScalarType, toBinary, toJsonString } from '@bufbuild/protobuf';
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
 * @property {import('@bufbuild/protobuf').Message[]} [esMessages] the same messages as @bufbuild/protobuf made them from
 *   the file's JSON, the form the JSON twins answer (present when readSamples was given `es` and read JSON)
 */

/**
 * @typedef {object} EsType a message type as @bufbuild/protobuf describes it (proto/own/descriptors.js ownDescriptors)
 * @property {import('@bufbuild/protobuf').DescMessage} desc
 * @property {import('@bufbuild/protobuf').Registry} registry the schema's types, for an Any
 */

/**
 * Whether a message type holds, at any depth, a `float` field or a google.protobuf.Any: the fields whose value read from
 * a sample's JSON text differs from the value read back from its binary encoding (0.1 against 0.10000000149011612).
 * @param {import('@bufbuild/protobuf').DescMessage} desc
 * @param {Set<string>} [seen] types already walked (a type may hold itself)
 * @returns {boolean}
 */
export function textMatters(desc, seen = new Set()) {
  if (desc.typeName === 'google.protobuf.Any') return true;
  if (seen.has(desc.typeName)) return false;
  seen.add(desc.typeName);
  // A list's element and a map's value are the field's `scalar` or `message` too.
  return desc.fields.some((field) => field.scalar === ScalarType.FLOAT || (field.message !== undefined && textMatters(field.message, seen)));
}

/**
 * Reads a sample file for a message type.
 * @param {string} setting the setting that named it, for errors (REQUEST, RESPONSE)
 * @param {string|undefined} file the path; unset or '': one sample, the empty message (streamed: one stream of it)
 * @param {protobuf.Type} type
 * @param {{messages: number, fileBytes: number, messageBytes: number}} [limits] default SAMPLE_LIMITS (`messages`: of
 *   all streams together when streamed)
 * @param {{streamed?: boolean, es?: EsType|null}} [options] `streamed`: the side of the RPC is a stream (the request of a
 *   client-streaming RPC, the response of a server-streaming one), so a sample is one stream: a JSON array of messages,
 *   the file a JSON array of such arrays or NDJSON with one array a line, or a binary file of one stream; default false. `es`: the type as
 *   @bufbuild/protobuf describes it: JSON samples are then read by it (strict, and about twice as fast as protobufjs's
 *   protojson for 10,000 samples), kept as `esMessages`, and made into protobufjs messages through their binary
 *   encoding; a type with a float or an Any is read by protobufjs as before (its JSON digits must survive)
 * @returns {Samples}
 * @throws {OwnServiceError} for a missing or empty file, one past the limits, or a sample not valid for its message:
 *   the file, the sample's index (from 0; streamed: the stream's and the message's) and the parser's field path and reason
 */
export function readSamples(setting, file, type, limits = SAMPLE_LIMITS, { streamed = false, es = null } = {}) {
  if (!file) {
    return measured({ file: '', sha256: null, messages: [type.create({})], ...(streamed ? { streams: [[0]] } : {}) }, type, setting, limits);
  }
  const where = `${setting}=${file}`;
  if (!existsSync(file) || !statSync(file).isFile()) throw new OwnServiceError(`${where}: no such file`);
  const size = statSync(file).size;
  if (size > limits.fileBytes) throw new OwnServiceError(`${where}: ${size} bytes, over the limit of ${limits.fileBytes} (64 MiB)`);
  const bytes = readFileSync(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (BINARY.test(file)) {
    const messages = nonEmpty(where, binarySamples(where, bytes, type, limits));
    // A streamed side's binary file is one stream, its messages in order, as ghz's -B takes a client stream.
    return measured({ file, sha256, messages, ...(streamed ? { streams: [messages.map((_, i) => i)] } : {}) }, type, setting, limits);
  }
  const values = nonEmpty(where, jsonValues(where, bytes));
  const made = { messages: [], esMessages: [], protobufBytes: [], jsonBytes: [] };
  // Each sample is made into its messages as it is taken, so that the file's JSON values die young.
  const add = es && !textMatters(es.desc) ? esAdder(where, type, es, limits, made)
    : (label, value) => made.messages.push(messageOf(where, label, value, type)) - 1;
  /** @type {number[][]|undefined} */
  let streams;
  if (!streamed) {
    if (values.length > limits.messages) throw new OwnServiceError(`${where}: ${values.length} samples, over the limit of ${limits.messages}`);
    for (let i = 0; i < values.length; i++) add(`sample ${i}`, values.take(i));
  } else {
    streams = [];
    for (let s = 0; s < values.length; s++) {
      const stream = values.take(s);
      if (!Array.isArray(stream)) {
        throw new OwnServiceError(`${where}: stream ${s}: must be a JSON array of messages (${type.fullName.slice(1)}), one stream a sample`);
      }
      if (stream.length === 0) throw new OwnServiceError(`${where}: stream ${s}: holds no message`);
      if (made.messages.length + stream.length > limits.messages) {
        throw new OwnServiceError(`${where}: more than ${limits.messages} messages in all, over the limit`);
      }
      streams.push(stream.map((value, m) => add(`stream ${s}, message ${m}`, value)));
    }
  }
  const samples = { file, sha256, messages: made.messages, ...(streams ? { streams } : {}) };
  if (made.esMessages.length === 0) return measured(samples, type, setting, limits);
  return { ...samples, esMessages: made.esMessages, protobufBytes: made.protobufBytes, jsonBytes: made.jsonBytes };
}

/**
 * The maker of one JSON sample's messages by @bufbuild/protobuf: read strictly (a sample it refuses is read again by
 * protobufjs, whose refusal names the field's path, messageOf; one protobufjs takes is refused with
 * @bufbuild/protobuf's reason), encoded, and the protobufjs message made of that encoding; both sizes measured.
 * Returns the message's index.
 */
function esAdder(where, type, { desc, registry }, limits, made) {
  const options = { registry };
  return (label, value) => {
    let message;
    try {
      message = esFromJson(desc, value, options);
    } catch (err) {
      messageOf(where, label, value, type);
      throw new OwnServiceError(`${where}: ${label}: ${err instanceof Error ? err.message : err}`);
    }
    const bytes = toBinary(desc, message);
    if (bytes.length > limits.messageBytes) {
      throw new OwnServiceError(`${where}: ${label}: ${bytes.length} bytes encoded, over the limit of ${limits.messageBytes} (gRPC's default 4 MiB)`);
    }
    made.esMessages.push(message);
    made.protobufBytes.push(bytes.length);
    made.jsonBytes.push(Buffer.byteLength(toJsonString(desc, message, options)));
    return made.messages.push(type.decode(bytes)) - 1;
  };
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

/**
 * The file's JSON values: one value, the elements of a JSON array, or NDJSON (one value a line; blank lines skipped),
 * each handed out once by `take`, which lets go of it. NDJSON is read a line at a time from the file's bytes (a file
 * whose first line is a JSON value and which has another line), so that no copy of the whole text is held.
 * @param {string} where the setting and file, for errors
 * @param {Buffer} bytes the file
 * @returns {{length: number, take: (i: number) => unknown}}
 * @throws {OwnServiceError} for a file that is neither JSON nor NDJSON; `take`, for an NDJSON line that is not JSON
 */
function jsonValues(where, bytes) {
  const lines = lineSpans(bytes);
  if (lines.length === 0) return { length: 0, take: () => undefined };
  const lineText = (i) => bytes.toString('utf8', lines[i][0], lines[i][1]);
  if (lines.length > 1 && parses(lineText(0))) {
    return {
      length: lines.length,
      take: (i) => {
        try {
          return JSON.parse(lineText(i));
        } catch (err) {
          throw new OwnServiceError(`${where}: line ${lines[i][2]}: not JSON (${err.message})`);
        }
      },
    };
  }
  let whole;
  try {
    whole = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    // Neither NDJSON nor one JSON value: a broken NDJSON file is named by its first line that does not parse.
    const bad = lines.length > 1 ? lines.findIndex((_, i) => !parses(lineText(i))) : -1;
    if (bad > 0) throw new OwnServiceError(`${where}: line ${lines[bad][2]}: not JSON (${errorOf(lineText(bad))})`);
    throw new OwnServiceError(`${where}: not JSON (${err.message})`);
  }
  const list = Array.isArray(whole) ? whole : [whole];
  return {
    length: list.length,
    take: (i) => {
      const value = list[i];
      list[i] = undefined;
      return value;
    },
  };
}

/** JSON's whitespace: space, tab, CR, LF. */
const WHITESPACE = new Set([0x20, 0x09, 0x0d, 0x0a]);

/** The non-blank lines of a file: [start, end, line number from 1] each. */
function lineSpans(bytes) {
  const spans = [];
  for (let start = 0, number = 1; start < bytes.length; number++) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    let at = start;
    while (at < end && WHITESPACE.has(bytes[at])) at++;
    if (at < end) spans.push([start, end, number]);
    start = end + 1;
  }
  return spans;
}

const parses = (text) => errorOf(text) === null;

/** JSON.parse's reason for refusing a text, or null. */
function errorOf(text) {
  try {
    JSON.parse(text);
    return null;
  } catch (err) {
    return err.message;
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
