// An own service's part of the report (issue 37, docs/own-message.md): its request and response sizes in both
// encodings over the samples, which direction carries the bytes, and what was measured (the schema's and the samples'
// SHA-256), from the record every run of it carries (bench/own-service.js, `bench.run.own`).
import { markdownTable } from 'markdown-table';
import { formatNumber } from '../format.js';

/** min–median–max of one size, e.g. '561' or '22,392 (22,392–22,768)'. */
const spreadText = ({ min, median, max }) => (min === max ? formatNumber(median, 0)
  : `${formatNumber(median, 0)} (${formatNumber(min, 0)}–${formatNumber(max, 0)})`);

/**
 * Which direction carries an own service's bytes, in one sentence: an export RPC sends kilobytes and gets next to
 * nothing back; a listing gets pages back for a few bytes asked.
 * @param {import('../own-service.js').OwnRecord} own
 * @returns {string}
 */
export function directionOf(own) {
  const up = own.sizes.request.json.median;
  const down = own.sizes.response.json.median;
  const share = up + down > 0 ? up / (up + down) : 0.5;
  const ratio = (x, y) => (y > 0 ? formatNumber(x / y, 2) : 'n/a');
  const saved = (row) => ratio(row.json.median, row.protobuf.median);
  if (share >= 0.8) {
    return `Requests carry the bytes (${formatNumber(share * 100, 0)}% of the JSON in a call goes client to server): `
      + `protobuf makes a request ${saved(own.sizes.request)}× smaller than JSON, which is what an upload-heavy link feels.`;
  }
  if (share <= 0.2) {
    return `Responses carry the bytes (${formatNumber((1 - share) * 100, 0)}% of the JSON in a call comes back): `
      + `protobuf makes a response ${saved(own.sizes.response)}× smaller than JSON, which is what a download-heavy link feels.`;
  }
  return `Both directions carry bytes (requests ${formatNumber(share * 100, 0)}% of the JSON in a call): protobuf makes a request `
    + `${saved(own.sizes.request)}× and a response ${saved(own.sizes.response)}× smaller than JSON.`;
}

/**
 * The sizes table of an own service's RPC: request and response bytes in the proto3 JSON mapping and in protobuf,
 * median (min–max) over the samples, their ratio, the direction sentence and the provenance of schema and samples.
 * @param {import('../own-service.js').OwnRecord} own
 * @returns {string} Markdown, ending in a blank line
 */
export function renderOwnSizes(own) {
  const rows = ['request', 'response'].map((way) => {
    const { json, protobuf } = own.sizes[way];
    const { count } = own.samples[way];
    return [`${way} (${count} sample${count === 1 ? '' : 's'})`, spreadText(json), spreadText(protobuf),
      protobuf.median > 0 ? formatNumber(json.median / protobuf.median, 2) : 'n/a'];
  });
  const table = markdownTable([['bytes per message', 'JSON (proto3 mapping)', 'protobuf', 'JSON ÷ protobuf'], ...rows], { align: ['l', 'r', 'r', 'r'] });
  const file = (f) => (f.file ? `\`${f.file}\` (sha256 ${f.sha256.slice(0, 12)})` : 'none: the empty message');
  const schema = own.schema.map((f) => `\`${f.path}\` (sha256 ${f.sha256.slice(0, 12)})`).join(', ');
  const { worker_rss_bytes: rss, worker_heap_bytes: heap } = own.memory ?? {};
  const mib = (bytes) => `${formatNumber(bytes / 1048576, 1)} MiB`;
  const held = `each server worker for the schema and the ${own.samples.response.count} response sample(s)`;
  // Runs recorded before the RSS was (or whose probe failed) say so rather than show nothing.
  const memory = typeof rss === 'number' ? `${mib(rss)} of RSS added to ${held} (${mib(heap)} reachable in V8's heap)`
    : typeof heap === 'number' ? `${mib(heap)} of V8 heap in ${held}, decoded (RSS not recorded by this run)`
      : `not measured (${own.memory?.reason ?? 'not recorded by this run'})`;
  return `**\`${own.rpc}\`, message sizes** (median (min–max) over the samples; before compression):\n\n${table}\n\n`
    + `${directionOf(own)}\n\n- schema: ${schema}\n- requests: ${file(own.samples.request)}; responses: ${file(own.samples.response)}\n`
    + `- memory: ${memory}\n\n`;
}
