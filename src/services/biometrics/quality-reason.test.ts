import { describe, expect, it } from 'vitest';
import { qualityFactors, qualityScore } from '../../biometrics/checks.js';
import type { FaceAnalysis } from '../../biometrics/face/analysis.js';
import { gateImage, weakestQuality, type FaceGates } from './face-samples.js';

/** A face as the pipeline answers it without checks (pose and eyes NaN), with these measures. */
function face(m: Partial<FaceAnalysis>): FaceAnalysis {
  const f = {
    rectangle: { x: 10, y: 10, width: 100, height: 120 },
    detectionScore: 0.99,
    landmarks: [],
    interEyeDistance: 60,
    yaw: NaN,
    pitch: NaN,
    roll: NaN,
    eyesOpen: { left: NaN, right: NaN },
    livenessScore: NaN,
    quality: 0,
    sharpness: 60,
    brightness: 55,
    estimatedAge: NaN,
    gender: 'UNKNOWN' as const,
    genderScore: NaN,
    embedding: new Float32Array(512),
    embeddingNorm: 20,
    icaoWarnings: [],
    ...m,
  };
  const measured = { ...f, yaw: undefined, eyesOpen: undefined, imageWidth: 200, imageHeight: 200 };
  return { ...f, quality: qualityScore(measured) };
}

const gates: FaceGates = {
  allowMultiple: false,
  minQuality: 50,
  requireLiveness: false,
  livenessThreshold: 50,
  checkIcao: false,
};
const refusal = (f: FaceAnalysis) => {
  const g = gateImage(
    { width: 200, height: 200, format: 'png', orientation: 1, faces: [f], timings: {} as never },
    gates,
  );
  return 'reason' in g ? g : undefined;
};

describe('a quality refusal says why', () => {
  it('multiplies its factors into the quality score', () => {
    const m = {
      rectangle: { x: 0, y: 0, width: 1, height: 1 },
      imageWidth: 1,
      imageHeight: 1,
      interEyeDistance: 30,
      detectionScore: 0.9,
      sharpness: 20,
      brightness: 40,
    };
    const f = qualityFactors(m);
    expect(qualityScore(m)).toBe(Math.round(100 * f.size * f.pose * f.sharpness * f.exposure * f.detection * f.eyes));
  });

  it('names a small face with its eye distance, a blurred one with its sharpness', () => {
    // 9 px between the eyes: under the 10 px where genuine scores collapse (docs/extraction.md)
    const small = face({ interEyeDistance: 9 });
    expect(refusal(small)?.reason).toMatch(/below the minimum 50 .*: the face is too small \(9 px between the eyes\)$/);
    // 16 px still matches: the gate lets it through
    expect(refusal(face({ interEyeDistance: 16 }))).toBeUndefined();
    const blurred = face({ sharpness: 3 });
    expect(refusal(blurred)?.reason).toMatch(/: the face is too blurred \(sharpness 3 of 100\)$/);
    expect(weakestQuality(face({ brightness: 5 }))).toBe('the face is too dark (brightness 5 of 100)');
  });

  it('refuses no sharp, large, well-lit face', () => {
    expect(refusal(face({}))).toBeUndefined();
  });
});
