import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLazily } from '../../server/grpc-lazy.js';

const METHODS = {
  '/pkg.S/Ask': { requestStream: false, responseStream: false },
  '/pkg.S/Follow': { requestStream: false, responseStream: true },
};

/** A grpc-js Server as addLazily uses it: the services added, by method path. */
const fakeServer = () => {
  const methods = new Map();
  return { methods, addService: (definition, implementation) => {
    for (const [name, method] of Object.entries(definition)) methods.set(method.path, { method, handler: implementation[name] });
  } };
};

/** A library's addToServer: the methods of METHODS (or those given), lower-case handlers found by originalName. */
const library = (calls, methods = METHODS) => (target) => {
  calls.push('built');
  const definition = Object.fromEntries(Object.entries(methods).map(([path, kind]) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return [name, { path, ...kind, originalName: name.toLowerCase(), requestDeserialize: (b) => `req:${b}`,
      responseSerialize: (m) => `res:${m}`, requestSerialize: (m) => m, responseDeserialize: (b) => b }];
  }));
  target.addService(definition, { ask(call, callback) { callback(null, `answer to ${call.request}`); }, follow: (call) => call.write('first') });
};
const quietLog = () => { const errors = []; return { errors, error: (obj, msg) => errors.push({ ...obj, msg }) }; };

test('addLazily adds every method now, of its kind, and builds the library only at the first call', () => {
  const server = fakeServer();
  const calls = [];
  addLazily(server, METHODS, library(calls), quietLog());
  assert.deepEqual([...server.methods.keys()], Object.keys(METHODS));
  assert.equal(server.methods.get('/pkg.S/Follow').method.responseStream, true);
  assert.deepEqual(calls, []);
  let answer;
  server.methods.get('/pkg.S/Ask').handler({ request: 'q' }, (err, value) => { answer = [err, value]; });
  assert.deepEqual(answer, [null, 'answer to q']);
  const written = [];
  server.methods.get('/pkg.S/Follow').handler({ write: (m) => written.push(m) });
  assert.deepEqual(written, ['first']);
  assert.equal(server.methods.get('/pkg.S/Ask').method.requestDeserialize('x'), 'req:x');
  assert.equal(server.methods.get('/pkg.S/Follow').method.responseSerialize('y'), 'res:y');
  assert.deepEqual(calls, ['built'], 'built once');
});

test('a message decoded before any call builds the library too', () => {
  const server = fakeServer();
  const calls = [];
  addLazily(server, METHODS, library(calls), quietLog());
  assert.equal(server.methods.get('/pkg.S/Follow').method.requestDeserialize('m'), 'req:m');
  assert.deepEqual(calls, ['built']);
});

test('a library whose methods drifted from the list fails its calls with INTERNAL, logged, and is not built again', () => {
  const server = fakeServer();
  const calls = [];
  const log = quietLog();
  addLazily(server, METHODS, library(calls, { ...METHODS, '/pkg.S/Follow': { requestStream: true, responseStream: true } }), log);
  const answers = [];
  for (let i = 0; i < 2; i++) server.methods.get('/pkg.S/Ask').handler({ request: 'q' }, (err) => answers.push(err));
  assert.equal(answers.length, 2);
  for (const err of answers) {
    assert.equal(err.code, 13);
    assert.match(err.details, /^\/pkg\.S\/Ask is unavailable: .*\/pkg\.S\/Follow$/);
  }
  const emitted = [];
  server.methods.get('/pkg.S/Follow').handler({ emit: (event, status) => emitted.push([event, status.code]) });
  assert.deepEqual(emitted, [['error', 13]]);
  assert.deepEqual(calls, ['built'], 'one build tried');
  assert.equal(log.errors.length, 3);
});
