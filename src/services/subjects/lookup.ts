import type { Queryable } from '../../db/repositories/queryable.js';
import { findSubjectRow, type SubjectRef } from '../../db/repositories/subjects/lookup.js';
import { notFound } from '../errors.js';
import { ownsSubject, type Owner } from '../ownership.js';
import type { SubjectRow } from './present.js';

/**
 * Finding one subject by each of the names clients use for it: the internal id, the client's subjectId, or
 * the UUID of an operation that concerned it (the queries: db/repositories/subjects/lookup.ts). Each throws a
 * 404 problem when nothing matches.
 */

export type { SubjectRef };

/**
 * The subject row a client names, or a 404 naming what was asked for. With an `owner` (the user surface), a
 * subject the owner's account did not enrol is not found either (services/ownership.ts).
 */
export async function findSubject(db: Queryable, ref: SubjectRef, owner: Owner = null): Promise<SubjectRow> {
  const row = await findSubjectRow(db, ref, owner ? (column) => ownsSubject(column, owner) : undefined);
  if (row) return row;
  if ('id' in ref) throw notFound(`Subject ${ref.id}`);
  if ('subjectId' in ref) throw notFound(`Subject '${ref.subjectId}'`);
  throw notFound(`A subject of operation ${ref.operationUuid}`);
}
