// One list of methods: what the compared listeners serve (issue 47). A method is an RPC of a schema, its request and
// response samples, its google.api.http bindings and how a request picks its answer. The demo's built-in
// user.v1.UserService and the user's own RPC are the same thing to a listener: the demo's RPCs answer what their
// request selects (proto/payload.js's scenarios, each a response sample), an own RPC its samples in turn.
import { fileURLToPath } from 'node:url';
import { PROTO_FILE, SCENARIOS, SERVICE_NAME, USERS_STREAM } from './payload.js';
import { resolveRpc } from './own/schema.js';
import { httpBindingsOf } from './own/http-rule.js';
import { fromJson, toJsonText } from './own/samples.js';
import { inTurn } from './own/service.js';
import { protoFieldName, User, withoutDefaults } from './index.js';

/**
 * @typedef {object} ServiceMethod
 * @property {string} proto the schema's file: what protobuf-es's descriptors are built from
 *   (proto/own/descriptors.js), and proto-loader's definition of it (GRPC_CODEC=proto-loader)
 * @property {string[]} protoPath its import directories ([]: the file's own)
 * @property {import('./own/schema.js').Rpc} rpc with its google.api.http bindings
 * @property {import('./own/samples.js').Samples} requests what the clients send
 * @property {import('./own/samples.js').Samples} responses what the listeners answer
 * @property {((request: Record<string, any>) => number)|null} select the index of the response sample a decoded request
 *   (a message, or a plain object with the fields under their JSON or .proto names) selects, -1 for none (answered
 *   `refusal`); null: the samples in turn, whatever the request
 * @property {string} refusal why a request selects no sample, in one line (e.g. 'count must be one of 100'); '' when
 *   every request has an answer
 */

/** The demo's schema, proto/user.proto, as an absolute path. */
export const DEMO_PROTO = fileURLToPath(new URL(PROTO_FILE, import.meta.url));

/**
 * Samples made of messages, each measured in both encodings: the JSON sizes when first read (no listener reads the
 * demo's; the 1 MiB blob's JSON took 29 ms to write, at every listener's start).
 * @param {import('protobufjs').Type} type
 * @param {import('protobufjs').Message[]} messages
 * @returns {import('./own/samples.js').Samples}
 */
function samplesOf(type, messages) {
  let jsonBytes = null;
  return {
    file: '', sha256: null, messages,
    protobufBytes: messages.map((m) => type.encode(m).finish().length),
    get jsonBytes() {
      jsonBytes ??= messages.map((m) => Buffer.byteLength(toJsonText(type, m)));
      return jsonBytes;
    },
  };
}

/**
 * The demo's RPCs, what of them does not depend on the listener: loaded once per process.
 * @type {Array<{rpc: import('./own/schema.js').Rpc, scenarios: Array<import('./payload.js').Scenario>,
 *   requests: import('./own/samples.js').Samples, select: (request: Record<string, any>) => number, refusal: string}>|null}
 */
let demo = null;

function demoRpcs() {
  if (demo) return demo;
  // The types every other part of the project has of the demo (proto/index.js), not a second copy.
  const { root } = User;
  const byRpc = new Map();
  for (const s of Object.values(SCENARIOS)) byRpc.set(s.rpc, [...(byRpc.get(s.rpc) ?? []), s]);
  demo = [...byRpc].map(([name, scenarios]) => {
    const rpc = resolveRpc(root, `${SERVICE_NAME}/${name}`);
    // The GET route its scenarios share (proto/payload.js), a google.api.http rule of the RPC read by the same code as a
    // user's rule.
    rpc.bindings = httpBindingsOf({ parsedOptions: [{ '(google.api.http)': { get: scenarios[0].route } }] });
    const requests = samplesOf(rpc.requestType, scenarios.map((s) => fromJson(rpc.requestType, s.request)));
    const param = Object.keys(scenarios[0].request)[0];
    if (!param) return { rpc, scenarios, requests, select: () => 0, refusal: '' };
    const values = scenarios.map((s) => s.request[param]);
    const index = new Map(values.map((v, i) => [v, i]));
    const protoName = protoFieldName(rpc.requestType.fields[param]);
    // The field under its JSON name (protobufjs, @bufbuild/protobuf, proto-loader) or its .proto name (proto-loader's
    // keepCase); unset, 0 in a decoded message or absent from a plain object.
    const select = (request) => index.get(request[param] ?? request[protoName] ?? 0) ?? -1;
    return { rpc, scenarios, requests, select, refusal: `${protoName} must be one of ${values.join(', ')}` };
  });
  return demo;
}

/** The demo's server stream's RPC and request, loaded once per process. */
let demoStream = null;

