// Preloaded into a server's processes (NODE_OPTIONS=--import) by test/integration/worker-modules.test.js: when a
// cluster worker is told to shut down, it writes what it loaded to WORKER_MODULES_DIR/<pid>.json, before its drain
// (this listener is the first on 'message'): the CommonJS files (require.cache, where Node puts those imported from ESM
// too), the built-in modules (process.moduleLoadList) and its compile cache folder (module.getCompileCacheDir()).
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';

const dir = process.env.WORKER_MODULES_DIR;
if (cluster.isWorker && dir) {
  process.on('message', (msg) => {
    if (msg?.type !== 'shutdown') return;
    writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify({
      files: Object.keys(module.createRequire(import.meta.url).cache),
      builtins: process.moduleLoadList,
      compileCacheDir: module.getCompileCacheDir() ?? null,
    }));
  });
}
