// Node-side view of proto/: the compiled types, the proto3 JSON mapping and the
// gRPC service definition with protobufjs codecs. Everything derives from user.proto.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { PROTO_FILE, SERVICE_NAME, USER_TYPE } from './payload.js';

/** Absolute path of the .proto file. */
export const PROTO_PATH = fileURLToPath(new URL(PROTO_FILE, import.meta.url));

const root = protobuf.loadSync(PROTO_PATH).resolveAll();

/** The `user.v1.User` message type (protobufjs reflection). */
export const User = root.lookupType(USER_TYPE);

// proto3 JSON mapping as protobufjs spells it: enum names, 64-bit integers as
// strings, bytes as base64, and fields at their default value included.
// Source: https://protobuf.dev/programming-guides/json/
const PROTO3_JSON = Object.freeze({ enums: String, longs: String, bytes: String, defaults: true, json: true });

function isDefault(field, value) {
  if (field.type === 'bytes') return value.length === 0;
  if (typeof value?.isZero === 'function') return value.isZero(); // a Long, for 64-bit integers
  return value === field.typeDefault;
}

/**
 * Drops the fields that hold their default value, so they stay off the wire.
 * proto3 does not serialize an implicit-presence field at its default
 * (https://protobuf.dev/programming-guides/field_presence/), but protobufjs
 * writes every field set on the object, zeros included: without this the
 * demo's `country: KE` (0) would cost 2 bytes that Go, Java or C++ never send.
 * @param {protobuf.Type} type the message type
 * @param {protobuf.Message} message a message of that type, left as it is
 * @returns {protobuf.Message} a new message of that type with the other fields (nested messages likewise). New, not
 *   the same one with fields deleted: a `delete` turns a V8 object into a dictionary, and the servers encode this
 *   message on every request, reading each field (protobufjs encoded the demo's User in 385–410 ns from the dictionary,
 *   334–374 ns from the new object: 2 million encodes, 6 rounds each, docs/profiling.md)
 */
export function withoutDefaults(type, message) {
  const kept = {};
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(message, field.name)) continue;
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    if (field.resolvedType instanceof protobuf.Type) {
      const sub = /** @type {protobuf.Type} */ (field.resolvedType);
      kept[field.name] = field.repeated ? value.map((v) => withoutDefaults(sub, v)) : withoutDefaults(sub, value);
    } else if (field.repeated || field.partOf || !isDefault(field, value)) {
      kept[field.name] = value;
    }
  }
  return type.create(kept);
}

/**
 * A method of the service, with its resolved request and response types.
 * @param {string} rpc method name, e.g. 'GetUser'
 * @returns {protobuf.Method}
 * @throws {Error} when the service has no such method
 */
export function methodOf(rpc) {
  const method = root.lookupService(SERVICE_NAME).methods[rpc];
  if (!method) throw new Error(`${SERVICE_NAME} has no method ${rpc}`);
  return method;
}

/**
 * The response type of a method of the service.
 * @param {string} rpc method name, e.g. 'GetUser'
 * @returns {protobuf.Type}
 * @throws {Error} when the service has no such method
 */
export const responseTypeOf = (rpc) => methodOf(rpc).resolvedResponseType;

/**
 * Converts a decoded message to its proto3 JSON mapping, every field included.
 * @param {protobuf.Type} type the message type
 * @param {protobuf.Message|object} message a message of that type
 * @returns {object} plain object, ready for JSON.stringify
 */
export function toProto3Json(type, message) {
  return type.toObject(message, PROTO3_JSON);
}

// JSON Schema of each proto3 scalar in its JSON mapping; 64-bit integers are strings there.
const SCALAR_SCHEMA = {
  string: { type: 'string' },
  bytes: { type: 'string' },
  bool: { type: 'boolean' },
  double: { type: 'number' },
  float: { type: 'number' },
  int32: { type: 'integer' },
  uint32: { type: 'integer' },
  sint32: { type: 'integer' },
  fixed32: { type: 'integer' },
  sfixed32: { type: 'integer' },
  int64: { type: 'string' },
  uint64: { type: 'string' },
  sint64: { type: 'string' },
  fixed64: { type: 'string' },
  sfixed64: { type: 'string' },
};

/**
 * JSON Schema of a message's proto3 JSON mapping, for fastify's response
 * serializer, so the HTTP body is derived from the .proto and nothing else.
 * @param {protobuf.Type} type the message type
 * @returns {object} a JSON Schema (draft 7) object schema with every field required
 * @throws {TypeError} for a field kind the mapping here does not cover (maps, oneofs of messages)
 */
