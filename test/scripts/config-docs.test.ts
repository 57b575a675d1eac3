import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import { CONFIG_DOC, documentedVariables, renderConfigurationDoc } from '../../scripts/config-docs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Source files of what runs (the service, its scripts, benchmarks, Workers), not the tests. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'public' ? [] : sourceFiles(path);
    return /\.(ts|mjs|js|sh)$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from the configuration schema today', () => {
    // On failure: run `npm run docs:config` and commit docs/configuration.md with the schema change.
    expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('lists every variable of the schema, each with a description, a default or "unset", and what it accepts', () => {
    const keys = Object.keys(configSchema.shape);
    const documented = documentedVariables();
    expect(documented.map((v) => v.name)).toEqual(keys);
    expect(documented.filter((v) => v.description.length < 10).map((v) => v.name)).toEqual([]);
    const rows = readFileSync(CONFIG_DOC, 'utf8').split('\n').filter((line) => line.startsWith('| `'));
    expect(rows.map((row) => /^\| `(\w+)`/.exec(row)![1])).toEqual(keys);
    expect(rows.find((row) => row.startsWith('| `PORT`'))).toMatch(/^\| `PORT` \| `8080` \| integer 0–65535 \| /);
    expect(rows.find((row) => row.startsWith('| `BIMS_LOG_FORMAT`'))).toMatch(/^\| `BIMS_LOG_FORMAT` \| `auto` \| `auto`, `json`, `pretty` \| /);
    expect(rows.find((row) => row.startsWith('| `DATABASE_URL`'))).toMatch(/^\| `DATABASE_URL` \| unset \| `postgres:\/\/` URL \| /);
  });

  it('misses no variable read anywhere: every BIMS_* name and process.env read in src/, scripts/, bench/, workers/ is in the schema', () => {
    const keys = new Set(Object.keys(configSchema.shape));
    // The operating system's and tools' own variables (CC: the C compiler bench/matcher.ts builds with), not settings of BIMS.
    const notOurs = new Set(['PATH', 'HOME', 'CI', 'NO_COLOR', 'TERM', 'CC']);
    const missing = new Map<string, string>();
    const files = [...['src', 'scripts', 'bench', 'workers'].flatMap((dir) => sourceFiles(join(root, dir))), join(root, 'wrangler.toml'), join(root, 'deno.json')];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const names = [...text.matchAll(/\bBIMS_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0])
        .concat([...text.matchAll(/process\.env\.([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]));
      for (const name of names) if (!keys.has(name) && !notOurs.has(name)) missing.set(name, relative(root, file));
    }
    expect(Object.fromEntries(missing)).toEqual({});
  });
});
