import { ApiError, call } from '../api.js';
import { accountLabel, accountNames } from '../accounts.js';
import { badge, facts, h, mount, score, table, when } from '../dom.js';
import { loadImages } from '../images.js';
import { gallery, pagedList } from './browse.js';

/**
 * Subjects: a filtered list, and one subject's record: who enrolled it, whom it duplicates (with the scores
 * that said so) when it is not ENROLLED, its adjudication cases with their decisions, every operation that
 * names it, and its images.
 */
export function renderSubjects(view, _params, ui) {
  return pagedList(view, ui, {
    title: 'Subjects',
    listPath: '/admin/subjects',
    countPath: '/admin/subjects/count',
    filters: [
      { name: 'subjectId', label: 'Subject id starts with', placeholder: 'e.g. alice' },
      { name: 'status', label: 'Status', options: ['ENROLLED', 'PENDING_ADJUDICATION', 'REJECTED'] },
    ],
    columns: [
      { label: 'Subject', value: (s) => s.subjectId },
      { label: 'Status', value: (s) => badge(s.status) },
      { label: 'Modalities', value: (s) => s.modalities.join(', ') },
      { label: 'Created', value: (s) => when(s.createdAt) },
    ],
    onRow: (s) => (location.hash = `#/subjects/${encodeURIComponent(s.subjectId)}`),
  });
}

