// What every HTTP/2 listener shares (grpc, json-h2, baseline-grpc), whoever built its server:
// announced bounds, a rapid-reset limit, no session error left to crash the worker, sockets
// released after a GOAWAY, and the two-step GOAWAY of a graceful shutdown.
//
// Why a module of its own: Node 20's http2 layer (nghttp2) answers a rapid-reset flood with a
// GOAWAY of its own, then stops reading the socket and never closes it or tells JavaScript;
// such a connection holds its socket and memory until the process exits. The limit here trips
// first, and a connection that stops answering PING is destroyed.
import http2 from 'node:http2';
import net from 'node:net';
import { EVENT } from './events.js';
import { countHandshakes } from './tls.js';

const { NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_NO_ERROR } = http2.constants;
// The GOAWAY debug data gRPC clients read as "ping less often" (gRPC core, chttp2; grpc-go's too).
const TOO_MANY_PINGS = Buffer.from('too_many_pings');
// The guard's bookkeeping of a session (SessionState), the one property it adds to the session object.
const kGuard = Symbol('h2Guard');

/**
 * @typedef {object} SessionState what the guard keeps per session
 * @property {number} seen streams the client opened
 * @property {number} active streams open now
 * @property {number} lastStreamId the last stream id the client opened, for a GOAWAY of the guard's own
 * @property {number} seenAtSweep `seen` at the last idle sweep (-1 before the first)
 * @property {number|null} idleSince since when (ms, performance.now) the sweeps have found no stream open and none
 *   opened: the idle timeout counts from it. Kept by the sweep, not per stream: a clock read on every stream cost
 *   grpc-js about 3% here
 * @property {boolean} pinging an idle PING is out
 * @property {((stream: import('node:http2').ServerHttp2Stream) => void)|null} notice the shutdown notice waiting for
 *   the next stream (see announceShutdown)
 * @property {(this: import('node:http2').ServerHttp2Stream) => void} onStreamEnd what a stream of the session calls as
 *   it ends (see whenStreamsEnd)
 */

/** The largest stream id: a GOAWAY carrying it announces a shutdown and refuses nothing yet (RFC 9113 6.8). */
export const MAX_STREAM_ID = 2 ** 31 - 1;

/**
 * The SETTINGS every HTTP/2 listener announces, for `http2.createServer({settings})` or
 * `server.updateSettings()`.
 * @param {import('./settings.js').ServerSettings} settings
 * @returns {{maxConcurrentStreams: number, maxHeaderListSize: number}}
 */
export const h2Settings = (settings) => ({
  maxConcurrentStreams: settings.H2_MAX_CONCURRENT_STREAMS,
  maxHeaderListSize: settings.H2_MAX_HEADER_LIST_BYTES,
});

/**
 * @typedef {object} Http2Guard
 * @property {Set<import('node:http2').ServerHttp2Session>} sessions the open sessions
 * @property {() => Promise<void>} announceShutdown sends every session a GOAWAY with the largest
 *   stream id and a PING, and resolves once each PING is answered (or after H2_CLOSE_GRACE_MS):
 *   requests the client sent before it saw that GOAWAY have then arrived, and the final GOAWAY
 *   (sent by the server's own close) refuses none of them
 * @property {() => void} closeSessions sends every session the final GOAWAY (last stream processed) and
 *   lets it end once its open streams have (fastify does not close HTTP/2 sessions before Node 24)
 * @property {() => void} destroySessions ends every session at once, its open streams with it
 * @property {import('./h1-guard.js').DrainCounts} drained how the streams open when announceShutdown was called, and
 *   those opened after, ended
 * @property {{resetLimited: number, unanswered: number, tooManyPings: number, idleClosed: number, overCap: number}} counts
 *   connections closed since the start: for breaking the reset limit, for not answering the idle PING, for too many
 *   PINGs without a call, for being idle H2_IDLE_TIMEOUT_MS, and for being past MAX_CONNECTIONS
 */

/** The stream classes whose _destroy tells the session's guard (whenStreamsEnd). */
const hooked = new WeakSet();

/**
 * Makes every stream of this stream's class call its session's `onStreamEnd` (with the stream as `this`) when it is
 * destroyed, once, which Node does to every stream as it ends, answered or reset; its rstCode is final by then.
 * Why not a 'close' listener on each stream: any listener added to a stream made grpc-js allocate about 900 bytes more
 * per call (19,454 against 18,528 bytes on the V8 heap per call under h2load -c8 -m32, the accounting's
 * heap_allocated_bytes over 200,000 calls; even an empty listener, or one on 'end'), most of what the guard cost.
 * Node's own ServerHttp2Stream.prototype._destroy stays what it was for any session without the guard.
 * @param {import('node:http2').ServerHttp2Stream} stream any stream of the class
 */
