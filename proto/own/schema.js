// The user's own service (issue 37): a schema given as a .proto file (with its import directories, as protoc's -I) or
// as a FileDescriptorSet, and the one unary RPC of it that both twins serve. Everything here is the user's: nothing of
// the message is known in advance. protobufjs 8 parses, encodes and decodes; its protojson extension is the proto3
// JSON mapping the samples are read in and the job checks answers with (it passes every required ProtoJSON test of the
// protobuf conformance suite: its README's table). The JSON twin's mapping, per request, is @bufbuild/protobuf's, on
// descriptors made of this schema (proto/own/json.js, proto/own/descriptors.js).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import { httpBindingsOf } from './http-rule.js';

/**
 * A message's field by its .proto name, whether the schema was loaded keeping names as written or in camelCase.
 * @param {protobuf.Type} type
 * @param {string} name
 * @returns {protobuf.Field|undefined}
 */
export const fieldNamed = (type, name) => type.fields[name] ?? type.fields[protobuf.util.camelCase(name)];

/** A schema, an RPC or a sample the user gave that cannot be used: one line naming the file and the reason. */
export class OwnServiceError extends Error {
  /** @param {string} message what is wrong, naming the setting, the file and where in it */
  constructor(message) {
    super(message);
    this.name = 'OwnServiceError';
    this.code = 'ERR_OWN_SERVICE';
  }
}

/** protobufjs's package folder: it ships google/protobuf/descriptor.proto and google/api/{annotations,http}.proto. */
const PROTOBUFJS_DIR = path.dirname(createRequire(import.meta.url).resolve('protobufjs/package.json'));

/** File name endings of a FileDescriptorSet (`buf build -o x.binpb`, `protoc --descriptor_set_out=x.pb`). */
export const DESCRIPTOR_SET = /\.(binpb|pb|protoset|desc)$/;

/**
 * @typedef {object} Schema
 * @property {protobuf.Root} root every type, resolved
 * @property {Array<{path: string, sha256: string}>} files what was read: the .proto files (imports included, the
 *   well-known types bundled with protobufjs left out) or the descriptor set, each with the SHA-256 of its bytes
 */

/**
 * The google.api.http rules of a FileDescriptorSet's methods, put where a .proto's parse puts them (a method's
 * `parsedOptions`): protobufjs's descriptor conversion drops custom options, so the set is decoded once more with
 * descriptor.proto's types extended by google/api/annotations.proto (the copies protobufjs ships), which keeps the
 * `google.api.http` extension of each MethodOptions.
 * @param {protobuf.Root} root the set's types, from protobuf.Root.fromDescriptor
 * @param {Uint8Array} bytes the set
 * @returns {void}
 */
function keepHttpRules(root, bytes) {
  const options = new protobuf.Root();
  options.resolvePath = (origin, target) => path.join(PROTOBUFJS_DIR, target);
  options.loadSync(['google/protobuf/descriptor.proto', 'google/api/annotations.proto']);
  // protobufjs's copy of http.proto predates HttpRule's response_body (field 12 in googleapis' google/api/http.proto).
  const rule = options.lookupType('google.api.HttpRule');
  if (!rule.fields.responseBody && !rule.fields.response_body) rule.add(new protobuf.Field('responseBody', 12, 'string'));
  const set = options.lookupType('google.protobuf.FileDescriptorSet');
  const decoded = /** @type {any} */ (set.toObject(set.decode(bytes), { defaults: false, enums: String }));
  for (const file of decoded.file ?? []) {
    for (const service of file.service ?? []) {
      for (const method of service.method ?? []) {
        const rule = method.options?.['.google.api.http'];
        const target = root.lookup(`${file.package ? `${file.package}.` : ''}${service.name}`);
        if (rule && target instanceof protobuf.Service && target.methods[method.name]) {
          target.methods[method.name].parsedOptions = [{ '(google.api.http)': rule }];
        }
      }
    }
  }
}

