import { describe, expect, it } from 'vitest';
import type { FaceAnalysis, ImageAnalysis } from '../../biometrics/face/analysis.js';
import {
  ActiveLiveness,
  landmarkYaw,
  randomChallenge,
  type ActiveLivenessOptions,
  type Challenge,
} from './active-liveness.js';

/**
 * Synthetic faces: 68 landmarks whose nose tip (30) sits between the jaw ends (0, 16) so that landmarkYaw
 * gives `yaw` degrees. `dx` moves the whole face (its box too): another face elsewhere in the picture; `person`
 * picks its embedding (one unit vector per person).
 */
function face(yaw = 0, eyes = 95, dx = 0, person = 0): FaceAnalysis {
  const embedding = new Float32Array(512);
  embedding[person] = 1;
  const landmarks = Array.from({ length: 68 }, () => [300 + dx, 250] as [number, number]);
  const asymmetry = -Math.sin((yaw * Math.PI) / 180);
  landmarks[0] = [200 + dx, 250];
  landmarks[16] = [400 + dx, 250];
  landmarks[30] = [200 + dx + 100 * (1 + asymmetry), 260];
  return {
    rectangle: { x: 200 + dx, y: 120, width: 200, height: 240 },
    detectionScore: 0.99,
    landmarks,
    interEyeDistance: 80,
    yaw: 0,
    pitch: 0,
    roll: 0,
    eyesOpen: { left: eyes, right: eyes },
    livenessScore: 90,
    quality: 80,
    embedding,
  } as unknown as FaceAnalysis;
}
const frame = (...faces: FaceAnalysis[]) => ({ width: 640, height: 480, faces }) as unknown as ImageAnalysis;

const options: ActiveLivenessOptions = {
  challenges: 1,
  kinds: ['TURN_LEFT', 'TURN_RIGHT', 'BLINK'],
  challengeMs: 8000,
  retries: 0,
};
/** A picker that gives the listed instructions in order, so each test knows what is asked. */
const scripted =
  (...asked: Challenge[]) =>
  () =>
    asked.shift()!;

/** Feed frames one a 200 ms (5 fps) after `start`; the types of the events they caused, in order. */
function feed(active: ActiveLiveness, frames: ImageAnalysis[], start = 0): string[] {
  return frames.flatMap((f, i) =>
    active.observe(f, start + 200 * (i + 1)).map((e) => ('reason' in e ? `${e.type}:${e.reason}` : e.type)),
  );
}

describe('landmark yaw', () => {
  it('is negative when the subject turned to their left (nose towards the image right), as the pose model says it', () => {
    expect(landmarkYaw(face(-25))).toBeCloseTo(-25, 5);
    expect(landmarkYaw(face(30))).toBeCloseTo(30, 5);
    const left = face(-25);
    // The nose is right of the middle of the jaw in the picture.
    expect(left.landmarks[30]![0]).toBeGreaterThan((left.landmarks[0]![0] + left.landmarks[16]![0]) / 2);
  });
});

