// Named errors of the bench and report tools: one clear line for the user, a code for callers.

/** A k6 summary file that cannot be read or lacks what the report needs. */
export class SummaryError extends Error {
  /**
   * @param {string} file path of the summary
   * @param {string} message what is wrong, naming the metric or field
   */
  constructor(file, message) {
    super(`${file}: ${message}`);
    this.name = 'SummaryError';
    this.code = 'ERR_BAD_SUMMARY';
    this.file = file;
  }
}

/** A step of the main job that failed: a server that did not start, a k6 run that failed. */
export class BenchError extends Error {
  /** @param {string} message what failed, naming the host or step */
  constructor(message) {
    super(message);
    this.name = 'BenchError';
    this.code = 'ERR_BENCH';
  }
}
