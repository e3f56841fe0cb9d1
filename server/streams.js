// How every listener sends a server stream: the messages of one response stream in order, STREAM_INTERVAL ms apart,
// each written only once the transport took the one before (back-pressure), and stopped when the client goes away.
import { setTimeout as sleep } from 'node:timers/promises';
import { countMessages, endStream, openStream } from './served.js';

/**
 * Resolves on the first of some events of an emitter, with its name, and leaves no listener behind.
 * @param {import('node:events').EventEmitter} emitter
 * @param {string[]} events
 * @returns {Promise<string>} the event that came first
 */
export function firstOf(emitter, events) {
  return new Promise((resolve) => {
    /** @type {Array<[string, () => void]>} */
    const listeners = events.map((e) => [e, () => {
      for (const [name, listener] of listeners) emitter.off(name, listener);
      resolve(e);
    }]);
    for (const [name, listener] of listeners) emitter.on(name, listener);
  });
}

/**
 * @typedef {object} StreamSink where a stream's messages go, as a listener writes them
 * @property {(message: any, index: number) => boolean} write writes one message (the first with the response's head,
 *   where the protocol has one); false when the transport's buffer is full (Node's Writable.write), so the next waits
 * @property {() => Promise<unknown>} drained resolves once the transport takes more ('drain'), or the client has gone
 * @property {() => boolean} gone the client went away (cancelled the call, closed the connection or the stream)
 * @property {() => Promise<boolean>} end ends the stream (gRPC's OK status, the chunked body's last chunk); resolves true
 *   once every message has left for the client ('finish'), false when the client went away first
 */

/**
 * Sends one response stream, counted (server/served.js): open while it sends, each message written, and the stream's end
 * as `completed`, or as `cut` when the client went away before its last message left. Between two messages it waits `intervalMs` (a paced
 * stream, as a token stream is); with 0 it writes as fast as the transport takes them. A write that returns false makes
 * it wait for 'drain' (grpc-js's server stream buffers without limit if written past it: grpc-node #1332).
 * @param {any[]} messages the stream, at least one message, as the sink writes them
 * @param {StreamSink} sink
 * @param {{listener: string, intervalMs: number}} options the listener's name (its counts' label); STREAM_INTERVAL, ms
 * @returns {Promise<'completed'|'cut'>} how it ended
 */
export async function sendStream(messages, sink, { listener, intervalMs }) {
  openStream();
  for (let i = 0; i < messages.length; i++) {
    if (i > 0 && intervalMs > 0) await sleep(intervalMs);
    if (sink.gone()) return endStream(listener, 'cut');
    const more = sink.write(messages[i], i);
    countMessages(listener, 'sent');
    if (!more && i < messages.length - 1) await sink.drained();
  }
  if (sink.gone()) return endStream(listener, 'cut');
  // A stream whose last messages still wait in the transport when its reader leaves is cut, not completed: a reader
  // that stops reading a stream shorter than grpc-js's 16-message mark has all of it written at once.
  return endStream(listener, await sink.end() ? 'completed' : 'cut');
}
