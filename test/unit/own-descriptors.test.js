// proto/own/descriptors.js: the @bufbuild/protobuf descriptors the connect-node listeners serve an own service from,
// converted from protobufjs's parse of a .proto. Each response sample, made a @bufbuild/protobuf message through the
// JSON twin's proto3 JSON (as server/connect.js does), must print as that JSON and encode as the same message; for the
// fixtures of the integration tests and for schemas they do not cover: proto2 (defaults, groups, extensions) and edition
// 2023 features.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fromJson, toBinary, toJson } from '@bufbuild/protobuf';
import { ownDescriptors } from '../../proto/own/descriptors.js';
import { firstDifference, toJsonText } from '../../proto/own/samples.js';
import { loadOwnService } from '../../proto/own/service.js';
import { ROOT } from '../helpers/server.js';
import { tempDir } from '../helpers/tmp.js';

const OWN = path.join(ROOT, 'test', 'fixtures', 'own');

/** Every response sample through the descriptors: its JSON the JSON twin's, its encoding the same message. */
function checkSamples(settings) {
  const own = loadOwnService(settings);
  const { registry, method } = ownDescriptors(settings.PROTO, own.rpc);
  assert.equal(method.parent.typeName, own.rpc.service);
  assert.equal(method.output.typeName, own.rpc.responseType.fullName.slice(1));
  const type = own.rpc.responseType;
  for (const [i, sample] of own.responses.messages.entries()) {
    const json = JSON.parse(toJsonText(type, sample));
    const message = fromJson(method.output, json, { registry });
    assert.deepEqual(toJson(method.output, message, { registry }), json, `sample ${i}: the JSON`);
    assert.equal(firstDifference(type, type.decode(toBinary(method.output, message)), sample), null, `sample ${i}: the encoding`);
  }
}

test('the every-type shop schema across two import directories: json_name, maps, oneofs, optional, well-known types, Any', () => {
  checkSamples({ PROTO: path.join(OWN, 'a', 'shop', 'v1', 'shop.proto'), PROTO_PATH: `${path.join(OWN, 'a')}:${path.join(OWN, 'b')}`,
    RPC: 'shop.v1.ShopService/GetOrder', RESPONSE: path.join(OWN, 'responses.json') });
});

test('a schema with google.api.http rules (google/api/annotations.proto, an extension of MethodOptions)', () => {
  checkSamples({ PROTO: path.join(OWN, 'rest', 'library', 'v1', 'library.proto'), PROTO_PATH: path.join(OWN, 'rest'),
    RPC: 'library.v1.LibraryService/GetBook', RESPONSE: path.join(OWN, 'rest', 'books.json') });
});

test('proto2: presence, defaults, required, a group, packed, extensions at file and message level', async (t) => {
  const dir = await tempDir(t, 'own-descriptors-');
  await writeFile(path.join(dir, 'legacy.proto'), `syntax = "proto2";
package legacy.v1;
import "google/protobuf/timestamp.proto";
message Req { optional string id = 1; }
enum Color { RED = 0; GREEN = 1; BLUE = 2; }
message Item {
  optional int32 count = 1 [default = 7];
  required string name = 2;
  optional Color color = 3;
  repeated int32 packed_nums = 4 [packed = true];
  repeated int32 nums = 5;
  optional group Extra = 6 { optional string note = 7; }
  map<string, int32> counts = 8;
  optional google.protobuf.Timestamp at = 9;
  optional string foo_bar = 10 [json_name = "FOO"];
  oneof choice { int32 a = 11; string b = 12; }
  message Inner { optional Color c = 1; }
  optional Inner inner = 13;
  extensions 100 to 200;
}
extend Item { optional string ext_note = 100; }
message Holder { extend Item { optional Color ext_color = 101; } optional string h = 1; }
service S { rpc Get(Req) returns (Item); }
`);
  await writeFile(path.join(dir, 'items.json'), JSON.stringify([
    { count: 0, name: '', color: 'RED', packedNums: [1, 2], nums: [3], extra: { note: 'x' }, counts: { a: 1 }, at: '2020-01-01T00:00:00Z',
      FOO: 'y', a: 0, inner: { c: 'RED' }, '[legacy.v1.ext_note]': 'hi', '[legacy.v1.Holder.ext_color]': 'BLUE' },
    { name: 'n' },
  ]));
  checkSamples({ PROTO: path.join(dir, 'legacy.proto'), RPC: 'legacy.v1.S/Get', RESPONSE: path.join(dir, 'items.json') });
});

test('edition 2023: file and field features (implicit and explicit presence, delimited encoding)', async (t) => {
  const dir = await tempDir(t, 'own-descriptors-');
  await writeFile(path.join(dir, 'ed.proto'), `edition = "2023";
package ed.v1;
option features.field_presence = IMPLICIT;
message Req { string id = 1; }
enum Kind { KIND_UNSPECIFIED = 0; KIND_A = 1; }
message Thing {
  string name = 1;
  int32 n = 2 [features.field_presence = EXPLICIT];
  Kind kind = 3;
  repeated int32 xs = 4;
  Thing child = 5;
  message Sub { string s = 1; }
  Sub sub = 6 [features.message_encoding = DELIMITED];
}
service S { rpc Get(Req) returns (Thing); }
`);
  await writeFile(path.join(dir, 'things.json'), JSON.stringify([
    { name: '', n: 0, kind: 'KIND_A', xs: [1, 2], child: { name: 'c' }, sub: { s: 't' } }, { n: 5 },
  ]));
  checkSamples({ PROTO: path.join(dir, 'ed.proto'), RPC: 'ed.v1.S/Get', RESPONSE: path.join(dir, 'things.json') });
});
