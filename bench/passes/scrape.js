// Reads a server's own accounting from its admin endpoint (GET /metrics, server/admin.js); what the
// readings mean is bench/records/server-stats.js's.
import { BenchError } from '../errors.js';
import { OPTIONAL, parseScrape, READ } from '../records/server-stats.js';

/** @typedef {import('../records/server-stats.js').ServerScrape} ServerScrape */

/**
 * Scrapes the server's admin endpoint once.
 * @param {string} address host:port of the admin endpoint (ADMIN_HOST:ADMIN_PORT)
 * @param {{timeoutMs?: number}} [options] default 10000 ms
 * @returns {Promise<ServerScrape>}
 * @throws {BenchError} when the endpoint does not answer 200 with metrics of at least one worker
 */
export async function scrapeServer(address, { timeoutMs = 10000 } = {}) {
  const url = `http://${address}/metrics`;
  let text;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    text = await res.text();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
  } catch (err) {
    throw new BenchError(`the server's accounting at ${url} could not be read: ${err.cause?.code ?? err.message}`);
  }
  let scrape;
  try {
    scrape = parseScrape(text, Date.now());
  } catch (err) {
    throw new BenchError(`the server's accounting at ${url} is not Prometheus text: ${err.message}`);
  }
  if (scrape.workers.length === 0) throw new BenchError(`the server's accounting at ${url} names no worker`);
  const missing = [...READ].filter(([, { field, primary }]) => !OPTIONAL.has(field)
    && (primary ? [scrape.primary ?? {}] : scrape.workers).some((r) => !Number.isFinite(r[field])));
  if (missing.length) throw new BenchError(`the server's accounting at ${url} lacks ${missing.map(([name]) => name).join(', ')}`);
  return scrape;
}

