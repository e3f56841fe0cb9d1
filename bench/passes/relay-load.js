// The load generator of a WebSocket relay (a bidirectional RPC's HTTP twin, and its peer) in `npm run targets`: wrk and
// h2load send one body and read one response, and a relay's answers come as frames over an upgraded connection, which
// neither speaks. k6's WebSocket client (the main job's) costs far more CPU per frame than the server, so under it both
// the twin and its peer would run at k6's rate and their ratio say nothing. This client is `ws` (the library the twin and
// the peer serve with), one call a connection as the k6 script does (the request stream's frames sent at once, a frame
// read for each, then closed), with no decoding of the answers, and it reports its own CPU so that the job can say when
// it, not the server, was the limit. Run as its own process, pinned to the load generator's cores (measureCapacity).
import { pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';

/**
 * @typedef {object} RelayLoad what relayLoad measured
 * @property {number} calls relays that got an answer to each message they sent, then closed
 * @property {number} failed relays that closed, failed or timed out before every answer came
 * @property {number} messages answers received
 * @property {number} bytes bytes read from the sockets: the upgrade's response and every frame
 * @property {number} seconds the measured window's wall time (s)
 * @property {number} cpu the client's CPU time over the window ÷ its wall time (1 = one core busy)
 */

/**
 * Loads a relay for `durationS`: `connections` loops, each opening a WebSocket to `url`, sending `messages` as text
 * frames at once, reading one frame a message, closing, and again, until the time is up (a call in flight then is
 * finished, bounded by 10 s).
 * @param {{url: string, connections: number, durationS: number, messages: string[]}} options url: ws://host:port/path;
 *   messages: the request stream's messages, each a text frame
 * @returns {Promise<RelayLoad>}
 */
export async function relayLoad({ url, connections, durationS, messages }) {
  const totals = { calls: 0, failed: 0, messages: 0, bytes: 0 };
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  const deadline = start + durationS * 1000;
  const call = () => new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let got = 0;
    let socket = null;
    const timer = setTimeout(() => ws.terminate(), 10_000);
    ws.on('upgrade', (res) => { socket = res.socket; });
    ws.on('open', () => { for (const m of messages) ws.send(m); });
    ws.on('message', () => {
      got++;
      if (got === messages.length) ws.close();
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(timer);
      totals.messages += got;
      totals.bytes += socket?.bytesRead ?? 0;
      if (got === messages.length) totals.calls++;
      else totals.failed++;
      resolve();
    });
  });
  const loop = async () => {
    while (performance.now() < deadline) await call();
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu0);
  return { ...totals, seconds, cpu: (used.user + used.system) / 1e6 / seconds };
}

// Run as a process: its one argument the options as JSON; prints the result as JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await relayLoad(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
