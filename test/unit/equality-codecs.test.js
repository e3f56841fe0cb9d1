// Every sample through the twins' codecs (bench/passes/equality.js proveCodecs, issue 49): the check that lets the wire
// calls be few. It passes the shipped examples, and names the sample and the field when a twin's form of one differs.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { proveCodecs } from '../../bench/passes/equality.js';
import { loadOwnService } from '../../proto/own/service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CATALOG = path.join(ROOT, 'proto/examples/catalog');
const catalog = () => loadOwnService({
  PROTO: path.join(CATALOG, 'v1/catalog.proto'), RPC: 'examples.catalog.v1.CatalogService/ListProducts',
  REQUEST: path.join(CATALOG, 'requests.json'), RESPONSE: path.join(CATALOG, 'responses.ndjson'),
});

test('the shipped catalog example goes through every codec as the same messages', () => {
  const service = catalog();
  assert.ok(service.responses.esMessages.length >= 3);
  assert.doesNotThrow(() => proveCodecs(service));
});

test('a JSON twin\'s form of a sample that is another message is named: the sample and the first field that differs', () => {
  const service = catalog();
  // What a conversion that lost a field's value would leave the JSON twins to answer.
  service.responses.esMessages[1].products[3].name = 'not the sample';
  assert.throws(() => proveCodecs(service), (err) => {
    assert.match(err.message, /^examples\.catalog\.v1\.CatalogService\/ListProducts: RESPONSE sample 1: the JSON twins' proto3 JSON of it \(@bufbuild\/protobuf\) reads back as another message: first difference at products\[3\]\.name;/);
    return true;
  });
});
