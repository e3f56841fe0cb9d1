// Response compression (COMPRESSION): its values, its one zlib level, and how a gRPC client
// asks for it. Imports nothing, so that the k6 scripts load the same file the servers do.

/** Values of COMPRESSION, for the server, the main job and the k6 scripts: `off` sends raw bytes. */
export const COMPRESSIONS = Object.freeze(['off', 'gzip']);

/**
 * The zlib level both listeners compress at: 6, zlib's default (Z_DEFAULT_COMPRESSION), the level
 * @fastify/compress uses when not told and the one grpc-js's own client gzips at (compression-filter.js
 * calls zlib.gzip without a level).
 */
export const GZIP_LEVEL = 6;

/**
 * True when a gRPC client's `grpc-accept-encoding` lists gzip (PROTOCOL-HTTP2.md: Message-Accept-Encoding,
 * a comma-separated list; several headers arrive joined by `, `).
 * @param {string|string[]|undefined} header
 * @returns {boolean}
 */
export function acceptsGzip(header) {
  if (header === undefined) return false;
  return String(header).split(',').some((name) => name.trim() === 'gzip');
}
