// What differs between the provenance (bench/provenance.js) of the columns a report compares.

/** @typedef {import('../provenance.js').Provenance} Provenance */

/** Dotted paths and values of a nested object. */
function flatten(object, prefix = '') {
  return Object.entries(object ?? {}).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v)
    ? flatten(v, `${prefix}${k}.`) : [[`${prefix}${k}`, JSON.stringify(v)]]));
}

// Expected to differ between modes and runs without changing a figure: the listener set the server opened, where files went.
const PER_MODE = new Set(['server.MODE', 'bench.MODES', 'bench.RESULTS_DIR']);
// Differ between the raw and gzip columns of COMPRESSION=gzip, and between the releases of NODE_VERSIONS, by design; each
// summary records them (bench.compression, bench.run.node) and the report flags columns that differ in them without
// their keys naming it, and a column whose runs differ in them (bench/report/report.js SHAPE, nodeMismatch).
const IN_SHAPE = new Set(['server.COMPRESSION', 'versions.node']);

/**
 * What differs between the provenance of the columns of a report.
 * @param {Record<string, Array<Provenance|undefined>>} byColumn each column's runs' provenance
 * @returns {{missing: string[], differences: Array<{field: string, values: Record<string, string>}>}}
 *   missing: columns with a run that recorded none; differences: each field whose recorded values are not all the same,
 *   with the values by column (`a | b` when a column's runs differ among themselves, `(not recorded)` for a column
 *   whose runs lack the field); a field only some columns record, with one value, is none
 */
export function provenanceDifferences(byColumn) {
  const missing = Object.entries(byColumn).filter(([, list]) => list.some((p) => !p)).map(([k]) => k);
  const fields = new Map();
  for (const [column, list] of Object.entries(byColumn)) {
    for (const p of list.filter(Boolean)) {
      for (const [field, value] of flatten(p)) {
        if (PER_MODE.has(field) || IN_SHAPE.has(field)) continue;
        if (!fields.has(field)) fields.set(field, new Map());
        const values = fields.get(field);
        if (!values.has(column)) values.set(column, new Set());
        values.get(column).add(value);
      }
    }
  }
  const differences = [];
  const columns = Object.keys(byColumn).filter((c) => !missing.includes(c));
  for (const [field, values] of fields) {
    const all = new Set([...values.values()].flatMap((s) => [...s]));
    // A field some columns do not record (summaries of an older version) is a difference of record, not of setup: only
    // where the recorded values differ is it one, and then the columns without it say so.
    if (all.size > 1) {
      differences.push({ field, values: Object.fromEntries(columns.map((c) => [c, values.has(c) ? [...values.get(c)].join(' | ') : '(not recorded)'])) });
    }
  }
  return { missing, differences };
}
