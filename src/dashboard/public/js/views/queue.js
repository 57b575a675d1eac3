import { call, session, surfaces } from '../api.js';
import { badge, facts, h, mount, score, table, when } from '../dom.js';
import { bestImage, loadImages } from '../images.js';

/**
 * The adjudication queue: take the oncoming case (the API leases it to the caller), compare the probe's face
 * with each candidate's side by side with their scores, and record a decision with a comment. An ADMIN may
 * also open any pending case from the list (conflicted ones are theirs to settle).
 */
export async function renderQueue(view, _params, ui) {
  const base = `${surfaces().adjudication}/adjudication`;
  const isAdmin = session()?.role === 'ADMIN';
  const counts = h('span', { class: 'muted', id: 'queue-counts' });
  const caseArea = h('section', { id: 'case' });
  const listArea = h('div', { id: 'pending-list' });
  const take = h('button', { id: 'take-next', onclick: () => void takeNext() }, 'Take the next case');

  const refresh = async () => {
    const [all, open, conflicted] = await Promise.all(
      [undefined, 'OPEN', 'CONFLICTED'].map((status) => call(`${base}/pending/list/count`, { query: { status } })),
    );
    if (!ui.current()) return;
    counts.textContent = `${all.count} pending: ${open.count} waiting, ${all.count - open.count - conflicted.count} being reviewed, ${conflicted.count} conflicted`;
    const rows = await call(`${base}/pending/list`, { query: { size: 50, sort: 'createdAt,asc' } });
    if (!ui.current()) return;
    mount(
      listArea,
      table(
        [
          { label: 'Case', value: (r) => `#${r.id}` },
          { label: 'Probe subject', value: (r) => r.subjectId },
          { label: 'Status', value: (r) => badge(r.status) },
          { label: 'Best candidate', value: (r) => (r.candidates[0] ? `${r.candidates[0].subjectId} (${score(r.candidates[0].score)})` : '') },
          { label: 'Opened', value: (r) => when(r.createdAt) },
          { label: 'Decisions', value: (r) => String(r.decisions.length) },
        ],
        rows,
        isAdmin ? (r) => void openCase(r.id) : undefined,
      ),
      isAdmin ? h('p', { class: 'muted' }, 'Click a case to review it; as an administrator your decision is final.') : null,
    );
  };

  const decided = () => {
    take.disabled = false;
    void refresh().catch(ui.showError);
  };

  async function takeNext() {
    ui.clearError();
    take.disabled = true;
    try {
      const review = await call(`${base}/pending/oncoming`);
      if (!ui.current()) return;
      if (!review) {
        mount(caseArea, h('p', { class: 'notice', id: 'queue-empty' }, 'No case is waiting for you. Cases appear when an enrolment finds a possible duplicate.'));
      } else {
        await showCase(caseArea, review, { base, store: 'pending', ui, onDecided: decided });
      }
      await refresh();
    } catch (error) {
      ui.showError(error);
    } finally {
      take.disabled = false;
    }
  }

  async function openCase(id) {
    ui.clearError();
    try {
      await showCase(caseArea, await call(`${base}/pending`, { query: { id } }), { base, store: 'pending', ui, onDecided: decided });
      caseArea.scrollIntoView({ behavior: 'smooth' });
    } catch (error) {
      ui.showError(error);
    }
  }

  mount(view, h('h1', {}, 'Adjudication queue'), h('div', { class: 'row' }, take, counts), caseArea, h('h2', {}, 'Pending cases'), listArea);
  await refresh();
}

/** One side of the comparison: a title, a big face, the other images as thumbnails that swap in on click. */
function faceColumn({ title, subtitle, records, images, className, testId, extra }) {
  const shown = records.map((r) => ({ ...r, url: images.get(r.id)?.url })).filter((r) => r.url);
  const first = bestImage(shown);
  const main = first
    ? h('img', { class: 'main', src: first.url, alt: `${title}: ${first.kind.toLowerCase()} image` })
    : h('p', { class: 'muted' }, 'No image stored.');
  return h(
    'article',
    { class: `face ${className}`, 'data-testid': testId },
    h('h3', {}, title),
    subtitle,
    main,
    h('div', { class: 'thumbs' }, shown.map((r) => h('img', { src: r.url, alt: r.kind.toLowerCase(), title: `${r.kind} #${r.id}`, onclick: () => first && (main.src = r.url) }))),
    extra,
  );
}