/**
 * Loads a schema: a .proto file with its imports, or a FileDescriptorSet.
 * @param {{proto: string, protoPath?: string[]}} source proto: a path; protoPath: import directories searched in order
 *   (protoc's -I); empty or absent: the .proto's own directory. `google/protobuf/*.proto` resolve to protobufjs's bundled
 *   copies unless a directory holds them
 * @returns {Schema}
 * @throws {OwnServiceError} for a missing file, a syntax error (file and line, as protobufjs reports it), an import
 *   found in no directory (naming PROTO_PATH), a type that resolves to nothing, or a descriptor set that does not decode
 */
export function loadSchema({ proto, protoPath = [] }) {
  if (!existsSync(proto) || !statSync(proto).isFile()) throw new OwnServiceError(`PROTO=${proto}: no such file`);
  const files = [];
  const hashOf = (file) => files.push({ path: file, sha256: createHash('sha256').update(readFileSync(file)).digest('hex') });
  let root;
  if (DESCRIPTOR_SET.test(proto)) {
    try {
      const bytes = readFileSync(proto);
      root = protobuf.Root.fromDescriptor(bytes);
      keepHttpRules(root, bytes);
    } catch (err) {
      throw new OwnServiceError(`PROTO=${proto}: not a FileDescriptorSet (${err.message})`);
    }
    hashOf(proto);
  } else {
    const dirs = protoPath.length ? protoPath.map((d) => path.resolve(d)) : [path.dirname(path.resolve(proto))];
    root = new protobuf.Root();
    // protobufjs parses each file right after resolving it, and names no file in a syntax error: the last one resolved is it.
    let parsing = path.resolve(proto);
    // protoc's resolution: an import is a path relative to one of the directories, the first that holds it wins.
    root.resolvePath = (origin, target) => {
      if (origin === '' || path.isAbsolute(target)) return (parsing = target);
      for (const dir of dirs) {
        const candidate = path.join(dir, target);
        if (existsSync(candidate)) return (parsing = candidate);
      }
      if (protobuf.common.get(target)) return target; // the well-known types protobufjs bundles (Timestamp, Struct, ...)
      // The other google/ files protobufjs ships (google/protobuf/descriptor.proto, google/api/annotations.proto and
      // http.proto: what a google.api.http option imports), when no directory has its own copy.
      const shipped = path.join(PROTOBUFJS_DIR, target);
      if (target.startsWith('google/') && existsSync(shipped)) return (parsing = shipped);
      throw new OwnServiceError(`${origin}: the import ${JSON.stringify(target)} is in none of PROTO_PATH's directories (${dirs.join(':')})`);
    };
    try {
      root.loadSync(path.resolve(proto));
    } catch (err) {
      if (err instanceof OwnServiceError) throw err;
      throw new OwnServiceError(`${parsing}: ${err.message}`);
    }
    for (const file of root.files) if (path.isAbsolute(file) && !file.startsWith(PROTOBUFJS_DIR)) hashOf(file);
  }
  try {
    root.resolveAll();
  } catch (err) {
    throw new OwnServiceError(`PROTO=${proto}: ${err.message}`);
  }
  if (!DESCRIPTOR_SET.test(proto)) checkCustomOptions(root);
  return { root, files };
}

/**
 * The options message each kind of declaration takes its options from (google/protobuf/descriptor.proto).
 * @type {Array<[any, string]>}
 */
const OPTIONS_MESSAGE = [
  [protobuf.Type, 'MessageOptions'], [protobuf.Field, 'FieldOptions'], [protobuf.OneOf, 'OneofOptions'],
  [protobuf.Enum, 'EnumOptions'], [protobuf.Service, 'ServiceOptions'], [protobuf.Method, 'MethodOptions'],
];

