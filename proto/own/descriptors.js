// The user's own service as @bufbuild/protobuf descriptors, for the connect-node listeners (server/connect.js), the JSON
// twin's proto3 JSON mapping (proto/own/json.js) and the plain fastify peer (server/peer-http.js): what a protobuf-es
// user gets from protoc-gen-es and a connect-node user hands its router, built at start from the same PROTO the other
// listeners load.
// - A FileDescriptorSet (`buf build -o`, `protoc --include_imports --descriptor_set_out`) is taken as it is.
// - A .proto: @bufbuild/protobuf parses no .proto (buf does: a dev dependency, not in the image at run time), so
//   the schema protobufjs parsed (proto/own/schema.js) is converted with protobufjs's `ext/descriptor` (toDescriptor),
//   element by element, and what that conversion gets wrong for @bufbuild/protobuf is put right here: type references
//   relative ("LineItem") where a descriptor's are fully qualified (".shop.v1.LineItem"), `json_name` left out when it
//   equals the field's name (@bufbuild/protobuf reads it as given: "" would be the JSON name), one file per package
//   with no imports and one syntax for all (Root#toDescriptor), map entries named as their field ("ItemsBySku", which
//   can collide with a message; protoc's "ItemsBySkuEntry"), and extension fields copied into the types they extend.
//   Here: one file per .proto file, its syntax or edition its own, its imports the files of the types it refers to.
// In both, `google/protobuf/*.proto` are @bufbuild/protobuf's own copies where the schema lacks them, as its JSON
// mapping of the well-known types expects.
import { readFileSync } from 'node:fs';
import { create, createFileRegistry, createRegistry, fromBinary, toBinary } from '@bufbuild/protobuf';
import { protoCamelCase } from '@bufbuild/protobuf/reflect';
import * as wkt from '@bufbuild/protobuf/wkt';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor.js';
import { DESCRIPTOR_SET } from './schema.js';

/** @typedef {import('@bufbuild/protobuf/wkt').FileDescriptorProto} FileDescriptorProto */
/** @typedef {import('@bufbuild/protobuf/wkt').DescriptorProto} DescriptorProto */
/** @typedef {import('@bufbuild/protobuf/wkt').FieldDescriptorProto} FieldDescriptorProto */

/** @bufbuild/protobuf's google/protobuf/*.proto (its well-known types and descriptor.proto), by file name. */
const WKT_FILES = new Map(/** @type {import('@bufbuild/protobuf').DescFile[]} */ (Object.values(wkt)
  .filter((v) => typeof v === 'object' && v !== null && /** @type {{kind?: string}} */ (v).kind === 'file'))
  .map((f) => [f.proto.name, f]));
/** Every type of WKT_FILES, by full name (no leading dot). */
const WKT_TYPES = createRegistry(...WKT_FILES.values());

/**
 * @typedef {object} OwnDescriptors
 * @property {import('@bufbuild/protobuf').FileRegistry} registry every file of the schema (and the well-known types
 *   it uses): what the JSON mapping of an Any looks its type up in
 * @property {import('@bufbuild/protobuf').DescService} service the RPC's service
 * @property {import('@bufbuild/protobuf').DescMethod} method the RPC
 */

/** The registries built, by the schema they were built of (its protobufjs root) and its PROTO: a worker's listeners and
 * the RPCs of one schema share one, read only. */
const BUILT = new WeakMap();

/**
 * The user's RPC as @bufbuild/protobuf descriptors, built once per process for an RPC and PROTO (the JSON twin,
 * connect-node, the JSON peer and the gRPC listener's reflection all ask; none changes them).
 * @param {string} proto PROTO: a FileDescriptorSet (read again, as it is) or a .proto (`rpc`'s schema is converted)
 * @param {import('./schema.js').Rpc} rpc the RPC loadOwnService resolved in that schema
 * @returns {OwnDescriptors}
 * @throws {Error} when a descriptor does not build (naming the file or type), or the RPC is not in it
 */
