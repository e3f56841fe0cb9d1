// The faults of the fault matrix (npm run faults) by name, in table order, each with what it does: what the settings
// and the docs read (bench/settings/faults.js), apart from the code that injects them (registry.js), which loads
// processes, sockets and HTTP/2 clients.

/** What each fault does, by name, in table order; registry.js gives each its injector, in the same order. */
export const FAULT_ABOUT = Object.freeze({
  none: 'no fault: the undisturbed run, the others\' baseline (its p99 above all)',
  'worker-kill': 'a worker killed with SIGKILL every 3 s (the restart policy replaces it)',
  'primary-sigterm': 'the primary gets SIGTERM at the midpoint: it drains and exits; later requests are refused, not lost',
  reload: 'SIGHUP at the midpoint: every worker replaced one at a time',
  'slow-readers': '16 connections ask for the 1 MiB blob (8 requests each: pipelined, or streams) and never read',
  'slow-readers-max': 'SLOW_READERS_CONNECTIONS connections (the cell\'s MAX_CONNECTIONS per worker), each asking for the 1 MiB blob '
      + 'H2_MAX_CONCURRENT_STREAMS times (pipelined, or streams) and never reading, against WORKER_MEMORY_MB',
  'slow-stream-readers': 'SLOW_STREAM_READERS streams of the own streaming RPC (RPC: a server stream or a relay; a relay\'s reader '
      + 'sends 64 messages) that stop reading once their stream began, against WORKER_MEMORY_MB: gRPC H2_MAX_CONCURRENT_STREAMS a '
      + 'connection, HTTP/1.1 SSE or a WebSocket a connection each; it needs RPC, and is not in the default list',
  'idle-connections': 'IDLE_CONNECTIONS connections opened at once that send nothing (HTTP/2: the preface only; TLS: after the handshake), '
      + 'as many as open until a second before the load ends',
  'malformed-frames': '500 connections at once, each with one malformed request (HTTP/1.1: not a request line; HTTP/2: DATA on stream 0)',
});

/** The faults' names, in table order. */
export const FAULT_NAMES = Object.freeze(Object.keys(FAULT_ABOUT));

/** The faults that need an own streaming RPC (RPC), which the default run has not. */
export const STREAM_FAULTS = Object.freeze(['slow-stream-readers']);

/** The faults FAULTS names when unset: every one that runs without settings of its own. */
export const DEFAULT_FAULTS = Object.freeze(FAULT_NAMES.filter((name) => !STREAM_FAULTS.includes(name)));
