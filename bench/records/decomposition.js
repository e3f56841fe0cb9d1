// The run names of the decomposition (DECOMPOSE=1): a listener's, and its A/A control's, measured again in a server of its
// own. bench/passes/decompose.js names its runs so; bench/report/decomposition.js reads them back.
const AGAIN = ' (again)';

/**
 * The run name of a listener measured a second time in each repeat, in a server of its own: an A/A control, whose
 * ratio to the listener's first run is what the machine alone moves a ratio by (no code differs between the two).
 * @param {string} listener a listener name (server/listeners.js)
 * @returns {string} e.g. 'grpc (again)'
 */
export const againOf = (listener) => `${listener}${AGAIN}`;

/**
 * The listener a run name measures.
 * @param {string} run a listener name, or againOf one
 * @returns {string}
 */
export const listenerOf = (run) => (run.endsWith(AGAIN) ? run.slice(0, -AGAIN.length) : run);
