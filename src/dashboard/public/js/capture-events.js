/**
 * The capture's events (docs/gateway-capture.md, "Events") in a person's words: what to do now, or what
 * happened. Plain data in, plain text out, so the camera page and its unit test share it. An event type this
 * page does not know yet is still shown, by its name and fields, rather than hidden.
 */

// Active liveness: the subject's own left and right (the preview is mirrored, so the turn shows on that side of
// the screen too); a slow blink, as a quick one can fall between two sampled frames.
const INSTRUCTIONS = {
  TURN_LEFT: 'Turn your head slowly to your left, then back.',
  TURN_RIGHT: 'Turn your head slowly to your right, then back.',
  BLINK: 'Blink slowly.',
};
const instruction = (e) =>
  INSTRUCTIONS[e.instruction] ??
  `Follow the instruction: ${String(e.instruction ?? '')
    .toLowerCase()
    .replace(/_/g, ' ')}.`;
const step = (e) =>
  typeof e.step === 'number' && typeof e.steps === 'number' ? ` (step ${e.step} of ${e.steps})` : '';
const CHALLENGE_FAILURES = {
  TIMEOUT: 'that took too long',
  WRONG_MOVE: 'that was not the move asked for',
  FACE_LOST: 'your face was lost',
};

const progress = (e) =>
  typeof e.accepted === 'number' && typeof e.needed === 'number'
    ? ` (${e.accepted} of ${e.needed} pictures taken)`
    : '';
const seconds = (ms) => (typeof ms === 'number' ? (ms / 1000).toFixed(1) : '?');

const GUIDANCE = {
  STARTED: () => 'Connected. Look at the camera.',
  MEDIA: () => 'The service sees your camera.',
  // A refusal's own words (`text`, with its `reason` code) when the service gives them.
  NO_FACE: (e) => e.text ?? 'No face found: put your face in the middle of the picture.',
  MULTIPLE_FACES: (e) => e.text ?? 'More than one face: only you should be in the picture.',
  MOVE_CLOSER: (e) => `${e.text ?? 'Move closer to the camera.'}${progress(e)}`,
  LOOK_STRAIGHT: (e) => `${e.text ?? 'Look straight at the camera.'}${progress(e)}`,
  LOW_QUALITY: (e) => `${e.text ?? 'The picture is not clear enough: face the light and keep still.'}${progress(e)}`,
  HOLD_STILL: (e) => `${e.text ?? 'Hold still.'}${progress(e)}`,
  FACE_FOUND: (e) => `Face found. Stay like this.${progress(e)}`,
  SPEECH: (e) => `Keep reading aloud: ${seconds(e.speechMs)} of ${seconds(e.neededMs)} s of speech heard.`,
  KEEP_SPEAKING: (e) => `Your face is done; keep reading aloud (${seconds(e.speechMs)} of ${seconds(e.neededMs)} s).`,
  INSTRUCTION: (e) => `${instruction(e)}${step(e)}`,
  CHALLENGE_PASSED: (e) => `Well done.${step(e)}`,
  // Whether another instruction follows is said by the next event (retriesLeft is 0 both before the last try and after it).
  CHALLENGE_FAILED: (e) =>
    e.text ??
    `Not accepted: ${
      CHALLENGE_FAILURES[e.reason] ??
      String(e.reason ?? 'the move was not seen')
        .toLowerCase()
        .replace(/_/g, ' ')
    }.`,
  PROCESSING: () => 'Checking…',
};

/** What the outcome means for the person, by purpose and status. */
export function outcomeText(outcome, purpose) {
  // A capture refused for one reason for its whole patience window says which, in words (and `reason`, its code).
  if (outcome.type === 'DONE' && outcome.text) return `Not accepted: ${outcome.text} Then try again.`;
  if (outcome.type === 'TIMEOUT')
    return 'Time is up: no good picture was taken. Try again with your face well lit and centred.';
  if (outcome.type === 'FAILED') return `The capture stopped: ${outcome.reason ?? 'the connection ended'}.`;
  switch (outcome.status) {
    case 'SUCCESS':
      if (purpose === 'ENROLL') {
        if (outcome.subjectStatus === 'ENROLLED') return `Enrolled as ${outcome.subjectId}.`;
        if (outcome.subjectStatus === 'PENDING_ADJUDICATION')
          return `Not enrolled yet: ${outcome.subjectId} looks like someone already enrolled; an adjudicator will decide.`;
        return `Not enrolled: ${outcome.subjectId} looks like someone already enrolled (${outcome.subjectStatus}).`;
      }
      if (purpose === 'VERIFY') return `Verified: this is ${outcome.subjectId}.`;
      if (purpose === 'IDENTIFY') return 'Identified: see the candidates below.';
      return 'The check passed.';
    case 'MATCH_NOT_FOUND':
      return purpose === 'VERIFY'
        ? `Not verified: this does not look like ${outcome.subjectId}.`
        : 'No enrolled person matches.';
    case 'PENDING_ADJUDICATION':
      return 'The enrolment looks like someone already enrolled; an adjudicator will decide.';
    case 'LIVENESS_CHECK_FAILED':
      return 'Not accepted: the service could not tell that a live person was in front of the camera. Try again, following the instructions.';
    case 'DUPLICATE_FOUND':
      return 'Refused: this person is already enrolled.';
    default:
      return `The operation ended with ${outcome.status}${outcome.reason ? ` (${outcome.reason})` : ''}.`;
  }
}

/** Whether an event ends the capture. */
export const isOutcome = (event) => event.type === 'DONE' || event.type === 'TIMEOUT' || event.type === 'FAILED';

/** One event as a line for the person: guidance, progress, or (for an unknown type) its name and fields. */
export function describeEvent(event, purpose) {
  if (isOutcome(event)) return outcomeText(event, purpose);
  const known = GUIDANCE[event.type];
  if (known) return known(event);
  const fields = Object.entries(event)
    .filter(([k, v]) => k !== 'type' && k !== 'at' && v !== undefined && v !== null && typeof v !== 'object')
    .map(([k, v]) => `${k}: ${v}`);
  return `${event.type.toLowerCase().replace(/_/g, ' ')}${fields.length ? ` (${fields.join(', ')})` : ''}`;
}
