// A google.api.http request's query and path, bound as grpc-gateway v2 binds them (proto/own/http-rule.js requestOf,
// proto/own/http-query.js). The cases are grpc-gateway's own, from runtime/query_test.go (TestPopulateParameters) at
// github.com/grpc-ecosystem/grpc-gateway 9648db43, against a message with its test message's fields
// (test/fixtures/own/gateway/query/v1/query.proto): what each binds, written in the proto3 JSON mapping, is compared as
// the canonical JSON of the parsed message; then each case is sent to the twin (the HTTP listener's app, by inject()),
// which answers 200 where the binding holds and 400, naming the field, where it does not.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { buildHttpApp } from '../../server/http.js';
import { createHealth } from '../../server/health.js';
import { readSettings } from '../../server/settings.js';
import { loadOwnService } from '../../proto/own/service.js';
import { fromJson, toJsonText } from '../../proto/own/samples.js';
import { requestOf } from '../../proto/own/http-rule.js';
import { ROOT } from '../../bench/root.js';

const DIR = path.join(ROOT, 'test/fixtures/own/gateway');
const SETTINGS = { PROTO: path.join(DIR, 'query/v1/query.proto'), PROTO_PATH: DIR, RPC: 'query.v1.QueryService/Echo' };
const own = loadOwnService(SETTINGS);
const { requestType: type, bindings } = own.rpc;
const [GET, MOVE, PATCH, DOWNLOAD, OBJECTS, BUCKETS] = bindings;

/** The canonical JSON of a request given in the proto3 JSON mapping (parsed strictly, printed back). */
const canonical = (json) => toJsonText(type, fromJson(type, json));

/** What a binding makes of a path, a query and a body. */
function bind(binding, pathname, query = '', body = undefined) {
  const match = pathname.match(binding.pattern);
  assert.ok(match, `${binding.template} matches ${pathname}`);
  return requestOf(binding, match, new URLSearchParams(query), body, type, (b) => fromJson(type, b));
}

const app = await buildHttpApp({ port: 3000, log: pino({ level: 'silent' }), health: Object.assign(createHealth(), {}), settings: readSettings(SETTINGS), own });
after(() => app.close());

