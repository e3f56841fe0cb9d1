// The repository's root folder, in a module of its own: what needs only the path (provenance, tools,
// the link) imports no process code for it.
import { fileURLToPath } from 'node:url';

/** The repository's root folder, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
