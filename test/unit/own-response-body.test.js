// One field of an answer as google.api.http's response_body makes the HTTP body of it (proto/own/samples.js fieldJsonText):
// the field's value in the proto3 JSON mapping, or the mapping's default for a field at its default.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import { fieldJsonText, fromJson } from '../../proto/own/samples.js';

const { root } = protobuf.parse(`syntax = "proto3";
package t;
enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }
message Sub { string x = 1; }
message M {
  string text = 1; int64 big = 2; Color color = 3; map<string, int32> counts = 4; Sub sub = 5; bool flag = 6;
  bytes raw = 7; double ratio = 8; repeated int32 list = 9; string page_token = 10;
}`, { keepCase: false });
const M = root.lookupType('t.M');

test('a set field: its value as the message\'s mapping writes it', () => {
  const message = fromJson(M, { text: 'a', big: '9007199254740993', color: 'RED', counts: { k: 2 }, sub: { x: 'y' }, flag: true,
    raw: 'AQI=', ratio: 0.5, list: [1, 2], pageToken: 'p' });
  const cases = { text: '"a"', big: '"9007199254740993"', color: '"RED"', counts: '{"k":2}', sub: '{"x":"y"}', flag: 'true', raw: '"AQI="',
    ratio: '0.5', list: '[1,2]', page_token: '"p"' };
  for (const [name, json] of Object.entries(cases)) assert.equal(fieldJsonText(M, message, name), json, name);
});

test('a field at its default: the mapping\'s default for its type, never an absent body', () => {
  const empty = fromJson(M, {});
  const cases = { text: '""', big: '"0"', color: '"COLOR_UNSPECIFIED"', counts: '{}', sub: '{}', flag: 'false', raw: '""', ratio: '0',
    list: '[]', page_token: '""' };
  for (const [name, json] of Object.entries(cases)) assert.equal(fieldJsonText(M, empty, name), json, name);
  assert.throws(() => fieldJsonText(M, empty, 'nope'), /response_body names "nope", which t\.M does not have/);
});
