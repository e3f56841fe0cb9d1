// The far end of the link check (bench/placement/link.js), run inside the server's network
// namespace: a TCP server that answers a ping byte, sends N bytes, or reads N bytes.
//   node bench/placement/link-probe.js <host> <port>     prints {"listening": port} when ready
// Commands, one per connection: 'p' → 'p' (repeatable), 'd'+u64 N → N bytes then end,
// 'u'+u64 N → reads N bytes, then 'k'.
import net from 'node:net';

const [host, port] = process.argv.slice(2);
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

function send(socket, n) {
  let left = n;
  const pump = () => {
    while (left > 0) {
      const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= piece.length;
      if (!socket.write(piece)) return socket.once('drain', pump);
    }
    socket.end();
  };
  pump();
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  let receiving = null; // bytes still expected after a 'u' command
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk) => {
    if (receiving !== null) {
      receiving -= chunk.length;
      if (receiving <= 0) { receiving = null; socket.end('k'); }
      return;
    }
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length) {
      const command = String.fromCharCode(buffered[0]);
      if (command === 'p') { socket.write('p'); buffered = buffered.subarray(1); continue; }
      if (buffered.length < 9) return;
      const n = Number(buffered.readBigUInt64BE(1));
      const rest = buffered.subarray(9);
      buffered = Buffer.alloc(0);
      if (command === 'd') return send(socket, n);
      if (command === 'u') {
        receiving = n - rest.length;
        if (receiving <= 0) { receiving = null; socket.end('k'); }
        return;
      }
      return socket.destroy();
    }
  });
});
server.listen(Number(port), host, () => process.stdout.write(`${JSON.stringify({ listening: Number(port) })}\n`));
process.on('SIGTERM', () => process.exit(0));
