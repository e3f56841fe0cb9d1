// Writes the sample messages of proto/examples/catalog/v1/catalog.proto: a response-heavy example
// (a product catalogue read a page at a time) for the docs and tests, next to the small user.v1
// payloads. The content is made up but deterministic (a seeded generator), so rerunning this
// rewrites the committed files byte for byte:
//
//   node scripts/catalog-examples.js [out-dir]      (default: proto/examples/catalog)
//
// requests.json: a JSON array of the three ListProductsRequest pages; responses.ndjson: the three
// ListProductsResponse pages, 50 products each, one compact JSON object a line. Both are written in
// the canonical proto3 JSON mapping as a proto3 serializer emits it: lowerCamelCase names in field
// number order, int64 as strings, Timestamps as RFC 3339 in UTC ("Z"), enums by name, and fields
// at their default value (0, "", empty lists and maps) left out.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mulberry32 } from '../bench/report/stats.js';

/** Products per page, and pages. */
export const PAGE_SIZE = 50;
export const PAGES = 3;

const FILTER = Object.freeze({ tags: ['outdoor', 'camping'] });

const BRANDS = ['Nordkap', 'Alpenglow', 'Fjällgrå', 'Cascade Works', 'Trailhead', 'Sierra & Pine', 'Brume', 'Kestrel'];
const PRODUCTS = [
  { noun: 'Tent', kinds: ['Ultralight 2P', 'Tunnel 3P', 'Dome 4P', 'Bivy'], price: [89, 649], tags: ['shelter'],
    attributes: { capacity_persons: ['1', '2', '3', '4'], packed_weight_g: ['980', '1450', '2100', '3300'], season: ['3-season', '4-season'] } },
  { noun: 'Sleeping Bag', kinds: ['Down', 'Synthetic', 'Mummy', 'Quilt'], price: [59, 479], tags: ['sleep'],
    attributes: { comfort_temp_c: ['-5', '0', '4', '8'], fill: ['800 fill down', '650 fill down', 'polyester'], length_cm: ['185', '200'] } },
  { noun: 'Backpack', kinds: ['38 L', '45 L', '60 L', 'Daypack 22 L'], price: [49, 329], tags: ['packs', 'hiking'],
    attributes: { volume_l: ['22', '38', '45', '60'], back_length: ['S', 'M', 'L'], material: ['Robic nylon', 'Dyneema', 'recycled polyester'] } },
  { noun: 'Stove', kinds: ['Canister', 'Multi-fuel', 'Titanium', 'Windproof'], price: [29, 219], tags: ['cooking'],
    attributes: { fuel: ['butane/propane', 'white gas', 'alcohol'], output_w: ['1800', '2600', '3000'], weight_g: ['73', '190', '420'] } },
  { noun: 'Headlamp', kinds: ['400 lm', '750 lm', 'Rechargeable', 'Red-light'], price: [19, 129], tags: ['lighting'],
    attributes: { lumens: ['400', '750', '1100'], battery: ['USB-C Li-ion', '3×AAA'], ip_rating: ['IPX4', 'IPX7'] } },
  { noun: 'Water Filter', kinds: ['Squeeze', 'Gravity 4 L', 'Pump', 'Straw'], price: [24, 149], tags: ['water', 'hiking'],
    attributes: { pore_size_um: ['0.1', '0.2'], flow_l_per_min: ['0.5', '1.0', '1.7'], cartridge_life_l: ['1000', '2000', '100000'] } },
  { noun: 'Jacket', kinds: ['Rain Shell', 'Down', 'Softshell', 'Fleece'], price: [69, 549], tags: ['clothing'],
    attributes: { color: ['slate', 'moss', 'ember', 'glacier blue'], size: ['XS', 'S', 'M', 'L', 'XL'], membrane: ['3-layer', '2.5-layer', 'none'] } },
  { noun: 'Trekking Poles', kinds: ['Carbon', 'Aluminium', 'Folding Z', 'Telescopic'], price: [39, 199], tags: ['hiking'],
    attributes: { material: ['carbon', '7075 aluminium'], length_cm: ['100–130', '110–140'], grip: ['cork', 'foam'] } },
];
const EXTRA_TAGS = ['bestseller', 'new', 'sale', 'eco', 'lightweight', 'winter', 'family', 'bikepacking'];
const BLURBS = [
  'Built for long days on the trail and cold nights above the tree line.',
  'Packs small and shrugs off wind and rain.',
  'Field-tested by our guides on the Kungsleden and the GR20.',
  'Made with recycled materials and PFC-free finishes.',
  'A reliable all-rounder for weekend trips and thru-hikes alike.',
  'Covered by our lifetime repair promise — we fix it, you keep it.',
  'Désormais plus léger : 15 % de poids en moins que le modèle précédent.',
  'Für Touren bei jedem Wetter: robust, leicht und einfach zu pflegen.',
];
// Availability, weighted: mostly in stock, never AVAILABILITY_UNSPECIFIED.
const AVAILABILITY = [
  ...Array(12).fill('AVAILABILITY_IN_STOCK'), ...Array(3).fill('AVAILABILITY_LOW_STOCK'),
  ...Array(2).fill('AVAILABILITY_OUT_OF_STOCK'), ...Array(2).fill('AVAILABILITY_PREORDER'), 'AVAILABILITY_DISCONTINUED',
];
const CURRENCIES = [...Array(7).fill('EUR'), 'EUR', 'USD', 'GBP'];
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
// The catalogue's last update, the newest updated_at.
const NOW = Date.parse('2026-03-02T08:00:00Z');

