import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import { iou, MIN_TRACK_OVERLAP } from './frame-judge.js';

/** An instruction of active liveness. LEFT and RIGHT are the subject's own, not the picture's. */
export type Challenge = 'TURN_LEFT' | 'TURN_RIGHT' | 'BLINK';

export interface ActiveLivenessOptions {
  /** How many instructions must be followed in a row on one tracked face. */
  challenges: number;
  /** The instructions picked from. */
  kinds: readonly Challenge[];
  /** Time to follow one instruction, from the moment it is given. */
  challengeMs: number;
  /** Instructions that may be failed before the whole check fails. */
  retries: number;
}

/** Why an instruction was not followed. */
type ChallengeFailure = 'TIMEOUT' | 'WRONG_MOVE' | 'FACE_LOST' | 'FACE_CHANGED';

/** What the client is told: an instruction to follow, then whether it was. */
export type ActiveEvent =
  | { type: 'INSTRUCTION'; instruction: Challenge; step: number; steps: number; withinMs: number }
  | { type: 'CHALLENGE_PASSED'; instruction: Challenge; step: number; steps: number }
  | {
      type: 'CHALLENGE_FAILED';
      instruction: Challenge;
      step: number;
      steps: number;
      reason: ChallengeFailure;
      retriesLeft: number;
    };

export type ActiveState = 'IDLE' | 'CHALLENGING' | 'PASSED' | 'FAILED';

/**
 * A head turn counts once the landmark yaw moved this far (degrees) from the subject's own frontal pose, in
 * the asked direction; a turn this far the other way is a wrong move. Measured on the Franck frames of the test
 * photos, a deliberate small turn moves it 15-25 degrees while a still face varies by 2-3 between frames.
 */
const TURN_DEGREES = 15;
/** Back within this many degrees of the frontal pose is "looking at the camera again". */
const FRONTAL_DEGREES = 8;
/** Both eyes' openness (0..100, the eye model's) below this is a closed-eyes frame of a blink ... */
export const EYES_CLOSED = 35;
/** ... and both above this, open eyes. (Open eyes score 90-100 on the test photos, closed ones 0-25.) */
const EYES_OPEN = 65;
/**
 * A frontal face during the instructions must be the person of the passive part's frames: the cosine of their
 * embeddings (L2-normalised) at least this. On the test photos one person's frames, turned or with closed eyes,
 * scored 0.70-0.98 against each other and other people -0.08-0.11. Without it, a photo held for the passive
 * part and dropped before a live face in the same place would have the live face follow the instructions and
 * the photo's frames make the operation.
 */
export const SAME_FACE_COSINE = 0.4;
/** A face missed by the detector for up to this many frames in a row (a turn, motion blur) keeps its track. */
const MAX_MISSED_FRAMES = 3;

/**
 * Head yaw from the 68 landmarks, in degrees: negative when the subject turned to their LEFT (the nose moves
 * towards the image's right in a camera image that is not mirrored, as streams are; browsers mirror only their
 * preview), the pose model's convention. It is the asymmetry of the nose tip (30) between the jaw ends (0, 16),
 * as a sine.
 *
 * Why not the pose model's yaw: on a photo and its horizontal mirror it must change sign, and on the test
 * photos it did not for small turns (franck_02683: -22.7 and -25.7 degrees), while this measure did on every
 * one. It is also blind to a flat photo tilted before the camera: tilting squeezes the picture horizontally,
 * which leaves the ratio unchanged, so a print cannot fake a turn.
 */
export function landmarkYaw(face: Pick<FaceAnalysis, 'landmarks'>): number {
  const lm = face.landmarks;
  const nose = lm[30]![0];
  const left = nose - lm[0]![0];
  const right = lm[16]![0] - nose;
  const asymmetry = (left - right) / Math.max(1e-6, left + right);
  return (-Math.asin(Math.max(-1, Math.min(1, asymmetry))) * 180) / Math.PI;
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
};
const eyesClosed = (f: FaceAnalysis) => Math.max(f.eyesOpen.left, f.eyesOpen.right) < EYES_CLOSED;
const eyesOpen = (f: FaceAnalysis) => Math.min(f.eyesOpen.left, f.eyesOpen.right) >= EYES_OPEN;