/**
 * Checks every custom option of a schema parsed from .proto files as protoc does, where protobufjs takes any: the
 * option's extension must resolve, from the declaration's scope outwards, and extend the options message of the kind
 * of declaration it is set on (an old googleapis library.proto puts `(google.api.resource)`, which today's
 * google/api/resource.proto declares on MessageOptions, on a field; protoc refuses it, protobufjs kept it, and k6's
 * own parser refused the schema 25 s into the run). protoc's wording, with the file and the line of the option.
 * A FileDescriptorSet was compiled by protoc or buf, which checked it.
 * @param {protobuf.Root} root resolved
 * @returns {void}
 * @throws {OwnServiceError} `file:line: Option "(name)" unknown.` or `... is an extension of "google.protobuf.X", not of
 *   the "google.protobuf.Y" a <kind> takes.`
 */
function checkCustomOptions(root) {
  const check = (object) => {
    const expected = OPTIONS_MESSAGE.find(([kind]) => object instanceof kind)?.[1];
    for (const option of object.parsedOptions ?? []) {
      for (const key of Object.keys(option ?? {})) {
        const name = /^\((.+)\)/.exec(key)?.[1];
        if (!name || !expected) continue;
        const scope = object instanceof protobuf.Namespace ? object : object.parent;
        // protobufjs names a field, an extension too, in lowerCamelCase: `resource_reference` is `resourceReference`.
        const found = [name, name.replace(/[^.]*$/, (last) => last.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()))].map((n) => (n.startsWith('.')
          ? root.lookup(n, [protobuf.Field]) : scope?.lookup(n, [protobuf.Field]))).find(Boolean);
        const extension = found instanceof protobuf.Field && found.extend ? found : null;
        const where = `${declarationLine(object, name)}`;
        if (!extension) throw new OwnServiceError(`${where}: Option "(${name})" unknown. Ensure that your proto definition file imports the proto which defines the option.`);
        const target = extension.parent?.lookup(extension.extend)?.fullName ?? extension.extend;
        if (target.replace(/^\./, '') !== `google.protobuf.${expected}`) {
          throw new OwnServiceError(`${where}: Option "(${name})" is an extension of "${target.replace(/^\./, '')}", not of the `
            + `"google.protobuf.${expected}" a ${kindName(object)} takes.`);
        }
      }
    }
  };
  const walk = (ns) => {
    for (const nested of ns.nestedArray) {
      check(nested);
      if (nested instanceof protobuf.Type) {
        for (const field of nested.fieldsArray) check(field);
        for (const oneof of nested.oneofsArray) check(oneof);
      }
      if (nested instanceof protobuf.Service) for (const method of nested.methodsArray) check(method);
      if (nested instanceof protobuf.Namespace) walk(nested);
    }
  };
  walk(root);
}

/** What protoc calls a declaration, in its messages. */
const kindName = (object) => (object instanceof protobuf.Type ? 'message' : object instanceof protobuf.Field ? 'field'
  : object instanceof protobuf.OneOf ? 'oneof' : object instanceof protobuf.Enum ? 'enum' : object instanceof protobuf.Service ? 'service' : 'method');

/**
 * `file:line` of a declaration's option, for a message: protobufjs keeps a declaration's file, not its line, so the line
 * is the first of the file that sets the option (`(name)`) at or after the declaration's own name.
 * @param {any} object a protobufjs reflection object
 * @param {string} name the option's name, without its parentheses
 * @returns {string} the file alone where no line is found
 */
function declarationLine(object, name) {
  const file = object.filename ?? object.parent?.filename;
  if (!file || !existsSync(file)) return file ?? object.fullName;
  const lines = readFileSync(file, 'utf8').split('\n');
  const declared = lines.findIndex((l) => new RegExp(`\\b${object.name}\\b`).test(l));
  const at = lines.findIndex((l, i) => i >= Math.max(0, declared) && l.includes(`(${name})`));
  return at < 0 ? file : `${file}:${at + 1}`;
}

/**
 * Every RPC of a schema, as `package.Service/Method`.
 * @param {protobuf.Root} root
 * @returns {string[]}
 */
export function rpcsOf(root) {
  const out = [];
  const walk = (ns) => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Service) for (const m of nested.methodsArray) out.push(`${nested.fullName.slice(1)}/${m.name}`);
      else if (nested instanceof protobuf.Namespace) walk(nested);
    }
  };
  walk(root);
  return out;
}

