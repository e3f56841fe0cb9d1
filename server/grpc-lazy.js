// gRPC services built on their first call, not at a worker's start: the health and reflection services of the gRPC
// listener (server/grpc.js). Their libraries parse .proto files as they load and build their indexes as they are made,
// about a third of a gRPC worker's start; few calls ever come to them (docs/findings/2026-11-28-worker-start.md).

/**
 * @typedef {{requestStream: boolean, responseStream: boolean}} LazyMethod a method's kind, as its library defines it
 * @typedef {{addService: (definition: Record<string, any>, implementation: Record<string, any>) => void}} ServiceTarget
 *   what a library's `addToServer` adds its services to (a grpc-js Server's addService)
 */

/**
 * Adds methods to a grpc-js server now, whose definitions (serializers) and handlers are those a library adds, made by
 * `build` on the first call or message of any of them, once.
 * @param {ServiceTarget} server a grpc-js Server
 * @param {Readonly<Record<string, LazyMethod>>} methods by path (`/package.Service/Method`), each as `build` will add it
 * @param {(target: ServiceTarget) => void} build makes the library's services and adds them to `target` (their
 *   `addToServer(target)`); synchronous, as a message's deserializer must be
 * @param {{error: (obj: object, msg: string) => void}} log where a failed build is logged (its call ends INTERNAL)
 * @throws {Error} (from a call, once `build` ran) when `build` added a method not in `methods`, or of another kind, or
 *   left one out: the library changed under the list
 */
export function addLazily(server, methods, build, log) {
  /** @type {Map<string, {definition: Record<string, any>, handler: Function}>|null} */
  let built = null;
  /** @type {Error|null} a build that failed fails every call after it too, and is not tried again */
  let failed = null;
  const real = (/** @type {string} */ path) => {
    if (failed) throw failed;
    if (!built) {
      const added = new Map();
      try {
        build({
          addService: (definition, implementation) => {
            for (const [name, method] of Object.entries(definition)) {
              const handler = implementation[name] ?? implementation[method.originalName];
              added.set(method.path, { definition: method, handler: handler.bind(implementation) });
            }
          },
        });
        const drift = [...new Set([...added.keys(), ...Object.keys(methods)])].filter((p) => !methods[p] || !added.has(p)
          || added.get(p).definition.requestStream !== methods[p].requestStream
          || added.get(p).definition.responseStream !== methods[p].responseStream);
        if (drift.length) throw new Error(`the library's methods differ from those added lazily: ${drift.join(', ')}`);
      } catch (err) {
        failed = err;
        throw err;
      }
      built = added;
    }
    return /** @type {{definition: Record<string, any>, handler: Function}} */ (built.get(path));
  };
  for (const [path, { requestStream, responseStream }] of Object.entries(methods)) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    server.addService({
      [name]: {
        path, requestStream, responseStream, originalName: name,
        requestSerialize: (/** @type {any} */ message) => real(path).definition.requestSerialize(message),
        requestDeserialize: (/** @type {Buffer} */ bytes) => real(path).definition.requestDeserialize(bytes),
        responseSerialize: (/** @type {any} */ message) => real(path).definition.responseSerialize(message),
        responseDeserialize: (/** @type {Buffer} */ bytes) => real(path).definition.responseDeserialize(bytes),
      },
    }, {
      [name]: (/** @type {any} */ call, /** @type {Function|undefined} */ callback) => {
        let handler;
        try {
          handler = real(path).handler;
        } catch (err) {
          log.error({ err, path }, 'a gRPC service built on its first call failed to build');
          const status = { code: 13, details: `${path} is unavailable: ${err.message}` }; // 13: INTERNAL
          if (callback) callback(status);
          else call.emit('error', status);
          return;
        }
        handler(call, callback);
      },
    });
  }
}