const time = '2016-12-15T12:23:32.000000049Z';
// grpc-gateway's cases: the query as url.Values gives it (a key with several values repeats), and what it binds.
const CASES = [
  {
    name: 'every scalar, wrapper and well-known type, by .proto names',
    query: [['float_value', '1.5'], ['double_value', '2.5'], ['int64_value', '-1'], ['int32_value', '-2'], ['uint64_value', '3'],
      ['uint32_value', '4'], ['bool_value', 'true'], ['string_value', 'str'], ['bytes_value', 'YWJjMTIzIT8kKiYoKSctPUB-'],
      ['repeated_value', 'a'], ['repeated_value', 'b'], ['repeated_value', 'c'], ['optional_value', 'str'],
      ['repeated_message', '1'], ['repeated_message', '2'], ['repeated_message', '3'], ['enum_value', '1'],
      ['repeated_enum', '1'], ['repeated_enum', '2'], ['repeated_enum', '0'], ['timestamp_value', time], ['duration_value', '13h0m0s'],
      ['fieldmask_value', 'float_value,double_value'], ['wrapper_float_value', '1.5'], ['wrapper_double_value', '2.5'],
      ['wrapper_int64_value', '-1'], ['wrapper_int32_value', '-2'], ['wrapper_u_int64_value', '3'], ['wrapper_u_int32_value', '4'],
      ['wrapper_bool_value', 'true'], ['wrapper_string_value', 'str'], ['wrapper_bytes_value', 'YWJjMTIzIT8kKiYoKSctPUB-'],
      ['map_value[key]', 'value'], ['map_value[second]', 'bar'], ['map_value[fourth]', ''], ['map_value[~!@#$%^&*()]', 'value'],
      ['map_value2[key]', '-2'], ['map_value3[-2]', 'value'], ['map_value4[key]', '-1'], ['map_value5[-1]', 'value'],
      ['map_value6[key]', '3'], ['map_value7[3]', 'value'], ['map_value8[key]', '4'], ['map_value9[4]', 'value'],
      ['map_value10[key]', '1.5'], ['map_value12[key]', '2.5'], ['map_value14[key]', 'true'], ['map_value15[true]', 'value'],
      ['map_value16[key]', '2'], ['struct_value_value', '{"a":{"b":1}}'], ['struct_value', '{"a":{"b":1}}']],
    want: {
      floatValue: 1.5, doubleValue: 2.5, int64Value: '-1', int32Value: -2, uint64Value: '3', uint32Value: 4, boolValue: true,
      stringValue: 'str', bytesValue: Buffer.from("abc123!?$*&()'-=@~").toString('base64'), repeatedValue: ['a', 'b', 'c'],
      optionalValue: 'str', repeatedMessage: ['1', '2', '3'], enumValue: 'Y', repeatedEnum: ['Y', 'Z', 'X'],
      timestampValue: time, durationValue: '46800s', fieldmaskValue: 'floatValue,doubleValue', wrapperFloatValue: 1.5,
      wrapperDoubleValue: 2.5, wrapperInt64Value: '-1', wrapperInt32Value: -2, wrapperUInt64Value: '3', wrapperUInt32Value: 4,
      wrapperBoolValue: true, wrapperStringValue: 'str', wrapperBytesValue: Buffer.from("abc123!?$*&()'-=@~").toString('base64'),
      mapValue: { key: 'value', second: 'bar', fourth: '', '~!@#$%^&*()': 'value' }, mapValue2: { key: -2 }, mapValue3: { '-2': 'value' },
      mapValue4: { key: '-1' }, mapValue5: { '-1': 'value' }, mapValue6: { key: 3 }, mapValue7: { 3: 'value' }, mapValue8: { key: '4' },
      mapValue9: { 4: 'value' }, mapValue10: { key: 1.5 }, mapValue12: { key: 2.5 }, mapValue14: { key: true }, mapValue15: { true: 'value' },
      mapValue16: { key: '2' }, structValueValue: { a: { b: 1 } }, structValue: { a: { b: 1 } },
    },
  },
  {
    name: 'the same by JSON names, bytes in standard base64',
    query: [['floatValue', '1.5'], ['int64Value', '-1'], ['boolValue', 'true'], ['bytesValue', 'Ynl0ZXM='], ['repeatedValue', 'a'],
      ['repeatedValue', 'b'], ['enumValue', '1'], ['wrapperUInt64Value', '3'], ['struct_value_value', '""'], ['struct_value', '{}']],
    want: { floatValue: 1.5, int64Value: '-1', boolValue: true, bytesValue: 'Ynl0ZXM=', repeatedValue: ['a', 'b'], enumValue: 'Y',
      wrapperUInt64Value: '3', structValueValue: '', structValue: {} },
  },
  {
    name: 'enums by name, and by number in a list',
    query: [['enum_value', 'Z'], ['repeated_enum', 'X'], ['repeated_enum', '2'], ['repeated_enum', '0'], ['struct_value_value', '[]'],
      ['struct_value', '{"c":[1,2],"d":[{"e":1,"f":{}}]}']],
    want: { enumValue: 'Z', repeatedEnum: ['X', 'Z', 'X'], structValueValue: [], structValue: { c: [1, 2], d: [{ e: 1, f: {} }] } },
  },
  {
    name: 'nested fields by dotted paths, maps among them',
    query: [['nested.nested.nested.repeated_value', 'a'], ['nested.nested.nested.repeated_value', 'b'], ['nested.nested.nested.string_value', 's'],
      ['nested.nested.string_value', 't'], ['nested.string_value', 'u'], ['nested.nested.map_value[first]', 'foo'],
      ['nested.nested.map_value[second]', 'bar']],
    want: { nested: { stringValue: 'u', nested: { stringValue: 't', mapValue: { first: 'foo', second: 'bar' }, nested: { repeatedValue: ['a', 'b'], stringValue: 's' } } } },
  },
  { name: 'a oneof by .proto name', query: [['oneof_string_value', 'foobar']], want: { oneofStringValue: 'foobar' } },
  { name: 'a oneof by JSON name', query: [['oneofStringValue', 'foobar']], want: { oneofStringValue: 'foobar' } },
  { name: 'a oneof\'s bool', query: [['oneof_bool_value', 'true']], want: { oneofBoolValue: true } },
  {
    name: 'a oneof\'s message, field by field',
    query: [['nested_oneof_value_one.int64Value', '-1'], ['nested_oneof_value_one.string_value', 'foo']],
    want: { nestedOneofValueOne: { int64Value: '-1', stringValue: 'foo' } },
  },
  // As in grpc-gateway, a path's messages are made on the way to the field it does not find (Go's Mutable): `nested` is set.
  { name: 'a key that names no field is ignored', query: [['nope', '1'], ['nested.nope', '2'], ['string_value', 's']], want: { nested: {}, stringValue: 's' } },
  { name: 'bool as strconv.ParseBool spells it', query: [['bool_value', 'T'], ['wrapper_bool_value', '0']], want: { boolValue: true, wrapperBoolValue: false } },
  { name: 'floats: Inf and NaN', query: [['double_value', '-Inf'], ['float_value', 'NaN']], want: { doubleValue: '-Infinity', floatValue: 'NaN' } },
  { name: 'a Duration in Go\'s syntax', query: [['duration_value', '1h2m3.5s']], want: { durationValue: '3723.500s' } },
];