/**
 * @typedef {object} Rpc
 * @property {string} name `package.Service/Method`
 * @property {string} path the HTTP/2 and HTTP path both twins serve it at: `/package.Service/Method`
 * @property {string} service `package.Service`
 * @property {string} method `Method`
 * @property {RpcKind} kind
 * @property {boolean} requestStream the client sends a stream of messages (client streaming, bidirectional)
 * @property {boolean} responseStream the server answers a stream of messages (server streaming, bidirectional)
 * @property {protobuf.Type} requestType
 * @property {protobuf.Type} responseType
 * @property {import('./http-rule.js').HttpBinding[]} bindings its google.api.http routes ([] without a rule)
 */

/** @typedef {'unary'|'server streaming'|'client streaming'|'bidirectional streaming'} RpcKind */

/** The kinds of RPC the twins serve. */
export const SERVED_KINDS = Object.freeze(/** @type {RpcKind[]} */ (['unary', 'server streaming', 'client streaming', 'bidirectional streaming']));

/**
 * An RPC's kind, by the `stream` keywords of its request and response (gRPC's four kinds of service method).
 * @param {{requestStream?: boolean, responseStream?: boolean}} method
 * @returns {RpcKind}
 */
export function rpcKind({ requestStream, responseStream }) {
  if (requestStream && responseStream) return 'bidirectional streaming';
  if (requestStream) return 'client streaming';
  return responseStream ? 'server streaming' : 'unary';
}

/**
 * The RPC of a schema that the twins serve.
 * @param {protobuf.Root} root a resolved schema
 * @param {string} rpc `package.Service/Method`
 * @returns {Rpc}
 * @throws {OwnServiceError} for an RPC the schema lacks (listing those it has) or one of a kind not served (naming its kind)
 */
export function resolveRpc(root, rpc) {
  const match = /^([A-Za-z_][\w.]*)\/([A-Za-z_]\w*)$/.exec(rpc);
  if (!match) throw new OwnServiceError(`RPC=${rpc}: must be package.Service/Method, e.g. ${rpcsOf(root)[0] ?? 'acme.v1.Orders/Get'}`);
  const [, serviceName, methodName] = match;
  const service = root.lookup(serviceName);
  const method = service instanceof protobuf.Service ? service.methods[methodName] : undefined;
  if (!method) {
    const rpcs = rpcsOf(root);
    throw new OwnServiceError(`RPC=${rpc}: the schema has no such RPC; it has ${rpcs.length ? rpcs.join(', ') : 'none'}`);
  }
  const kind = rpcKind(method);
  if (!SERVED_KINDS.includes(kind)) {
    throw new OwnServiceError(`RPC=${rpc}: is a ${kind} RPC; ${SERVED_KINDS.slice(0, -1).join(', ')} and ${SERVED_KINDS.at(-1)} RPCs are served (${kind}: not yet)`);
  }
  let bindings;
  try {
    bindings = httpBindingsOf(method);
  } catch (err) {
    throw new OwnServiceError(`RPC=${rpc}: ${err.message}`);
  }
  const responseType = /** @type {protobuf.Type} */ (method.resolvedResponseType);
  // A response_body names a field of the response: checked here, before anything serves, not at the first request.
  const missing = bindings.find((b) => b.responseBody && !fieldNamed(responseType, b.responseBody));
  if (missing) {
    throw new OwnServiceError(`RPC=${rpc}: google.api.http response_body ${JSON.stringify(missing.responseBody)} is not a field of `
      + `${responseType.fullName.slice(1)}`);
  }
  return {
    name: rpc,
    path: `/${rpc}`,
    kind,
    requestStream: Boolean(method.requestStream),
    responseStream: Boolean(method.responseStream),
    bindings,
    service: serviceName,
    method: methodName,
    requestType: /** @type {protobuf.Type} */ (method.resolvedRequestType),
    responseType,
  };
}