function whenStreamsEnd(stream) {
  const proto = Object.getPrototypeOf(stream);
  if (hooked.has(proto)) return;
  hooked.add(proto);
  const destroy = proto._destroy;
  proto._destroy = function destroyAndTell(err, callback) {
    const session = this.session; // gone once destroyed
    destroy.call(this, err, callback);
    session?.[kGuard]?.onStreamEnd.call(this);
  };
}

/**
 * What the guard of one server shares among its defences.
 * @typedef {object} GuardContext
 * @property {import('node:http2').Http2Server} server
 * @property {import('./settings.js').ServerSettings} settings
 * @property {import('pino').Logger} log
 * @property {string} listener its name, for the log
 * @property {Set<import('node:http2').ServerHttp2Session>} sessions the open sessions
 * @property {Http2Guard['counts']} counts
 * @property {import('./h1-guard.js').DrainCounts} drained
 * @property {boolean} draining announceShutdown was called: every stream's end is counted in drained
 */

/**
 * Destroys a session the guard ends, and logs why. destroy(code) sends one GOAWAY with that code (none without one),
 * then ends and destroys the socket.
 * @param {GuardContext} guard
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {string} reason
 * @param {number} [code]
 */
function closeFor({ log, listener }, session, reason, code) {
  if (session.destroyed) return;
  log.warn({ event: EVENT.H2_CONNECTION_CLOSED, listener, peer: session.socket?.remoteAddress, reason }, 'HTTP/2 connection closed');
  session.destroy(/** @type {any} */ (code)); // Node takes a code in the error's place
}

/**
 * Connections per worker: at most MAX_CONNECTIONS, as on the HTTP/1.1 listeners; a connection past it is closed before
 * any byte is read (not server.maxConnections: see server/http.js).
 * @param {GuardContext} guard
 */
function capConnections({ server, settings, counts }) {
  server.on('connection', function capConnections(socket) {
    if (this._connections > settings.MAX_CONNECTIONS) {
      counts.overCap++;
      socket.destroy();
    }
  });
}

/**
 * Rapid reset (CVE-2023-44487): a token bucket of stream resets, as nghttp2 keeps one (burst 1000, 33/s), but tighter,
 * so this one trips first. Pure: the caller reads the clock.
 * @param {number} burst the bucket's size (H2_RESET_BURST)
 * @param {number} perSecond its refill (H2_RESETS_PER_S)
 * @param {number} now the clock (ms) at its start
 * @returns {{take: (now: number) => boolean}} take: one reset at `now`; false once the bucket is empty
 */
export function createResetBucket(burst, perSecond, now) {
  let tokens = burst;
  let filledAt = now;
  return {
    take(at) {
      tokens = Math.min(burst, tokens + ((at - filledAt) / 1000) * perSecond);
      filledAt = at;
      return --tokens >= 0;
    },
  };
}

/**
 * What a session's streams do as they end (SessionState.onStreamEnd): counted for the drain, and, ended with
 * RST_STREAM (whichever side sent it: Node does not say; a client's cancel after the response ended counts too, as in
 * nghttp2), taken from the rapid-reset bucket. An empty bucket ends the connection: GOAWAY ENHANCE_YOUR_CALM.
 * @param {GuardContext} guard
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {SessionState} state
 * @returns {(this: import('node:http2').ServerHttp2Stream) => void}
 */
function limitResets(guard, session, state) {
  const { settings, counts, drained } = guard;
  const bucket = createResetBucket(settings.H2_RESET_BURST, settings.H2_RESETS_PER_S, performance.now());
  return function onStreamEnd() {
    state.active--;
    if (guard.draining) {
      if (this.rstCode === NGHTTP2_NO_ERROR) drained.answered++;
      else drained.lost++;
    }
    if (this.rstCode === NGHTTP2_NO_ERROR || session.destroyed) return;
    if (bucket.take(performance.now())) return;
    counts.resetLimited++;
    closeFor(guard, session, `more than ${settings.H2_RESET_BURST} streams reset at once (rapid reset)`, NGHTTP2_ENHANCE_YOUR_CALM);
  };
}