describe('active liveness', () => {
  it("TURN_LEFT passes on frontal, then turned to the subject's left, then frontal again, all after the instruction", () => {
    const active = new ActiveLiveness(options, scripted('TURN_LEFT'));
    expect(active.begin([face(0)], 0)).toEqual([
      { type: 'INSTRUCTION', instruction: 'TURN_LEFT', step: 1, steps: 1, withinMs: 8000 },
    ]);
    expect(feed(active, [frame(face(1)), frame(face(-10)), frame(face(-24)), frame(face(-12))])).toEqual([]);
    expect(active.state).toBe('CHALLENGING');
    expect(feed(active, [frame(face(2))], 1000)).toEqual(['CHALLENGE_PASSED']);
    expect(active.state).toBe('PASSED');
    expect(active.history).toEqual([{ instruction: 'TURN_LEFT', outcome: 'PASSED' }]);
  });

  it('turning the other way is a wrong move; the retry is a new instruction', () => {
    const active = new ActiveLiveness({ ...options, retries: 1 }, scripted('TURN_RIGHT', 'TURN_LEFT'));
    active.begin([face(0)], 0);
    const events = active.observe(frame(face(0)), 100).concat(active.observe(frame(face(-25)), 200));
    expect(events).toMatchObject([
      { type: 'CHALLENGE_FAILED', instruction: 'TURN_RIGHT', reason: 'WRONG_MOVE', retriesLeft: 0 },
      { type: 'INSTRUCTION', instruction: 'TURN_LEFT', step: 1 },
    ]);
    // The retry's own instruction, followed, passes.
    expect(feed(active, [frame(face(0)), frame(face(-25)), frame(face(0))], 200)).toEqual(['CHALLENGE_PASSED']);
    expect(active.state).toBe('PASSED');
  });

  it("the turns are measured from the subject's own frontal pose, not from zero", () => {
    // A camera off to one side: the subject looks at it with a landmark yaw of -14.
    const active = new ActiveLiveness(options, scripted('TURN_RIGHT'));
    active.begin([face(-14)], 0);
    // +1 is 15 degrees to their right of where they look from: enough; -14 again is frontal.
    expect(feed(active, [frame(face(-13)), frame(face(2)), frame(face(-15))])).toEqual(['CHALLENGE_PASSED']);
  });

  it("the frontal pose is the most frontal face of the passive part's track; the face is followed from its newest", () => {
    const active = new ActiveLiveness(options, scripted('TURN_LEFT'));
    // The passive gates let a face turned by 18 degrees through: measured from it, a turn left would need 33.
    active.begin([face(1), face(-18, 95, 20)], 0);
    expect(
      feed(active, [
        frame(face(-17, 95, 20)),
        frame(face(0, 95, 20)),
        frame(face(-20, 95, 20)),
        frame(face(1, 95, 20)),
      ]),
    ).toEqual(['CHALLENGE_PASSED']);
  });

  it('a turn made before the instruction (a guess, a replayed clip) does not count: the subject must be seen frontal first', () => {
    const active = new ActiveLiveness(options, scripted('TURN_LEFT'));
    // Turned left before the instruction; frames that came before it are not given (or not counted).
    expect(active.observe(frame(face(-30)), 0)).toEqual([]);
    active.begin([face(0)], 1000);
    expect(active.observe(frame(face(-30)), 1000)).toEqual([]); // not after the instruction
    // Still turned when the instruction comes, then back: turned-then-frontal is not frontal-turned-frontal.
    expect(feed(active, [frame(face(-30)), frame(face(-28)), frame(face(0)), frame(face(0))], 1000)).toEqual([]);
    expect(active.state).toBe('CHALLENGING');
    // Nothing more happens: at the deadline the instruction failed, and with no retries the check failed.
    expect(active.observe(frame(face(0)), 9001)).toMatchObject([
      { type: 'CHALLENGE_FAILED', reason: 'TIMEOUT', retriesLeft: 0 },
    ]);
    expect(active.state).toBe('FAILED');
  });

  it('a photo held still never passes: every instruction times out, then the check fails', () => {
    const active = new ActiveLiveness({ ...options, challenges: 2, retries: 1 }, randomChallenge);
    active.begin([face(0)], 0);
    const still = Array.from({ length: 90 }, () => frame(face(0)));
    const events = feed(active, still);
    expect(events.filter((e) => e.startsWith('CHALLENGE_FAILED'))).toEqual([
      'CHALLENGE_FAILED:TIMEOUT',
      'CHALLENGE_FAILED:TIMEOUT',
    ]);
    expect(events).not.toContain('CHALLENGE_PASSED');
    expect(active.state).toBe('FAILED');
    expect(active.history.map((h) => h.outcome)).toEqual(['TIMEOUT', 'TIMEOUT']);
  });

  it('another face (the track changed) fails the instruction and sends the subject back to the passive part', () => {
    const active = new ActiveLiveness({ ...options, retries: 1 }, scripted('TURN_LEFT', 'BLINK'));
    active.begin([face(0)], 0);
    expect(feed(active, [frame(face(0)), frame(face(-25, 95, 300))])).toEqual(['CHALLENGE_FAILED:FACE_LOST']);
    expect(active.state).toBe('IDLE');
    // The turn shown by the other face did not count; when the passive part holds a face again, it starts over.
    expect(active.begin([face(0, 95, 300)], 2000)).toMatchObject([
      { type: 'INSTRUCTION', instruction: 'BLINK', step: 1 },
    ]);
    // A second loss is one failure more than the retries allow.
    expect(feed(active, [frame(face(0, 95, 0))], 2000)).toEqual(['CHALLENGE_FAILED:FACE_LOST']);
    expect(active.state).toBe('FAILED');
  });

  it('another person in the same place (a photo dropped before a live face) is FACE_CHANGED, checked on frontal frames', () => {
    const active = new ActiveLiveness({ ...options, retries: 1 }, scripted('TURN_LEFT', 'TURN_LEFT'));
    active.begin([face(0)], 0);
    // Someone else follows the instruction: the turned frame is not compared, the frontal one after it is.
    expect(feed(active, [frame(face(0)), frame(face(-25, 95, 0, 1))])).toEqual([]);
    expect(feed(active, [frame(face(0, 95, 0, 1))], 400)).toEqual(['CHALLENGE_FAILED:FACE_CHANGED']);
    expect(active.state).toBe('IDLE');
    active.begin([face(0, 95, 0, 1)], 1000);
    expect(
      feed(active, [frame(face(0, 95, 0, 1)), frame(face(-25, 95, 0, 1)), frame(face(0, 95, 0, 1))], 1000),
    ).toEqual(['CHALLENGE_PASSED']);
  });

  it('a face missed for a few frames keeps its track; missed longer, it is lost', () => {
    const active = new ActiveLiveness({ ...options, challenges: 1 }, scripted('TURN_LEFT'));
    active.begin([face(0)], 0);
    expect(feed(active, [frame(face(0)), frame(), frame(), frame(), frame(face(-25)), frame(face(0))])).toEqual([
      'CHALLENGE_PASSED',
    ]);
    const other = new ActiveLiveness(options, scripted('TURN_LEFT'));
    other.begin([face(0)], 0);
    expect(feed(other, [frame(), frame(), frame(), frame()])).toEqual(['CHALLENGE_FAILED:FACE_LOST']);
  });

  it('BLINK needs both eyes closed on a frame, then open again; a wink or a turn does not do', () => {
    const active = new ActiveLiveness({ ...options, challenges: 2 }, scripted('BLINK', 'BLINK'));
    active.begin([face(0)], 0);
    const wink = { ...face(0), eyesOpen: { left: 5, right: 90 } } as FaceAnalysis;
    expect(feed(active, [frame(face(0)), frame(wink), frame(face(0))])).toEqual([]);
    expect(feed(active, [frame(face(0, 10)), frame(face(0, 95))], 600)).toEqual(['CHALLENGE_PASSED', 'INSTRUCTION']);
    expect(feed(active, [frame(face(0)), frame(face(22))], 1000)).toEqual(['CHALLENGE_FAILED:WRONG_MOVE']);
    expect(active.state).toBe('FAILED');
  });

  it('picks its instructions with Web Crypto from the kinds asked, never the same twice in a row', () => {
    const seen = new Set<Challenge>();
    let previous: Challenge | undefined;
    for (let i = 0; i < 200; i++) {
      const next = randomChallenge(['TURN_LEFT', 'TURN_RIGHT', 'BLINK'], previous);
      expect(next).not.toBe(previous);
      seen.add(next);
      previous = next;
    }
    expect([...seen].sort()).toEqual(['BLINK', 'TURN_LEFT', 'TURN_RIGHT']);
    expect(randomChallenge(['BLINK'], 'BLINK')).toBe('BLINK');
  });
});