export function jsonSchemaOf(type) {
  const properties = {};
  for (const field of type.fieldsArray) {
    if (field.map) throw new TypeError(`${type.fullName}.${field.name}: map fields are not supported`);
    let schema;
    if (field.resolvedType instanceof protobuf.Enum) {
      schema = { type: 'string', enum: Object.keys(field.resolvedType.values) };
    } else if (field.resolvedType instanceof protobuf.Type) {
      schema = jsonSchemaOf(field.resolvedType);
    } else if (SCALAR_SCHEMA[field.type]) {
      schema = SCALAR_SCHEMA[field.type];
    } else {
      throw new TypeError(`${type.fullName}.${field.name}: no JSON Schema for field type ${field.type}`);
    }
    properties[field.name] = field.repeated ? { type: 'array', items: schema } : schema;
  }
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/**
 * The gRPC service definition for `@grpc/grpc-js` (`server.addService`,
 * `makeGenericClientConstructor`), with protobufjs encode/decode as codecs:
 * messages are passed as protobufjs messages, not converted to plain objects.
 * @returns {import('@grpc/grpc-js').ServiceDefinition}
 */
export function userServiceDefinition() {
  const service = root.lookupService(SERVICE_NAME);
  /** @type {Record<string, import('@grpc/grpc-js').MethodDefinition<object, object>>} */
  const definition = {};
  for (const method of service.methodsArray) {
    const req = method.resolvedRequestType;
    const res = method.resolvedResponseType;
    definition[method.name] = {
      path: `/${SERVICE_NAME}/${method.name}`,
      originalName: method.name,
      requestStream: Boolean(method.requestStream),
      responseStream: Boolean(method.responseStream),
      // protobufjs's writer makes a Buffer in Node; its types say Uint8Array.
      requestSerialize: (message) => /** @type {Buffer} */ (req.encode(message).finish()),
      requestDeserialize: (bytes) => req.decode(bytes),
      responseSerialize: (message) => /** @type {Buffer} */ (res.encode(message).finish()),
      responseDeserialize: (bytes) => res.decode(bytes),
    };
  }
  return definition;
}

// What server reflection describes, each .proto as [include dir, import path]: user.proto, and the
// standard services the gRPC listener serves beside UserService, as their packages ship them.
const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));
const REFLECTED_PROTOS = [
  [path.dirname(PROTO_PATH), PROTO_FILE],
  [path.join(packageDir('grpc-health-check'), 'proto'), 'health/v1/health.proto'],
  [path.join(packageDir('@grpc/reflection'), 'build', 'proto'), 'grpc/reflection/v1/reflection.proto'],
  [path.join(packageDir('@grpc/reflection'), 'build', 'proto'), 'grpc/reflection/v1alpha/reflection.proto'],
];

/**
 * What server reflection describes: user.proto and the health and reflection services, each file
 * described as protoc describes it (see asProtocDescribes): the .proto's own field names
 * (`size_bytes`, not protobufjs's `sizeBytes`) with their `json_name` (`sizeBytes`), and the file
 * named by its import path (`user.proto`), so grpcurl, Postman and ghz send the names of the
 * contract and print the names of the HTTP API.
 * @returns {import('@grpc/proto-loader').PackageDefinition}
 * @throws {Error} when two of the files declare one package (protobufjs would describe them as one file)
 */
export function reflectionPackageDefinition() {
  // Required here: a worker that serves no reflection call loads no proto-loader (and its protobufjs).
  /** @type {typeof import('@grpc/proto-loader')} */
  const protoLoader = require('@grpc/proto-loader');
  const definition = protoLoader.loadSync(REFLECTED_PROTOS.map(([, file]) => file), {
    keepCase: true,
    includeDirs: [...new Set(REFLECTED_PROTOS.map(([dir]) => dir))],
  });
  const fileOf = importPathsByPackage(REFLECTED_PROTOS);
  const fixed = new Map(); // the same file's bytes are shared by every type it defines
  for (const entry of Object.values(definition)) {
    if (!Array.isArray(entry.fileDescriptorProtos)) continue;
    entry.fileDescriptorProtos = entry.fileDescriptorProtos.map((bytes) => {
      if (!fixed.has(bytes)) fixed.set(bytes, asProtocDescribes(bytes, fileOf));
      return fixed.get(bytes);
    });
  }
  return definition;
}

