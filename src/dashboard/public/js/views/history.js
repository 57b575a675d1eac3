import { ApiError, call, session, surfaces } from '../api.js';
import { badge, h, mount, when } from '../dom.js';
import { pagedList } from './browse.js';
import { showCase, subjectLink } from './case.js';

/**
 * What adjudication has done: the solved cases with their outcomes, decisions and comments (ADMIN: the
 * solved list is theirs), every decision recorded (adjudicators too), and any one case opened by its id.
 */

const base = () => `${surfaces().adjudication}/adjudication`;

/** The decisions of a case as a short text for a table cell: who decided what, and why. */
function decisionsText(decisions) {
  if (!decisions.length) return h('span', { class: 'muted' }, 'none');
  return decisions.map((d) =>
    h(
      'div',
      {},
      h('strong', {}, d.username ?? `account #${d.accountId}`),
      `: ${d.decision}`,
      d.comment ? h('span', { class: 'comment-inline' }, ` “${d.comment}”`) : '',
    ),
  );
}

export function renderSolved(view, _params, ui) {
  return pagedList(view, ui, {
    title: 'Solved cases',
    intro: 'Every case an adjudicator or administrator settled, newest first. Click one to see the faces again.',
    listPath: `${base()}/solved/list`,
    countPath: `${base()}/solved/list/count`,
    sort: 'solvedAt,desc',
    filters: [
      { name: 'subjectId', label: 'Probe subject starts with' },
      { name: 'outcome', label: 'Outcome', options: ['DUPLICATE', 'NOT_DUPLICATE'] },
    ],
    columns: [
      { label: 'Case', value: (c) => `#${c.id}` },
      { label: 'Probe subject', value: (c) => c.subjectId },
      {
        label: 'Outcome',
        value: (c) => [badge(c.outcome), c.duplicateOfSubjectId ? ` of ${c.duplicateOfSubjectId}` : ''],
      },
      { label: 'Decisions', value: (c) => decisionsText(c.decisions) },
      { label: 'Solved', value: (c) => when(c.solvedAt) },
    ],
    onRow: (c) => (location.hash = `#/cases/${c.id}`),
  });
}

export function renderDecisions(view, _params, ui) {
  return pagedList(view, ui, {
    title: 'Decisions',
    intro: 'Every decision recorded, newest first, with its comment. Click one to open its case.',
    listPath: `${base()}/decision/list`,
    countPath: `${base()}/decision/list/count`,
    sort: 'createdAt,desc',
    filters: [{ name: 'decision', label: 'Decision', options: ['DUPLICATE', 'NOT_DUPLICATE'] }],
    columns: [
      { label: 'When', value: (d) => when(d.createdAt) },
      { label: 'Case', value: (d) => `#${d.caseId}` },
      { label: 'Adjudicator', value: (d) => d.username ?? `account #${d.accountId} (deleted)` },
      {
        label: 'Decision',
        value: (d) => [badge(d.decision), d.duplicateOfSubjectId ? ` of ${d.duplicateOfSubjectId}` : ''],
      },
      { label: 'Comment', value: (d) => d.comment || h('span', { class: 'muted' }, 'none') },
    ],
    onRow: (d) => (location.hash = `#/cases/${d.caseId}`),
  });
}

/** One case by id, wherever it is: the solved store first, else the pending one (decidable by an ADMIN). */
export async function renderCase(view, [id], ui) {
  const area = h('section', { id: 'case' });
  let review;
  let store = 'solved';
  try {
    review = await call(`${base()}/solved`, { query: { id } });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    store = 'pending';
    review = await call(`${base()}/pending`, { query: { id } });
  }
  if (!ui.current()) return;
  const isAdmin = session()?.role === 'ADMIN';
  mount(
    view,
    h('p', {}, h('a', { href: isAdmin ? '#/solved' : '#/decisions' }, isAdmin ? '← Solved cases' : '← Decisions')),
    h('h1', {}, `Adjudication of `, subjectLink(review.adjudication.subjectId)),
    store === 'pending' && !isAdmin
      ? h('p', { class: 'notice' }, 'This case is still pending: take it from the queue to decide.')
      : null,
    area,
  );
  await showCase(area, review, { base: base(), store, ui, decidable: isAdmin });
}
