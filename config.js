// Where the k6 scripts send load. Edit the defaults here, or override any of
// them with an environment variable of the same name, e.g.
//   k6 run -e REMOTE_GRPC_HOST=10.1.2.3:4000 grpc-tests/remote.js
// Loads in k6 (__ENV) and in Node (process.env).

const env = typeof __ENV !== 'undefined' ? __ENV : process.env; // eslint-disable-line no-undef

const DEFAULTS = {
  LOCAL_HTTP_HOST: 'localhost:3000',
  LOCAL_GRPC_HOST: 'localhost:4000',
  REMOTE_HTTP_HOST: '192.168.0.10:3000',
  REMOTE_GRPC_HOST: '192.168.0.10:4000',
};

const pick = (name) => env[name] || DEFAULTS[name];

/** host:port of the HTTP server on this machine. */
export const LOCAL_HTTP_HOST = pick('LOCAL_HTTP_HOST');
/** host:port of the gRPC server on this machine. */
export const LOCAL_GRPC_HOST = pick('LOCAL_GRPC_HOST');
/** host:port of the HTTP server on the machine under test. */
export const REMOTE_HTTP_HOST = pick('REMOTE_HTTP_HOST');
/** host:port of the gRPC server on the machine under test. */
export const REMOTE_GRPC_HOST = pick('REMOTE_GRPC_HOST');
