import type { FaceAnalysis, Rectangle } from '../../biometrics/face/analysis.js';

/**
 * Which face of a stored original image a sample stands for. A new detector may find a second (background)
 * face that the old one missed, or order faces differently, so re-extraction picks the face whose box
 * overlaps the sample's stored box most; when the stored box is empty (none was recorded) or overlaps
 * nothing, the largest face, which is what enrolment would have picked.
 */
export function pickStoredFace(faces: readonly FaceAnalysis[], stored: Rectangle | null): FaceAnalysis | undefined {
  if (faces.length === 0) return undefined;
  let best = largest(faces);
  if (stored && stored.width > 0 && stored.height > 0) {
    let bestOverlap = 0;
    for (const face of faces) {
      const overlap = intersectionOverUnion(face.rectangle, stored);
      if (overlap > bestOverlap) {
        bestOverlap = overlap;
        best = face;
      }
    }
  }
  return best;
}

const area = (r: Rectangle) => Math.max(0, r.width) * Math.max(0, r.height);

function largest(faces: readonly FaceAnalysis[]): FaceAnalysis {
  return faces.reduce((a, b) => (area(b.rectangle) > area(a.rectangle) ? b : a));
}

/** Overlap of two boxes, 0 (disjoint) .. 1 (identical). */
export function intersectionOverUnion(a: Rectangle, b: Rectangle): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (area(a) + area(b) - inter);
}
