// Converts the upstream OTLP/JSON examples (opentelemetry-proto's examples/*.json) to the canonical
// proto3 JSON mapping, the form the project's JSON listeners and strict ProtoJSON parsers speak.
// OTLP/JSON differs from that mapping in one respect only: the trace and span ids (bytes fields)
// are written as hex strings, where the mapping writes bytes as padded standard base64. A strict
// parser takes the hex as base64 without complaint (hex digits are base64 characters) and yields
// ids of the wrong bytes, so the examples are converted once here and the output is committed
// under proto/otlp/examples/ (see proto/otlp/SOURCE.md). Nothing reads the source at run or test time.
//
//   node scripts/otlp-examples.js <source-dir> <out-dir>
//   e.g. node scripts/otlp-examples.js /work/shared/reference/opentelemetry-proto proto/otlp/examples
//
// <source-dir> is a checkout of opentelemetry-proto: its opentelemetry/proto/**.proto say which
// fields are the hex ids, its examples/{trace,metrics,logs}.json are converted. Everything but the
// ids is copied as it is (key order included); the output is pretty-printed with 2 spaces.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';

/** Source example → output file, and the collector service .proto whose request it holds. */
export const EXAMPLES = Object.freeze([
  { source: 'trace.json', out: 'traces.json', proto: 'opentelemetry/proto/collector/trace/v1/trace_service.proto' },
  { source: 'metrics.json', out: 'metrics.json', proto: 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto' },
  { source: 'logs.json', out: 'logs.json', proto: 'opentelemetry/proto/collector/logs/v1/logs_service.proto' },
]);

// OTLP/JSON writes these bytes fields as hex: the trace and span ids wherever they occur (Span,
// Span.Link, metrics' Exemplar, LogRecord). Other bytes fields (AnyValue.bytes_value) are base64 already.
const HEX_ID_FIELD = /^(?:.*_)?(?:trace|span)_id$/;

/**
 * The JSON names of the hex id fields, read from the .proto files: every bytes field whose name is
 * a trace or span id. Walking the JSON by name is sound only if no other field shares such a name,
 * which this checks too.
 * @param {string} sourceDir the opentelemetry-proto checkout
 * @returns {Map<string, string[]>} JSON name (e.g. 'traceId') → the fields it names, e.g. 'opentelemetry.proto.trace.v1.Span.trace_id'
 */
export function hexIdFields(sourceDir) {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.resolve(sourceDir, target);
  root.loadSync(EXAMPLES.map(({ proto }) => proto), { keepCase: true }).resolveAll();
  const fields = [];
  const visit = (ns) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) fields.push(...child.fieldsArray);
      if (child.nestedArray) visit(child);
    }
  };
  visit(root);
  const ids = new Map();
  for (const field of fields.filter((f) => f.type === 'bytes' && HEX_ID_FIELD.test(f.name))) {
    ids.set(field.jsonName, [...(ids.get(field.jsonName) ?? []), field.fullName.slice(1)]);
  }
  const clash = fields.find((f) => ids.has(f.jsonName) && f.type !== 'bytes');
  if (clash) throw new Error(`${clash.fullName.slice(1)} is a ${clash.type}, yet shares its JSON name with a hex id field`);
  if (ids.size === 0) throw new Error(`no trace or span id bytes fields in the .proto files under ${sourceDir}`);
  return ids;
}

/**
 * A copy of an OTLP/JSON value with every hex id (a member named in `idNames`) in base64.
 * @param {unknown} value the parsed JSON
 * @param {Set<string>} idNames JSON names of the hex id fields
 * @param {string} file the source file, for errors
 * @param {string} [at] JSON path of `value`, for errors
 * @returns {{value: unknown, converted: number}} the converted copy and how many ids it converted
 * @throws {Error} one line naming file and JSON path, if an id is not an even-length hex string
 */
export function convertIds(value, idNames, file, at = '$') {
  let converted = 0;
  const walk = (v, p) => {
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${p}[${i}]`));
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([key, item]) => {
      const where = `${p}.${key}`;
      if (!idNames.has(key)) return [key, walk(item, where)];
      // Hex is case-insensitive in OTLP/JSON; the upstream examples write it in upper case.
      if (typeof item !== 'string' || item.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(item)) {
        throw new Error(`${file}: ${where}: not an even-length hex string: ${JSON.stringify(item)}`);
      }
      converted += 1;
      return [key, Buffer.from(item, 'hex').toString('base64')];
    }));
  };
  return { value: walk(value, at), converted };
}

/**
 * Converts the three examples of `sourceDir` into `outDir`.
 * @param {string} sourceDir the opentelemetry-proto checkout
 * @param {string} outDir where traces.json, metrics.json and logs.json go
 * @returns {Array<{file: string, converted: number}>} each output file and how many ids it converted
 */
export function convertExamples(sourceDir, outDir) {
  const idNames = new Set(hexIdFields(sourceDir).keys());
  mkdirSync(outDir, { recursive: true });
  return EXAMPLES.map(({ source, out }) => {
    const file = path.join(sourceDir, 'examples', source);
    const { value, converted } = convertIds(JSON.parse(readFileSync(file, 'utf8')), idNames, file);
    const target = path.join(outDir, out);
    writeFileSync(target, `${JSON.stringify(value, null, 2)}\n`);
    return { file: target, converted };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [sourceDir, outDir] = process.argv.slice(2);
  if (!sourceDir || !outDir) {
    console.error('usage: node scripts/otlp-examples.js <source-dir> <out-dir>');
    process.exit(2);
  }
  try {
    for (const { file, converted } of convertExamples(sourceDir, outDir)) console.log(`${file}: ${converted} ids hex → base64`);
  } catch (err) {
    console.error(`otlp-examples: ${err.message}`);
    process.exit(1);
  }
}
