// Does node:http2's Http2ServerResponse emit 'end'? connect-node's universalResponseToNodeResponse
// (node-universal-handler.js) ends every call with `await new Promise((resolve) => { res.once("end", resolve); res.end(); })`.
//   node end-event.mjs   → prints the events a response emitted after end()
import http2 from 'node:http2';

let client;
const server = http2.createServer((req, res) => {
  const seen = [];
  for (const event of ['end', 'finish', 'close']) res.once(event, () => seen.push(event));
  res.writeHead(200);
  res.write('x');
  res.end();
  setTimeout(() => {
    console.log(`Http2ServerResponse emitted: ${seen.join(', ')}; 'end': ${seen.includes('end') ? 'yes' : 'never'}`);
    client.close();
    server.close();
  }, 200);
}).listen(0, '127.0.0.1', () => {
  client = http2.connect(`http://127.0.0.1:${server.address().port}`);
  const request = client.request({ ':path': '/' });
  request.resume();
  request.end();
});