/**
 * A random instruction from `kinds`, never the previous one again when there is a choice. Web Crypto, so a
 * client cannot predict the sequence (and pre-record its answers) from earlier sessions.
 */
export function randomChallenge(kinds: readonly Challenge[], previous?: Challenge): Challenge {
  const choices = kinds.length > 1 ? kinds.filter((k) => k !== previous) : kinds;
  const [r] = crypto.getRandomValues(new Uint32Array(1));
  return choices[r! % choices.length]!;
}

/** Where the subject is in one instruction: first seen as they were (frontal, eyes open), then doing it, then back. */
type Phase = 'NEUTRAL' | 'ACTION' | 'RETURN';

/**
 * The active part of liveness over analysed frames (pure: the caller gives each frame's arrival time). Once the
 * passive part holds a tracked face, {@link begin} gives the first instruction; each later frame goes to
 * {@link observe}. An instruction counts only when, on frames that arrived after it was given and on the same
 * tracked face, the subject is first seen neutral, then does it, then comes back:
 * - TURN_LEFT / TURN_RIGHT: the landmark yaw moves {@link TURN_DEGREES} from the subject's frontal yaw (taken
 *   from the passive part's frame) in the asked direction, then returns within {@link FRONTAL_DEGREES};
 * - BLINK: both eyes closed on at least one frame, then open again.
 * Starting neutral means a turn made before the instruction (a guess, a replayed clip) does not count. Every
 * frontal frame must show the person of the passive part's frames ({@link SAME_FACE_COSINE}). A turn
 * the other way, or any turn during BLINK, is a wrong move; a wrong move, a timeout or the face lost fails the
 * instruction. A failed one is replaced by a new random one while `retries` last (a lost face first needs the
 * passive part again: the state goes back to IDLE), then the check has FAILED.
 */
export class ActiveLiveness {
  private current: { instruction: Challenge; step: number; issuedAt: number; phase: Phase } | null = null;
  private baseline = 0;
  private reference: Float32Array | null = null;
  private last: FaceAnalysis['rectangle'] | null = null;
  private missed = 0;
  private passedSteps = 0;
  private failures = 0;
  private stateNow: ActiveState = 'IDLE';
  /** Every instruction given and how it ended, for the operation log. */
  readonly history: { instruction: Challenge; outcome: 'PASSED' | ChallengeFailure }[] = [];

  constructor(
    private readonly options: ActiveLivenessOptions,
    private readonly pick: (kinds: readonly Challenge[], previous?: Challenge) => Challenge = randomChallenge,
  ) {}

  get state(): ActiveState {
    return this.stateNow;
  }

  /**
   * The passive part is satisfied on `track` (the faces of its tracked frames, oldest first): the first
   * instruction, at `now`. The subject's frontal pose is the most frontal of them: the passive gates let a
   * slightly turned face through, and a turn measured from it would have to go that much further.
   */
  begin(track: readonly FaceAnalysis[], now: number): ActiveEvent[] {
    if (this.stateNow !== 'IDLE' || !track.length) return [];
    const frontal = track.reduce((best, f) => (Math.abs(landmarkYaw(f)) < Math.abs(landmarkYaw(best)) ? f : best));
    this.baseline = landmarkYaw(frontal);
    this.reference = frontal.embedding;
    this.last = track.at(-1)!.rectangle;
    this.missed = 0;
    this.passedSteps = 0;
    this.stateNow = 'CHALLENGING';
    return [this.issue(now)];
  }

