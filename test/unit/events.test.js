// The log events programs match on (server/events.js): each one is logged by the server, and
// every EVENT.<NAME> the code or the tests use exists, so a typo can't silently match nothing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { EVENT } from '../../server/events.js';
import { ROOT } from '../../bench/root.js';

/** Every .js file under a folder of the repository, with its text (test/fixtures and test/manual too). */
const sources = (dir) => readdirSync(path.join(ROOT, dir), { recursive: true }).filter((f) => f.endsWith('.js'))
  .map((f) => [`${dir}/${f}`, readFileSync(path.join(ROOT, dir, f), 'utf8')]);
const all = ['server', 'bench', 'test'].flatMap(sources);

test('every event is logged by the server, with its event field', () => {
  const server = sources('server').filter(([file]) => file !== 'server/events.js').map(([, text]) => text).join('\n');
  for (const name of Object.keys(EVENT)) assert.match(server, new RegExp(`event: EVENT\\.${name}\\b`), `EVENT.${name} is never logged`);
});

test('every EVENT.<NAME> in the code and the tests is defined', () => {
  for (const [file, text] of all) {
    for (const [, name] of text.matchAll(/\bEVENT\.([A-Z_]+)\b/g)) assert.ok(name in EVENT, `${file}: EVENT.${name} is not in server/events.js`);
  }
});

test('events are distinct', () => {
  assert.equal(new Set(Object.values(EVENT)).size, Object.values(EVENT).length);
});
