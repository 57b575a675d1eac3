// `npm start` runs Node with a young generation of 32 MB semi-spaces (scripts/start.mjs says why), and `npm run
// bench`, whose benchmarks run the service in their own process, with the same V8 flags: a bench measures the
// service as it is started. Both scripts are run here as npm runs them, and the heap they get is read back.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;

/** The Node options of a `node ... <file>` script: its words between `node` and the file. */
const nodeOptions = (script: string) => script.split(/\s+/).slice(1, -1);

/**
 * The largest new space (both semi-spaces) a process started with these options grows to, in MB: objects kept
 * through several scavenges, so that V8 grows its young generation to the most it may.
 */
function newSpaceMb(options: string[]): number {
  const probe = `
    const v8 = require('node:v8');
    let keep = [], most = 0;
    for (let i = 0; i < 3000000; i++) {
      keep.push({ i, s: 'x' + i });
      if (keep.length > 300000) keep = [];
      if (i % 10000 === 0) most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    console.log(most / 1048576);`;
  const withoutImport = options.filter((o, i) => o !== '--import' && options[i - 1] !== '--import');
  return Number(execFileSync(process.execPath, [...withoutImport, '-e', probe], { encoding: 'utf8' }).trim());
}

describe('the V8 flags npm start and npm run bench run with', () => {
  it('are the same for both', () => {
    expect(scripts.start).toMatch(/^node .* scripts\/start\.mjs$/);
    expect(scripts.bench).toMatch(/^node .* bench\/run\.ts$/);
    expect(nodeOptions(scripts.bench)).toEqual(nodeOptions(scripts.start));
  });

  it("give the young generation semi-spaces past V8's default of 16 MB", () => {
    // Node 20's V8: two semi-spaces of 16 MB at most, 32 MB in all; the flag doubles them.
    expect(newSpaceMb([])).toBe(32);
    expect(newSpaceMb(nodeOptions(scripts.start))).toBe(64);
  });
});
