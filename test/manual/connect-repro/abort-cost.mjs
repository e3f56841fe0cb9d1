// What an AbortController aborted without a reason costs in Node (it builds a DOMException, capturing a stack trace),
// beside one aborted with a reason. connect-node aborts two per call without one (README.md).
//   node abort-cost.mjs   (and node --stack-trace-limit=0 abort-cost.mjs)
const n = 200000;
const perCall = (f) => {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return (Number(process.hrtime.bigint() - t) / n / 1000).toFixed(2);
};
const reason = new Error('done');
for (let round = 1; round <= 3; round++) {
  console.log(`round ${round}: new AbortController() ${perCall(() => new AbortController())} µs; `
    + `.abort() ${perCall(() => new AbortController().abort())} µs; `
    + `.abort(reason) ${perCall(() => new AbortController().abort(reason))} µs`);
}
