// Writes the samples of the built-in scenario users-stream (proto/own/builtins.js): the demo's server stream,
// user.v1.UserService/StreamUsers, as the job measures an own service's, from its one definition in proto/payload.js
// (USERS_STREAM: the users of users-100, one message each). Rerunning this rewrites the committed files byte for byte
// (test/unit/users-stream-samples.test.js):
//
//   node scripts/users-stream-samples.js [out-dir]      (default: proto/examples/users-stream)
//
// - requests.json: a JSON array of the one ListUsersRequest, the one users-100 sends ({"count":100});
// - responses.json: a JSON array of the one response stream, itself a JSON array of its 100 Users (a file that is
//   one array of messages would be read as that many streams of one message).
// Both in the canonical proto3 JSON mapping, as the JSON twin answers (fields at their default left out: the demo's
// country, COUNTRY_KE, is the enum's zero). A User names the listener port and worker pid that served it; both twins
// answer the same samples, so the samples name one of each (SAMPLE_WHO), of the sizes the demo's have.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { USERS_STREAM } from '../proto/payload.js';
import { User, withoutDefaults } from '../proto/index.js';
import { toJsonText } from '../proto/own/samples.js';

/**
 * The port and pid the samples' Users carry: the gRPC listener's default port (4 digits, 2 bytes of protobuf, as 3000
 * is) and a 5-digit pid past 16,383 (3 bytes of protobuf), as this project's machines give their workers.
 */
export const SAMPLE_WHO = Object.freeze({ port: 4000, workerPid: 24680 });

/** The files it writes, relative to proto/. */
export const SAMPLE_FILES = Object.freeze({ request: 'examples/users-stream/requests.json', response: 'examples/users-stream/responses.json' });

/** @returns {string} requests.json's text: a JSON array of the one request, and a newline */
export const requestsText = () => `${JSON.stringify([USERS_STREAM.request])}\n`;

/** @returns {string} responses.json's text: the one stream, the JSON array of its Users in canonical JSON, in an array */
export const responsesText = () => `[[${USERS_STREAM.messages(SAMPLE_WHO)
  .map((m) => toJsonText(User, withoutDefaults(User, User.fromObject(m)))).join(',')}]]\n`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../proto/examples/users-stream'));
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, path.basename(SAMPLE_FILES.request)), requestsText());
  writeFileSync(path.join(out, path.basename(SAMPLE_FILES.response)), responsesText());
  console.log(`wrote the request and the stream of ${USERS_STREAM.messages(SAMPLE_WHO).length} Users to ${out}`);
}
