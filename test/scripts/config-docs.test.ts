import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/config.js';
import {
  CONFIG_DOC,
  TEST_SETTINGS_SOURCE,
  documentedVariables,
  renderConfigurationDoc,
} from '../../scripts/config-docs.js';
import { testSettingsSchema } from '../support/test-settings.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Source files under `dir` (test files only when asked: the service's own folders hold unit tests too). */
function sourceFiles(dir: string, withTests = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return ['node_modules', 'public', 'fixtures'].includes(name) ? [] : sourceFiles(path, withTests);
    return /\.(ts|mjs|js|sh)$/.test(name) && (withTests || !/\.test\.ts$/.test(name)) ? [path] : [];
  });
}

describe('docs/configuration.md', () => {
  it('is what `npm run docs:config` writes from the configuration schema today', () => {
    // On failure: run `npm run docs:config` and commit docs/configuration.md with the schema change.
    expect(readFileSync(CONFIG_DOC, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('lists every variable of the schema, each with a description, a default or "unset", and what it accepts', () => {
    const keys = [...Object.keys(configSchema.shape), ...Object.keys(testSettingsSchema.shape)];
    const documented = [
      ...documentedVariables(),
      ...documentedVariables(readFileSync(TEST_SETTINGS_SOURCE, 'utf8'), 'testSettingsSchema'),
    ];
    expect(documented.map((v) => v.name)).toEqual(keys);
    expect(documented.filter((v) => v.description.length < 10).map((v) => v.name)).toEqual([]);
    const rows = readFileSync(CONFIG_DOC, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    expect(rows.map((row) => /^\| `(\w+)`/.exec(row)![1])).toEqual(keys);
    expect(rows.find((row) => row.startsWith('| `PORT`'))).toMatch(/^\| `PORT` \| `8080` \| integer 0–65535 \| /);
    expect(rows.find((row) => row.startsWith('| `BIMS_LOG_FORMAT`'))).toMatch(
      /^\| `BIMS_LOG_FORMAT` \| `auto` \| `auto`, `json`, `pretty` \| /,
    );
    expect(rows.find((row) => row.startsWith('| `DATABASE_URL`'))).toMatch(
      /^\| `DATABASE_URL` \| unset \| `postgres:\/\/` URL \| /,
    );
  });

  it('misses no variable read anywhere: every BIMS_* name and process.env read in src/, scripts/, bench/, workers/ (and BIMS_* in test/) is in the schema', () => {
    const keys = new Set([...Object.keys(configSchema.shape), ...Object.keys(testSettingsSchema.shape)]);
    // The operating system's and tools' own variables (CC: the C compiler bench/matcher.ts builds with), not settings of BIMS.
    // XDG_CACHE_HOME: where the machine's download cache lives (scripts/download-cache.mjs, as npm's cache would).
    // BIMS_CHROMIUM_NETNS: passed from test/support/browser.ts to its own shell wrapper, not set by anyone.
    const notOurs = new Set(['PATH', 'HOME', 'CI', 'NO_COLOR', 'TERM', 'CC', 'XDG_CACHE_HOME', 'BIMS_CHROMIUM_NETNS']);
    const missing = new Map<string, string>();
    const files = [
      ...['src', 'scripts', 'bench', 'workers'].flatMap((dir) => sourceFiles(join(root, dir))),
      join(root, 'wrangler.toml'),
      join(root, 'deno.json'),
    ];
    const check = (file: string, names: string[]) => {
      for (const name of names) if (!keys.has(name) && !notOurs.has(name)) missing.set(name, relative(root, file));
    };
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      check(
        file,
        [...text.matchAll(/\bBIMS_[A-Z0-9_]*[A-Z0-9]\b/g)]
          .map((m) => m[0])
          .concat([...text.matchAll(/process\.env\.([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1])),
      );
    }
    // The suite's own switches (BIMS_TEST_DIALECTS, BIMS_FUZZ_SEED ...) are documented too, from their own
    // schema (test/support/test-settings.ts); the service's never names them. A test sets many
    // standard variables for the processes it starts, so only BIMS_* names are looked for there.
    for (const file of sourceFiles(join(root, 'test'), true))
      check(
        file,
        [...readFileSync(file, 'utf8').matchAll(/\bBIMS_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]),
      );
    expect(Object.fromEntries(missing)).toEqual({});
  });

  it("keeps the test suite's switches out of the service's schema, and refuses a bad one naming it", async () => {
    for (const key of Object.keys(testSettingsSchema.shape)) expect(Object.keys(configSchema.shape)).not.toContain(key);
    const { testSettings } = await import('../support/test-settings.js');
    expect(testSettings({ BIMS_TEST_MEDIA_NET: 'host', BIMS_FUZZ_SEED: '42', BIMS_TEST_DIALECTS: '' })).toEqual({
      BIMS_TEST_MEDIA_NET: 'host',
      BIMS_FUZZ_SEED: 42,
    });
    expect(() => testSettings({ BIMS_TEST_MEDIA_NET: 'bridge' })).toThrow(/BIMS_TEST_MEDIA_NET/);
  });
});