// grpc-gateway's error cases, and a few more of the same rules: each refused, naming the field.
const ERRORS = [
  { name: 'a timestamp of "null"', query: [['timestampValue', 'null']], message: /parsing field "timestamp_value"/ },
  { name: 'a duration of "null"', query: [['durationValue', 'null']], message: /parsing field "duration_value"/ },
  { name: 'a oneof set twice', query: [['oneof_bool_value', 'true'], ['oneof_string_value', 'foobar']], message: /field already set for oneof "oneof_value"/ },
  { name: 'a oneof: a message after a scalar', query: [['nested_oneof_int32_value', '10'], ['nested_oneof_value_one.int64Value', '-1']], message: /field already set for oneof "nested_oneof_value"/ },
  { name: 'a path through a scalar', query: [['string_value.x', '1']], message: /invalid path: "string_value" is not a message/ },
  { name: 'two values for a singular field', query: [['string_value', 'a'], ['string_value', 'b']], message: /too many values for field "string_value": a, b/ },
  { name: 'an int32 out of range', query: [['int32_value', '2147483648']], message: /parsing field "int32_value": .*out of range/ },
  { name: 'a negative uint64', query: [['uint64_value', '-1']], message: /parsing field "uint64_value"/ },
  { name: 'a bool spelt otherwise', query: [['bool_value', 'yes']], message: /parsing field "bool_value": "yes" is not a bool/ },
  { name: 'an enum name it lacks', query: [['enum_value', 'W']], message: /parsing field "enum_value": "W" is not a valid value/ },
  { name: 'bytes that are not base64', query: [['bytes_value', 'a*b']], message: /parsing field "bytes_value"/ },
  { name: 'a message other than the well-known ones', query: [['nested', 'x']], message: /unsupported message type: "query\.v1\.Proto3Message"/ },
  { name: 'a map entry with two values', query: [['map_value[k]', 'a'], ['map_value[k]', 'b']], message: /more than one value provided for key "k" in map "map_value"/ },
  { name: 'a Struct that is not an object', query: [['struct_value', '[]']], message: /parsing field "struct_value"/ },
];

test('the query binds each field by its type, as grpc-gateway\'s cases say', () => {
  for (const { name, query, want } of CASES) {
    assert.equal(canonical(bind(GET, '/v1/echo', new URLSearchParams(query).toString())), canonical(want), name);
  }
});

test('a query value that does not read for its field is refused, naming the field', () => {
  for (const { name, query, message } of ERRORS) {
    assert.throws(() => bind(GET, '/v1/echo', new URLSearchParams(query).toString()), message, name);
  }
});

