import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';

const round1 = (v: number) => Math.round(v * 10) / 10;
const mean = (points: [number, number][], idx: number[]) => {
  let x = 0;
  let y = 0;
  for (const i of idx) {
    x += points[i]![0];
    y += points[i]![1];
  }
  return { x: round1(x / idx.length), y: round1(y / idx.length) };
};

/** The five points alignment uses, from the 68 iBUG landmarks: eye centres, nose tip, mouth corners. */
function fivePoints(lm: [number, number][]) {
  if (lm.length < 68) return [];
  return [
    mean(lm, [36, 37, 38, 39, 40, 41]),
    mean(lm, [42, 43, 44, 45, 46, 47]),
    mean(lm, [30]),
    mean(lm, [48]),
    mean(lm, [54]),
  ];
}

/** One face as `ChecksFromImage.faces[]` shows it; measures the engine could not take are left out. */
function presentFaceChecks(face: FaceAnalysis) {
  const finite = (v: number) => Number.isFinite(v);
  return {
    rectangle: {
      x: Math.round(face.rectangle.x),
      y: Math.round(face.rectangle.y),
      width: Math.round(face.rectangle.width),
      height: Math.round(face.rectangle.height),
    },
    landmarks: fivePoints(face.landmarks),
    ...(finite(face.yaw) ? { yaw: round1(face.yaw), pitch: round1(face.pitch), roll: round1(face.roll) } : {}),
    ...(finite(face.eyesOpen.left)
      ? { eyesOpen: { left: round1(face.eyesOpen.left), right: round1(face.eyesOpen.right) } }
      : {}),
    ...(finite(face.livenessScore) ? { livenessScore: round1(face.livenessScore) } : {}),
    quality: round1(face.quality),
    sharpness: round1(face.sharpness),
    brightness: round1(face.brightness),
    ...(finite(face.estimatedAge) ? { estimatedAge: Math.round(face.estimatedAge) } : {}),
    ...(face.gender !== 'UNKNOWN' ? { gender: face.gender } : {}),
    icaoWarnings: face.icaoWarnings,
  };
}

/**
 * `ChecksFromImage` of one analysed image. `icaoWarnings` are those of the main (largest) face, and
 * `passed` says whether the gates accepted the image (decided by the caller, who knows the settings).
 */
export function presentChecks(analysis: ImageAnalysis, passed: boolean) {
  const main = analysis.faces.length
    ? analysis.faces.reduce((a, b) =>
        b.rectangle.width * b.rectangle.height > a.rectangle.width * a.rectangle.height ? b : a,
      )
    : null;
  return {
    faceCount: analysis.faces.length,
    faces: analysis.faces.map(presentFaceChecks),
    icaoWarnings: main?.icaoWarnings ?? [],
    passed,
  };
}