/**
 * The demo's server stream (proto/payload.js USERS_STREAM) as a method: a call that asks for its count gets the one
 * stream of Users; another count is refused, naming it.
 * @param {{port: number, workerPid: number}} who
 * @returns {ServiceMethod}
 */
function usersStreamMethod(who) {
  if (!demoStream) {
    const rpc = resolveRpc(User.root, `${SERVICE_NAME}/${USERS_STREAM.rpc}`);
    const { count } = USERS_STREAM.request;
    const protoName = protoFieldName(rpc.requestType.fields.count);
    demoStream = {
      rpc,
      requests: samplesOf(rpc.requestType, [fromJson(rpc.requestType, USERS_STREAM.request)]),
      // The count the stream has, as ListUsers serves only its scenarios' (under either name, unset as 0).
      select: (request) => ((request.count ?? request[protoName] ?? 0) === count ? 0 : -1),
      refusal: `${protoName} must be one of ${count}`,
    };
  }
  const { rpc, requests, select, refusal } = demoStream;
  const messages = USERS_STREAM.messages(who).map((m) => withoutDefaults(rpc.responseType, rpc.responseType.fromObject(m)));
  return {
    proto: DEMO_PROTO, protoPath: [], rpc, requests,
    responses: { ...samplesOf(rpc.responseType, messages), streams: [messages.map((_, i) => i)] },
    select,
    refusal,
  };
}

/**
 * The demo's built-in service, user.v1.UserService, as methods: its unary RPCs, each answering the scenario its request
 * selects (proto/payload.js), with the listener's port and the worker's pid in the answer, as the demo's User has them;
 * with `streams`, its server stream StreamUsers too (USERS_STREAM), for the listeners that serve server streams.
 * @param {{port: number, workerPid: number}} who the listener's port and the worker's pid
 * @param {{streams?: boolean}} [options] `streams`: the listener serves server streams (default false: the bare
 *   listeners, the peers and protobuf-h1 serve none)
 * @returns {ServiceMethod[]} in the scenario registry's order of RPCs, then StreamUsers
 */
export function demoMethods(who, { streams = false } = {}) {
  const unary = demoRpcs().map(({ rpc, scenarios, requests, select, refusal }) => ({
    proto: DEMO_PROTO,
    protoPath: [],
    rpc,
    requests,
    // proto3 leaves a field at its default off the wire; protobufjs would write it (withoutDefaults).
    responses: samplesOf(rpc.responseType, scenarios.map((s) => withoutDefaults(rpc.responseType, rpc.responseType.fromObject(s.fields(who))))),
    select,
    refusal,
  }));
  return streams ? [...unary, usersStreamMethod(who)] : unary;
}

/**
 * The user's own RPC as a method: its samples in turn.
 * @param {import('./own/service.js').OwnService} own
 * @returns {ServiceMethod}
 */
export const ownMethod = (own) => ({
  proto: own.proto, protoPath: own.protoPath, rpc: own.rpc, requests: own.requests, responses: own.responses, select: null, refusal: '',
});

/**
 * Every method a compared listener serves: the demo's, and the user's own RPC when there is one, in place of the demo's
 * method of the same path (SCENARIO=users-stream serves user.proto's StreamUsers from its sample files).
 * @param {{port: number, workerPid: number, own?: import('./own/service.js').OwnService|null, streams?: boolean}} options
 *   `streams`: the listener serves server streams, and so the demo's (default false)
 * @returns {ServiceMethod[]}
 */
export function serviceMethods({ port, workerPid, own = null, streams = false }) {
  const demo = demoMethods({ port, workerPid }, { streams });
  if (!own) return demo;
  return [...demo.filter((m) => m.rpc.path !== own.rpc.path), ownMethod(own)];
}

/**
 * How a listener answers a method: each call with the decoded request gives the answer it picks (the method's
 * `select`), or the next in turn; null when the request selects none.
 * @template A
 * @param {ServiceMethod} method
 * @param {A[]} answers the response samples as the listener answers them, in the samples' order
 * @returns {(request?: Record<string, any>) => A|null}
 */
export function answerPicker(method, answers) {
  const { select } = method;
  if (!select) return inTurn(answers);
  return (request) => answers[select(request)] ?? null;
}

/**
 * How a listener answers a streaming method: each call the response stream its request picks (the method's `select`,
 * an index into the samples' `streams`), or the next in turn; null when the request picks none.
 * @template A
 * @param {ServiceMethod} method
 * @param {A[]} answers the response samples as the listener answers them, in the samples' order
 * @returns {(request?: Record<string, any>) => A[]|null}
 */
export function streamPicker(method, answers) {
  const streams = (method.responses.streams ?? [answers.map((_, i) => i)]).map((stream) => stream.map((i) => answers[i]));
  const { select } = method;
  if (!select) return inTurn(streams);
  return (request) => streams[select(request ?? {})] ?? null;
}
