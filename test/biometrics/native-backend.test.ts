// The native extraction backend (BIMS_EXTRACTION_BACKEND=native, onnxruntime-node) against the portable wasm
// one, both in the extraction worker pool, on the labelled photos: templates must be interchangeable, i.e. the
// same faces found, the embeddings of one image within 0.999 cosine of each other, the same template version,
// and every pair scored and every probe ranked the same whichever backend made which template.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import { cosine, encodeTemplate, parseTemplate } from '../../src/biometrics/template.js';
import { createNodePoolExtractor } from '../../src/extraction/node-pool.js';
import { nativeBackendMissing, NATIVE_BACKEND_COMMAND } from '../../src/extraction/node-native-runner.js';
import { chooseFaceBackend } from '../../src/extraction/node-face-backend.js';
import { FACE_TEMPLATE_VERSION } from '../../src/extraction/ort-web-runner.js';
import { ensureTool } from '../../scripts/tool.mjs';
import { PHOTOS, photo } from './helpers.js';

type Pool = Awaited<ReturnType<typeof createNodePoolExtractor>>;

/** identity/file of every labelled photo. */
const LABELLED = readdirSync(`${PHOTOS}labelled`)
  .sort()
  .flatMap((who) =>
    readdirSync(`${PHOTOS}labelled/${who}`)
      .sort()
      .map((f) => `${who}/${f}`),
  );
const identity = (name: string) => name.split('/')[0];

let wasm: Pool;
let native: Pool;
const results = { wasm: new Map<string, ImageAnalysis>(), native: new Map<string, ImageAnalysis>() };

beforeAll(async () => {
  ensureTool('bench'); // what `npm run native-backend` installs
  // One worker each: the two pools run side by side on a 2-core machine.
  [wasm, native] = await Promise.all([
    createNodePoolExtractor({ size: 1, backend: 'wasm' }),
    createNodePoolExtractor({ size: 1, backend: 'native' }),
  ]);
  await Promise.all(
    LABELLED.map(async (name) => {
      const bytes = photo(`labelled/${name}`);
      const [a, b] = await Promise.all([wasm.analyseFace(bytes), native.analyseFace(bytes)]);
      results.wasm.set(name, a);
      results.native.set(name, b);
    }),
  );
}, 600_000);

afterAll(async () => {
  await Promise.all([wasm?.close(), native?.close()]);
});

/** The embedding of the one face of a labelled photo made by one backend. */
const embedding = (backend: 'wasm' | 'native', name: string) => results[backend].get(name)!.faces[0]!.embedding;

/** The identity of the nearest other photo: rank-1 of `name` as probe, with the gallery made by `gallery`. */
function nearest(probe: 'wasm' | 'native', gallery: 'wasm' | 'native', name: string): string {
  let best = { who: '', c: -2 };
  for (const other of LABELLED) {
    if (other === name) continue;
    const c = cosine(embedding(probe, name), embedding(gallery, other));
    if (c > best.c) best = { who: identity(other), c };
  }
  return best.who;
}

