import type { CaptureEvent } from './capture-types.js';
import type { CaptureGuidance } from './frame-judge.js';
import { challengeText } from './refusal-reasons.js';

/** Events a session keeps for its client to read: the first (STARTED) and the newest. */
const MAX_EVENTS = 200;

/**
 * The events of one capture session (capture-session.ts) as its client reads them: each stamped, kept, and told
 * as it happens; guidance only when it changes, so a client is not sent the same advice for every frame.
 */
export class CaptureEventLog {
  readonly events: CaptureEvent[] = [];
  private lastSent: string | null = null;

  constructor(
    /** Told of every event as it happens (the gateway session's events, which getSession shows). */
    private readonly onEvent: (event: CaptureEvent) => void,
  ) {}

  /** Guidance is sent when it changes (and progress when the count of accepted frames does). */
  guide(type: CaptureGuidance | 'KEEP_SPEAKING', fields: Record<string, unknown>): void {
    const key = `${type}:${type === 'FACE_FOUND' ? fields.accepted : ''}`;
    if (key === this.lastSent) return;
    this.lastSent = key;
    this.emit({ type, ...fields });
  }

  /** The next guidance is news whatever it is (the liveness instructions came between). */
  forgetGuidance(): void {
    this.lastSent = null;
  }

  emit(event: Omit<CaptureEvent, 'at'>): void {
    // A failed instruction says why in words too (its `reason` is the code).
    const worded = event.type === 'CHALLENGE_FAILED' ? { ...event, text: challengeText(String(event.reason)) } : event;
    const full = { at: new Date().toISOString(), ...worded } as CaptureEvent;
    this.events.push(full);
    if (this.events.length > MAX_EVENTS) this.events.splice(1, 1);
    this.onEvent(full);
  }
}
