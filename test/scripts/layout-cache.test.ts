import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keepLayout, layoutDigest, restoreLayout } from '../../scripts/layout-cache.mjs';

describe('the machine copy of a laid-out fixture folder (scripts/layout-cache.mjs)', () => {
  const root = mkdtempSync(join(tmpdir(), 'bims-layout-'));
  const cache = join(root, 'cache');
  const dirs = [join(root, 'a'), join(root, 'b')];
  const lay = () => {
    mkdirSync(join(dirs[0]!, 'one'), { recursive: true });
    mkdirSync(dirs[1]!, { recursive: true });
    writeFileSync(join(dirs[0]!, 'one', 'clip.wav'), 'first clip');
    writeFileSync(join(dirs[1]!, 'clip.wav'), 'second clip');
    writeFileSync(join(dirs[0]!, '.complete.json'), '{"stamp": true}');
  };
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('digests paths and bytes (not the stamps), and gives the same folders back only under that digest', () => {
    lay();
    const digest = layoutDigest(root, dirs);
    writeFileSync(join(dirs[0]!, '.complete.json'), 'another stamp');
    expect(layoutDigest(root, dirs)).toBe(digest);
    keepLayout('fixture', digest, root, dirs, cache);
    for (const dir of dirs) rmSync(dir, { recursive: true });

    expect(restoreLayout('fixture', 'f'.repeat(64), root, dirs, cache)).toBe(false);
    expect(restoreLayout('fixture', digest, root, dirs, cache)).toBe(true);
    expect(readFileSync(join(dirs[0]!, 'one', 'clip.wav'), 'utf8')).toBe('first clip');
    expect(layoutDigest(root, dirs)).toBe(digest);
  });

  it('refuses a copy whose contents no longer have the digest it is filed under, and leaves nothing of it', () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    lay();
    const digest = layoutDigest(root, dirs);
    writeFileSync(join(dirs[1]!, 'clip.wav'), 'tampered clip');
    // Filed under the digest of the honest folders, holding other bytes: as a tampered or damaged cache would.
    keepLayout('fixture', digest, root, dirs, cache);
    expect(restoreLayout('fixture', digest, root, dirs, cache)).toBe(false);
    expect(layoutDigest(root, dirs)).toBe(layoutDigest(root, []));
  });
});
