import { findCaseInStore } from '../../db/repositories/adjudication/cases.js';
import { findSubjectRefsBySubjectIds } from '../../db/repositories/biometric-data/identifiers.js';
import type { ServiceContext } from '../context.js';
import { notFound } from '../errors.js';
import type { DownloadRequest } from '../biometric-data/download.js';

/**
 * The images an adjudicator compares: those of the probe subject and of every candidate of one case. The
 * image downloads of sections 4.3 and 4.4 need ADMIN (root surface) and reach any subject; this selection is
 * what lets an ADJUDICATOR see the faces of the cases they may read, and nothing else.
 */
export async function caseImages(
  ctx: ServiceContext,
  id: number,
  store: 'pending' | 'solved',
): Promise<DownloadRequest> {
  const row = await findCaseInStore(ctx.db, id, store);
  if (!row) throw notFound(`${store === 'pending' ? 'Pending' : 'Solved'} adjudication case ${id}`);
  const subjectIds = [row.subject_id, ...row.candidates.map((c) => c.subjectId)];
  // Subjects deleted since the case was opened are simply left out, as the case's JSON leaves them out.
  const subjects = await findSubjectRefsBySubjectIds(ctx.db, subjectIds);
  if (subjects.length === 0) throw notFound(`Any subject of adjudication case ${id}`);
  return { selector: { subjectRefs: subjects.map((s) => s.id) }, content: 'images', name: ['case', id] };
}
