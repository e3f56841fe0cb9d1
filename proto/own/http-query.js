// The query parameters and path variables of a google.api.http request, read by the type of the field each names, as
// grpc-gateway v2 reads them: runtime/query.go (DefaultQueryParser, populateFieldValueFromPath, parseField,
// parseMessage) and runtime/convert.go (Bytes), at github.com/grpc-ecosystem/grpc-gateway 9648db43. Each value becomes
// what the proto3 JSON mapping writes for it, so that the request is then parsed as strictly as a JSON body is.
//   bool: strconv.ParseBool's spellings; ints: base-10 integers in the field's range (64-bit ones kept as strings);
//   floats: decimals, Inf and NaN; enums: a value's name or number; bytes: base64, standard or URL-safe, padded;
//   Timestamp: RFC 3339; Duration: Go's syntax (1h2m3.5s); FieldMask: comma-separated paths; the wrappers as their
//   value; Struct and Value as JSON; a repeated field by repeating the key; a map entry as `field[key]=value`; a
//   nested field by its dotted path. A key that names no field is ignored, as grpc-gateway does.

/** strconv.ParseBool's spellings. */
/** @type {Map<string, boolean>} */
const BOOLS = new Map();
for (const s of ['1', 't', 'T', 'TRUE', 'true', 'True']) BOOLS.set(s, true);
for (const s of ['0', 'f', 'F', 'FALSE', 'false', 'False']) BOOLS.set(s, false);

/** Each integer kind: signed or not, its bits. */
const INTS = {
  int32: [true, 32], sint32: [true, 32], sfixed32: [true, 32], int64: [true, 64], sint64: [true, 64], sfixed64: [true, 64],
  uint32: [false, 32], fixed32: [false, 32], uint64: [false, 64], fixed64: [false, 64],
};

/** The well-known wrappers and the kind each wraps. */
const WRAPPERS = {
  'google.protobuf.DoubleValue': 'double', 'google.protobuf.FloatValue': 'float', 'google.protobuf.Int64Value': 'int64',
  'google.protobuf.Int32Value': 'int32', 'google.protobuf.UInt64Value': 'uint64', 'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.BoolValue': 'bool', 'google.protobuf.StringValue': 'string', 'google.protobuf.BytesValue': 'bytes',
};

const FLOAT32_MAX = 3.4028234663852886e38;
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_BASE64 = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/;
/** Go's time.ParseDuration units, in seconds. */
const DURATION_UNITS = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/**
 * A scalar kind's value in the proto3 JSON mapping, read from text as grpc-gateway's parseField reads it.
 * @param {string} kind a protobufjs scalar type name ('bool', 'int64', 'bytes', ...)
 * @param {string} text
 * @returns {unknown}
 * @throws {Error} the text is not a value of the kind
 */