export function ownDescriptors(proto, rpc) {
  const { root } = rpc.requestType;
  let registry = BUILT.get(root)?.proto === proto ? BUILT.get(root).registry : null;
  if (!registry) {
    registry = buildRegistry(proto, rpc);
    BUILT.set(root, { proto, registry });
  }
  const service = registry.getService(rpc.service);
  const method = service?.methods.find((m) => m.name === rpc.method);
  if (!method) throw new Error(`${rpc.name}: not in the descriptors built from PROTO=${proto}`);
  return { registry, service, method };
}

/**
 * The registry of ownDescriptors, built.
 * @param {string} proto
 * @param {import('./schema.js').Rpc} rpc
 * @returns {import('@bufbuild/protobuf').FileRegistry}
 */
function buildRegistry(proto, rpc) {
  const files = DESCRIPTOR_SET.test(proto)
    ? fromBinary(wkt.FileDescriptorSetSchema, readFileSync(proto)).file
    : filesOfRoot(rpc.requestType.root);
  for (const file of files) for (const message of file.messageType) completeJsonNames(message);
  return createFileRegistry(create(wkt.FileDescriptorSetSchema, { file: inImportOrder(files) }));
}

/**
 * The schema's files as gRPC server reflection hands them out (grpc.reflection.v1 FileDescriptorResponse): every file
 * of the registry, the well-known types it imports included, each a serialized FileDescriptorProto, so that grpcurl
 * and Postman can call the user's RPC without its .proto.
 * @param {import('@bufbuild/protobuf').FileRegistry} registry ownDescriptors's
 * @returns {Buffer[]} as @grpc/proto-loader gives a package definition's fileDescriptorProtos
 */
export const reflectedFiles = (registry) => [...registry.files].map((file) => {
  const bytes = toBinary(wkt.FileDescriptorProtoSchema, file.proto);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
});

/**
 * The files of a schema protobufjs parsed, as FileDescriptorProtos: one per .proto it read (by the objects' `filename`),
 * the google/protobuf ones left to WKT_FILES.
 * @param {protobuf.Root} root resolved
 * @returns {FileDescriptorProto[]}
 */
function filesOfRoot(root) {
  /** @type {Map<string, FileDescriptorProto>} */
  const files = new Map();
  /** @type {Map<string, string>} full name (no leading dot) of every type converted here, to its file */
  const fileOfType = new Map();
  const fileOf = (/** @type {protobuf.ReflectionObject} */ obj, /** @type {protobuf.Namespace} */ ns) => {
    // The path protobufjs read it from; an object it made without parsing a file (none here) goes with its package's.
    const name = (obj.filename ?? `${ns.fullName.slice(1).replaceAll('.', '/') || 'root'}.proto`).replace(/^\/+/, '');
    if (!files.has(name)) files.set(name, create(wkt.FileDescriptorProtoSchema, { name, package: ns.fullName.slice(1), ...syntaxOf(obj) }));
    return files.get(name);
  };
  const walk = (/** @type {protobuf.Namespace} */ ns) => {
    for (const obj of ns.nestedArray) {
      if (obj.fullName.startsWith('.google.protobuf.') && WKT_TYPES.get(obj.fullName.slice(1))) continue;
      if (obj instanceof protobuf.Type) {
        const file = fileOf(obj, ns);
        const message = messageOf(obj, edition(obj));
        file.messageType.push(message);
        namesOf(message, ns.fullName.slice(1), (typeName) => fileOfType.set(typeName, file.name));
      } else if (obj instanceof protobuf.Enum) {
        const file = fileOf(obj, ns);
        file.enumType.push(fromBinary(wkt.EnumDescriptorProtoSchema, descriptor.EnumDescriptorProto.encode(obj.toDescriptor()).finish()));
        fileOfType.set(obj.fullName.slice(1), file.name);
      } else if (obj instanceof protobuf.Service) {
        // Methods name their types in full already; options (google.api.http, ...) are not needed to serve.
        fileOf(obj, ns).service.push(create(wkt.ServiceDescriptorProtoSchema, {
          name: obj.name,
          method: obj.methodsArray.map((m) => create(wkt.MethodDescriptorProtoSchema, {
            name: m.name, inputType: m.resolvedRequestType.fullName, outputType: m.resolvedResponseType.fullName,
            clientStreaming: Boolean(m.requestStream), serverStreaming: Boolean(m.responseStream),
          })),
        }));
      } else if (obj instanceof protobuf.Field) {
        if (obj.extensionField) fileOf(obj, ns).extension.push(extensionOf(obj, edition(obj)));
      } else if (obj instanceof protobuf.Namespace) {
        walk(obj);
      }
    }
  };
  walk(root);
  // A file imports the files of the types it refers to (the imports that matter to a descriptor).
  for (const file of files.values()) {
    const deps = new Set();
    const refer = (/** @type {string} */ typeName) => {
      const name = typeName.slice(1);
      const dep = fileOfType.get(name) ?? WKT_TYPES.get(name)?.['file']?.proto.name;
      if (dep && dep !== file.name) deps.add(dep);
    };
    const fieldsOf = (/** @type {FieldDescriptorProto[]} */ fields) => {
      for (const f of fields) for (const typeName of [f.typeName, f.extendee]) if (typeName) refer(typeName);
    };
    const messageFieldsOf = (/** @type {DescriptorProto} */ m) => {
      fieldsOf([...m.field, ...m.extension]);
      m.nestedType.forEach(messageFieldsOf);
    };
    file.messageType.forEach(messageFieldsOf);
    fieldsOf(file.extension);
    for (const s of file.service) for (const m of s.method) [m.inputType, m.outputType].forEach(refer);
    file.dependency = [...deps];
  }
  return [...files.values()];
}

