import { describe, expect, it } from 'vitest';
import type { FaceAnalysis } from '../../biometrics/face/analysis.js';
import { intersectionOverUnion, pickStoredFace } from './pick-face.js';

const face = (x: number, y: number, size: number) =>
  ({ rectangle: { x, y, width: size, height: size } }) as FaceAnalysis;

describe('pickStoredFace', () => {
  const small = face(10, 10, 40);
  const large = face(200, 50, 120);

  it('picks the face overlapping the stored box, even when another is larger', () => {
    expect(pickStoredFace([large, small], { x: 12, y: 8, width: 38, height: 42 })).toBe(small);
  });

  it('falls back to the largest face without a stored box, or when nothing overlaps it', () => {
    expect(pickStoredFace([small, large], null)).toBe(large);
    expect(pickStoredFace([small, large], { x: 0, y: 0, width: 0, height: 0 })).toBe(large);
    expect(pickStoredFace([small, large], { x: 600, y: 600, width: 50, height: 50 })).toBe(large);
  });

  it('finds nothing in an image without faces', () => {
    expect(pickStoredFace([], { x: 0, y: 0, width: 10, height: 10 })).toBeUndefined();
  });

  it('measures overlap from 0 (disjoint) to 1 (identical)', () => {
    const box = { x: 0, y: 0, width: 10, height: 10 };
    expect(intersectionOverUnion(box, box)).toBe(1);
    expect(intersectionOverUnion(box, { x: 10, y: 0, width: 10, height: 10 })).toBe(0);
    expect(intersectionOverUnion(box, { x: 5, y: 0, width: 10, height: 10 })).toBeCloseTo(50 / 150);
  });
});