  /** One frame that arrived at `now` (after the instruction); the events it causes. */
  observe(analysis: ImageAnalysis, now: number): ActiveEvent[] {
    const current = this.current;
    if (this.stateNow !== 'CHALLENGING' || !current || now <= current.issuedAt) return [];
    const face = this.follow(analysis);
    if (face === 'LOST') return this.fail('FACE_LOST', now);
    if (now - current.issuedAt > this.options.challengeMs) return this.fail('TIMEOUT', now);
    if (!face) return [];
    const turn = landmarkYaw(face) - this.baseline;
    const frontal = Math.abs(turn) <= FRONTAL_DEGREES;
    // Turned faces embed less reliably; each instruction starts and ends frontal, where the person is compared.
    if (frontal && !(dot(face.embedding, this.reference!) >= SAME_FACE_COSINE)) return this.fail('FACE_CHANGED', now);
    const blink = current.instruction === 'BLINK';
    // The asked direction as the sign of the yaw: the subject's left is negative (see landmarkYaw).
    const asked = current.instruction === 'TURN_LEFT' ? -1 : 1;
    const wrong = blink ? Math.abs(turn) >= TURN_DEGREES : -asked * turn >= TURN_DEGREES;
    if (current.phase !== 'NEUTRAL' && wrong) return this.fail('WRONG_MOVE', now);
    if (current.phase === 'NEUTRAL') {
      if (frontal && (!blink || eyesOpen(face))) current.phase = 'ACTION';
    } else if (current.phase === 'ACTION') {
      if (blink ? eyesClosed(face) : asked * turn >= TURN_DEGREES) current.phase = 'RETURN';
    } else if (frontal && (!blink || eyesOpen(face))) {
      return this.pass(now);
    }
    return [];
  }

  /** The tracked face in this frame: the one overlapping the last one seen, null when missed, LOST when gone. */
  private follow(analysis: ImageAnalysis): FaceAnalysis | null | 'LOST' {
    let best: FaceAnalysis | null = null;
    let overlap = 0;
    for (const f of analysis.faces) {
      const o = this.last ? iou(this.last, f.rectangle) : 0;
      if (o > overlap) [best, overlap] = [f, o];
    }
    if (analysis.faces.length && overlap < MIN_TRACK_OVERLAP) return 'LOST'; // another face: not our subject
    if (!best) return ++this.missed > MAX_MISSED_FRAMES ? 'LOST' : null;
    this.missed = 0;
    this.last = best.rectangle;
    return best;
  }

  private issue(now: number, previous?: Challenge): ActiveEvent {
    const instruction = this.pick(this.options.kinds, previous);
    const step = this.passedSteps + 1;
    this.current = { instruction, step, issuedAt: now, phase: 'NEUTRAL' };
    return {
      type: 'INSTRUCTION',
      instruction,
      step,
      steps: this.options.challenges,
      withinMs: this.options.challengeMs,
    };
  }

  private pass(now: number): ActiveEvent[] {
    const { instruction, step } = this.current!;
    this.history.push({ instruction, outcome: 'PASSED' });
    this.passedSteps += 1;
    const events: ActiveEvent[] = [{ type: 'CHALLENGE_PASSED', instruction, step, steps: this.options.challenges }];
    if (this.passedSteps >= this.options.challenges) {
      this.stateNow = 'PASSED';
      this.current = null;
    } else {
      events.push(this.issue(now, instruction));
    }
    return events;
  }

  private fail(reason: ChallengeFailure, now: number): ActiveEvent[] {
    const { instruction, step } = this.current!;
    this.history.push({ instruction, outcome: reason });
    this.failures += 1;
    const retriesLeft = Math.max(0, this.options.retries - this.failures);
    const events: ActiveEvent[] = [
      { type: 'CHALLENGE_FAILED', instruction, step, steps: this.options.challenges, reason, retriesLeft },
    ];
    this.current = null;
    if (this.failures > this.options.retries) this.stateNow = 'FAILED';
    // The face is gone (or another): whoever is there passes the passive part again, and starts the instructions over.
    else if (reason === 'FACE_LOST' || reason === 'FACE_CHANGED') this.stateNow = 'IDLE';
    else events.push(this.issue(now, instruction));
    return events;
  }
}
