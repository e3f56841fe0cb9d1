// One worker's serving state, which both listeners report: HTTP on HEALTH_PATH,
// gRPC through the standard grpc.health.v1.Health service.
import { SERVICE_NAME } from '../proto/payload.js';

/** The HTTP route that answers 200 while the worker serves and 503 while it drains. */
export const HEALTH_PATH = '/health';

/**
 * Service names the gRPC health service reports: '' is the whole server (what
 * grpc_health_probe asks by default), then each served service.
 */
export const GRPC_HEALTH_SERVICES = Object.freeze(['', SERVICE_NAME]);

/**
 * @typedef {object} Health
 * @property {boolean} serving true once every listener is bound, false again from the start of a drain
 * @property {(serving: boolean) => void} set changes the state and tells every subscriber
 * @property {(onChange: (serving: boolean) => void) => void} subscribe calls `onChange` now and on each change
 */

/**
 * A worker's health state, NOT_SERVING until `set(true)`.
 * @returns {Health}
 */
export function createHealth() {
  const subscribers = [];
  const health = {
    serving: false,
    set(serving) {
      if (serving === health.serving) return;
      health.serving = serving;
      for (const onChange of subscribers) onChange(serving);
    },
    subscribe(onChange) {
      subscribers.push(onChange);
      onChange(health.serving);
    },
  };
  return health;
}