test('the twin answers 200 where the binding holds and 400, naming the field, where it does not', async () => {
  for (const { name, query } of CASES) {
    const res = await app.inject({ method: 'GET', url: `/v1/echo?${new URLSearchParams(query)}` });
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
  }
  for (const { name, query, message } of ERRORS) {
    const res = await app.inject({ method: 'GET', url: `/v1/echo?${new URLSearchParams(query)}` });
    assert.equal(res.statusCode, 400, name);
    assert.match(res.json().message, message, name);
  }
});

test('a verb after a path variable, and after **, routes; the path binds by type and replaces what the body gives', async () => {
  assert.equal(MOVE.template, '/v1/{string_value}/{nested.string_value=shelves/*/books/*}:move');
  assert.equal(canonical(bind(MOVE, '/v1/s1/shelves/1/books/2:move', '', { boolValue: true, stringValue: 'body' })),
    canonical({ stringValue: 's1', boolValue: true, nested: { stringValue: 'shelves/1/books/2' } }));
  assert.equal(MOVE.pattern.test('/v1/s1/shelves/1/books/2'), false, 'the verb is required');
  assert.equal(canonical(bind(DOWNLOAD, '/v1/files/a/b/c.txt:download')), canonical({ stringValue: 'a/b/c.txt' }));
  // The path's int64 read by its type; the body is the `nested` field; the query binds the rest but nothing under `nested`.
  assert.equal(canonical(bind(PATCH, '/v1/items/5', 'bool_value=true&nested.string_value=q&nope=1', { stringValue: 'n' })),
    canonical({ int64Value: '5', boolValue: true, nested: { stringValue: 'n' } }));
  assert.throws(() => bind(PATCH, '/v1/items/five', '', {}), /parsing field "int64_value": "five" is not an integer/);
  // grpc-gateway decodes the body before the path binds: an invalid value in the body is refused, though the path sets it.
  assert.throws(() => bind(MOVE, '/v1/s1/shelves/1/books/2:move', '', { stringValue: 5 }));
  for (const [method, url, body, status] of [['POST', '/v1/s1/shelves/1/books/2:move', '{"boolValue":true}', 200],
    ['POST', '/v1/s1/shelves/1/books/2:move', '{"stringValue":5}', 400], ['GET', '/v1/files/a/b:download', undefined, 200],
    ['PATCH', '/v1/items/5?bool_value=true', '{"stringValue":"n"}', 200], ['PATCH', '/v1/items/five', '{}', 400]]) {
    const res = await app.inject({ method, url, ...(body ? { headers: { 'content-type': 'application/json' }, payload: body } : {}) });
    assert.equal(res.statusCode, status, `${method} ${url} ${body}: ${res.body}`);
  }
});

test('path templates match as grpc-gateway\'s pattern tests say (runtime/pattern_test.go TestMatch)', () => {
  const cases = [
    [OBJECTS, ['/v1/o', '/v1/o/my-bucket', '/v1/o/my-bucket/dir', '/v1/o/my-bucket/dir/dir2/obj'], ['/v1', '/v2/o/my-bucket', '/v1/b/my-bucket']],
    [BUCKETS, ['/v2/b/my-bucket/o/obj', '/v2/b/our-bucket/o/dir'], ['/v2', '/v2/b', '/v2/b/my-bucket', '/v2/b/my-bucket/o', '/v2/b/a/b/o/obj']],
    [MOVE, ['/v1/x/shelves/1/books/2:move'], ['/v1/x/shelves/1/books/2', '/v1/x/shelves/1:move', '/v1/x/shelves/1/books/2:copy']],
  ];
  for (const [binding, match, notMatch] of cases) {
    for (const p of match) assert.ok(binding.pattern.test(p), `${binding.template} matches ${p}`);
    for (const p of notMatch) assert.ok(!binding.pattern.test(p), `${binding.template} does not match ${p}`);
  }
  assert.equal(canonical(bind(OBJECTS, '/v1/o')), canonical({ stringValue: 'o' }));
  assert.equal(canonical(bind(BUCKETS, '/v2/b/my-bucket/o/obj')), canonical({ stringValue: 'b/my-bucket', nested: { stringValue: 'obj' } }));
});
