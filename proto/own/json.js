// The JSON twin's proto3 JSON mapping of the user's RPC (issue 37): @bufbuild/protobuf's fromJson and toJson (the
// library issue 37 names for conformance; it passes the protobuf conformance suite's JSON tests), on the descriptors
// proto/own/descriptors.js builds of the user's schema. Everything that can be is built once, at start: the descriptors,
// the response samples as @bufbuild/protobuf messages (made from the proto3 JSON the samples were read as, so that a
// float keeps the digits it was written with) and their sizes; per request, the request is decoded and the answer
// encoded from its message. The samples themselves, the job's checks and the gRPC twin stay with protobufjs
// (proto/own/samples.js).
import './to-base64.js'; // before @bufbuild/protobuf, where this module is the first to load it
import { create, fromBinary, fromJson, fromJsonString, ScalarType, toJson, toJsonString } from '@bufbuild/protobuf';
import { ownDescriptors } from './descriptors.js';
import { textMatters, toJsonText } from './samples.js';

/** A scalar field's value at its default in the proto3 JSON mapping (64-bit integers as strings, bytes as base64). */
const SCALAR_DEFAULTS = {
  [ScalarType.STRING]: '', [ScalarType.BYTES]: '', [ScalarType.BOOL]: false, [ScalarType.INT64]: '0', [ScalarType.UINT64]: '0',
  [ScalarType.SINT64]: '0', [ScalarType.FIXED64]: '0', [ScalarType.SFIXED64]: '0',
};

/**
 * The converter of the user's response samples (protobufjs messages) into @bufbuild/protobuf messages of `desc`, through
 * the proto3 JSON they were read as, so that a float keeps the digits it was written with. Run once per sample, at start,
 * by every listener that answers with @bufbuild/protobuf: the JSON twin, connect-node and the JSON peer.
 * @param {import('./schema.js').Rpc} rpc
 * @param {import('@bufbuild/protobuf').DescMessage} desc the response type, as protobuf-es describes it
 * @param {import('@bufbuild/protobuf').Registry} registry the schema's types, for an Any
 * @returns {(message: import('protobufjs').Message) => import('@bufbuild/protobuf').Message}
 * @throws {Error} from the returned function, when a sample does not convert
 */
export function esMessageOf(rpc, desc, registry) {
  // Through the binary encoding where that is exact and cheap (a 1 MiB bytes field: about 1 ms, against 270 ms through
  // base64 text); a float field (its JSON digits) or an Any (whose packed message may hold one) goes through the JSON.
  if (!textMatters(desc)) return (message) => fromBinary(desc, rpc.responseType.encode(message).finish());
  return (message) => fromJsonString(desc, toJsonText(rpc.responseType, message), { registry });
}

/**
 * The response samples as @bufbuild/protobuf messages of `desc`: those readSamples already made from the file's JSON
 * (`esMessages`), or each converted by esMessageOf.
 * @param {import('./schema.js').Rpc} rpc
 * @param {import('./samples.js').Samples} responses
 * @param {import('@bufbuild/protobuf').DescMessage} desc the response type, as protobuf-es describes it
 * @param {import('@bufbuild/protobuf').Registry|undefined} registry the schema's types, for an Any
 * @returns {import('@bufbuild/protobuf').Message[]}
 * @throws {Error} when a sample does not convert
 */
export const esMessagesOf = (rpc, responses, desc, registry) => (responses.esMessages?.[0]?.$typeName === desc.typeName
  ? responses.esMessages : responses.messages.map(esMessageOf(rpc, desc, registry)));

/**
 * @typedef {object} OwnJson
 * @property {import('@bufbuild/protobuf').DescMethod} method the RPC, as protobuf-es describes it
 * @property {(json: string|import('@bufbuild/protobuf').JsonValue) => import('@bufbuild/protobuf').Message} decodeRequest
 *   the request from its proto3 JSON mapping, strictly (fromJsonString for text: duplicate keys refused too)
 * @property {(message: import('@bufbuild/protobuf').Message) => string} encodeResponse the answer as compact proto3 JSON
 * @property {Array<{message: import('@bufbuild/protobuf').Message, bytes: number}>} responses the response samples,
 *   in the file's order, each with the size of its encoding (UTF-8 bytes), for the memory budget
 * @property {(responseBody: string) => (message: import('@bufbuild/protobuf').Message) => string} boundEncoder the
 *   encoder of a google.api.http route's answer, as grpc-gateway's default marshaler writes it (every field, those at
 *   their default too: EmitUnpopulated): the whole message, or the one field a `response_body` names ('' for none)
 */

