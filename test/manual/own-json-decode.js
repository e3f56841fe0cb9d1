// Where the JSON twin's time goes with OTLP (docs/own-message.md): decoding OTLP's example trace export from its
// proto3 JSON mapping, strictly, by @bufbuild/protobuf's fromJsonString (what the twin does: duplicate keys refused
// too), by JSON.parse then its fromJson (what the peer, a protobuf-es user's fastify handler, does) and by protobufjs
// 8's protojson (what the twin did before), beside JSON.parse alone and protobufjs's binary decode; 3 rounds of 20,000.
//   taskset -c 0 node test/manual/own-json-decode.js
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fromJson as esFromJson, fromJsonString } from '@bufbuild/protobuf';
import { loadOwnService } from '../../proto/own/service.js';
import { fromJson, toJsonText } from '../../proto/own/samples.js';
import { ownDescriptors } from '../../proto/own/descriptors.js';

const OTLP = fileURLToPath(new URL('../../proto/otlp', import.meta.url));
const settings = {
  PROTO: path.join(OTLP, 'opentelemetry/proto/collector/trace/v1/trace_service.proto'), PROTO_PATH: OTLP,
  RPC: 'opentelemetry.proto.collector.trace.v1.TraceService/Export', REQUEST: path.join(OTLP, 'examples/traces.json'),
};
const own = loadOwnService(settings);
const { requestType } = own.rpc;
const [message] = own.requests.messages;
const text = toJsonText(requestType, message);
const bytes = requestType.encode(message).finish();
const { registry, method } = ownDescriptors(settings.PROTO, own.rpc);
const N = 20_000;
const time = (name, fn) => {
  const start = performance.now();
  for (let i = 0; i < N; i++) fn();
  return `${name} ${(((performance.now() - start) * 1000) / N).toFixed(1)} µs`;
};
for (let round = 0; round < 3; round++) {
  console.log([
    time('JSON.parse', () => JSON.parse(text)),
    time('protobufjs protojson', () => fromJson(requestType, text)),
    time('@bufbuild/protobuf fromJsonString', () => fromJsonString(method.input, text, { registry })),
    time('JSON.parse + @bufbuild/protobuf fromJson', () => esFromJson(method.input, JSON.parse(text), { registry })),
    time('protobufjs binary decode', () => requestType.decode(bytes)),
  ].join(' · '));
}
