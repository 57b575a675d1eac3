import { describe, expect, it } from 'vitest';

/**
 * The camera page's words for the capture's events (public/js/capture-events.js, plain browser JavaScript, run
 * here in Node): guidance a person can act on, the liveness instructions, the outcome by purpose, and events
 * the page does not know yet shown by name rather than hidden.
 */
type Event = { type: string; [key: string]: unknown };
const module = './public/js/capture-events.js';
const { describeEvent, outcomeText } = (await import(module)) as {
  describeEvent: (event: Event, purpose: string) => string;
  outcomeText: (outcome: Event, purpose: string) => string;
};

describe('the camera page describes the capture events', () => {
  it('turns guidance into what to do, with the progress', () => {
    expect(describeEvent({ type: 'MOVE_CLOSER', accepted: 1, needed: 3 }, 'ENROLL')).toBe(
      'Move closer to the camera. (1 of 3 pictures taken)',
    );
    expect(describeEvent({ type: 'LOOK_STRAIGHT' }, 'VERIFY')).toBe('Look straight at the camera.');
    expect(describeEvent({ type: 'NO_FACE' }, 'VERIFY')).toMatch(/^No face found/);
    expect(describeEvent({ type: 'KEEP_SPEAKING', speechMs: 1500, neededMs: 3000 }, 'ENROLL')).toBe(
      'Your face is done; keep reading aloud (1.5 of 3.0 s).',
    );
  });

  it('says the active liveness instructions, and an unknown one by its name', () => {
    expect(
      describeEvent({ type: 'INSTRUCTION', instruction: 'TURN_LEFT', step: 1, steps: 2, withinMs: 8000 }, 'VERIFY'),
    ).toBe('Turn your head slowly to your left, then back. (step 1 of 2)');
    expect(describeEvent({ type: 'INSTRUCTION', instruction: 'TURN_RIGHT' }, 'VERIFY')).toBe(
      'Turn your head slowly to your right, then back.',
    );
    expect(describeEvent({ type: 'INSTRUCTION', instruction: 'BLINK' }, 'VERIFY')).toBe('Blink slowly.');
    expect(describeEvent({ type: 'INSTRUCTION', instruction: 'OPEN_MOUTH' }, 'VERIFY')).toBe(
      'Follow the instruction: open mouth.',
    );
    expect(describeEvent({ type: 'CHALLENGE_PASSED', instruction: 'BLINK', step: 2, steps: 2 }, 'VERIFY')).toBe(
      'Well done. (step 2 of 2)',
    );
    expect(
      describeEvent(
        { type: 'CHALLENGE_FAILED', instruction: 'TURN_LEFT', reason: 'WRONG_MOVE', retriesLeft: 0 },
        'VERIFY',
      ),
    ).toBe('Not accepted: that was not the move asked for.');
    expect(
      outcomeText({ type: 'DONE', status: 'LIVENESS_CHECK_FAILED', reason: 'ACTIVE_LIVENESS_FAILED' }, 'VERIFY'),
    ).toMatch(/^Not accepted: the service could not tell/);
  });

  it("says a refusal in the service's own words, on guidance and on the outcome", () => {
    const text = 'Your face is too dark: turn towards a light, or put a light in front of you.';
    expect(describeEvent({ type: 'LOW_QUALITY', reason: 'TOO_DARK', text, accepted: 0, needed: 3 }, 'VERIFY')).toBe(
      `${text} (0 of 3 pictures taken)`,
    );
    expect(outcomeText({ type: 'DONE', status: 'QUALITY_CHECK_FAILED', reason: 'TOO_DARK', text }, 'VERIFY')).toBe(
      `Not accepted: ${text} Then try again.`,
    );
    expect(describeEvent({ type: 'CHALLENGE_FAILED', reason: 'WRONG_MOVE', text: 'That was not it.' }, 'VERIFY')).toBe(
      'That was not it.',
    );
  });

  it('shows an event type it does not know by its name and simple fields', () => {
    expect(
      describeEvent(
        { type: 'SOMETHING_NEW', at: '2026-11-26T10:00:00Z', level: 3, note: 'x', nested: { a: 1 } },
        'ENROLL',
      ),
    ).toBe('something new (level: 3, note: x)');
  });

  it('says what the outcome means for each purpose', () => {
    expect(
      outcomeText({ type: 'DONE', status: 'SUCCESS', subjectId: 'ada', subjectStatus: 'ENROLLED' }, 'ENROLL'),
    ).toBe('Enrolled as ada.');
    expect(
      outcomeText({ type: 'DONE', status: 'SUCCESS', subjectId: 'ada', subjectStatus: 'REJECTED' }, 'ENROLL'),
    ).toBe('Not enrolled: ada looks like someone already enrolled (REJECTED).');
    expect(outcomeText({ type: 'DONE', status: 'SUCCESS', subjectId: 'ada' }, 'VERIFY')).toBe('Verified: this is ada.');
    expect(outcomeText({ type: 'DONE', status: 'MATCH_NOT_FOUND', subjectId: 'ada' }, 'VERIFY')).toBe(
      'Not verified: this does not look like ada.',
    );
    expect(describeEvent({ type: 'TIMEOUT', status: 'TIMEOUT' }, 'CHECK')).toMatch(/^Time is up/);
    expect(outcomeText({ type: 'DONE', status: 'QUALITY_CHECK_FAILED', reason: 'too dark' }, 'IDENTIFY')).toBe(
      'The operation ended with QUALITY_CHECK_FAILED (too dark).',
    );
  });
});
