import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { json } from '../../db/json.js';
import type { Database } from '../../db/tables.js';
import type { SubjectFilter } from '../../schemas/subjects.js';
import { escapeLike } from '../query-helpers.js';

/**
 * The subject filters of domain.md ("Lists, filters, paging") as one select builder, shared by every list
 * and its count twin so that the two can never disagree. Every filter is a WHERE on `subjects` (aliased `s`);
 * modality is an EXISTS over the sample and template tables, so no join multiplies rows.
 */

type Db = Kysely<Database>;
type SubjectsEb = ExpressionBuilder<Database & { s: Database['subjects'] }, 's'>;

/** Sortable fields of the subject lists, mapped to columns (the schemas allow only these names). */
export const subjectSortColumns = {
  id: 's.id',
  subjectId: 's.subject_id',
  status: 's.status',
  createdAt: 's.created_at',
  updatedAt: 's.updated_at',
} as const;

/** A subject holds a modality when it has a sample of it or a stored template of it (template-only enrolment). */
function hasModality(eb: SubjectsEb, modality: 'FACE' | 'VOICE') {
  const samples = modality === 'FACE' ? 'face_samples' : 'voice_samples';
  return eb.or([
    eb.exists(eb.selectFrom(samples).select(sql.lit(1).as('one')).whereRef(`${samples}.subject_ref`, '=', 's.id')),
    eb.exists(
      eb.selectFrom('templates').select(sql.lit(1).as('one')).whereRef('templates.subject_ref', '=', 's.id').where('templates.modality', '=', modality),
    ),
  ]);
}

/**
 * `subjects as s` narrowed by a filter. The subjectId prefix is matched literally (LIKE with `%`, `_` and `\`
 * escaped); metadata uses jsonb containment, which PostgreSQL and PGlite evaluate alike.
 */
export function filteredSubjects(db: Db, filter: Partial<SubjectFilter>) {
  let query = db.selectFrom('subjects as s');
  if (filter.subjectId) query = query.where('s.subject_id', 'like', `${escapeLike(filter.subjectId)}%`);
  if (filter.status) query = query.where('s.status', '=', filter.status);
  if (filter.templateVersion) query = query.where('s.template_version', '=', filter.templateVersion);
  if (filter.createdFrom) query = query.where('s.created_at', '>=', filter.createdFrom);
  if (filter.createdTo) query = query.where('s.created_at', '<=', filter.createdTo);
  if (filter.metadata) query = query.where(sql<boolean>`s.metadata @> ${json(filter.metadata)}::jsonb`);
  const modality = filter.modality;
  if (modality) query = query.where((eb) => hasModality(eb, modality));
  return query;
}
