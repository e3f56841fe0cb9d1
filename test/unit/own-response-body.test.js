// One field of an answer as google.api.http's response_body makes the HTTP body of it (proto/own/json.js fieldEncoder,
// the JSON twin's): the field's value in the proto3 JSON mapping, or the mapping's default for a field at its default.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { create, fromJson } from '@bufbuild/protobuf';
import protobuf from 'protobufjs';
import { ownDescriptors } from '../../proto/own/descriptors.js';
import { fieldEncoder } from '../../proto/own/json.js';

// The well-known types as protobufjs bundles them (the schema's imports, which protobuf.parse does not load).
const root = new protobuf.Root();
for (const file of ['google/protobuf/struct.proto', 'google/protobuf/timestamp.proto']) root.addJSON(protobuf.common.get(file).nested);
protobuf.parse(`syntax = "proto3";
package t;
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }
message Sub { string x = 1; }
message M {
  string text = 1; int64 big = 2; Color color = 3; map<string, int32> counts = 4; Sub sub = 5; bool flag = 6;
  bytes raw = 7; double ratio = 8; repeated int32 list = 9; string page_token = 10; optional uint64 maybe = 11;
  google.protobuf.Value value = 12; google.protobuf.Timestamp at = 13; google.protobuf.NullValue nothing = 14;
}
service S { rpc Get(M) returns (M); }`, root, { keepCase: false });
root.resolveAll();
const { registry, method: { output: M } } = ownDescriptors('t.proto', /** @type {any} */ ({
  name: 't.S/Get', service: 't.S', method: 'Get', requestType: root.lookupType('t.M'), responseType: root.lookupType('t.M'),
}));
const text = (name, message) => fieldEncoder(M, name, { registry })(message);

test('a set field: its value as the message\'s mapping writes it', () => {
  const message = fromJson(M, { text: 'a', big: '9007199254740993', color: 'RED', counts: { k: 2 }, sub: { x: 'y' }, flag: true,
    raw: 'AQI=', ratio: 0.5, list: [1, 2], pageToken: 'p', maybe: '0', value: [1, 'a'], at: '2024-01-01T00:00:00Z' }, { registry });
  const cases = { text: '"a"', big: '"9007199254740993"', color: '"RED"', counts: '{"k":2}', sub: '{"x":"y"}', flag: 'true', raw: '"AQI="',
    ratio: '0.5', list: '[1,2]', page_token: '"p"', pageToken: '"p"', maybe: '"0"', value: '[1,"a"]', at: '"2024-01-01T00:00:00Z"' };
  for (const [name, json] of Object.entries(cases)) assert.equal(text(name, message), json, name);
});

test('a field at its default: the mapping\'s default for its type, never an absent body', () => {
  const empty = create(M);
  const cases = { text: '""', big: '"0"', color: '"COLOR_UNSPECIFIED"', counts: '{}', sub: '{}', flag: 'false', raw: '""', ratio: '0',
    list: '[]', page_token: '""', maybe: '"0"', value: 'null', at: '"1970-01-01T00:00:00Z"', nothing: 'null' };
  for (const [name, json] of Object.entries(cases)) assert.equal(text(name, empty), json, name);
  assert.throws(() => text('nope', empty), /response_body names "nope", which t\.M does not have/);
});
