// Each row of the report names what measures it (bench/report/rows.js SOURCES), and the server's rows are defined once,
// beside the arithmetic that gives them (bench/records/server-stats.js SERVER_ROWS), SERVER_FIELDS derived from them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROWS, SOURCES } from '../../bench/report/rows.js';
import { SERVER_FIELDS, SERVER_ROWS, serverFigures } from '../../bench/records/server-stats.js';

test('every row names one of SOURCES, and the rows of source server are SERVER_ROWS, in their order', () => {
  for (const row of ROWS) assert.ok(Object.hasOwn(SOURCES, row.source), `${row.label}: source ${row.source}`);
  assert.deepEqual(ROWS.filter((r) => r.source === 'server'), [...SERVER_ROWS]);
  // The server's rows sit together in the table: a new one is added to SERVER_ROWS, not to ROWS.
  const first = ROWS.indexOf(SERVER_ROWS[0]);
  assert.deepEqual(ROWS.slice(first, first + SERVER_ROWS.length), [...SERVER_ROWS]);
});

test('SERVER_FIELDS are the server rows\' fields, the TLS parameters and the refusals\' reasons, and serverFigures gives each of them', () => {
  assert.deepEqual(SERVER_FIELDS.filter((f) => f !== 'server_tls' && f !== 'server_rejected_by'), SERVER_ROWS.map((r) => r.field));
  assert.deepEqual(Object.keys(serverFigures(undefined)).sort(), [...SERVER_FIELDS].sort());
});