/**
 * Keepalive enforcement, as gRPC core's server does it (doc/keepalive.md): a PING with no stream open and none opened
 * since the previous PING, sooner than `minIntervalMs` after it, is a strike; one past `maxStrikes` is too many. Pure:
 * the caller reads the clock and the session's streams.
 * @param {number} minIntervalMs H2_MIN_PING_INTERVAL_MS
 * @param {number} maxStrikes H2_MAX_PING_STRIKES
 * @returns {{onPing: (now: number, streams: {active: number, seen: number}) => boolean}} onPing: true when this PING
 *   is one strike too many
 */
export function createPingStrikes(minIntervalMs, maxStrikes) {
  let strikes = 0;
  let lastPingAt = -Infinity;
  let streamsAtPing = 0;
  return {
    onPing(now, { active, seen }) {
      let tooMany = false;
      if (active > 0 || seen !== streamsAtPing) strikes = 0;
      else if (now - lastPingAt < minIntervalMs && ++strikes > maxStrikes) tooMany = true;
      lastPingAt = now;
      streamsAtPing = seen;
      return tooMany;
    },
  };
}

/**
 * PING floods without calls: past the strikes, GOAWAY ENHANCE_YOUR_CALM "too_many_pings", then the socket. Node
 * answers the PING itself.
 * @param {GuardContext} guard
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {SessionState} state
 */
function limitPings(guard, session, state) {
  const { settings, counts } = guard;
  const strikes = createPingStrikes(settings.H2_MIN_PING_INTERVAL_MS, settings.H2_MAX_PING_STRIKES);
  session.on('ping', () => {
    if (!strikes.onPing(performance.now(), state)) return;
    counts.tooManyPings++;
    if (!session.destroyed) session.goaway(NGHTTP2_ENHANCE_YOUR_CALM, state.lastStreamId, TOO_MANY_PINGS);
    closeFor(guard, session, `more than ${settings.H2_MAX_PING_STRIKES} PINGs without a call within ${settings.H2_MIN_PING_INTERVAL_MS} ms`);
  });
}

/**
 * Counts the session's streams (state.seen, active, lastStreamId), hooks their end (whenStreamsEnd), and hands the
 * next one the shutdown notice if one waits.
 * Counted in the session's one 'stream' listener: Node's own (sessionOnStream, which passes the stream on to the
 * server's 'stream' listeners: grpc-js's handler, or Node's compatibility layer for fastify) is replaced by one that
 * counts, then calls it. A second listener beside Node's cost grpc-js about 11,000 instructions per call under
 * callgrind, 6% of its work (h2load -c8 -m32; docs/findings/2026-11-25-profiling.md, "Counting instructions"). A session that does not
 * start with exactly that one listener (another Node) gets a listener of its own, as before.
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {SessionState} state
 */
function countStreams(session, state) {
  const countStream = (stream) => {
    state.seen++;
    state.active++;
    state.lastStreamId = stream.id;
    whenStreamsEnd(stream);
    if (state.notice !== null) state.notice(stream);
  };
  const [passOn, ...others] = /** @type {((...args: any[]) => void)[]} */ (session.listeners('stream'));
  if (typeof passOn === 'function' && others.length === 0) {
    session.removeListener('stream', passOn);
    session.on('stream', function countAndPassOn(stream, headers, flags, rawHeaders) {
      countStream(stream);
      passOn.call(this, stream, headers, flags, rawHeaders);
    });
  } else {
    session.on('stream', countStream);
  }
}

/**
 * What one idle sweep makes of a session's state, which it updates (seenAtSweep, idleSince). Pure: the caller reads
 * the clock.
 * 'idle-timeout': no stream open for idleTimeoutMs, counted from the first sweep that found it so (so the timeout errs
 * on the long side, by up to one sweep); 'quiet': no stream opened since the last sweep; 'busy': one was.
 * @param {Pick<SessionState, 'seen'|'active'|'seenAtSweep'|'idleSince'>} state
 * @param {number} now
 * @param {number} idleTimeoutMs H2_IDLE_TIMEOUT_MS
 * @returns {'idle-timeout'|'quiet'|'busy'}
 */
export function sweepVerdict(state, now, idleTimeoutMs) {
  const quiet = state.seenAtSweep === state.seen;
  state.seenAtSweep = state.seen;
  const idle = quiet && state.active === 0;
  state.idleSince = idle ? state.idleSince ?? now : null;
  if (idle && now - /** @type {number} */ (state.idleSince) >= idleTimeoutMs) return 'idle-timeout';
  return quiet ? 'quiet' : 'busy';
}

