import { describe, expect, it } from 'vitest';
import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import { jsonFieldNames, sampleFields } from '../../schemas/field-names.js';
import { acceptFaces, type FaceGates } from './face-samples.js';

/** One frontal face of good quality, embedded or not (`embedding: false` leaves the embedding empty). */
function analysis(embedding: Float32Array): ImageAnalysis {
  const face: FaceAnalysis = {
    rectangle: { x: 10, y: 10, width: 100, height: 120 },
    detectionScore: 0.99,
    landmarks: [],
    interEyeDistance: 60,
    yaw: 0,
    pitch: 0,
    roll: 0,
    eyesOpen: { left: 100, right: 100 },
    livenessScore: 90,
    quality: 90,
    sharpness: 60,
    brightness: 55,
    estimatedAge: NaN,
    gender: 'UNKNOWN',
    genderScore: NaN,
    embedding,
    embeddingNorm: embedding.length ? 20 : NaN,
    icaoWarnings: [],
  };
  const timings = { decode: 0, detect: 0, landmarks: 0, embed: 0, checks: 0, total: 0 };
  return { width: 200, height: 200, format: 'jpeg', orientation: 1, faces: [face], timings };
}

const gates: FaceGates = {
  allowMultiple: false,
  minQuality: 40,
  requireLiveness: true,
  livenessThreshold: 50,
  checkIcao: false,
};
const fields = sampleFields(jsonFieldNames, 'faces', 'image');

describe('acceptFaces', () => {
  it('makes the template of an embedded face', () => {
    const unit = new Float32Array(512).fill(1 / Math.sqrt(512));
    const { accepted } = acceptFaces([{ bytes: new Uint8Array(1), analysis: analysis(unit) }], gates, 'v', fields);
    expect(accepted).toHaveLength(1);
    expect(accepted![0]!.template.length).toBeGreaterThan(512);
  });

  it('refuses loudly to make a template of a face analysed without its embedding (a capture frame not yet embedded)', () => {
    const image = { bytes: new Uint8Array(1), analysis: analysis(new Float32Array(0)) };
    expect(() => acceptFaces([image], gates, 'v', fields)).toThrow(
      /body\.faces\.0.* was analysed without its embedding/,
    );
  });
});