/** A protobufjs object's edition as protobufjs parsed it: 'proto2', 'proto3', '2023', ... */
const edition = (/** @type {protobuf.ReflectionObject} */ obj) => /** @type {{_edition?: string}} */ (/** @type {unknown} */ (obj))._edition ?? 'proto2';

/** A FileDescriptorProto's syntax (and edition) fields for a protobufjs object's edition. */
function syntaxOf(/** @type {protobuf.ReflectionObject} */ obj) {
  const e = edition(obj);
  if (e === 'proto2' || e === 'proto3') return { syntax: e };
  const number = wkt.Edition[`EDITION_${e}`];
  if (number === undefined) throw new Error(`${obj.filename ?? obj.fullName}: edition ${e} is not one @bufbuild/protobuf knows`);
  return { syntax: 'editions', edition: number };
}

/**
 * A message type as a DescriptorProto: protobufjs's Type#toDescriptor, decoded by @bufbuild/protobuf, then each type
 * reference made fully qualified from the field protobufjs resolved, map entries named as protoc names them, and the
 * extension fields as extensions (protobufjs writes them as fields, and copies of them into the types they extend).
 * @param {protobuf.Type} type
 * @param {string} syntax the file's ('proto2', 'proto3', '2023', ...)
 * @returns {DescriptorProto}
 */
function messageOf(type, syntax) {
  const message = fromBinary(wkt.DescriptorProtoSchema, descriptor.DescriptorProto.encode(type.toDescriptor(syntax)).finish());
  fixMessage(message, type, syntax);
  return message;
}

/**
 * An extension field as a FieldDescriptorProto (Field#toDescriptor names its extendee in full, its type relative).
 * @param {protobuf.Field} field declared by `extend`, resolved
 * @param {string} syntax the file's
 * @returns {FieldDescriptorProto}
 */
function extensionOf(field, syntax) {
  const extension = fromBinary(wkt.FieldDescriptorProtoSchema, descriptor.FieldDescriptorProto.encode(field.toDescriptor(syntax)).finish());
  if (field.resolvedType) extension.typeName = field.resolvedType.fullName;
  return extension;
}

