// Every relative Markdown link of README.md and docs/ points to a file that exists and, with a #fragment into a
// Markdown file, to a heading it has (GitHub's anchors): moving a section, or a doc into docs/findings/, breaks none
// silently. Pure: reads the docs.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/gen-docs.js';

/** README.md and every .md under docs/, relative to the repository. */
function docs() {
  const walk = (dir) => readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory()
    ? walk(path.join(dir, e.name)) : e.name.endsWith('.md') ? [path.join(dir, e.name)] : []));
  return ['README.md', ...walk('docs')];
}

/** The text without fenced code blocks and inline code, where a bracket is code, not a link. */
const prose = (text) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');

/**
 * A heading's anchor as GitHub makes it: lower case, code marks and punctuation dropped (letters, digits, spaces,
 * hyphens and underscores kept), spaces to hyphens.
 * @param {string} heading the heading's text, without its #s
 * @returns {string}
 */
export function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor of a Markdown file: its headings' (a repeated one gets -1, -2, …) and explicit ids. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  const code = text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of code.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** The relative links of a doc: [text](target) and [text]: target, with neither a scheme nor an absolute path. */
function linksOf(text) {
  const inline = [...prose(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const defined = [...prose(text).matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...defined].filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('/'));
}

test('slug makes the anchors GitHub makes', () => {
  assert.equal(slug('Each ratio with its uncertainty'), 'each-ratio-with-its-uncertainty');
  assert.equal(slug('Why ours ÷ peer swung: two regimes (2026-11-25)'), 'why-ours--peer-swung-two-regimes-2026-11-25');
  assert.equal(slug('`npm run targets`, before and after'), 'npm-run-targets-before-and-after');
  assert.equal(slug('The client\'s ceiling against k6\'s CPU'), 'the-clients-ceiling-against-k6s-cpu');
});

test('every relative link in README.md and docs/ resolves to a file and, with a fragment, to a heading of it', () => {
  const broken = [];
  for (const doc of docs()) {
    const text = readFileSync(path.join(ROOT, doc), 'utf8');
    for (const target of linksOf(text)) {
      const [file, fragment] = target.split('#');
      const resolved = file ? path.join(path.dirname(doc), decodeURI(file)) : doc;
      if (!existsSync(path.join(ROOT, resolved))) {
        broken.push(`${doc}: ${target} (no file ${resolved})`);
        continue;
      }
      if (fragment === undefined || !resolved.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(path.join(ROOT, resolved), 'utf8')).has(decodeURIComponent(fragment))) {
        broken.push(`${doc}: ${target} (no heading #${fragment} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('the check finds a broken link, a missing heading and ignores code', () => {
  assert.deepEqual(linksOf('[a](x.md) `[b](y.md)` [c](https://e.org) [d](#h)\n```\n[e](z.md)\n```\n[f]: g.md'), ['x.md', '#h', 'g.md']);
  assert.deepEqual([...anchorsOf('# A b\n## A b\n```\n# not\n```\n<a id="x"></a>')], ['a-b', 'a-b-1', 'x']);
});