/**
 * protobufjs builds one file descriptor per package and names it after the package
 * (`user_v1.proto`); protoc names a file by its import path, the path relative to the include
 * dir that holds it. One file per package makes the two the same.
 * @param {string[][]} protos [include dir, import path] of each file
 * @returns {Map<string, string>} package ('' for none) to import path
 * @throws {Error} when two files declare one package
 */
function importPathsByPackage(protos) {
  const byPackage = new Map();
  for (const [dir, file] of protos) {
    const pkg = protobuf.parse(readFileSync(path.join(dir, file), 'utf8'), { keepCase: true }).package ?? '';
    if (byPackage.has(pkg)) {
      throw new Error(`${file} and ${byPackage.get(pkg)} both declare package "${pkg}": protobufjs describes them as one file, `
        + 'which reflection cannot name as protoc would');
    }
    byPackage.set(pkg, file);
  }
  return byPackage;
}

/**
 * A field's JSON name as protoc derives it (descriptor.cc, ToJsonName): every underscore dropped,
 * the character after it upper-cased, the rest kept. protoc writes it into every
 * FieldDescriptorProto; the proto3 JSON mapping (and so the HTTP API) names fields by it.
 * @param {string} name the .proto field name, e.g. 'next_billing_date'
 * @returns {string} e.g. 'nextBillingDate'
 */
export const protocJsonName = (name) => name.replace(/_+(.?)/g, (_, next) => next.toUpperCase());

const { FileDescriptorProto } = require('protobufjs/ext/descriptor');

/**
 * One file descriptor of proto-loader (protobufjs) rewritten as protoc writes it, where reflection
 * clients see the difference:
 * - the file's name: its import path, not protobufjs's `<package>.proto` (user_v1.proto);
 * - `json_name` on every field: protobufjs leaves it out, and grpcurl, Postman and grpcui then
 *   print the .proto names (`next_billing_date`) where the HTTP API says `nextBillingDate`;
 * - map entries: protobufjs names a map field's entry message after the field (`Statuses`, type
 *   name relative); protoc names it `<FieldInCamelCase>Entry` with a fully qualified type name,
 *   and clients check that (grpcurl: "invalid map: incorrect implicit map entry name" for
 *   grpc.health.v1.HealthListResponse.statuses). Source: descriptor.proto, MessageOptions.map_entry.
 * @param {Uint8Array} bytes a serialized FileDescriptorProto
 * @param {Map<string, string>} fileOf package to import path (importPathsByPackage)
 * @returns {Uint8Array} the same file, rewritten
 * @throws {Error} when no file of `fileOf` declares the descriptor's package
 */
function asProtocDescribes(bytes, fileOf) {
  // Reflection types have no static shape: the fields used are descriptor.proto's.
  const file = /** @type {any} */ (FileDescriptorProto.decode(bytes));
  const name = fileOf.get(file.package ?? '');
  if (!name) throw new Error(`reflection: protobufjs described package "${file.package}", which no reflected .proto declares`);
  file.name = name;
  const withJsonNames = (fields) => { for (const field of fields ?? []) field.jsonName = protocJsonName(field.name); };
  const camel = (fieldName) => fieldName.replace(/(^|_)([a-z])/g, (_, __, c) => c.toUpperCase());
  const visit = (message, scope) => {
    const here = `${scope}.${message.name}`;
    withJsonNames(message.field);
    withJsonNames(message.extension);
    for (const nested of message.nestedType ?? []) {
      if (nested.options?.mapEntry) {
        const field = message.field.find((f) => f.typeName === nested.name || f.typeName === `${here}.${nested.name}`);
        if (field) {
          nested.name = `${camel(field.name)}Entry`;
          field.typeName = `${here}.${nested.name}`;
        }
      }
      visit(nested, here);
    }
  };
  withJsonNames(file.extension);
  for (const message of file.messageType ?? []) visit(message, file.package ? `.${file.package}` : '');
  return FileDescriptorProto.encode(file).finish();
}

/**
 * The .proto name of a field: protobufjs loads names in lowerCamelCase, and user.proto follows the
 * style guide's lower_snake_case (https://protobuf.dev/programming-guides/style/#message-field-names),
 * so the mapping back is exact.
 * @param {protobuf.Field} field
 * @returns {string} e.g. 'size_bytes'
 */
export const protoFieldName = (field) => field.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * One gRPC message framed as gRPC sends it over HTTP/2: a 1-byte compressed
 * flag (0), the 4-byte big-endian length, then the protobuf bytes.
 * Source: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md (Length-Prefixed-Message)
 * @param {Uint8Array} message
 * @returns {Buffer}
 */
export function grpcFrame(message) {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}
