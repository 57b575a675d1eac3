// The README is a guide that sends readers to docs/ for the details: every link between the documents must
// land on a file that exists (sections move between files; a stale link is the first thing a reader hits).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const documents = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f)),
];

it('every relative link in README.md and docs/*.md names a file of the repository', () => {
  const broken: string[] = [];
  let links = 0;
  for (const document of documents) {
    const text = readFileSync(document, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith('#')) continue; // web addresses, anchors
      links++;
      const path = resolve(dirname(document), target.split('#')[0]);
      if (!existsSync(path)) broken.push(`${relative(root, document)} -> ${target}`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(20);
});

it('the README stays a guide: the two commands first, under 20 KB, the tour before the details', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  expect(
    readme
      .split('\n')
      .slice(0, 2)
      .map((line) => line.trim().split(/\s+#/)[0].trim()),
  ).toEqual(['npm install && npm start', 'npm install && npm test']);
  expect(Buffer.byteLength(readme)).toBeLessThan(20 * 1024);
  for (const heading of ['## First start', '## A five-minute tour', '## Map of the code', '## Development'])
    expect(readme).toContain(`\n${heading}`);
  // The tour's adjudicator is an ADJUDICATOR account (a USER one is refused), and it names the setting that
  // sends a duplicate to a human instead of rejecting it.
  expect(readme).toMatch(/"role":"ADJUDICATOR"/);
  expect(readme).toContain('deduplication.duplicateThreshold');
});