/**
 * A connection that stops answering: a quiet session gets a PING; no ACK within H2_CLOSE_GRACE_MS and it is destroyed.
 * A live peer answers it; a session nghttp2 has stopped reading cannot.
 * @param {GuardContext} guard
 * @param {import('node:http2').ServerHttp2Session} session
 */
function pingOrDrop(guard, session) {
  // A closed session is ending under its owner's drain deadline; Node fails a PING on it at once.
  const state = session[kGuard];
  if (session.destroyed || session.closed || state.pinging) return;
  state.pinging = true;
  const noAnswer = setTimeout(() => {
    guard.counts.unanswered++;
    closeFor(guard, session, 'no PING ACK');
  }, guard.settings.H2_CLOSE_GRACE_MS);
  noAnswer.unref();
  try {
    session.ping((err) => {
      state.pinging = false;
      if (!err) clearTimeout(noAnswer);
    });
  } catch {
    // Destroyed meanwhile, or too many PINGs outstanding: nothing to probe now.
    state.pinging = false;
    clearTimeout(noAnswer);
  }
}

/**
 * Idle connections and those that stopped answering, in one sweep every H2_IDLE_PING_MS: a session idle (no stream
 * open) for H2_IDLE_TIMEOUT_MS gets GOAWAY NO_ERROR, then the socket is closed; a quiet one (no new stream since the
 * last sweep) gets a PING (pingOrDrop). One timer for the server, not one per session: a per-session idle timer is
 * refreshed on every frame and cost grpc-js about 3% of its RPS here.
 * @param {GuardContext} guard
 */
function sweepIdleSessions(guard) {
  const { server, settings, sessions, counts, log, listener } = guard;
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const session of sessions) {
      const verdict = sweepVerdict(session[kGuard], now, settings.H2_IDLE_TIMEOUT_MS);
      if (verdict === 'idle-timeout' && !session.closed && !session.destroyed) {
        counts.idleClosed++;
        log.debug({ listener, peer: session.socket?.remoteAddress }, 'HTTP/2 connection idle; closed');
        session.close();
        continue;
      }
      if (verdict !== 'busy') pingOrDrop(guard, session);
    }
  }, settings.H2_IDLE_PING_MS);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));
}

/**
 * The shutdown notice of one session, GOAWAY with the largest stream id, then a PING (RFC 9113 6.8). nghttp2 stops
 * reading a session once it has sent a GOAWAY and no stream is open, so the notice goes out while one is: on the next
 * stream the client opens. A request that raced the notice is then read and served, and the PING's ACK tells that the
 * client has seen it. Resolves once the ACK came (or H2_CLOSE_GRACE_MS passed).
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {number} grace H2_CLOSE_GRACE_MS
 * @returns {Promise<void>}
 */
const noticeFor = (session, grace) => new Promise((resolve) => {
  const timer = setTimeout(done, grace);
  timer.unref();
  /** @type {(value?: unknown) => void} */
  let release = () => {};
  const state = session[kGuard];
  function done() {
    state.notice = null;
    clearTimeout(timer);
    release();
    resolve();
  }
  const notice = (stream) => {
    state.notice = null;
    try {
      session.goaway(NGHTTP2_NO_ERROR, MAX_STREAM_ID);
      // nghttp2 stops reading a session that has sent a GOAWAY once no stream is open
      // (nghttp2_session_want_read): the PING's ACK, and a call that raced the notice, would stay unread, and
      // the close would then reset a connection holding them (k6 saw "broken pipe" in about one gRPC stop in
      // three). So the stream that carried the notice ends only once the ACK came, or the grace passed.
      const end = stream.end;
      const acked = new Promise((r) => { release = r; });
      stream.end = function endOnceAcked(...args) {
        acked.then(() => end.apply(this, args));
        return this;
      };
      session.ping(done);
    } catch {
      done(); // destroyed or closing already
    }
  };
  if (session.destroyed) done();
  else state.notice = notice;
});

/**
 * The graceful shutdown in two steps, and the forced one.
 * @param {GuardContext} guard
 * @returns {Pick<Http2Guard, 'announceShutdown'|'closeSessions'|'destroySessions'> & {
 *   announce: (session: import('node:http2').ServerHttp2Session) => void}} announce: the notice to one session, one
 *   that arrived once announceShutdown had begun
 */