/** Draw a case for review with its decision form. */
export async function showCase(area, review, { base, store, ui, onDecided }) {
  const c = review.adjudication;
  const images = await loadImages(`${base}/${store}`, { id: c.id });
  if (!ui.current()) return;
  const probeSubject = review.probe.subject;
  // Kept to show what a decision changed without reloading the case.
  const caseBadge = h('span', {}, badge(c.status));
  const probeBadge = h('span', {}, probeSubject ? badge(probeSubject.status) : null);
  const reflect = (answer) => {
    mount(caseBadge, badge(answer.state));
    if (answer.state === 'SOLVED') mount(probeBadge, badge(answer.outcome === 'NOT_DUPLICATE' ? 'ENROLLED' : 'REJECTED'));
  };
  const probe = faceColumn({
    title: `Probe: ${c.subjectId}`,
    subtitle: h('p', {}, probeBadge, ' the subject being enrolled'),
    records: review.probe.images,
    images,
    className: 'probe',
    testId: 'probe',
    extra: facts([
      ['Face quality', review.probe.faces[0]?.quality !== undefined ? String(review.probe.faces[0].quality) : undefined],
      ['Enrolled by', review.operation ? `operation #${review.operation.id}` : undefined],
    ]),
  });
  const candidates = review.candidates.map(({ candidate, subject, images: records }) =>
    faceColumn({
      title: `Candidate ${candidate.rank ?? ''}: ${candidate.subjectId}`,
      subtitle: h(
        'p',
        {},
        h('span', { class: 'score', 'data-testid': 'score' }, score(candidate.score)),
        ' score',
        candidate.scores?.FACE !== undefined ? ` (face ${score(candidate.scores.FACE)})` : '',
        subject ? [' ', badge(subject.status)] : h('span', { class: 'muted' }, ' deleted since'),
      ),
      records,
      images,
      className: 'candidate',
      testId: 'candidate',
    }),
  );

  const result = h('div', { id: 'decision-result' });
  const form = store === 'pending' ? decisionForm(c, review, base, ui, result, (answer) => { reflect(answer); onDecided(); }) : null;
  mount(
    area,
    h(
      'div',
      { class: 'card', 'data-case-id': String(c.id) },
      h('h2', {}, `Case #${c.id} `, caseBadge),
      facts([
        ['Opened', when(c.createdAt)],
        ['Lease ends', c.leaseExpiresAt ? when(c.leaseExpiresAt) : undefined],
        ['Decisions so far', c.decisions.length ? c.decisions.map((d) => `${d.username ?? `account ${d.accountId}`}: ${d.decision}${d.comment ? ` (“${d.comment}”)` : ''}`).join('; ') : 'none'],
        ['Score scale', '−12·log10(false acceptance rate): 36 = 1 in 1,000, 48 = 1 in 10,000'],
      ]),
    ),
    h('div', { class: 'compare' }, probe, candidates),
    form,
    result,
  );
}

function decisionForm(c, review, base, ui, result, onDecided) {
  const enrol = h('input', { type: 'radio', name: 'decision', value: 'NOT_DUPLICATE', id: 'decision-enrol' });
  const reject = h('input', { type: 'radio', name: 'decision', value: 'DUPLICATE', id: 'decision-reject' });
  const which = h(
    'select',
    { id: 'duplicate-of', onchange: () => (reject.checked = true) },
    review.candidates.map(({ candidate }) => h('option', { value: candidate.subjectId }, `${candidate.subjectId} (${score(candidate.score)})`)),
  );
  const comment = h('textarea', { id: 'comment', maxLength: 2000, placeholder: 'Why: what you compared, what decided it' });
  const submit = h('button', { type: 'submit', id: 'decide' }, 'Record decision');
  return h(
    'form',
    {
      class: 'card decision',
      onsubmit: async (event) => {
        event.preventDefault();
        ui.clearError();
        const decision = enrol.checked ? 'NOT_DUPLICATE' : reject.checked ? 'DUPLICATE' : null;
        if (!decision) {
          ui.showError('Choose a decision: enrol the probe, or reject it as a duplicate.');
          return;
        }
        submit.disabled = true;
        try {
          const body = { caseId: c.id, decision, comment: comment.value.trim(), ...(decision === 'DUPLICATE' ? { duplicateOfSubjectId: which.value } : {}) };
          const answer = await call(`${base}/solve`, { method: 'POST', body });
          mount(result, h('p', { class: 'notice good', id: 'solved-message' }, outcomeText(c, answer)));
          event.target.remove();
          onDecided(answer);
        } catch (error) {
          ui.showError(error);
          submit.disabled = false;
        }
      },
    },
    h('h2', {}, 'Decision'),
    h('fieldset', {},
      h('label', { class: 'choice' }, enrol, `Different people: enrol ${c.subjectId}`),
      h('label', { class: 'choice' }, reject, 'Same person as ', which, `: reject ${c.subjectId}`),
    ),
    h('label', { htmlFor: 'comment' }, 'Comment'),
    comment,
    h('p', {}, submit),
  );
}

/** What a decision did, in words. */
function outcomeText(c, answer) {
  if (answer.state === 'SOLVED') {
    return answer.outcome === 'NOT_DUPLICATE'
      ? `Case #${c.id} is solved: ${c.subjectId} is now ENROLLED and joins the gallery.`
      : `Case #${c.id} is solved: ${c.subjectId} is now REJECTED as a duplicate.`;
  }
  if (answer.state === 'CONFLICTED') return `Decision recorded. The decisions on case #${c.id} disagree: an administrator will settle it.`;
  return `Decision recorded. Case #${c.id} waits for more decisions.`;
}
