// One cluster worker: opens the listeners its MODE asks for and reports to the primary.
import { ListenError } from './errors.js';
import { startGrpc } from './grpc.js';
import { startHttp } from './http.js';
import { createLogger } from './log.js';

const LISTENERS = {
  http: { protocol: 'HTTP', start: startHttp, portKey: 'HTTP_PORT' },
  grpc: { protocol: 'gRPC', start: startGrpc, portKey: 'GRPC_PORT' },
};

/**
 * Names of the listeners a mode opens.
 * @param {'http'|'grpc'|'both'} mode
 * @returns {Array<'http'|'grpc'>}
 */
export const listenersOf = (mode) => (mode === 'both' ? ['http', 'grpc'] : [mode]);

/**
 * Runs a worker until the primary or a signal stops it. Sends the primary
 * `{type: 'listening'}` once every listener is bound, or `{type: 'fatal', message, code}`.
 * @param {import('./settings.js').ServerSettings} settings
 */
export async function runWorker(settings) {
  const log = createLogger(settings.LOG_LEVEL);
  const open = [];
  try {
    for (const name of listenersOf(settings.MODE)) {
      const { protocol, start, portKey } = LISTENERS[name];
      const port = settings[portKey];
      try {
        open.push(await start({ host: settings.HOST, port, log }));
      } catch (err) {
        throw new ListenError(protocol, `${settings.HOST}:${port}`, err.code ?? err.message);
      }
    }
  } catch (err) {
    process.send({ type: 'fatal', code: err.code, message: err.message });
    process.exit(1);
  }
  const ports = Object.fromEntries(listenersOf(settings.MODE).map((n) => [n, settings[LISTENERS[n].portKey]]));
  log.info({ ...ports, host: settings.HOST }, 'worker listening');
  process.send({ type: 'listening' });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await Promise.allSettled(open.map((listener) => listener.close()));
    process.exit(0);
  };
  process.on('message', (msg) => msg?.type === 'shutdown' && stop());
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // A worker whose primary is gone must not linger.
  process.on('disconnect', () => process.exit(0));
}
