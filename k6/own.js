// What an iterating VU needs of the user's own RPC when there are many request samples (docs/own-message.md), and
// nothing else: its share of them. An iterating VU loads it only then (with one sample the plan carries it, and the
// module would cost every VU, docs/profiling.md); VU 0 reads and checks the samples (k6/common.js OWN), which name
// their SharedArray here.
import { SharedArray } from 'k6/data';
import exec from 'k6/execution';

/** The SharedArray of the request samples, made by VU 0 (k6/common.js): one copy for the k6 process. */
export const OWN_REQUESTS = 'own-requests';

/**
 * The SharedArray of a relay's request streams in protobuf, base64 (-e FRAMES, for RELAY_FRAMES=binary), made by VU 0
 * (k6/common.js) in the order of the request samples.
 */
export const OWN_FRAMES = 'own-frames';

/**
 * The request samples, as VU 0 read and checked them: one copy for the k6 process. In the init context (k6 makes a
 * SharedArray nowhere else), after VU 0 made it.
 * @returns {object[]} the request messages in the proto3 JSON mapping (read-only)
 */
export function ownSamples() {
  // Made by VU 0 already, so k6 hands over the one copy and never calls this.
  return new SharedArray(OWN_REQUESTS, () => { throw new Error(`${OWN_REQUESTS}: not made by VU 0`); });
}

/**
 * A relay's request streams in protobuf, base64, as VU 0 read them (-e FRAMES): one copy for the k6 process. In the init
 * context, after VU 0 made it.
 * @returns {string[][]} each stream's messages, base64 (read-only)
 */
export function ownFrames() {
  return new SharedArray(OWN_FRAMES, () => { throw new Error(`${OWN_FRAMES}: not made by VU 0`); });
}

/**
 * The request samples one VU sends, in turn: every S-th from its own place, S = min(samples, VUS), so that the VUs
 * together send each sample about as often while each keeps only its share. Called on the VU's first iteration, since
 * its id in the whole test (K6_INSTANCES splits the VUs over processes) is not known in the init context.
 * @template T
 * @param {object[]} all the samples (ownSamples)
 * @param {(message: object) => T} as what the VU keeps of a sample (the object for gRPC, its JSON text for HTTP)
 * @param {number|null} vus -e VUS as VU 0 read it (the job passes it), or null: the VUs this k6 process started
 * @returns {T[]} at least one
 */
export function ownShare(all, as, vus) {
  const stride = Math.min(all.length, vus ?? (exec.instance.vusInitialized || 1));
  const mine = [];
  for (let i = Math.max(0, exec.vu.idInTest - 1) % stride; i < all.length; i += stride) mine.push(as(all[i]));
  return mine;
}
