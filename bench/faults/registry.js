// The fault registry: every fault the fault matrix injects (npm run faults), what it does (names.js) and the function that does it
// while k6 loads the server (with the misbehaving clients of clients.js). The matrix's settings, its cell
// (bench/passes/faults.js) and its report derive from this table; adding a fault is one entry here.
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT } from '../../server/events.js';
import { isServerProcess } from '../processes.js';
import { idleConnections, malformedBurst, slowReaders, slowStreamReaders } from './clients.js';
import { ownStreamOf } from './own-stream.js';
import { FAULT_ABOUT } from './names.js';

/**
 * @typedef {object} FaultContext what a fault gets while k6 loads the server
 * @property {import('../processes.js').RunningServer} server
 * @property {number} port the port k6 loads
 * @property {import('./clients.js').FaultProtocol} protocol how the port is spoken to: HTTP/1.1 GET, gRPC, or HTTP/2 GET
 * @property {import('./clients.js').ClientTls} tls the CA the clients verify the port's TLS against; null in cleartext
 * @property {number} loadMs how long the load lasts from the moment the fault starts (ms)
 * @property {import('../settings/faults.js').FaultSettings} settings
 */

/**
 * Every fault, in table order. `inject` runs at the load's start and returns what it observed; `server`, where a fault
 * has it, gives server settings of its cell's server on top of the matrix's own.
 * @type {Readonly<Record<string, {about: string, inject: (ctx: FaultContext) => Promise<Record<string, unknown>>,
 *   server?: (settings: import('../settings/faults.js').FaultSettings) => Record<string, string>}>>}
 */
export const FAULTS = Object.freeze({
  none: {
    about: FAULT_ABOUT.none,
    async inject() { return {}; },
  },
  'worker-kill': {
    about: FAULT_ABOUT['worker-kill'],
    async inject({ server, loadMs }) {
      let kills = 0;
      for (let at = 3000; at < loadMs - 1000; at += 3000) {
        await sleep(3000);
        const victim = server.workerPids().filter(isServerProcess).at(kills % 2);
        if (!victim) continue;
        process.kill(victim, 'SIGKILL');
        kills++;
      }
      return { kills };
    },
  },
  'primary-sigterm': {
    about: FAULT_ABOUT['primary-sigterm'],
    async inject({ server, loadMs, settings }) {
      await sleep(loadMs / 2);
      const at = Date.now();
      server.proc.kill('SIGTERM');
      const [code] = await Promise.race([server.exited, sleep(settings.SHUTDOWN_TIMEOUT_MS + 6000).then(() => ['hung'])]);
      return { exit_code: code, exit_ms: Date.now() - at };
    },
  },
  reload: {
    about: FAULT_ABOUT.reload,
    async inject({ server, loadMs }) {
      await sleep(loadMs / 2);
      const from = server.lines.length;
      server.proc.kill('SIGHUP');
      const done = await server.waitForLine((l) => l.event === EVENT.RELOADED || l.event === EVENT.RELOAD_FAILED, { from, timeoutMs: 30000 });
      return { reloaded: done.event === EVENT.RELOADED, reload_ms: done.ms ?? null };
    },
  },
  'slow-readers': {
    about: FAULT_ABOUT['slow-readers'],
    async inject({ port, protocol, tls, loadMs }) {
      await sleep(1000);
      const readers = await slowReaders({ port, protocol, tls, connections: 16, requestsEach: 8 });
      await sleep(loadMs - 2000);
      readers.close();
      return { connections: readers.opened, requests: readers.opened * 8 };
    },
  },
  'slow-readers-max': {
    about: FAULT_ABOUT['slow-readers-max'],
    server: (settings) => ({ MAX_CONNECTIONS: String(settings.SLOW_READERS_CONNECTIONS) }),
    async inject({ port, protocol, tls, loadMs, settings }) {
      await sleep(1000);
      const requestsEach = settings.H2_MAX_CONCURRENT_STREAMS;
      const readers = await slowReaders({ port, protocol, tls, connections: settings.SLOW_READERS_CONNECTIONS, requestsEach });
      await sleep(loadMs - 2000);
      readers.close();
      return { connections: readers.opened, requests: readers.opened * requestsEach };
    },
  },
  'slow-stream-readers': {
    about: FAULT_ABOUT['slow-stream-readers'],
    async inject({ port, protocol, tls, loadMs, settings }) {
      const started = performance.now();
      const own = ownStreamOf(settings);
      await sleep(Math.max(0, 1000 - (performance.now() - started)));
      // Each stream's beginning is waited for until the load's last 2 s: a loaded worker may take seconds to answer
      // hundreds of streams' heads, and a stream counted neither begun nor refused would be one lost to the count.
      const readers = await slowStreamReaders({ port, protocol, path: own.path, streams: settings.SLOW_STREAM_READERS,
        perConnection: settings.H2_MAX_CONCURRENT_STREAMS, relay: own.relay, request: own.request, tls,
        waitMs: Math.max(1000, loadMs - 2000 - (performance.now() - started)) });
      await sleep(Math.max(0, loadMs - 1000 - (performance.now() - started)));
      readers.close();
      return { streams: readers.opened, answered: readers.answered, refused: readers.refused, failed: readers.failed };
    },
  },
  'idle-connections': {
    about: FAULT_ABOUT['idle-connections'],
    async inject({ port, protocol, tls, loadMs, settings }) {
      await sleep(1000);
      const started = Date.now();
      // Opening stops a second before the load's end: over TLS the handshakes of 10,000 can outlast the load (the
      // cell then ran two to four times FAULT_DURATION).
      const idle = await idleConnections({ port, protocol, tls, count: settings.IDLE_CONNECTIONS, withinMs: Math.max(0, loadMs - 2000) });
      // Held at the end of the load: the primary hands each connection to a worker, which closes the ones
      // past MAX_CONNECTIONS, and with 10,000 queued that takes seconds.
      await sleep(Math.max(0, loadMs - 1000 - (Date.now() - started)));
      const heldAtEnd = idle.open();
      idle.close();
      return { opened: idle.opened, refused: idle.refused, not_opened: idle.not_opened, held_at_end: heldAtEnd };
    },
  },
  'malformed-frames': {
    about: FAULT_ABOUT['malformed-frames'],
    async inject({ port, protocol, tls, loadMs, settings }) {
      await sleep(loadMs / 2 - 1000);
      const timeoutMs = protocol === 'http' ? 5000 : 2 * settings.H2_IDLE_PING_MS + 3000;
      return malformedBurst({ port, protocol, tls, count: 500, timeoutMs });
    },
  },
});

