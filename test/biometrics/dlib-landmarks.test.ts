// Detector and landmarks against dlib's annotated group photos (examples/faces, 43 annotated faces).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { type ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import { getRunner, photo, PHOTOS } from './helpers.js';

interface Box {
  file: string;
  top: number;
  left: number;
  width: number;
  height: number;
  parts: [number, number][];
}

function annotations(): Box[] {
  const out: Box[] = [];
  for (const xml of ['training_with_face_landmarks.xml', 'testing_with_face_landmarks.xml']) {
    const text = readFileSync(`${PHOTOS}dlib/${xml}`, 'utf8');
    for (const img of text.matchAll(/<image file='([^']+)'[^>]*>([\s\S]*?)<\/image>/g)) {
      for (const b of img[2].matchAll(
        /<box top='(\d+)' left='(\d+)' width='(\d+)' height='(\d+)'>([\s\S]*?)<\/box>/g,
      )) {
        const parts = [...b[5].matchAll(/<part name='(\d+)' x='(-?\d+)' y='(-?\d+)'\/>/g)].map(
          (p) => [Number(p[2]), Number(p[3])] as [number, number],
        );
        out.push({ file: img[1], top: +b[1], left: +b[2], width: +b[3], height: +b[4], parts });
      }
    }
  }
  return out;
}

describe('dlib annotated faces', () => {
  const boxes = annotations();
  const results = new Map<string, ImageAnalysis>();

  beforeAll(async () => {
    const runner = await getRunner();
    for (const f of new Set(boxes.map((b) => b.file)))
      results.set(f, await analyseImage(runner, photo(`dlib/${f}`), { checks: false }));
  });

  it('has 43 annotated faces', () => {
    expect(boxes.length).toBe(43);
  });

  it('finds every annotated face, with 68 landmarks near the annotation', () => {
    const errors: number[] = [];
    for (const b of boxes) {
      const faces = results.get(b.file)!.faces;
      const cx = b.left + b.width / 2,
        cy = b.top + b.height / 2;
      // The detection whose centre is nearest the annotated box centre, within half a box.
      const f = faces
        .map((x) => ({
          x,
          d: Math.hypot(x.rectangle.x + x.rectangle.width / 2 - cx, x.rectangle.y + x.rectangle.height / 2 - cy),
        }))
        .sort((a, c) => a.d - c.d)[0];
      expect(f, `${b.file} face at ${b.left},${b.top}`).toBeDefined();
      expect(f.d, `${b.file} face at ${b.left},${b.top}`).toBeLessThan(b.width * 0.5);
      // Mean landmark error normalised by the annotated inter-ocular distance (outer eye corners 36/45).
      const iod = Math.hypot(b.parts[45][0] - b.parts[36][0], b.parts[45][1] - b.parts[36][1]);
      const lm = f.x.landmarks;
      const err = b.parts.reduce((a, p, i) => a + Math.hypot(lm[i][0] - p[0], lm[i][1] - p[1]), 0) / 68 / iod;
      errors.push(err);
      expect(err, `${b.file} face at ${b.left},${b.top}`).toBeLessThan(0.2);
    }
    const mean = errors.reduce((a, b) => a + b, 0) / errors.length;
    console.log(
      `dlib: ${errors.length} faces, mean normalised landmark error ${mean.toFixed(3)}, max ${Math.max(...errors).toFixed(3)}`,
    );
    expect(mean).toBeLessThan(0.1);
  });

  it('finds no face in the dogs photo', () => {
    // dogs.jpg is not annotated and shows only dogs.
    return getRunner().then(async (r) => {
      const a = await analyseImage(r, photo('dlib/dogs.jpg'), { checks: false });
      expect(a.faces.length).toBe(0);
    });
  });
});
