// Entry point: `node server`. The primary forks the workers; each worker serves.
import cluster from 'node:cluster';
import { runPrimary } from './primary.js';
import { readSettings } from './settings.js';
import { runWorker } from './worker.js';

let settings;
try {
  settings = readSettings();
} catch (err) {
  if (err.code !== 'ERR_INVALID_SETTING') throw err;
  console.error(`server: ${err.message}`);
  process.exit(2);
}
if (cluster.isPrimary) runPrimary(settings);
else await runWorker(settings);
