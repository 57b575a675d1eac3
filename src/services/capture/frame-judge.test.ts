import { describe, expect, it } from 'vitest';
import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import type { FaceGates } from '../biometrics/face-samples.js';
import { FrameJudge } from './frame-judge.js';

const gates: FaceGates = {
  allowMultiple: false,
  minQuality: 50,
  requireLiveness: true,
  livenessThreshold: 50,
  checkIcao: false,
};

function face(over: Partial<FaceAnalysis> = {}): FaceAnalysis {
  return {
    rectangle: { x: 200, y: 100, width: 200, height: 240 },
    detectionScore: 0.99,
    landmarks: [],
    interEyeDistance: 80,
    yaw: 0,
    pitch: 0,
    roll: 0,
    eyesOpen: { left: 90, right: 90 },
    livenessScore: 90,
    quality: 80,
    sharpness: 80,
    brightness: 50,
    estimatedAge: Number.NaN,
    gender: 'UNKNOWN',
    genderScore: Number.NaN,
    embedding: new Float32Array(512),
    icaoWarnings: [],
    ...over,
  } as FaceAnalysis;
}
const frame = (...faces: FaceAnalysis[]) =>
  ({ width: 640, height: 480, format: 'JPEG', orientation: 1, faces }) as unknown as ImageAnalysis;
const bytes = (n: number) => new Uint8Array([n]);

describe('frame judge', () => {
  it('needs livenessFrames tracked frames with enough mean liveness, and keeps the best by quality', () => {
    const judge = new FrameJudge(gates, { selectFrames: 2, livenessFrames: 3 });
    expect(judge.judge(frame(face({ quality: 70 })), bytes(1)).guidance).toBe('FACE_FOUND');
    expect(judge.judge(frame(face({ quality: 95 })), bytes(2))).toMatchObject({
      guidance: 'FACE_FOUND',
      accepted: 2,
      needed: 3,
    });
    expect(judge.ready()).toBe(false);
    judge.judge(frame(face({ quality: 60 })), bytes(3));
    expect(judge.ready()).toBe(true);
    expect(judge.selected().map((s) => s.bytes[0])).toEqual([2, 1]);
  });

  it('gives guidance for what is wrong, and starts over when the face is lost or another appears', () => {
    const judge = new FrameJudge(gates, { selectFrames: 1, livenessFrames: 2 });
    expect(judge.judge(frame(), bytes(0)).guidance).toBe('NO_FACE');
    expect(
      judge.judge(frame(face(), face({ rectangle: { x: 0, y: 0, width: 50, height: 60 } })), bytes(0)).guidance,
    ).toBe('MULTIPLE_FACES');
    expect(judge.judge(frame(face({ quality: 30, interEyeDistance: 20 })), bytes(0)).guidance).toBe('MOVE_CLOSER');
    expect(judge.judge(frame(face({ quality: 30, yaw: 35 })), bytes(0)).guidance).toBe('LOOK_STRAIGHT');
    expect(judge.judge(frame(face({ quality: 30 })), bytes(0)).guidance).toBe('LOW_QUALITY');
    judge.judge(frame(face()), bytes(1));
    // A face elsewhere in the picture is another track: the first one's frame no longer counts.
    expect(
      judge.judge(frame(face({ rectangle: { x: 420, y: 200, width: 200, height: 240 } })), bytes(2)),
    ).toMatchObject({ accepted: 1 });
    expect(judge.ready()).toBe(false);
  });

  it('holds while the mean liveness over the window is low; a photo-like track never gets ready', () => {
    const judge = new FrameJudge(gates, { selectFrames: 1, livenessFrames: 3 });
    for (let i = 0; i < 10; i++) judge.judge(frame(face({ livenessScore: 20 })), bytes(i));
    expect(judge.ready()).toBe(false);
    expect(judge.judge(frame(face({ livenessScore: 20 })), bytes(11)).guidance).toBe('HOLD_STILL');
    // Live frames push the low ones out of the window.
    for (let i = 0; i < 3; i++) judge.judge(frame(face({ livenessScore: 95 })), bytes(20 + i));
    expect(judge.ready()).toBe(true);
    expect(judge.meanLiveness()).toBeGreaterThanOrEqual(50);
  });
});
