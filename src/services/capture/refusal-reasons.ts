import type { FaceAnalysis } from '../../biometrics/face/analysis.js';

/**
 * Why a capture refuses what the camera shows, as a stable code (for programs) and words a person acts on (for
 * the page). Guidance events carry the reason of the frame they judged; a capture whose frames failed for the
 * same reason for its whole patience window (BIMS_CAPTURE_PATIENCE_SECONDS) ends with it (docs/gateway-capture.md).
 */
export const REFUSALS = {
  NO_FACE: 'No face is in view: put your face in the middle of the picture.',
  TWO_FACES: 'More than one face is in view: only the person being captured may be in the picture.',
  TOO_FAR: 'Your face is too small in the picture: come closer to the camera.',
  TURNED_AWAY: 'Your head is turned away: look straight at the camera.',
  TOO_DARK: 'Your face is too dark: turn towards a light, or put a light in front of you.',
  EYES_CLOSED: 'Your eyes look closed: open them and look at the camera.',
  LOW_QUALITY: 'The picture of your face is not clear enough: keep still in good, even light.',
  NO_LIVE_PERSON:
    'No live person was seen: a photo or a screen held to the camera is not accepted; show your own face.',
  WRONG_MOVE: 'That was not the move asked for: do exactly what the instruction says, slowly.',
} as const;

export type RefusalReason = keyof typeof REFUSALS;

/** The reason code and its words, as events and outcomes carry them. */
export const refusal = (reason: RefusalReason) => ({ reason, text: REFUSALS[reason] });

/** Below this inter-eye distance (pixels) the face is too small to be good: the subject should come closer. */
export const MIN_EYE_DISTANCE = 40;
/** Beyond this yaw or pitch (degrees) the subject is asked to look straight at the camera. */
export const MAX_POSE_DEGREES = 20;

/**
 * Why a face failed the quality gate, from what was measured on it: the first of too far, turned away, too dark,
 * eyes closed that applies (the order a person can fix them in), else unclear (blur, or several small causes).
 * The ICAO-style warnings are measured on every face, whether or not the session checks them.
 */
export function qualityRefusal(face: FaceAnalysis): RefusalReason {
  const warned = new Set<string>(face.icaoWarnings);
  if (face.interEyeDistance < MIN_EYE_DISTANCE || warned.has('TOO_FAR')) return 'TOO_FAR';
  if (Math.abs(face.yaw) > MAX_POSE_DEGREES || Math.abs(face.pitch) > MAX_POSE_DEGREES) return 'TURNED_AWAY';
  if (['YAW_LEFT', 'YAW_RIGHT', 'PITCH_UP', 'PITCH_DOWN'].some((w) => warned.has(w))) return 'TURNED_AWAY';
  if (warned.has('UNDEREXPOSED')) return 'TOO_DARK';
  if (warned.has('EYES_CLOSED')) return 'EYES_CLOSED';
  return 'LOW_QUALITY';
}

/** The outcome status a capture refused for `reason` ends with: the status the JSON path gives such a photo. */
export const refusalStatus = (reason: RefusalReason) =>
  reason === 'NO_LIVE_PERSON' || reason === 'WRONG_MOVE' ? 'LIVENESS_CHECK_FAILED' : 'QUALITY_CHECK_FAILED';

/**
 * The capture's patience with one refusal: `observe(reason, now)` for every judged frame (null: the frame
 * was accepted, or there was nothing to judge); true once frames have failed for that same reason without
 * a break for `patienceMs`. A frame accepted, or failing for another reason, starts the window over.
 */
export class RefusalPatience {
  private current: { reason: RefusalReason; since: number } | null = null;

  constructor(private readonly patienceMs: number) {}

  observe(reason: RefusalReason | null, now: number): boolean {
    if (reason === null) {
      this.current = null;
      return false;
    }
    if (this.current?.reason !== reason) this.current = { reason, since: now };
    return this.patienceMs > 0 && now - this.current.since >= this.patienceMs;
  }

  get reason(): RefusalReason | null {
    return this.current?.reason ?? null;
  }
}

/** Why an active liveness instruction did not count (active-liveness.ts), in words. */
const CHALLENGE_TEXTS: Record<string, string> = {
  WRONG_MOVE: REFUSALS.WRONG_MOVE,
  TIMEOUT: 'The move was not seen in time: do it as soon as it is asked, slowly.',
  FACE_LOST: 'Your face left the picture: keep it in view while you move.',
  FACE_CHANGED: 'Another face took the place of yours: only you may be in the picture.',
};

/** The words for a failed instruction's reason (its code stays the event's `reason`). */
export const challengeText = (reason: string): string => CHALLENGE_TEXTS[reason] ?? 'The move asked for was not seen.';
