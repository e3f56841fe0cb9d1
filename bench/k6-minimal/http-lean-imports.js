// http-lean-iteration.js plus the project's modules imported and never called: what each VU's instance of them
// costs k6 (docs/findings/2026-11-23-frameworks-issue-13.md, "The k6 scripts made lean").
import exec from 'k6/execution';
import { SCENARIOS } from '../../proto/payload.js';
import { baseOptions } from '../../k6/common.js';
import { summaryHandler } from '../../k6/summary.js';
import { LOCAL_HTTP_HOST } from '../../config.js';
import iteration from './http-lean-iteration.js';

export const options = { discardResponseBodies: true };
export default iteration;
// Kept, so that no bundler or engine drops the imports.
export const imported = [exec, SCENARIOS, baseOptions, summaryHandler, LOCAL_HTTP_HOST];
