import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import { gateImage, type FaceGates } from '../biometrics/face-samples.js';
import { MAX_POSE_DEGREES, MIN_EYE_DISTANCE, qualityRefusal, type RefusalReason } from './refusal-reasons.js';

/** What the client is told while it streams; each guidance is sent when it changes, not for every frame. */
export type CaptureGuidance =
  | 'NO_FACE'
  | 'MULTIPLE_FACES'
  | 'MOVE_CLOSER'
  | 'LOOK_STRAIGHT'
  | 'LOW_QUALITY'
  | 'HOLD_STILL'
  | 'FACE_FOUND';

interface FrameVerdict {
  guidance: CaptureGuidance;
  /** Frames accepted on the current track so far, and how many the session needs. */
  accepted: number;
  needed: number;
  detail?: string;
  /** Why the frame was refused (refusal-reasons.ts); absent when it was accepted. */
  reason?: RefusalReason;
}

/** An accepted frame: its bytes and analysis (what the operation takes of it, no model run again) and its face. */
interface Accepted {
  bytes: Uint8Array;
  analysis: ImageAnalysis;
  face: FaceAnalysis;
}

/** A face whose box overlaps the tracked one by less than this (IoU) is another face: the track starts again. */
export const MIN_TRACK_OVERLAP = 0.3;

/** Overlap of two face boxes: intersection over union. */
export const iou = (a: FaceAnalysis['rectangle'], b: FaceAnalysis['rectangle']) => {
  const x = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const y = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = x * y;
  return inter / (a.width * a.height + b.width * b.height - inter);
};

/**
 * The capture logic over a stream of analysed frames: one face tracked from frame to frame (a jump to
 * another face starts over, so frames of two people never make one sample), per-frame quality gates with
 * guidance on what to fix, passive liveness averaged over the tracked frames, and the best frames kept.
 *
 * `ready()` once the track holds enough accepted frames (`selectFrames`, and `livenessFrames` when a liveness
 * gate applies) and, when it applies, their mean liveness reaches the threshold.
 */
export class FrameJudge {
  private track: Accepted[] = [];
  private last: FaceAnalysis | null = null;

  constructor(
    private readonly gates: FaceGates,
    private readonly counts: { selectFrames: number; livenessFrames: number },
  ) {}

  get needed(): number {
    return Math.max(this.counts.selectFrames, this.gates.requireLiveness ? this.counts.livenessFrames : 1);
  }

  judge(analysis: ImageAnalysis, bytes: Uint8Array): FrameVerdict {
    const verdict = (guidance: CaptureGuidance, reason?: RefusalReason, detail?: string): FrameVerdict => ({
      guidance,
      accepted: this.track.length,
      needed: this.needed,
      ...(detail ? { detail } : {}),
      ...(reason ? { reason } : {}),
    });
    // Liveness is judged over the track below, not frame by frame. A session that does not require it still has
    // it measured when `checkIcao` holds (its operation refuses the LIVENESS warning: `frameMeasures`); that
    // warning is the operation's to refuse on the frames chosen, as when the frames were analysed without it.
    const judged = this.gates.requireLiveness ? analysis : withoutLivenessWarning(analysis);
    const gate = gateImage(judged, { ...this.gates, requireLiveness: false });
    if ('status' in gate) {
      if (gate.status === 'NO_FACE_DETECTED') {
        this.restart();
        return verdict('NO_FACE', 'NO_FACE');
      }
      if (gate.status === 'MULTIPLE_FACES') {
        this.restart();
        return verdict('MULTIPLE_FACES', 'TWO_FACES', gate.reason);
      }
      const face = largest(analysis)!;
      const reason = qualityRefusal(face);
      if (face.interEyeDistance < MIN_EYE_DISTANCE) return verdict('MOVE_CLOSER', reason, gate.reason);
      if (Math.abs(face.yaw) > MAX_POSE_DEGREES || Math.abs(face.pitch) > MAX_POSE_DEGREES)
        return verdict('LOOK_STRAIGHT', reason, gate.reason);
      return verdict('LOW_QUALITY', reason, gate.reason);
    }
    // The face as measured (its ICAO warnings whole): the one the operation's gates pick from the analysis.
    const face = largest(analysis)!;
    if (this.last && iou(this.last.rectangle, face.rectangle) < MIN_TRACK_OVERLAP) this.restart();
    this.last = face;
    this.track.push({ bytes, analysis, face });
    if (
      this.gates.requireLiveness &&
      this.track.length >= this.needed &&
      !(this.meanLiveness() >= this.gates.livenessThreshold)
    ) {
      // Keep the newest frames only: liveness is judged over a sliding window of the track.
      this.track = this.track.slice(this.track.length - (this.needed - 1));
      return verdict(
        'HOLD_STILL',
        'NO_LIVE_PERSON',
        `mean liveness ${this.meanLiveness().toFixed(0)} is below ${this.gates.livenessThreshold}`,
      );
    }
    return verdict('FACE_FOUND');
  }

  ready(): boolean {
    if (this.track.length < this.needed) return false;
    return !this.gates.requireLiveness || this.meanLiveness() >= this.gates.livenessThreshold;
  }

  /** Mean passive liveness of the last `livenessFrames` tracked frames. */
  meanLiveness(): number {
    const window = this.track.slice(-this.counts.livenessFrames);
    return window.reduce((sum, a) => sum + a.face.livenessScore, 0) / Math.max(1, window.length);
  }

  /**
   * The best frames of the track by quality, best first. When liveness is required, frames whose own score is
   * below the threshold come last: the operation judges each selected frame again.
   */
  selected(): Accepted[] {
    const live = (a: Accepted) => !this.gates.requireLiveness || a.face.livenessScore >= this.gates.livenessThreshold;
    return [...this.track]
      .sort((a, b) => Number(live(b)) - Number(live(a)) || b.face.quality - a.face.quality)
      .slice(0, this.counts.selectFrames);
  }

  /** The faces of the track's accepted frames, oldest first (active liveness follows the face from there). */
  get trackFaces(): FaceAnalysis[] {
    return this.track.map((a) => a.face);
  }

  /** Forget the track: its frames no longer make the operation (another face, or the face lost). */
  restart(): void {
    this.track = [];
    this.last = null;
  }
}

/** The analysis with no face's LIVENESS warning: what a frame is judged on before the track judges liveness. */
function withoutLivenessWarning(analysis: ImageAnalysis): ImageAnalysis {
  if (!analysis.faces.some((f) => f.icaoWarnings.includes('LIVENESS'))) return analysis;
  const faces = analysis.faces.map((f) => ({ ...f, icaoWarnings: f.icaoWarnings.filter((w) => w !== 'LIVENESS') }));
  return { ...analysis, faces };
}

function largest(analysis: ImageAnalysis): FaceAnalysis | undefined {
  return analysis.faces.reduce<FaceAnalysis | undefined>(
    (best, f) =>
      !best || f.rectangle.width * f.rectangle.height > best.rectangle.width * best.rectangle.height ? f : best,
    undefined,
  );
}
