// A node:test reporter that prints, when the run ends, how long each test file took (the sum of its top-level tests'
// durations, setup hooks included where they run inside a test) and the total, slowest first: where `npm test`'s time
// goes (issue 39). npm test runs it beside the spec reporter, to stderr.
/**
 * @param {AsyncIterable<{type: string, data: {file?: string, nesting: number, details?: {duration_ms?: number}}}>} source
 *   node:test's events
 * @returns {AsyncGenerator<string>}
 */
export default async function* fileTimes(source) {
  /** @type {Map<string, number>} */
  const ms = new Map();
  for await (const { type, data } of source) {
    if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && data.file) {
      ms.set(data.file, (ms.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...ms].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, t]) => sum + t, 0);
  const cwd = `${process.cwd()}/`;
  yield `\nTime per test file (s), slowest first; ${(total / 1000).toFixed(0)} s in all:\n`;
  for (const [file, t] of rows) yield `${(t / 1000).toFixed(1).padStart(7)}  ${file.startsWith(cwd) ? file.slice(cwd.length) : file}\n`;
}