/**
 * grpc-gateway v2's default marshaler writes every field, those at their default too (protojson's EmitUnpopulated;
 * its v2 migration guide, "We now emit default values for all fields"); @bufbuild/protobuf's option of that name.
 */
const GATEWAY_JSON = { alwaysEmitImplicit: true };

/**
 * The JSON twin's codec of a method (an own service's RPC, or one of the demo's): decode a request, encode an answer,
 * the answers ready.
 * @param {Pick<import('./service.js').OwnService, 'proto'|'rpc'|'responses'>} own
 * @returns {OwnJson}
 * @throws {Error} when the descriptors do not build (ownDescriptors), or a sample does not convert
 */
export function ownJson(own) {
  const { registry, method } = ownDescriptors(own.proto, own.rpc);
  const { input, output } = method;
  const options = { registry }; // reading: unknown fields refused (ignoreUnknownFields is false); both: an Any's types
  // The reason alone: the caller names the message ("the request is not a valid ..."), as it did with protobufjs.
  const prefix = `cannot decode message ${input.typeName} from JSON: `;
  // readSamples measured the JSON of the messages it made (the same encoder, the same options).
  const messages = esMessagesOf(own.rpc, own.responses, output, registry);
  const made = messages === own.responses.esMessages;
  const responses = messages.map((message, i) => ({ message, bytes: made ? own.responses.jsonBytes[i] : Buffer.byteLength(toJsonString(output, message, options)) }));
  return {
    method,
    decodeRequest: (json) => {
      try {
        return typeof json === 'string' ? fromJsonString(input, json, options) : fromJson(input, json, options);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith(prefix)) err.message = err.message.slice(prefix.length);
        throw err;
      }
    },
    encodeResponse: (message) => toJsonString(output, message, options),
    responses,
    boundEncoder: (responseBody) => {
      const gateway = { ...options, ...GATEWAY_JSON };
      return responseBody ? fieldEncoder(output, responseBody, gateway) : (message) => toJsonString(output, message, gateway);
    },
  };
}

/**
 * The proto3 JSON mapping of one field of a message as text, as google.api.http's `response_body` makes the HTTP body
 * of it (grpc-gateway marshals the field's value alone): the value as the message's mapping writes it, or, at its
 * default, the mapping's default (`[]` for a repeated field, `{}` for a map, the empty message's mapping for a message,
 * `""`, `false`, `0`, `"0"` for 64-bit integers, the enum's value 0 by name), made once.
 * @param {import('@bufbuild/protobuf').DescMessage} desc the message's type
 * @param {string} name the field, as the rule names it (its .proto name; its JSON name is taken too)
 * @param {{registry: import('@bufbuild/protobuf').Registry, alwaysEmitImplicit?: boolean}} options
 * @returns {(message: import('@bufbuild/protobuf').Message) => string}
 * @throws {Error} when the message has no such field
 */
export function fieldEncoder(desc, name, options) {
  const field = desc.fields.find((f) => f.name === name) ?? desc.fields.find((f) => f.jsonName === name);
  if (!field) throw new Error(`response_body names ${JSON.stringify(name)}, which ${desc.typeName} does not have`);
  const { jsonName } = field;
  const unset = JSON.stringify(defaultJson(field, options));
  return (message) => {
    const json = /** @type {Record<string, import('@bufbuild/protobuf').JsonValue>} */ (toJson(desc, message, options));
    return Object.hasOwn(json, jsonName) ? JSON.stringify(json[jsonName]) : unset;
  };
}

/** A field's value at its default in the proto3 JSON mapping. */
function defaultJson(/** @type {import('@bufbuild/protobuf').DescField} */ field, options) {
  switch (field.fieldKind) {
    case 'list': return [];
    case 'map': return {};
    case 'enum': return field.enum.typeName === 'google.protobuf.NullValue' ? null : (field.enum.value[0]?.name ?? 0);
    case 'message':
      try {
        return toJson(field.message, create(field.message), options);
      } catch {
        return null; // a google.protobuf.Value with no kind has no mapping of its own: JSON's null
      }
    default: return SCALAR_DEFAULTS[field.scalar] ?? 0;
  }
}
