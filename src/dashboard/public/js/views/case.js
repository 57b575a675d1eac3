import { call, session } from '../api.js';
import { badge, facts, h, mount, score, when } from '../dom.js';
import { bestImage, loadImages } from '../images.js';

/**
 * One adjudication case drawn for review: the probe's face beside each candidate's with their scores, the
 * decisions recorded so far with their comments, and (for a case the reader may decide) the decision form.
 * The queue draws the case it took here; the solved-cases and decisions pages draw the cases they open.
 */

const isAdmin = () => session()?.role === 'ADMIN';

/** A subject's name, a link to its page for an ADMIN (the subject pages are theirs). */
export function subjectLink(subjectId) {
  return isAdmin() ? h('a', { href: `#/subjects/${encodeURIComponent(subjectId)}` }, subjectId) : subjectId;
}

/** One side of the comparison: a title, a big face, the other images as thumbnails that swap in on click. */
function faceColumn({ title, subtitle, records, images, className, testId, extra }) {
  const shown = records.map((r) => ({ ...r, url: images.get(r.id)?.url })).filter((r) => r.url);
  const first = bestImage(shown);
  const main = first
    ? h('img', { class: 'main', src: first.url, alt: `${first.kind.toLowerCase()} image` })
    : h('p', { class: 'muted' }, 'No image stored.');
  return h(
    'article',
    { class: `face ${className}`, 'data-testid': testId },
    h('h3', {}, title),
    subtitle,
    main,
    h(
      'div',
      { class: 'thumbs' },
      shown.map((r) =>
        h('img', {
          src: r.url,
          alt: r.kind.toLowerCase(),
          title: `${r.kind} #${r.id}`,
          onclick: () => first && (main.src = r.url),
        }),
      ),
    ),
    extra,
  );
}

/** The decisions on a case, oldest first, each with who, what, when and why. */
export function decisionList(decisions) {
  if (!decisions.length) return h('p', { class: 'muted', id: 'decisions', 'data-count': '0' }, 'No decision yet.');
  return h(
    'ol',
    { class: 'decisions', id: 'decisions', 'data-count': String(decisions.length) },
    decisions.map((d) =>
      h(
        'li',
        { 'data-decision-id': String(d.id) },
        h('strong', {}, d.username ?? `account #${d.accountId} (deleted)`),
        ': ',
        badge(d.decision),
        d.duplicateOfSubjectId ? [' of ', subjectLink(d.duplicateOfSubjectId)] : null,
        h('span', { class: 'muted' }, ` · ${when(d.createdAt)}`),
        d.comment ? h('blockquote', { class: 'comment' }, d.comment) : h('span', { class: 'muted' }, ' (no comment)'),
      ),
    ),
  );
}

/**
 * Draw a case. `store` is 'pending' or 'solved'; `decidable` adds the decision form (the case is leased to
 * the reader, or the reader is an ADMIN). `onDecided(answer)` runs after a decision was recorded.
 */
export async function showCase(
  area,
  review,
  { base, store, ui, decidable = store === 'pending', onDecided = () => {} },
) {
  const c = review.adjudication;
  const images = await loadImages(`${base}/${store}`, { id: c.id });
  if (!ui.current()) return;
  const probeSubject = review.probe.subject;
  const decisions = [...c.decisions];
  // Kept to show what a decision changed without reloading the case.
  const caseBadge = h('span', {}, badge(store === 'solved' ? 'SOLVED' : c.status));
  const probeBadge = h('span', {}, probeSubject ? badge(probeSubject.status) : null);
  const decisionsArea = h('div', {}, decisionList(decisions));
  const reflect = (answer) => {
    mount(caseBadge, badge(answer.state));
    decisions.push(answer.decision);
    mount(decisionsArea, decisionList(decisions));
    if (answer.state === 'SOLVED')
      mount(probeBadge, badge(answer.outcome === 'NOT_DUPLICATE' ? 'ENROLLED' : 'REJECTED'));
  };
  const operation = review.operation;
  const enrolledBy = review.enrolledBy
    ? (review.enrolledBy.username ?? `account #${review.enrolledBy.accountId} (deleted)`)
    : operation
      ? 'no account recorded'
      : undefined;
  const probe = faceColumn({
    title: `Probe: ${c.subjectId}`,
    subtitle: h('p', {}, probeBadge, ' the subject being enrolled'),
    records: review.probe.images,
    images,
    className: 'probe',
    testId: 'probe',
    extra: facts([
      ['Face quality', review.probe.faces[0]?.quality !== undefined ? score(review.probe.faces[0].quality) : undefined],
      [
        'Enrolled by',
        enrolledBy
          ? h('span', { 'data-testid': 'enrolled-by' }, enrolledBy, operation ? ` on ${when(operation.createdAt)}` : '')
          : undefined,
      ],
      [
        'Operation',
        operation
          ? isAdmin()
            ? h('a', { href: `#/operations/${operation.id}` }, `#${operation.id} `, badge(operation.status))
            : [`#${operation.id} `, badge(operation.status)]
          : undefined,
      ],
    ]),
  });
  const candidates = review.candidates.map(({ candidate, subject, images: records }) =>
    faceColumn({
      title: h('span', {}, `Candidate ${candidate.rank ?? ''}: `, subjectLink(candidate.subjectId)),
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
  const form =
    store === 'pending' && decidable
      ? decisionForm(c, review, base, ui, result, (answer) => {
          reflect(answer);
          onDecided(answer);
        })
      : null;
  mount(
    area,
    h(
      'div',
      { class: 'card', 'data-case-id': String(c.id) },
      h('h2', {}, `Case #${c.id} `, caseBadge, c.outcome ? [' ', badge(c.outcome)] : null),
      facts([
        ['Opened', when(c.createdAt)],
        ['Solved', c.solvedAt ? when(c.solvedAt) : undefined],
        [
          'Outcome',
          c.outcome
            ? c.outcome === 'DUPLICATE'
              ? `duplicate${c.duplicateOfSubjectId ? ` of ${c.duplicateOfSubjectId}` : ''}: ${c.subjectId} was REJECTED`
              : `different people: ${c.subjectId} was ENROLLED`
            : undefined,
        ],
        ['Lease ends', c.leaseExpiresAt ? when(c.leaseExpiresAt) : undefined],
        ['Score scale', '−12·log10(false acceptance rate): 36 = 1 in 1,000, 48 = 1 in 10,000'],
      ]),
      h('h3', {}, 'Decisions'),
      decisionsArea,
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
    review.candidates.map(({ candidate }) =>
      h('option', { value: candidate.subjectId }, `${candidate.subjectId} (${score(candidate.score)})`),
    ),
  );
  const comment = h('textarea', {
    id: 'comment',
    maxLength: 2000,
    placeholder: 'Why: what you compared, what decided it',
  });
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
          const body = {
            caseId: c.id,
            decision,
            comment: comment.value.trim(),
            ...(decision === 'DUPLICATE' ? { duplicateOfSubjectId: which.value } : {}),
          };
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
    h(
      'fieldset',
      {},
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
  if (answer.state === 'CONFLICTED')
    return `Decision recorded. The decisions on case #${c.id} disagree: an administrator will settle it.`;
  return `Decision recorded. Case #${c.id} waits for more decisions.`;
}