/**
 * The products of the catalogue that match FILTER, in listing order.
 * @param {number} count how many
 * @param {number} [seed] PRNG seed
 * @returns {object[]} Product messages in the canonical proto3 JSON mapping
 */
export function products(count, seed = 20260302) {
  const rand = mulberry32(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const between = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const out = [];
  for (let i = 0; i < count; i += 1) {
    const product = pick(PRODUCTS);
    const kind = pick(product.kinds);
    const brand = pick(BRANDS);
    const currencyCode = pick(CURRENCIES);
    // Whole units and 99 cents, in millionths: 129.99 is 129990000.
    const priceMicros = `${between(...product.price) * 1_000_000 + 990_000}`;
    const tags = [pick(FILTER.tags), ...product.tags];
    for (const tag of EXTRA_TAGS) if (rand() < 0.12) tags.push(tag);
    // Updated within the last 90 days; a third of the timestamps carry milliseconds.
    const updated = NOW - between(0, 90 * 86_400) * 1000 - (rand() < 0.33 ? between(1, 999) : 0);
    const attributes = {};
    for (const [key, values] of Object.entries(product.attributes)) if (rand() < 0.75) attributes[key] = pick(values);
    // One product in ten is not reviewed yet: rating 0, left out.
    const rating = rand() < 0.1 ? 0 : Math.round((2.5 + rand() * 2.5) * 100) / 100;
    const description = `${brand} ${kind} ${product.noun.toLowerCase()}. ${pick(BLURBS)}${rand() < 0.5 ? ` ${pick(BLURBS)}` : ''}`;
    out.push({
      id: `prod_${Array.from({ length: 26 }, () => pick(CROCKFORD)).join('')}`,
      name: `${brand} ${kind} ${product.noun}`,
      description,
      priceMicros,
      currencyCode,
      tags,
      updatedAt: new Date(updated).toISOString().replace(/\.000Z$/, 'Z'),
      availability: pick(AVAILABILITY),
      ...(Object.keys(attributes).length ? { attributes } : {}),
      ...(rating ? { rating } : {}),
    });
  }
  return out;
}

/** The opaque page token of the page starting at `offset`. */
const pageToken = (offset) => Buffer.from(`v1:offset=${offset}:tags=${FILTER.tags.join(',')}`).toString('base64url');

/**
 * The sample pages: each request and the response to it.
 * @returns {{requests: object[], responses: object[]}} ListProductsRequest and ListProductsResponse messages
 *   in the canonical proto3 JSON mapping
 */
export function catalogExamples() {
  const all = products(PAGE_SIZE * PAGES);
  const requests = [];
  const responses = [];
  for (let page = 0; page < PAGES; page += 1) {
    const offset = page * PAGE_SIZE;
    requests.push({ pageSize: PAGE_SIZE, ...(page ? { pageToken: pageToken(offset) } : {}), filter: { tags: [...FILTER.tags] } });
    const last = page === PAGES - 1;
    responses.push({
      products: all.slice(offset, offset + PAGE_SIZE),
      ...(last ? {} : { nextPageToken: pageToken(offset + PAGE_SIZE) }),
    });
  }
  return { requests, responses };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const outDir = process.argv[2] ?? path.join(root, 'proto/examples/catalog');
  const { requests, responses } = catalogExamples();
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'requests.json'), `${JSON.stringify(requests, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'responses.ndjson'), responses.map((r) => `${JSON.stringify(r)}\n`).join(''));
  console.log(`${outDir}: requests.json (${requests.length}), responses.ndjson (${responses.length} × ${PAGE_SIZE} products)`);
}
