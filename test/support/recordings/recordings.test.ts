// The parts of the recorder (../recorded-extractor.ts) that need no model: what a recording is filed under.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipelineFingerprint } from './pipeline-fingerprint.js';
import { canonicalJson, recordingKey } from './recording-store.js';

describe('recording keys', () => {
  it('are equal for equal options in any key order, and differ by kind, options and bytes', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const options = { checks: true, settings: { b: 1, a: [2, { d: 1, c: 2 }] } };
    const reordered = { settings: { a: [2, { c: 2, d: 1 }], b: 1 }, checks: true };
    expect(canonicalJson(reordered)).toBe(canonicalJson(options));
    expect(recordingKey('face', reordered, bytes)).toBe(recordingKey('face', options, bytes));
    expect(recordingKey('voice', options, bytes)).not.toBe(recordingKey('face', options, bytes));
    expect(recordingKey('face', { ...options, checks: false }, bytes)).not.toBe(recordingKey('face', options, bytes));
    expect(recordingKey('face', options, new Uint8Array([1, 2, 4]))).not.toBe(recordingKey('face', options, bytes));
    // Array order is meaning (landmarks), so it is kept.
    expect(canonicalJson({ l: [1, 2] })).not.toBe(canonicalJson({ l: [2, 1] }));
  });
});

describe('pipeline fingerprint', () => {
  it('changes with any source the pipeline imports, its packages and its manifests, and not with other files', () => {
    const root = mkdtempSync(join(tmpdir(), 'bims-fingerprint-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(join(root, path, '..'), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      write('entry.ts', "import { f } from './lib/f.js';\nimport x from 'some-package/sub';\n");
      write('lib/f.ts', "export const f = () => import('./g.js');\n");
      write('lib/g.ts', 'export const g = 1;\n');
      write('lib/unrelated.ts', 'export const u = 1;\n');
      write('node_modules/some-package/package.json', '{"version":"1.0.0"}');
      write('wasm/models/manifest.json', '{"templateVersion":"t1"}');
      const fingerprint = () => pipelineFingerprint(root, ['entry.ts']);
      const first = fingerprint();
      expect(fingerprint()).toBe(first);

      write('lib/unrelated.ts', 'export const u = 2;\n');
      expect(fingerprint()).toBe(first);
      write('lib/g.ts', 'export const g = 2;\n'); // reached by a dynamic import
      const second = fingerprint();
      expect(second).not.toBe(first);
      write('node_modules/some-package/package.json', '{"version":"1.0.1"}');
      const third = fingerprint();
      expect(third).not.toBe(second);
      write('wasm/models/manifest.json', '{"templateVersion":"t2"}');
      expect(fingerprint()).not.toBe(third);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