/** A read that may find nothing (deleted since): null for a 404, the answer otherwise. */
async function orNothing(promise) {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/** Every case opened for this subject, pending and solved (the list filters match by prefix: keep exact ones). */
async function casesOf(subjectId) {
  const [pending, solved] = await Promise.all([
    call('/admin/adjudication/pending/list', { query: { subjectId, size: 100, sort: 'createdAt,desc' } }),
    call('/admin/adjudication/solved/list', { query: { subjectId, size: 100, sort: 'solvedAt,desc' } }),
  ]);
  return [
    ...pending.map((c) => ({ ...c, store: 'pending' })),
    ...solved.map((c) => ({ ...c, store: 'solved' })),
  ].filter((c) => c.subjectId === subjectId);
}

const subjectAnchor = (subjectId) => h('a', { href: `#/subjects/${encodeURIComponent(subjectId)}` }, subjectId);

/** Why a subject is not ENROLLED, in words, from its enrolment and its cases. */
function verdict(subject, operation, cases) {
  const solved = cases.find((c) => c.store === 'solved');
  const pending = cases.find((c) => c.store === 'pending');
  if (subject.status === 'PENDING_ADJUDICATION') {
    return pending
      ? [
          'Enrolment found possible duplicates: ',
          h('a', { href: `#/queue/${pending.id}` }, `case #${pending.id}`),
          ` waits for an adjudicator (${pending.status}).`,
        ]
      : 'Enrolment found possible duplicates; no case is open for it.';
  }
  if (solved?.outcome === 'DUPLICATE') {
    return [
      'An adjudicator judged it the same person as ',
      solved.duplicateOfSubjectId ? subjectAnchor(solved.duplicateOfSubjectId) : 'a candidate',
      ' in ',
      h('a', { href: `#/cases/${solved.id}` }, `case #${solved.id}`),
      '.',
    ];
  }
  if (
    operation?.status === 'DUPLICATE_FOUND' &&
    operation.threshold !== undefined &&
    operation.score !== undefined &&
    operation.score >= operation.threshold
  ) {
    return `Enrolment found a duplicate scoring ${score(operation.score)}, at or above the duplicate threshold ${score(operation.threshold)}.`;
  }
  return 'It was not accepted into the gallery: its possible duplicates are below.';
}

/** The enrolled subjects it was compared with and matched, best first, with their scores and links. */
function candidatesTable(candidates, threshold) {
  return table(
    [
      { label: 'Rank', value: (c) => String(c.rank ?? '') },
      { label: 'Subject', value: (c) => subjectAnchor(c.subjectId) },
      { label: 'Score', value: (c) => h('span', { 'data-testid': 'candidate-score' }, score(c.score)) },
      { label: 'Face', value: (c) => (c.scores?.FACE !== undefined ? score(c.scores.FACE) : '') },
      { label: 'Voice', value: (c) => (c.scores?.VOICE !== undefined ? score(c.scores.VOICE) : '') },
      { label: 'Threshold', value: () => (threshold !== undefined ? score(threshold) : '') },
    ],
    candidates,
  );
}

/** The subject's cases, each with its state and decisions (comments included). */
function casesTable(cases) {
  return table(
    [
      {
        label: 'Case',
        value: (c) => h('a', { href: c.store === 'solved' ? `#/cases/${c.id}` : `#/queue/${c.id}` }, `#${c.id}`),
      },
      {
        label: 'State',
        value: (c) => (c.store === 'solved' ? [badge('SOLVED'), ' ', badge(c.outcome)] : badge(c.status)),
      },
      { label: 'Opened', value: (c) => when(c.createdAt) },
      {
        label: 'Decisions',
        value: (c) =>
          c.decisions.length
            ? c.decisions.map((d) =>
                h(
                  'div',
                  {},
                  `${d.username ?? `account #${d.accountId}`}: ${d.decision}${d.comment ? ` – “${d.comment}”` : ''}`,
                ),
              )
            : 'none yet',
      },
    ],
    cases,
  );
}

/** Every operation naming the subject, newest first: its enrolment, verifications, re-extractions. */
function historyTable(operations, names) {
  return table(
    [
      { label: 'When', value: (o) => when(o.createdAt) },
      { label: 'Operation', value: (o) => h('a', { href: `#/operations/${o.id}` }, `#${o.id} ${o.type}`) },
      { label: 'Status', value: (o) => badge(o.status) },
      { label: 'Score', value: (o) => (o.score !== undefined ? score(o.score) : '') },
      { label: 'By', value: (o) => accountLabel(names, o.accountId) },
      { label: 'Surface', value: (o) => o.surface },
    ],
    operations,
  );
}

export async function renderSubject(view, [subjectId], ui) {
  const subject = await call(`/admin/subjects/${encodeURIComponent(subjectId)}`);
  const uuid = subject.enrollmentOperationUuid;
  const [images, names, operation, history, cases] = await Promise.all([
    loadImages(`/admin/images/subject/${subject.id}/download`),
    accountNames(),
    uuid ? orNothing(call('/admin/operations/uuid/', { query: { uuid } })) : null,
    call('/admin/operations', { query: { subjectId: subject.subjectId, size: 100, sort: 'createdAt,desc' } }),
    casesOf(subject.subjectId),
  ]);
  if (!ui.current()) return;
  const candidates = operation?.candidates ?? cases[0]?.candidates ?? [];
  const enrolledBy = operation
    ? h(
        'span',
        { 'data-testid': 'enrolled-by' },
        accountLabel(names, operation.accountId),
        ` on ${when(operation.createdAt)} (`,
        h('a', { href: `#/operations/${operation.id}` }, `operation #${operation.id}`),
        ')',
      )
    : uuid
      ? 'its enrolment is no longer in the operation log'
      : undefined;
  mount(
    view,
    h('p', {}, h('a', { href: '#/subjects' }, '← Subjects')),
    h('h1', {}, `Subject ${subject.subjectId} `, badge(subject.status)),
    h(
      'div',
      { class: 'card' },
      facts([
        ['Internal id', String(subject.id)],
        ['Modalities', subject.modalities.join(', ') || 'none'],
        ['Template version', subject.templateVersion],
        ['Created', when(subject.createdAt)],
        ['Updated', when(subject.updatedAt)],
        ['Enrolled by', enrolledBy],
        ['Metadata', Object.keys(subject.metadata).length ? JSON.stringify(subject.metadata) : undefined],
        [
          'Faces',
          subject.faces
            .map(
              (f) =>
                `#${f.id}: quality ${score(f.quality)}${f.livenessScore !== undefined ? `, liveness ${score(f.livenessScore)}` : ''}`,
            )
            .join('; '),
        ],
        ['Voices', subject.voices.length ? String(subject.voices.length) : undefined],
      ]),
    ),
    subject.status !== 'ENROLLED'
      ? h(
          'section',
          { 'data-testid': 'duplicates' },
          h('h2', {}, subject.status === 'REJECTED' ? 'Why it was rejected' : 'Possible duplicates'),
          h('p', { class: 'notice', id: 'verdict' }, verdict(subject, operation, cases)),
          candidatesTable(candidates, operation?.threshold),
        )
      : null,
    cases.length ? [h('h2', {}, 'Adjudication'), h('div', { 'data-testid': 'cases' }, casesTable(cases))] : null,
    h('h2', {}, 'Operation history'),
    h('div', { 'data-testid': 'history' }, historyTable(history, names)),
    h('h2', {}, 'Images'),
    gallery(images),
  );
}