function gracefulShutdown(guard) {
  const { server, sessions } = guard;
  /** @type {Set<Promise<void>>} */
  const notices = new Set();
  const announce = (session) => {
    const notice = noticeFor(session, guard.settings.H2_CLOSE_GRACE_MS);
    notices.add(notice);
    notice.then(() => notices.delete(notice));
  };
  // Resolves once every session's ACK came (or H2_CLOSE_GRACE_MS passed), those of sessions that arrived meanwhile
  // included.
  const announceShutdown = async () => {
    // From now on every stream's end is counted (drained).
    guard.draining = true;
    // No new connection from now on: in a cluster worker this hands the listening handle back, so the primary
    // gives new connections to the other workers. One given to this worker meanwhile is handed on, or, if it was
    // taken already, gets the notice too (the 'session' listener). Without this, a client that reconnected after
    // the notice could land here again and get only the final GOAWAY: grpc-go 1.34 (ghz) then failed the calls it
    // had queued on that connection ("transport is closing"), 13-15 per reload with -c 16 --connections 4.
    // net.Server's close, not the HTTP/2 server's: that one would also send every session the final GOAWAY now.
    if (server.listening) net.Server.prototype.close.call(server);
    for (const session of sessions) announce(session);
    while (notices.size > 0) await Promise.all(notices);
  };
  // The final GOAWAY (the last stream the server processed): Node's session.close() sends it and
  // destroys the session once its open streams end.
  const closeSessions = () => { for (const session of sessions) session.close(); };
  // A forced close, past the drain deadline: every session ends now, its streams with it.
  const destroySessions = () => { for (const session of sessions) session.destroy(); };
  return { announce, announceShutdown, closeSessions, destroySessions };
}

/**
 * Watches a new session with every per-session defence: its bookkeeping (SessionState), an 'error' listener (a peer's
 * protocol error or a reset socket ends the session; without a listener it would end the worker), the rapid-reset
 * limit, the PING strikes, the stream count, and the shutdown notice if a shutdown has begun.
 * @param {GuardContext} guard
 * @param {import('node:http2').ServerHttp2Session} session
 * @param {(session: import('node:http2').ServerHttp2Session) => void} announce
 */
function watchSession(guard, session, announce) {
  const { sessions, log, listener } = guard;
  sessions.add(session);
  /** @type {SessionState} */
  const state = {
    seen: 0, active: 0, lastStreamId: 0, seenAtSweep: -1, idleSince: null, pinging: false, notice: null, onStreamEnd: () => {},
  };
  session[kGuard] = state;
  session.once('close', () => sessions.delete(session));
  session.on('error', (err) => log.debug({ listener, code: err.code }, 'HTTP/2 session error'));
  state.onStreamEnd = limitResets(guard, session, state);
  limitPings(guard, session, state);
  countStreams(session, state);
  if (guard.draining) announce(session);
}

/**
 * Applies the HTTP/2 bounds to a server and watches its sessions, one function per defence (docs/http2-hardening.md):
 * the announced SETTINGS, capConnections, and for each session (watchSession) limitResets, limitPings and
 * countStreams; sweepIdleSessions (idle timeout, unanswered PING); gracefulShutdown. Call before it accepts
 * connections.
 * @param {import('node:http2').Http2Server} server
 * @param {{settings: import('./settings.js').ServerSettings, log: import('pino').Logger, listener: string}} options
 *   settings: H2_MAX_CONCURRENT_STREAMS, H2_MAX_HEADER_LIST_BYTES, H2_RESET_BURST, H2_RESETS_PER_S,
 *   H2_IDLE_PING_MS, H2_CLOSE_GRACE_MS, H2_IDLE_TIMEOUT_MS, H2_MIN_PING_INTERVAL_MS, H2_MAX_PING_STRIKES,
 *   MAX_CONNECTIONS; listener: its name, for the log
 * @returns {Http2Guard}
 */
export function guardHttp2Server(server, { settings, log, listener }) {
  countHandshakes(server);
  server.updateSettings(h2Settings(settings));
  /** @type {GuardContext} */
  const guard = {
    server, settings, log, listener, sessions: new Set(), draining: false,
    counts: { resetLimited: 0, unanswered: 0, tooManyPings: 0, idleClosed: 0, overCap: 0 },
    drained: { answered: 0, lost: 0 },
  };
  capConnections(guard);
  const { announce, announceShutdown, closeSessions, destroySessions } = gracefulShutdown(guard);
  server.on('session', (session) => watchSession(guard, session, announce));
  sweepIdleSessions(guard);
  const { sessions, drained, counts } = guard;
  return { sessions, announceShutdown, closeSessions, destroySessions, drained, counts };
}
