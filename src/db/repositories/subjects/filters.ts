import { sql, type ExpressionBuilder } from 'kysely';
import { json } from '../../json.js';
import type { Database } from '../../tables.js';
import type { SubjectFilter } from '../../../schemas/subject-queries.js';
import { likePrefix } from '../like.js';
import type { Queryable } from '../queryable.js';
import type { SlotOf } from './shapes.js';

/**
 * The subject filters of domain.md ("Lists, filters, paging") as one select builder, shared by every list
 * and its count twin so that the two can never disagree. Every filter is a WHERE on `subjects` (aliased `s`);
 * modality is an EXISTS over the sample and template tables, so no join multiplies rows.
 *
 * The builder takes the filter's shape (which fields are given) and its values apart ({@link filterShape},
 * {@link filterValues}), so a page can be compiled once per shape and bound per call (shapes.ts).
 */

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
      eb
        .selectFrom('templates')
        .select(sql.lit(1).as('one'))
        .whereRef('templates.subject_ref', '=', 's.id')
        .where('templates.modality', '=', modality),
    ),
  ]);
}

/** The fields whose values are bound (the modality is not: it picks the table, so it is part of the shape). */
const BOUND = ['subjectId', 'status', 'templateVersion', 'createdFrom', 'createdTo', 'metadata'] as const;
type BoundField = (typeof BOUND)[number];

/** What changes the filter's SQL text: the fields given, and the modality. */
export function filterShape(filter: Partial<SubjectFilter>): string {
  return [...BOUND.filter((k) => Boolean(filter[k])), ...(filter.modality ? [`modality=${filter.modality}`] : [])].join(
    ',',
  );
}

/** The values the filter binds, by field, as its WHERE compares them (the prefix as a LIKE pattern, metadata as JSON text). */
export function filterValues(filter: Partial<SubjectFilter>): Partial<Record<BoundField, unknown>> {
  const values: Partial<Record<BoundField, unknown>> = {};
  if (filter.subjectId) values.subjectId = likePrefix(filter.subjectId);
  if (filter.status) values.status = filter.status;
  if (filter.templateVersion) values.templateVersion = filter.templateVersion;
  if (filter.createdFrom) values.createdFrom = filter.createdFrom;
  if (filter.createdTo) values.createdTo = filter.createdTo;
  if (filter.metadata) values.metadata = json(filter.metadata);
  return values;
}

/**
 * `subjects as s` narrowed by a filter of this shape, each value taken from `value(field)` (the values of
 * {@link filterValues}, or slots). The subjectId prefix is matched literally (LIKE with `%`, `_` and `\`
 * escaped); metadata uses jsonb containment, which PostgreSQL and PGlite evaluate alike.
 */
export function filteredSubjectsOfShape(db: Queryable, filter: Partial<SubjectFilter>, value: SlotOf) {
  let query = db.selectFrom('subjects as s');
  if (filter.subjectId) query = query.where('s.subject_id', 'like', value<string>('subjectId'));
  if (filter.status) query = query.where('s.status', '=', value<NonNullable<SubjectFilter['status']>>('status'));
  if (filter.templateVersion) query = query.where('s.template_version', '=', value<string>('templateVersion'));
  if (filter.createdFrom)
    query = query.where('s.created_at', '>=', value<NonNullable<SubjectFilter['createdFrom']>>('createdFrom'));
  if (filter.createdTo)
    query = query.where('s.created_at', '<=', value<NonNullable<SubjectFilter['createdTo']>>('createdTo'));
  if (filter.metadata) query = query.where(sql<boolean>`s.metadata @> ${value<string>('metadata')}::jsonb`);
  const modality = filter.modality;
  if (modality) query = query.where((eb) => hasModality(eb, modality));
  return query;
}

/** `subjects as s` narrowed by a filter, its values in place (the counts, the identifier lists). */
export function filteredSubjects(db: Queryable, filter: Partial<SubjectFilter>) {
  const values = filterValues(filter);
  return filteredSubjectsOfShape(db, filter, <T>(name: string) => values[name as BoundField] as T);
}
