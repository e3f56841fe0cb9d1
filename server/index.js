// Entry point: `node server`. The primary forks the workers; each worker serves.
import cluster from 'node:cluster';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
// Before any module loads @bufbuild/protobuf (it reads the method once).
import '../proto/own/to-base64.js';

// A SIGHUP (a reload) this early would kill the process (Node's default action), so it is caught first of all. Nothing
// is forked yet and the workers will run the code on disk anyway: it is counted, and runPrimary logs it as ignored, as
// it does any SIGHUP before ready.
// V8's code cache on disk (Node's compile cache), where caches of packages go (node_modules/.cache; the temporary folder
// is the job's to empty): a worker forked later, a replacement or a reload's, compiles none of the modules the first one
// did. With it, and @fastify/compress loaded only where it serves, a replacement listened 900 ms (853–1,117) after its
// predecessor's SIGKILL, against 1,102 ms (1,022–1,146) at 1dbb206: 10 of each, interleaved, on the 2-vCPU VM. Where the
// folder cannot be written, Node goes on without it.
/** @type {any} */ (module).enableCompileCache?.(fileURLToPath(new URL('../node_modules/.cache/node-compile-cache', import.meta.url)));

let earlyHangups = 0;
const hangupEarly = () => { earlyHangups++; };
process.on('SIGHUP', hangupEarly);
// A stop that comes while the primary's modules still load (before runPrimary sets its own
// handlers) finds nothing forked yet: exit 0 at once, as a stop at any other moment ends.
// The rest is imported after these handlers are in place, and they go only once runPrimary's
// are: when a signal's last listener goes, libuv drops that signal if it came during the
// synchronous run before (the modules' evaluation, runPrimary's set-up), and the primary
// then served on, its stop lost.
const stopEarly = () => process.exit(0);
if (cluster.isPrimary) for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, stopEarly);

const { readSettings } = await import('./settings.js');
let settings;
try {
  settings = readSettings();
} catch (err) {
  if (err.code !== 'ERR_INVALID_SETTING') throw err;
  console.error(`server: ${err.message}`);
  process.exit(2);
}
// The user's own service (RPC, PROTO, ...): a bad schema is one line, before any worker starts. The primary holds no
// sample: each worker reads them for itself (server/worker.js), and a bad one stops the server before it is ready.
if (cluster.isPrimary && settings.RPC) {
  const { loadOwnRpc } = await import('../proto/own/service.js');
  const { listenersOf } = await import('./settings.js');
  const { LISTENERS, streamlessListeners } = await import('./listeners.js');
  try {
    const { rpc } = loadOwnRpc(settings);
    const streamless = streamlessListeners(listenersOf(settings.MODE), rpc);
    if (streamless.length) {
      console.error(`server: RPC=${settings.RPC} is a ${rpc.kind} RPC, which ${streamless.join(', ')} cannot serve yet: `
        + `leave them out of MODE (${Object.keys(LISTENERS).filter((n) => LISTENERS[n].streams?.includes(rpc.kind)).join(', ')} serve it)`);
      process.exit(1);
    }
  } catch (err) {
    if (err.code !== 'ERR_OWN_SERVICE') throw err;
    console.error(`server: ${err.message}`);
    process.exit(1);
  }
}
if (cluster.isPrimary) {
  const { runPrimary } = await import('./primary.js');
  runPrimary(settings, { earlyHangups });
  for (const signal of ['SIGTERM', 'SIGINT']) process.off(signal, stopEarly);
  process.off('SIGHUP', hangupEarly);
} else {
  const { runWorker } = await import('./worker.js');
  await runWorker(settings);
}
