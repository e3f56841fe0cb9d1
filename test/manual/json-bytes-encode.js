// ms per toJsonString of the demo's blob-1m answer (the JSON listeners' encoder), 5 rounds of 1 s; with `shim`, after
// proto/own/to-base64.js (which proto/own/json.js loads first: comment its import out to measure without it).
//   taskset -c 1 node test/manual/json-bytes-encode.js [shim]
if (process.argv[2] === 'shim') await import('../../proto/own/to-base64.js');
const { demoMethods } = await import('../../proto/methods.js');
const { ownJson } = await import('../../proto/own/json.js');
const m = demoMethods({ port: 1, workerPid: 1 })[2];
const j = ownJson(m);
const msg = j.responses[1].message;
const out = [];
for (let r = 0; r < 5; r++) {
  const t0 = performance.now(); let n = 0;
  while (performance.now() - t0 < 1000) { j.encodeResponse(msg); n++; }
  out.push((performance.now() - t0) / n);
}
out.sort((a, b) => a - b);
console.log(process.argv[2] ?? 'no shim', 'median', out[2].toFixed(2), 'ms, min–max', out[0].toFixed(2), '–', out[4].toFixed(2));
