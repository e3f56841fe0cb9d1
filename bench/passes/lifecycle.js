// One run of a server, the same for every pass (the main job's cell, the capacity pass, the soak and its fault run, the
// fault matrix): start it, warm it up, measure with samplers read around the measured load, stop it. A pass hands in
// its steps and its samplers; what it does with the figures is its own.

/**
 * What is read around a measured load: opened right before it, closed right after it, in reverse order, so that the
 * first opened is the last closed (the samplers the load should not see, a profile, a capture, go first).
 * @template S the started server
 * @typedef {object} Sampler
 * @property {string} name the key of its reading
 * @property {(server: S) => Promise<() => Promise<unknown>>} open starts reading; resolves to the function that ends it
 *   and resolves to the reading
 */

/**
 * @template S, W, M, R
 * @typedef {object} RunSteps
 * @property {() => Promise<S>} start starts the server, resolves once it serves
 * @property {(server: S) => Promise<W>} [warmup] load left out of the figures; what it resolves to (a rate it found)
 *   goes to measure
 * @property {Array<Sampler<S>>} [samplers] in the order they open
 * @property {(server: S, warm: W|undefined) => Promise<M>} measure the measured load
 * @property {(server: S, done: {warm: W|undefined, run: M, readings: Record<string, any>}) => Promise<R>} [after]
 *   what is read of the server once the load and the samplers ended, the server still up; default: `done` itself
 * @property {(server: S) => Promise<unknown>} [stop] default: `server.stop()`; called once, whatever failed before
 */

/**
 * Runs the steps of one server run: start, warm-up, samplers opened, measured load, samplers closed, after, stop.
 * When the load fails the samplers are still closed (a profile stopped, a timer cleared), their readings dropped.
 * @template S, W, M, R
 * @param {RunSteps<S, W, M, R>} steps
 * @returns {Promise<R>} what `after` resolves to
 * @throws whatever a step throws, after the server was stopped
 */
export async function serverRun({ start, warmup, samplers = [], measure, after, stop = (s) => /** @type {any} */ (s).stop() }) {
  const server = await start();
  try {
    const warm = warmup ? await warmup(server) : undefined;
    /** @type {Array<[string, () => Promise<unknown>]>} */
    const open = [];
    let run;
    try {
      for (const sampler of samplers) open.push([sampler.name, await sampler.open(server)]);
      run = await measure(server, warm);
    } catch (err) {
      for (const [, close] of open.reverse()) await close().catch(() => {});
      throw err;
    }
    /** @type {Record<string, any>} */
    const readings = {};
    for (const [name, close] of open.reverse()) readings[name] = await close();
    const done = { warm, run, readings };
    return after ? await after(server, done) : /** @type {R} */ (/** @type {unknown} */ (done));
  } finally {
    await stop(server);
  }
}

/**
 * A sampler that reads once before the load and once after it, and makes its reading of the two.
 * @template S, T
 * @param {string} name
 * @param {(server: S) => Promise<T>|T} read
 * @param {(before: T, after: T, server: S) => Promise<unknown>|unknown} reading
 * @returns {Sampler<S>}
 */
export const beforeAfter = (name, read, reading) => ({
  name,
  open: async (server) => {
    const before = await read(server);
    return async () => reading(before, await read(server), server);
  },
});
