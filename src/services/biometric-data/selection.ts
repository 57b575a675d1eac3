import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import {
  existingSubjectRefs,
  findOperationUuidsByIds,
  findSubjectRefsBySubjectIds,
  knownOperationUuids,
} from '../../db/repositories/biometric-data/identifiers.js';

/**
 * What a download asks for, in the four ways the seed names things: operations by numeric id or by UUID,
 * subjects by the client's subjectId or by internal id. Resolution is all or nothing: one unknown
 * identifier fails the whole request with a 404 naming every unknown one, so a client never receives an
 * archive that silently lacks what it asked for.
 */
export type Selector =
  | { operationIds: readonly number[] }
  | { operationUuids: readonly string[] }
  | { subjectIds: readonly string[] }
  | { subjectRefs: readonly number[] };

/** The samples to download: those stored by these operations, plus those belonging to these subjects. */
export interface Selection {
  operationUuids: string[];
  subjectRefs: number[];
}

/** At most this many unknown identifiers are spelled out in the detail; `missing` lists them all. */
const NAMED_IN_DETAIL = 20;

function missingError<T extends string | number>(what: string, missing: T[]): DomainError {
  const shown = missing.slice(0, NAMED_IN_DETAIL).map((m) => (typeof m === 'string' ? `'${m}'` : String(m)));
  const more = missing.length > NAMED_IN_DETAIL ? ` and ${missing.length - NAMED_IN_DETAIL} more` : '';
  return new DomainError('not-found', `${what} not found: ${shown.join(', ')}${more}; nothing was downloaded`, {
    missing,
  });
}

const unique = <T>(items: readonly T[]) => [...new Set(items)];

/** Resolve a selector to operation UUIDs and subject rows; 404 naming every unknown identifier. */
export async function resolveSelection(ctx: ServiceContext, selector: Selector): Promise<Selection> {
  if ('operationIds' in selector) {
    const ids = unique(selector.operationIds);
    const rows = await findOperationUuidsByIds(ctx.db, ids);
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw missingError('Operations', missing);
    return { operationUuids: rows.map((r) => r.uuid), subjectRefs: [] };
  }
  if ('operationUuids' in selector) {
    const uuids = unique(selector.operationUuids.map((u) => u.toLowerCase()));
    const known = await knownOperationUuids(ctx.db, uuids);
    const missing = uuids.filter((u) => !known.has(u));
    if (missing.length) throw missingError('Operations', missing);
    return { operationUuids: uuids, subjectRefs: [] };
  }
  if ('subjectIds' in selector) {
    const ids = unique(selector.subjectIds);
    const rows = await findSubjectRefsBySubjectIds(ctx.db, ids);
    const found = new Set(rows.map((r) => r.subject_id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw missingError('Subjects', missing);
    return { operationUuids: [], subjectRefs: rows.map((r) => r.id) };
  }
  const refs = unique(selector.subjectRefs);
  const found = await existingSubjectRefs(ctx.db, refs);
  const missing = refs.filter((id) => !found.has(id));
  if (missing.length) throw missingError('Subjects', missing);
  return { operationUuids: [], subjectRefs: refs };
}