/**
 * Puts right what Type#toDescriptor gives for one message and its nested ones (see messageOf), in place.
 * @param {DescriptorProto} message
 * @param {protobuf.Type} type what it was made of
 * @param {string} syntax the file's
 */
function fixMessage(message, type, syntax) {
  // toDescriptor writes type.fieldsArray in order (with copies of the extensions of the type: protobufjs adds them
  // there), then the extension fields declared inside the type, as fields.
  const entries = new Map(message.nestedType.filter((n) => n.options?.mapEntry).map((n) => [n.name, n]));
  /** @type {FieldDescriptorProto[]} */
  const fields = [];
  for (const [i, field] of message.field.entries()) {
    const source = type.fieldsArray[i];
    if (!source || source.declaringField) continue;
    if (source instanceof protobuf.MapField) {
      const entry = entries.get(field.typeName);
      entry.name = `${upperFirst(protoCamelCase(field.name))}Entry`;
      field.typeName = `${type.fullName}.${entry.name}`;
      const value = entry.field.find((f) => f.number === 2);
      if (source.resolvedType) value.typeName = source.resolvedType.fullName;
    } else if (source.resolvedType) {
      field.typeName = source.resolvedType.fullName;
    }
    fields.push(field);
  }
  message.field = fields;
  const declared = type.nestedArray.filter((n) => n instanceof protobuf.Field && n.extensionField);
  message.extension = declared.map((f) => extensionOf(/** @type {protobuf.Field} */ (f), syntax));
  const nested = type.nestedArray.filter((n) => n instanceof protobuf.Type);
  const messages = message.nestedType.filter((n) => !n.options?.mapEntry);
  for (const [i, m] of messages.entries()) fixMessage(m, /** @type {protobuf.Type} */ (nested[i]), syntax);
}

const upperFirst = (/** @type {string} */ s) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Sets `json_name` where it is missing, in place: protoc and buf write it on every field, protobufjs only where it
 * differs from the name, and @bufbuild/protobuf takes it as given. protobufjs leaves it out only when it equals the
 * name; a descriptor set from elsewhere gets protoc's lowerCamelCase.
 * @param {DescriptorProto} message
 * @param {(name: string) => string} [jsonNameOf]
 */
function completeJsonNames(message, jsonNameOf = protoCamelCase) {
  for (const field of message.field) if (!field.jsonName) field.jsonName = jsonNameOf(field.name);
  for (const nested of message.nestedType) completeJsonNames(nested, jsonNameOf);
}

/**
 * Calls `visit` with the full name (no leading dot) of a message and of every type nested in it.
 * @param {DescriptorProto} message
 * @param {string} scope its package, or the full name of the message it is nested in
 * @param {(typeName: string) => void} visit
 */
function namesOf(message, scope, visit) {
  const name = scope ? `${scope}.${message.name}` : message.name;
  visit(name);
  for (const e of message.enumType) visit(`${name}.${e.name}`);
  for (const m of message.nestedType) namesOf(m, name, visit);
}

/**
 * The files in an order @bufbuild/protobuf's createFileRegistry takes (each after the files it imports), with the
 * google/protobuf files they import and lack from WKT_FILES. An import found nowhere is dropped: protobufjs loaded
 * the schema without it, and a type it would have held is named by createFileRegistry as not found.
 * @param {FileDescriptorProto[]} files
 * @returns {FileDescriptorProto[]}
 */
function inImportOrder(files) {
  const byName = new Map(files.map((f) => [f.name, f]));
  /** @type {FileDescriptorProto[]} */
  const out = [];
  const done = new Set();
  const visit = (/** @type {string} */ name) => {
    if (done.has(name)) return;
    done.add(name);
    const file = byName.get(name) ?? WKT_FILES.get(name)?.proto;
    if (!file) return;
    file.dependency.forEach(visit);
    if (byName.has(name)) file.dependency = file.dependency.filter((d) => byName.has(d) || WKT_FILES.has(d));
    out.push(file);
  };
  for (const file of files) visit(file.name);
  return out;
}
