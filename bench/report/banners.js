// The warnings a report prints about its own figures (its banners), each with what sets it off, its threshold and what
// to do: docs/report.md's one table of them is generated from here (scripts/gen-docs.js), its thresholds from the
// constants the report itself uses, so that the doc cannot drift from the code.
import { CLIENT_BOUND_PCT, CLIENT_BOUND_SHARE } from './reading.js';
import { DISTURBED } from './machine-noise.js';
import { SHAPE, UNEVEN_FACTOR } from './report.js';
import { ROWS, UNTRUSTED_SHARE, WIDE_SPREAD } from './rows.js';
import { MIN_PAIRS } from './stats.js';
import { LINK_TOLERANCE } from '../settings/network.js';

const pct = (fraction) => `${Math.round(fraction * 1000) / 10}%`;
const orList = (items) => (items.length < 3 ? items.join(' or ') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/**
 * @typedef {object} Banner one warning of the report
 * @property {string} name how the report starts it (`WIDE SPREAD`), or a note's gist where it has no capitals
 * @property {string} where where it is printed: above the table, or among the notes under it
 * @property {string} trigger what sets it off
 * @property {string} threshold its threshold, from the report's own constants
 * @property {string} effect what it changes in the verdict and the reading
 * @property {string} todo what to do about it
 */

/**
 * Every banner and warning note of the main report (bench/report/report.js and render.js print them), in the order a
 * reader should heed them: those that void the comparison first.
 * @type {ReadonlyArray<Readonly<Banner>>}
 */
export const BANNERS = Object.freeze([
  {
    name: 'NOT COMPARABLE',
    where: 'notes under the table',
    trigger: `the columns differ in ${orList(SHAPE.map(([, what]) => what))} (VUs in the closed model only; compression where `
      + 'the columns\' keys do not name it, as `grpc+gzip` does), or in the server\'s Node release (but for the upgrade '
      + 'pairs of `NODE_VERSIONS`)',
    threshold: 'any difference',
    effect: 'no verdict',
    todo: 'compare runs made with the same settings: one job measures every column under the same ones',
  },
  {
    name: 'NOT THE SAME SETUP',
    where: 'above the table',
    trigger: 'the columns\' recorded provenance differs (commit, tool and library versions, machine, server settings), as '
      + 'when `npm run compare` puts summaries of different jobs side by side',
    threshold: 'any recorded field that differs',
    effect: 'no verdict',
    todo: 'compare summaries of one commit, machine and settings, or read the ratios as mixing those differences in',
  },
  {
    name: 'DISTURBED',
    where: 'notes under the table; the verdict\'s first sentence and the reading name the runs',
    trigger: 'during a run, the hypervisor (steal) or other processes took time from the cores the server or k6 was pinned to',
    threshold: `steal ≥ ${pct(DISTURBED.steal)} or other processes ≥ ${pct(DISTURBED.other)} of either side's cores' time`,
    effect: `with fewer quiet runs than ${MIN_PAIRS} (or than the repeats, when fewer) the verdict is only "rerun on a quiet machine"; `
      + 'else it goes on but never says that the servers set the limit',
    todo: 'rerun when the machine is quiet; the arithmetic is in [Methodology](#methodology)',
  },
  {
    name: 'WIDE SPREAD',
    where: 'above the table; the reading says so under the RPS ratio',
    trigger: `a column's runs disagree on ${orList(ROWS.filter((r) => r.checkSpread).map((r) => r.label))}`,
    threshold: `max − min > ${pct(WIDE_SPREAD)} of the median; the runs more than ${pct(WIDE_SPREAD / 2)} from it are named`,
    effect: 'the verdict leaves out the server CPU where it spreads wide',
    todo: 'look for a DISTURBED note, distrust the named runs, rerun on a quiet machine or with more `REPEATS`',
  },
  {
    name: 'client-bound',
    where: 'notes under the table, the verdict and the reading',
    trigger: 'the load generator (k6), not the server, set the RPS: see [client-bound](#client-bound)',
    threshold: `median run at ≥ ${CLIENT_BOUND_SHARE} of the client's ceiling; without a ceiling, k6 at ≥ ${CLIENT_BOUND_PCT}% of its core`,
    effect: 'the verdict says the k6 RPS row measures k6 there, and gives the servers\' ceilings (capacity pass) instead',
    todo: 'read server CPU per request and the servers\' ceilings, not the k6 RPS ratio',
  },
  {
    name: 'client\'s ceiling not trusted',
    where: 'notes under the table',
    trigger: 'the run outran its own client\'s ceiling, or the ceiling\'s measurement was itself DISTURBED',
    threshold: `share of the client's ceiling > ${UNTRUSTED_SHARE}, or a disturbed calibration`,
    effect: 'k6\'s CPU decides whether the column is client-bound',
    todo: 'rerun on a quiet machine',
  },
  {
    name: 'UNEVEN',
    where: 'notes under the table',
    trigger: 'with 2 workers or more, one worker served far more than its share of the requests',
    threshold: `largest worker's share > ${UNEVEN_FACTOR}× the fair share (100% ÷ workers)`,
    effect: 'none: the column measures fewer workers than it ran',
    todo: 'more connections, or `GRPC_MAX_CONNECTION_AGE_MS` so that gRPC clients reconnect and spread ([server.md](server.md))',
  },
  {
    name: 'WARNING: the link is not what was asked for',
    where: 'above the table, over an emulated link',
    trigger: 'the link measured before the runs is not the configured one',
    threshold: `RTT or bandwidth more than ${pct(LINK_TOLERANCE)} off (and an RTT more than 0.1 ms off)`,
    effect: 'none: the link section gives the measured figures',
    todo: 'ask for a link the machine can emulate ([network.md](network.md)), or read the figures as the measured link\'s',
  },
]);
