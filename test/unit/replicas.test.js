// HAProxy's maxconn under the open-file limit (bench/placement/replicas.js, issue 39): the limit as /proc gives it, and the
// connections it holds at two descriptors each and a few tens more; test/integration/replicas.test.js starts HAProxy under it.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { balancerMaxconn, DEFAULT_BALANCER_MAXCONN, HAPROXY_CONFIG, openFileLimit } from '../../bench/placement/replicas.js';

const limits = (soft, hard) => 'Limit                     Soft Limit           Hard Limit           Units     \n'
  + 'Max cpu time              unlimited            unlimited            seconds   \n'
  + `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`;

test('the open-file limit is the hard one of /proc/<pid>/limits (HAProxy raises its soft limit to it); unlimited, or none, said so', () => {
  assert.equal(openFileLimit(limits('1024', '4096')), 4096);
  assert.equal(openFileLimit(limits('1024', 'unlimited')), Infinity);
  assert.equal(openFileLimit('no such line'), null);
  assert.equal(typeof openFileLimit(), 'number', 'this process\'s, on Linux');
});

test('maxconn: what the limit holds at 2 descriptors a connection and a few tens more, at most haproxy.cfg\'s default', async () => {
  // The default is haproxy.cfg's own (Compose runs with it): one definition.
  assert.equal(DEFAULT_BALANCER_MAXCONN, Number(/presetenv LB_MAXCONN (\d+)/.exec(await readFile(HAPROXY_CONFIG, 'utf8'))[1]));
  assert.equal(balancerMaxconn(4096, 2), 2013); // (4096 − 64 − 3 × 2) ÷ 2
  assert.ok(2 * balancerMaxconn(4096, 64) + 64 + 3 * 64 <= 4096);
  assert.equal(balancerMaxconn(250000, 2), DEFAULT_BALANCER_MAXCONN);
  assert.equal(balancerMaxconn(Infinity, 2), DEFAULT_BALANCER_MAXCONN);
  assert.equal(balancerMaxconn(null, 2), DEFAULT_BALANCER_MAXCONN, 'not known: the file\'s');
  assert.equal(balancerMaxconn(50, 2), 0);
});