describe('native extraction backend (onnxruntime-node) against wasm, on the labelled photos', () => {
  it('finds the same single face in every photo, with embeddings of one image at cosine >= 0.999', () => {
    expect(LABELLED.length).toBeGreaterThanOrEqual(30);
    const worst = { name: '', c: 1 };
    for (const name of LABELLED) {
      expect(results.wasm.get(name)!.faces.length, name).toBe(1);
      expect(results.native.get(name)!.faces.length, name).toBe(1);
      const c = cosine(embedding('wasm', name), embedding('native', name));
      if (c < worst.c) Object.assign(worst, { name, c });
    }
    expect(worst.c, `least similar: ${worst.name}`).toBeGreaterThanOrEqual(0.999);
  });

  it('keeps the template version: both pools write the manifest template version, and templates of either parse alike', () => {
    expect(native.templateVersion).toBe(FACE_TEMPLATE_VERSION);
    expect(wasm.templateVersion).toBe(FACE_TEMPLATE_VERSION);
    const name = LABELLED[0]!;
    const of = (backend: 'wasm' | 'native') =>
      parseTemplate(
        encodeTemplate({
          templateVersion: native.templateVersion,
          records: [{ modality: 'face', embedding: embedding(backend, name) }],
        }),
      );
    expect(of('native').templateVersion).toBe(of('wasm').templateVersion);
  });

  it('scores every pair within 0.002 cosine whichever backend made either template', () => {
    let worst = 0;
    for (let i = 0; i < LABELLED.length; i++) {
      for (let j = i + 1; j < LABELLED.length; j++) {
        const a = LABELLED[i]!,
          b = LABELLED[j]!;
        const same = cosine(embedding('wasm', a), embedding('wasm', b));
        for (const c of [
          cosine(embedding('native', a), embedding('native', b)),
          cosine(embedding('wasm', a), embedding('native', b)),
        ]) {
          worst = Math.max(worst, Math.abs(c - same));
        }
      }
    }
    expect(worst).toBeLessThan(0.002);
  });

  it('ranks every probe the same (rank-1 identity) with wasm, native and mixed galleries', () => {
    for (const name of LABELLED) {
      const expected = nearest('wasm', 'wasm', name);
      expect(
        [nearest('native', 'native', name), nearest('native', 'wasm', name), nearest('wasm', 'native', name)],
        name,
      ).toEqual([expected, expected, expected]);
    }
  });

  it('runs the checks alike: detection, pose and quality of each face agree', () => {
    for (const name of LABELLED) {
      const a = results.wasm.get(name)!.faces[0]!,
        b = results.native.get(name)!.faces[0]!;
      expect(Math.abs(a.detectionScore - b.detectionScore), name).toBeLessThan(0.01);
      expect(Math.abs(a.rectangle.x - b.rectangle.x), name).toBeLessThan(2);
      expect(Math.abs(a.yaw - b.yaw), name).toBeLessThan(1);
      expect(Math.abs(a.quality - b.quality), name).toBeLessThanOrEqual(1);
      expect(b.icaoWarnings, name).toEqual(a.icaoWarnings);
    }
  });
});

describe('choosing the backend', () => {
  it('BIMS_EXTRACTION_BACKEND takes auto (the default), wasm or native, and names itself when wrong', () => {
    expect(loadConfig({}).BIMS_EXTRACTION_BACKEND).toBe('auto');
    expect(loadConfig({ BIMS_EXTRACTION_BACKEND: 'wasm' }).BIMS_EXTRACTION_BACKEND).toBe('wasm');
    expect(loadConfig({ BIMS_EXTRACTION_BACKEND: 'native' }).BIMS_EXTRACTION_BACKEND).toBe('native');
    expect(() => loadConfig({ BIMS_EXTRACTION_BACKEND: 'gpu' })).toThrow(/BIMS_EXTRACTION_BACKEND/);
  });

  it('without onnxruntime-node, start-up gets one line naming the install command; with it, none', () => {
    const empty = mkdtempSync(join(tmpdir(), 'bims-no-native-'));
    try {
      const line = nativeBackendMissing(empty, join(empty, 'bims.js'));
      // No tools/bench here (as in an application's install of the package): npm's command, beside bims.
      expect(line).toContain('npm install onnxruntime-node --ignore-scripts');
      writeFileSync(join(empty, 'package.json'), '{"private":true}'); // a checkout's tools/bench, not installed
      expect(nativeBackendMissing(empty, join(empty, 'bims.js'))).toContain(NATIVE_BACKEND_COMMAND);
      expect(line).not.toContain('\n');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    expect(nativeBackendMissing()).toBeUndefined();
  });

  it('auto takes the installed onnxruntime-node, loading the real binary on this host', () => {
    expect(chooseFaceBackend('auto')).toEqual({ backend: 'native', why: 'native backend (onnxruntime-node)' });
  });
});
