import { DASHBOARD_ROLES, session, signOut } from './api.js';
import { facts, h, mount, score } from './dom.js';
import { renderLogin } from './views/login.js';
import { describeEvent, outcomeText } from './capture-events.js';

/**
 * The camera page: a person signs in with their account (any role), says what to do (enrol, verify or identify
 * themselves, by face or by face and voice), and the browser SDK's capture helper (`captureWithGateway`, served
 * as js/bims-capture.js, built from src/sdk/gateway-capture.ts when the dashboard starts) streams the camera
 * through the media gateway on /user with the account's token. The service's events are shown as guidance while
 * it looks, then the outcome. The page is served with a Permissions-Policy that allows the camera and the
 * microphone on this origin only; every other dashboard page allows neither.
 */

const view = document.getElementById('view');
const errorBox = document.getElementById('error');

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

function renderChrome(s) {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!s) {
    mount(nav);
    mount(who);
    return;
  }
  mount(nav, DASHBOARD_ROLES.includes(s.role) ? h('a', { href: './#/queue' }, 'Dashboard') : null);
  mount(
    who,
    h('span', {}, `${s.username} (${s.role})`),
    h(
      'button',
      {
        class: 'secondary',
        id: 'sign-out',
        onclick: () => {
          signOut();
          start();
        },
      },
      'Sign out',
    ),
  );
}

function start() {
  showError('');
  const s = session();
  renderChrome(s);
  if (!s) {
    renderLogin(view, {
      onSignedIn: start,
      roles: [...DASHBOARD_ROLES, 'USER'],
      intro: 'Enrol or verify yourself with your camera. Sign in with your account of this BIMS service.',
    });
    return;
  }
  renderCapture(s);
}

/** Why the camera could not be opened, in the person's words. */
function cameraFailure(error) {
  if (error?.name === 'NotAllowedError')
    return 'The browser did not allow the camera. Allow this page to use the camera (and the microphone for your voice), then try again.';
  if (error?.name === 'NotFoundError') return 'No camera (or microphone) was found on this device.';
  if (error?.name === 'NotReadableError') return 'The camera is busy: another application may be using it.';
  if (!navigator.mediaDevices)
    return 'This browser gives no camera to this page: open it over https (or on localhost).';
  return `The camera could not be opened: ${error?.message ?? error}`;
}