function scalar(kind, text) {
  if (kind === 'string') return text;
  if (kind === 'bool') {
    if (!BOOLS.has(text)) throw new Error(`${JSON.stringify(text)} is not a bool`);
    return BOOLS.get(text);
  }
  if (kind in INTS) {
    const [signed, bits] = INTS[kind];
    if (!(signed ? /^[+-]?\d+$/ : /^\+?\d+$/).test(text)) throw new Error(`${JSON.stringify(text)} is not an integer${signed ? '' : ' of 0 or more'}`);
    const n = BigInt(text);
    const [min, max] = signed ? [-(2n ** BigInt(bits - 1)), 2n ** BigInt(bits - 1) - 1n] : [0n, 2n ** BigInt(bits) - 1n];
    if (n < min || n > max) throw new Error(`${JSON.stringify(text)} is out of range for ${kind}`);
    return bits === 64 ? n.toString() : Number(n);
  }
  if (kind === 'double' || kind === 'float') {
    const lower = text.toLowerCase().replace(/^[+-]/, '');
    const negative = text.startsWith('-');
    if (lower === 'nan') return 'NaN';
    if (lower === 'inf' || lower === 'infinity') return negative ? '-Infinity' : 'Infinity';
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a number`);
    const v = Number(text);
    if (!Number.isFinite(v) || (kind === 'float' && Math.abs(v) > FLOAT32_MAX)) throw new Error(`${JSON.stringify(text)} is out of range for ${kind}`);
    return v;
  }
  if (kind === 'bytes') {
    // convert.go Bytes: standard base64, else URL-safe; both padded.
    if (STD_BASE64.test(text)) return text;
    if (URL_BASE64.test(text)) return Buffer.from(text, 'base64url').toString('base64');
    throw new Error(`${JSON.stringify(text)} is not base64`);
  }
  throw new Error(`a ${kind} field cannot be read from text`);
}

/**
 * Go's time.ParseDuration, as the proto3 JSON mapping writes a Duration: seconds with an `s`.
 * @param {string} text e.g. '1h2m3.5s', '-300ms'
 * @returns {string} e.g. '3723.500000000s'
 * @throws {Error} not a Go duration
 */
function goDuration(text) {
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[+-]/, '');
  if (body === '0') return '0s';
  const parts = [...body.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== body) throw new Error(`${JSON.stringify(text)} is not a duration (Go's syntax: 1h2m3.5s)`);
  // In nanoseconds as a BigInt, so that 9 decimals stay exact.
  let ns = 0n;
  for (const [, number, unit] of parts) {
    const [whole, fraction = ''] = number.split('.');
    const scale = BigInt(Math.round(DURATION_UNITS[unit] * 1e9));
    ns += BigInt(whole || '0') * scale + (fraction ? (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length) : 0n);
  }
  const abs = ns.toString().padStart(10, '0');
  return `${sign < 0 && ns > 0n ? '-' : ''}${abs.slice(0, -9)}.${abs.slice(-9)}s`;
}

/** A name protobufjs turned into lowerCamelCase, as the .proto writes it (a oneof keeps no `protoName`). */
const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A snake_case path segment in lowerCamelCase, as the proto3 JSON mapping writes a FieldMask's paths. */
const camel = (segment) => segment.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * A message field's value read from text: the well-known types grpc-gateway's parseMessage reads, no other.
 * @param {string} fullName the message type's full name, without the leading dot
 * @param {string} text
 * @returns {unknown} in the proto3 JSON mapping
 * @throws {Error}
 */
function message(fullName, text) {
  if (fullName in WRAPPERS) return scalar(WRAPPERS[fullName], text);
  switch (fullName) {
    case 'google.protobuf.Timestamp':
      // time.RFC3339Nano: a date, T, a time with up to 9 decimals, and Z or an offset.
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
        throw new Error(`${JSON.stringify(text)} is not an RFC 3339 time`);
      }
      return text;
    case 'google.protobuf.Duration': return goDuration(text);
    case 'google.protobuf.FieldMask': return text.split(',').map((p) => p.split('.').map(camel).join('.')).join(',');
    case 'google.protobuf.Value':
    case 'google.protobuf.Struct': {
      let json;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new Error(`${JSON.stringify(text)} is not JSON (${err.message})`, { cause: err });
      }
      if (fullName === 'google.protobuf.Struct' && (json === null || typeof json !== 'object' || Array.isArray(json))) {
        throw new Error(`${JSON.stringify(text)} is not a JSON object`);
      }
      return json;
    }
    default: throw new Error(`unsupported message type: ${JSON.stringify(fullName)}`);
  }
}

/**
 * One value of a field (of a list's element, or a map's value), read from text.
 * @param {{type: string, resolvedType: any}} field a protobufjs Field or MapField, resolved
 * @param {string} text
 * @returns {unknown} in the proto3 JSON mapping
 */
function valueOf(field, text) {
  const resolved = field.resolvedType;
  if (resolved && resolved.values) {
    // An enum: a value's name, or its number.
    if (Object.hasOwn(resolved.values, text)) return text;
    if (/^[+-]?\d+$/.test(text)) {
      const name = resolved.valuesById[Number(text)];
      if (name !== undefined) return name;
    }
    throw new Error(`${JSON.stringify(text)} is not a valid value`);
  }
  if (resolved) return message(resolved.fullName.replace(/^\./, ''), text);
  return scalar(field.type, text);
}

/**
 * The field of a type a name denotes: its name in the .proto, else its JSON name (grpc-gateway: ByName, then ByJSONName).
 * protobufjs keeps the .proto's name as `protoName` where it turned it into lowerCamelCase.
 * @param {any} type a protobufjs Type
 * @param {string} name
 * @returns {any} the Field, resolved, or undefined
 */
function fieldNamed(type, name) {
  const fields = type.fieldsArray;
  return (fields.find((f) => (f.protoName ?? f.name) === name) ?? fields.find((f) => f.jsonName === name))?.resolve();
}

/** A oneof that proto3's `optional` made (one field, named after it with a leading underscore): no choice to guard. */
const realOneof = (field) => field.partOf && !(field.partOf.oneof.length === 1 && field.partOf.name === `_${field.name}`);

/**
 * Sets the values of one key (a dotted field path) in a request being built in the proto3 JSON mapping, as grpc-gateway's
 * populateFieldValueFromPath does: a repeated field takes every value, a map field a key and a value, any other one
 * value. A path that names no field is ignored.
 * @param {any} type the request's protobufjs Type, resolved
 * @param {Record<string, any>} request the request so far, keyed by JSON names
 * @param {string[]} path field names, dotted path split
 * @param {string[]} values
 * @param {{replace?: boolean}} [options] replace: what the request holds of the field goes first (a path variable's
 *   value replaces the body's, as grpc-gateway sets the path's after it decoded the body); else a list grows
 * @returns {void}
 * @throws {Error} a value that does not parse for its field (the message names the field), a path through a field that
 *   is no message, a second field of a oneof, or several values for a field that takes one
 */
