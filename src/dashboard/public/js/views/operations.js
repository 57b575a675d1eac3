import { call } from '../api.js';
import { accountLabel, accountNames } from '../accounts.js';
import { badge, facts, h, mount, score, table, when } from '../dom.js';
import { loadImages } from '../images.js';
import { gallery, pagedList } from './browse.js';

/** The operation log: a filtered list, and one operation with its candidates, checks and images. */
export async function renderOperations(view, _params, ui) {
  const names = await accountNames();
  return pagedList(view, ui, {
    title: 'Operations',
    listPath: '/admin/operations',
    countPath: '/admin/operations/count',
    filters: [
      { name: 'type', label: 'Type', options: ['ENROLL', 'VERIFY', 'IDENTIFY', 'CHECK', 'REMOTE_VERIFY', 'REEXTRACT'] },
      { name: 'subjectId', label: 'Subject id (exact)' },
    ],
    columns: [
      { label: 'Id', value: (o) => String(o.id) },
      { label: 'When', value: (o) => when(o.createdAt) },
      { label: 'Type', value: (o) => o.type },
      { label: 'Status', value: (o) => badge(o.status) },
      { label: 'Subject', value: (o) => o.subjectId ?? '' },
      { label: 'Score', value: (o) => (o.score !== undefined ? score(o.score) : '') },
      { label: 'By', value: (o) => accountLabel(names, o.accountId) },
      { label: 'ms', value: (o) => String(o.durationMs) },
    ],
    onRow: (o) => (location.hash = `#/operations/${o.id}`),
  });
}

export async function renderOperation(view, [id], ui) {
  const op = await call('/admin/operations/id/', { query: { id } });
  const [images, names] = await Promise.all([loadImages(`/admin/images/operation/${op.id}/download`), accountNames()]);
  if (!ui.current()) return;
  mount(
    view,
    h('p', {}, h('a', { href: '#/operations' }, '← Operations')),
    h('h1', {}, `Operation #${op.id}: ${op.type} `, badge(op.status)),
    h(
      'div',
      { class: 'card' },
      facts([
        ['UUID', op.uuid],
        ['When', when(op.createdAt)],
        [
          'Subject',
          op.subjectId ? h('a', { href: `#/subjects/${encodeURIComponent(op.subjectId)}` }, op.subjectId) : undefined,
        ],
        ['Score', op.score !== undefined ? `${score(op.score)} (threshold ${score(op.threshold)})` : undefined],
        ['By', h('span', { 'data-testid': 'operation-by' }, accountLabel(names, op.accountId))],
        ['Surface', op.surface],
        ['Duration', `${op.durationMs} ms`],
        ['Faces found', op.checks ? String(op.checks.faceCount) : undefined],
      ]),
    ),
    op.candidates?.length
      ? [
          h('h2', {}, 'Candidates'),
          table(
            [
              { label: 'Rank', value: (c) => String(c.rank ?? '') },
              { label: 'Subject', value: (c) => c.subjectId },
              { label: 'Score', value: (c) => score(c.score) },
            ],
            op.candidates,
            (c) => (location.hash = `#/subjects/${encodeURIComponent(c.subjectId)}`),
          ),
        ]
      : null,
    h('h2', {}, 'Images'),
    gallery(images),
  );
}
