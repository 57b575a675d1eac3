import { call } from '../api.js';
import { badge, facts, h, mount, score, when } from '../dom.js';
import { loadImages } from '../images.js';
import { gallery, pagedList } from './browse.js';

/** Subjects: a filtered list, and one subject with its images and face data. */
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

export async function renderSubject(view, [subjectId], ui) {
  const subject = await call(`/admin/subjects/${encodeURIComponent(subjectId)}`);
  const images = await loadImages(`/admin/images/subject/${subject.id}/download`);
  if (!ui.current()) return;
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
        ['Enrolled by', subject.enrollmentOperationUuid],
        ['Metadata', Object.keys(subject.metadata).length ? JSON.stringify(subject.metadata) : undefined],
        ['Faces', subject.faces.map((f) => `#${f.id}: quality ${score(f.quality)}${f.livenessScore !== undefined ? `, liveness ${score(f.livenessScore)}` : ''}`).join('; ')],
        ['Voices', subject.voices.length ? String(subject.voices.length) : undefined],
      ]),
    ),
    h('h2', {}, 'Images'),
    gallery(images),
  );
}