export function setField(type, request, path, values, { replace = false } = {}) {
  let at = request;
  let on = type;
  let field;
  for (const [i, name] of path.entries()) {
    field = fieldNamed(on, name);
    if (!field) return;
    // A body may name a field by its .proto name: one spelling is kept, the JSON name, so that no field is given twice.
    const spelt = field.protoName ?? field.name;
    if (spelt !== field.jsonName && spelt in at) {
      if (!(field.jsonName in at)) at[field.jsonName] = at[spelt];
      delete at[spelt];
    }
    if (realOneof(field)) {
      const other = field.partOf.oneof.find((n) => n !== field.name && on.fields[n] && on.fields[n].jsonName in at);
      if (other) throw new Error(`field already set for oneof ${JSON.stringify(snake(field.partOf.name))}`);
    }
    if (i === path.length - 1) break;
    if (!field.resolvedType || field.resolvedType.values || field.repeated || field.map) throw new Error(`invalid path: ${JSON.stringify(name)} is not a message`);
    if (at[field.jsonName] === null || typeof at[field.jsonName] !== 'object') at[field.jsonName] = {};
    at = at[field.jsonName];
    on = field.resolvedType;
  }
  if (replace) delete at[field.jsonName];
  const where = (what) => (err) => { throw new Error(`parsing ${what} ${JSON.stringify(field.protoName ?? field.name)}: ${err.message}`, { cause: err }); };
  if (field.map) {
    if (values.length !== 2) throw new Error(`more than one value provided for key ${JSON.stringify(values[0])} in map ${JSON.stringify(field.protoName ?? field.name)}`);
    let key;
    let value;
    try {
      key = String(scalar(field.keyType, values[0]));
    } catch (err) {
      where('map key')(err);
    }
    try {
      value = valueOf(field, values[1]);
    } catch (err) {
      where('map value')(err);
    }
    (at[field.jsonName] ??= {})[key] = value;
    return;
  }
  if (field.repeated) {
    const list = (at[field.jsonName] ??= []);
    for (const text of values) {
      try {
        list.push(valueOf(field, text));
      } catch (err) {
        where('list')(err);
      }
    }
    return;
  }
  if (values.length > 1) throw new Error(`too many values for field ${JSON.stringify(field.protoName ?? field.name)}: ${values.join(', ')}`);
  try {
    at[field.jsonName] = valueOf(field, values[0]);
  } catch (err) {
    where('field')(err);
  }
}

/**
 * The query's keys, each with its values and its field path: `a.b=1&a.b=2` one key, `m[k]=v` the map field `m` with
 * values [k, v] (grpc-gateway's valuesKeyRegexp).
 * @param {URLSearchParams} query
 * @returns {Array<{path: string[], values: string[]}>}
 */
export function queryKeys(query) {
  /** @type {Map<string, string[]>} */
  const byKey = new Map();
  for (const [key, value] of query) byKey.set(key, [...(byKey.get(key) ?? []), value]);
  return [...byKey].map(([key, values]) => {
    const entry = /^(.*)\[(.*)\]$/.exec(key);
    return entry ? { path: entry[1].split('.'), values: [entry[2], ...values] } : { path: key.split('.'), values };
  });
}

/**
 * A dotted field path in the .proto's names (grpc-gateway's normalizeFieldPath): each name resolved by its .proto name
 * or its JSON name, as far as the path runs through singular messages; the path as given where a name resolves to none.
 * @param {any} type the request's protobufjs Type, resolved
 * @param {string[]} path
 * @returns {string[]}
 */
export function protoPath(type, path) {
  const names = [];
  let on = type;
  for (const [i, name] of path.entries()) {
    const field = fieldNamed(on, name);
    if (!field) return path;
    names.push(field.protoName ?? field.name);
    if (i === path.length - 1) break;
    if (!field.resolvedType || field.resolvedType.values || field.repeated || field.map) return path;
    on = field.resolvedType;
  }
  return names;
}

/**
 * Whether a JSON body holds the field a dotted path names first, by its JSON name or its .proto name.
 * @param {any} type the request's protobufjs Type, resolved
 * @param {unknown} body
 * @param {string} dotted
 * @returns {boolean}
 */
export function bodyHolds(type, body, dotted) {
  if (body === null || typeof body !== 'object') return false;
  const field = fieldNamed(type, dotted.split('.')[0]);
  return Boolean(field) && (field.jsonName in body || (field.protoName ?? field.name) in body);
}