function renderCapture(s) {
  const radio = (value, label) =>
    h(
      'label',
      { class: 'choice' },
      h('input', {
        type: 'radio',
        name: 'purpose',
        value,
        id: `purpose-${value.toLowerCase()}`,
        checked: value === 'ENROLL',
      }),
      label,
    );
  const subjectId = h('input', {
    id: 'subject-id',
    name: 'subjectId',
    autocomplete: 'off',
    required: true,
    maxLength: 255,
    'aria-describedby': 'subject-hint',
  });
  const withVoice = h('input', { type: 'checkbox', id: 'with-voice' });
  const active = h('input', { type: 'checkbox', id: 'active-liveness' });
  const phrase = h('input', { id: 'phrase', value: 'My voice is my password, verify me.', maxLength: 200 });
  const phraseRow = h('div', { hidden: true }, h('label', { htmlFor: 'phrase' }, 'Phrase to read aloud'), phrase);
  const submit = h('button', { type: 'submit', id: 'start' }, 'Start the camera');
  // Stops a running capture (the gateway session ends without an operation); enabled only while one runs.
  let stopping = null;
  const stop = h(
    'button',
    { type: 'button', id: 'stop', class: 'secondary', disabled: true, onclick: () => stopping?.abort() },
    'Stop',
  );
  const preview = h('video', {
    id: 'preview',
    autoplay: true,
    muted: true,
    playsInline: true,
    'aria-label': 'Your camera',
  });
  const guidance = h(
    'p',
    { id: 'guidance', class: 'guidance', role: 'status', 'aria-live': 'polite' },
    'Choose what to do, then start the camera.',
  );
  const say = h('p', { id: 'say', class: 'notice', hidden: true });
  const log = h('ol', { id: 'events', class: 'events', 'aria-label': 'What happened' });
  const result = h('section', { id: 'result', class: 'card', hidden: true, 'aria-live': 'polite' });

  const purpose = () => form.querySelector('input[name="purpose"]:checked').value;
  const sync = () => {
    const needsId = purpose() !== 'IDENTIFY';
    subjectId.disabled = !needsId;
    subjectId.required = needsId;
    phraseRow.hidden = !withVoice.checked;
  };

  const form = h(
    'form',
    {
      class: 'card capture-form',
      onchange: sync,
      onsubmit: (event) => {
        event.preventDefault();
        run();
      },
    },
    h('h1', {}, 'Enrol or verify with your camera'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'What to do'),
      radio('ENROLL', 'Enrol me (a new subject)'),
      radio('VERIFY', 'Verify me (am I this subject?)'),
      radio('IDENTIFY', 'Identify me (who am I?)'),
    ),
    h('label', { htmlFor: 'subject-id' }, 'Subject id'),
    subjectId,
    h('p', { id: 'subject-hint', class: 'muted' }, 'The id to enrol under, or the one to verify against.'),
    h('label', { class: 'choice' }, active, 'Ask me to turn my head or blink (active liveness)'),
    h('label', { class: 'choice' }, withVoice, 'Also my voice (read a phrase aloud while the camera looks)'),
    phraseRow,
    h('div', { class: 'row' }, submit, stop),
  );

  mount(
    view,
    h(
      'div',
      { class: 'capture' },
      form,
      h('section', { class: 'card camera', 'aria-label': 'Camera' }, preview, guidance, say, log),
    ),
    result,
  );
  sync();

  async function run() {
    // Until the camera is open (the browser may be asking the person), a second click starts nothing.
    if (submit.disabled) return;
    submit.disabled = true;
    showError('');
    result.hidden = true;
    mount(log);
    const what = purpose();
    const voice = withVoice.checked;
    const params = {
      kind: voice ? 'MULTIMODAL' : 'FV',
      purpose: what,
      ...(what !== 'IDENTIFY' ? { subjectId: subjectId.value.trim() } : {}),
      ...(voice && phrase.value.trim() ? { phrase: phrase.value.trim() } : {}),
      // The service's defaults: two random instructions, 8 s each, one retry (docs/gateway-capture.md).
      ...(active.checked ? { activeLiveness: {} } : {}),
    };
    let helper;
    try {
      helper = await import('./bims-capture.js');
    } catch {
      showError('The camera helper is missing from this dashboard (js/bims-capture.js); the service log says why.');
      submit.disabled = false;
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        video: { width: { ideal: 640 }, height: { ideal: 480 } },
        audio: voice,
      });
    } catch (error) {
      showError(cameraFailure(error));
      submit.disabled = false;
      return;
    }
    for (const el of form.elements) el.disabled = true;
    stopping = new AbortController();
    stop.disabled = false;
    preview.srcObject = stream;
    guidance.textContent = 'Connecting…';
    say.hidden = !voice;
    say.textContent = voice ? `Read aloud: “${params.phrase ?? 'anything, in your own words'}”` : '';
    try {
      const outcome = await helper.captureWithGateway(
        location.origin,
        { accessToken: s.token },
        {
          stream,
          params,
          surface: '/user',
          signal: stopping.signal,
          onEvent: (event) => {
            const text = describeEvent(event, what);
            guidance.textContent = text;
            log.append(h('li', { class: `event ${event.type}` }, text));
          },
        },
      );
      guidance.textContent = outcomeText(outcome, what);
      // Anything but a success offers to try again with the same choices.
      showResult(result, outcome, what, () => {
        result.hidden = true;
        run();
      });
    } catch (error) {
      guidance.textContent = 'Stopped.';
      if (stopping.signal.aborted) return;
      if (error?.status === 401) {
        signOut();
        start();
        showError('Your session has ended; please sign in again.');
        return;
      }
      showError(error?.message ?? String(error));
    } finally {
      for (const track of stream.getTracks()) track.stop();
      preview.srcObject = null;
      say.hidden = true;
      for (const el of form.elements) el.disabled = false;
      stop.disabled = true;
      stopping = null;
      sync();
    }
  }
}

/** The outcome: what it means, then the operation's status, score, subject and UUID (and IDENTIFY's candidates). */
function showResult(result, outcome, purpose, tryAgain) {
  const good = outcome.status === 'SUCCESS' && (purpose !== 'ENROLL' || outcome.subjectStatus === 'ENROLLED');
  mount(
    result,
    h('h2', {}, 'Result'),
    h('p', { id: 'result-text', class: `notice${good ? ' good' : ''}` }, outcomeText(outcome, purpose)),
    facts([
      ['Status', h('span', { id: 'result-status' }, outcome.status)],
      ['Score', typeof outcome.score === 'number' ? h('span', { id: 'result-score' }, score(outcome.score)) : null],
      ['Subject', outcome.subjectId ? h('span', { id: 'result-subject' }, outcome.subjectId) : null],
      ['Subject status', outcome.subjectStatus],
      ['Operation', outcome.operationUuid ? h('code', { id: 'result-uuid' }, outcome.operationUuid) : null],
      ['Reason', outcome.reason],
    ]),
    good ? null : h('button', { type: 'button', id: 'try-again', onclick: tryAgain }, 'Try again'),
    Array.isArray(outcome.candidates) && outcome.candidates.length
      ? h(
          'table',
          { id: 'result-candidates' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Rank'), h('th', {}, 'Subject'), h('th', {}, 'Score'))),
          h(
            'tbody',
            {},
            outcome.candidates.map((c, i) =>
              h('tr', {}, h('td', {}, String(c.rank ?? i + 1)), h('td', {}, c.subjectId), h('td', {}, score(c.score))),
            ),
          ),
        )
      : null,
  );
  result.hidden = false;
}

addEventListener('unhandledrejection', (event) => showError(event.reason?.message ?? String(event.reason)));
start();
