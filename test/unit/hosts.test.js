// The host settings' forms (config.js parseHost, bench/settings/hosts.js hostPort): what is accepted and how a bad one is named.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hostPort } from '../../bench/settings/hosts.js';
import { readEnv } from '../../server/env.js';
import { parseHost } from '../../config.js';

const FORMS = 'must be host:port, http://host:port or [v6]:port (e.g. 10.1.2.3:4000)';

describe('parseHost', () => {
  test('accepts host:port, http://host:port[/], [v6]:port and http://[v6]:port, and normalises them', () => {
    const cases = [
      ['localhost:3000', 'localhost', 3000, 'localhost:3000'],
      ['http://localhost:3000', 'localhost', 3000, 'localhost:3000'],
      ['http://localhost:3000/', 'localhost', 3000, 'localhost:3000'],
      ['10.1.2.3:4000', '10.1.2.3', 4000, '10.1.2.3:4000'],
      ['http://127.0.0.1:3000', '127.0.0.1', 3000, '127.0.0.1:3000'],
      ['server-http:3000', 'server-http', 3000, 'server-http:3000'],
      ['HTTP://Bench.Example.COM:65535', 'bench.example.com', 65535, 'bench.example.com:65535'],
      ['[::1]:4000', '::1', 4000, '[::1]:4000'],
      ['http://[::1]:4000', '::1', 4000, '[::1]:4000'],
      ['http://[::1]:4000/', '::1', 4000, '[::1]:4000'],
      ['[2001:DB8::7]:1', '2001:db8::7', 1, '[2001:db8::7]:1'],
      ['[::ffff:10.0.0.1]:3000', '::ffff:10.0.0.1', 3000, '[::ffff:10.0.0.1]:3000'],
    ];
    for (const [value, host, port, authority] of cases) {
      assert.deepEqual(parseHost('H', value), { host, port, authority }, value);
    }
  });

  test('refuses anything else in one line naming the variable and the accepted forms', () => {
    const cases = [
      ['localhost', /the port is missing/],
      [':3000', /the host is missing/],
      ['host:0', /port 0 is not from 1 to 65535/],
      ['host:70000', /port 70000 is not from 1 to 65535/],
      ['https://h:1', /https:\/\/ is not accepted: give host:port; TLS is switched on apart \(k6: -e TLS_CA=<the CA certificate>\)/],
      ['ftp://h:1', /ftp:\/\/ is not accepted/],
      ['h:1/path', /nothing may follow the port/],
      ['http://h:1/path', /nothing may follow the port/],
      ['[::1]', /the port is missing/],
      ['', null],
      ['host:port:extra', /IPv6 address goes in brackets/],
      ['::1:3000', /IPv6 address goes in brackets/],
      ['[::1::2]:3000', /not an IPv6 address/],
      ['[10.0.0.1]:3000', /not an IPv6 address/],
      ['256.0.0.1:3000', /not an IPv4 address/],
      ['my_host:3000', /not a hostname/],
      ['h:1 ', /white space/],
    ];
    for (const [value, detail] of cases) {
      assert.throws(() => parseHost('REMOTE_GRPC_HOST', value), (err) => {
        assert.ok(err.message.startsWith(`REMOTE_GRPC_HOST=${JSON.stringify(value)}: ${FORMS}`), err.message);
        assert.doesNotMatch(err.message, /\n/);
        if (detail) assert.match(err.message, detail);
        return true;
      }, value);
    }
  });

  test('hostPort (envalid) gives the authority, and readEnv names the variable once', () => {
    const specs = { A: hostPort(), B: hostPort({ default: '' }) };
    assert.deepEqual({ ...readEnv({ A: 'http://[::1]:4000/' }, specs, Error) }, { A: '[::1]:4000', B: '' });
    assert.throws(() => readEnv({ A: 'https://h:1' }, specs, Error),
      { message: `invalid setting A="https://h:1": ${FORMS} — https:// is not accepted: give host:port; TLS is switched on apart (k6: -e TLS_CA=<the CA certificate>)` });
  });
});

