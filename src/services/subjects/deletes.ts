import type { Services } from '../index.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { escapeLike } from '../../db/repositories/like.js';
import {
  lockSubjectKey,
  lockSubjectKeysBySubjectIds,
  lockSubjectKeysMatching,
  lockSubjectKeysOfOperations,
  operationUuidsWithSubject,
} from '../../db/repositories/subjects/lookup.js';
import { removeSubjects } from './remove.js';
import type { SubjectKey } from '../../db/repositories/subjects/remove.js';
import type { Principal } from '../auth/principal.js';
import type { Surface } from '../../auth/roles.js';
import { actor, ownerOf, ownsSubject } from '../ownership.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { ServiceContext } from '../context.js';

/** What deleting subjects uses: the database and the gallery the deleted templates leave. */
type DeleteServices = { ctx: ServiceContext; gallery: GalleryService };

/** Who asks for a delete: named in its log line, and on the user surface the limit of what it may delete. */
interface DeleteCaller {
  surface: Surface;
  principal: Principal;
}

/**
 * The deletes of seed 4.11. Each runs in one transaction (what a subject delete removes is written once, in
 * remove.ts), and only after the commit is the in-memory gallery told, so a rolled-back delete never drops a
 * subject from identification; the other nodes are told by a NOTIFY inside the transaction, which PostgreSQL
 * delivers with the commit. Bulk deletes are all or nothing: one unknown identifier is a 404 naming
 * every unknown one, and nothing is deleted.
 */

/** Delete the subjects, then take them out of the gallery; answers `DeletedCount`. */
async function deleteAndForget(
  services: DeleteServices,
  caller: DeleteCaller,
  select: (trx: Services['ctx']['db']) => Promise<SubjectKey[]>,
) {
  const { ctx } = services;
  const { subjects, removed } = await services.gallery.transaction(async (trx, changes) => {
    const subjects = await select(trx);
    const removed = await removeSubjects(trx, subjects);
    changes.remove(subjects.map((s) => s.id));
    return { subjects, removed };
  });
  ctx.log.info('subjects deleted', { subjects: subjects.length, removed, by: actor(caller) });
  return { deleted: removed.subjects };
}

/** `deleteSubject`: one subject named by subjectId or internal id; 404 when it does not exist. */
export function deleteSubject(
  services: DeleteServices,
  ref: { subjectId?: string; id?: number },
  caller: DeleteCaller,
) {
  return deleteAndForget(services, caller, async (trx) => {
    const row = await lockSubjectKey(trx, ref);
    if (!row) throw notFound(ref.id !== undefined ? `Subject ${ref.id}` : `Subject '${ref.subjectId}'`);
    return [row];
  });
}

/** `deleteSubjects`: subjects by subjectId, all or none. */
export function deleteSubjects(services: DeleteServices, subjectIds: readonly string[], caller: DeleteCaller) {
  const wanted = [...new Set(subjectIds)];
  return deleteAndForget(services, caller, async (trx) => {
    const rows = await lockSubjectKeysBySubjectIds(trx, wanted);
    const found = new Set(rows.map((r) => r.subject_id));
    const missing = wanted.filter((s) => !found.has(s));
    if (missing.length) {
      throw new DomainError(
        'not-found',
        `Subjects ${missing.map((s) => `'${s}'`).join(', ')} were not found; nothing was deleted`,
        { missing },
      );
    }
    return rows;
  });
}

/** `deleteSubjectsByUUID`: the subjects the given operations concern, all or none. */
export function deleteSubjectsByUuid(services: DeleteServices, uuids: readonly string[], caller: DeleteCaller) {
  const wanted = [...new Set(uuids.map((u) => u.toLowerCase()))];
  return deleteAndForget(services, caller, async (trx) => {
    const rows = await lockSubjectKeysOfOperations(trx, wanted);
    const named = await operationUuidsWithSubject(trx, wanted);
    const missing = wanted.filter((u) => !named.has(u));
    if (missing.length) {
      throw new DomainError('not-found', `No subject for operations ${missing.join(', ')}; nothing was deleted`, {
        missing,
      });
    }
    return rows.map((r) => ({
      id: r.id,
      subject_id: r.subject_id,
      enrollment_operation_uuid: r.enrollment_operation_uuid,
    }));
  });
}

/**
 * `clearDb`: the subjects whose subjectId starts with `prefix` (literally), or every subject without one,
 * each with everything a subject delete removes. The user surface must give a non-empty prefix, and there
 * clears only the subjects the calling account enrolled (services/ownership.ts); the log line names the
 * caller. After the commit the gallery is reset (it reloads on next use), cheaper than removing subjects
 * one by one.
 */
export async function clearDb(services: DeleteServices, prefix: string | undefined, caller: DeleteCaller) {
  const given = prefix ? prefix : undefined;
  const owner = ownerOf(caller);
  if (caller.surface === 'user' && given === undefined) {
    throw invalid('query.prefix', 'is required on the user surface (clearing every subject needs an ADMIN surface)');
  }
  const { ctx } = services;
  const removed = await services.gallery.transaction(async (trx, changes) => {
    const subjects = await lockSubjectKeysMatching(
      trx,
      given !== undefined ? `${escapeLike(given)}%` : undefined,
      owner ? (column) => ownsSubject(column, owner) : undefined,
    );
    const removed = await removeSubjects(trx, subjects);
    changes.reset();
    return removed;
  });
  ctx.log.warn('subjects cleared', { prefix: given ?? null, removed, by: actor(caller) });
  return { deleted: removed.subjects, removed };
}
