import type { Insertable, Selectable } from 'kysely';
import type { Database } from '../tables.js';
import { parsedJson } from './decode.js';
import type { Queryable } from './queryable.js';

/**
 * The SQL of stored templates: the service's template keys (`service_keys`), a subject's compact templates
 * (`templates`) and the templates of its face samples, as QR codes, remote verification and 1:1 against a
 * stored subject read them.
 */

export type ServiceKeyRow = Selectable<Database['service_keys']>;

const decodeKey = (row: ServiceKeyRow): ServiceKeyRow => ({
  ...row,
  private_jwk: parsedJson(row.private_jwk),
  public_jwk: parsedJson(row.public_jwk),
});

/** A template key of a purpose by id, retired or not. */
export async function findServiceKey(
  db: Queryable,
  purpose: ServiceKeyRow['purpose'],
  id: string,
): Promise<ServiceKeyRow | undefined> {
  const row = await db
    .selectFrom('service_keys')
    .selectAll()
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  return row && decodeKey(row);
}

/** The one unretired key of a purpose (a partial unique index keeps it to one), if there is one. */
export async function findActiveServiceKey(
  db: Queryable,
  purpose: ServiceKeyRow['purpose'],
): Promise<ServiceKeyRow | undefined> {
  const row = await db
    .selectFrom('service_keys')
    .selectAll()
    .where('purpose', '=', purpose)
    .where('retired_at', 'is', null)
    .executeTakeFirst();
  return row && decodeKey(row);
}

/**
 * Store a new key of its purpose unless an unretired one exists already: when two nodes race to create the
 * first key, the loser's insert does nothing (and it reads the winner's with {@link findActiveServiceKey}).
 */
export async function insertServiceKeyUnlessActive(
  db: Queryable,
  key: Insertable<Database['service_keys']>,
): Promise<void> {
  await db
    .insertInto('service_keys')
    .values(key)
    .onConflict((oc) => oc.column('purpose').where('retired_at', 'is', null).doNothing())
    .execute();
}

/** A subject row as an issued template is bound to it, with its compact FACE template (null when it has none). */
interface SubjectFaceTemplate {
  id: number;
  subject_id: string;
  status: Selectable<Database['subjects']>['status'];
  enrollment_operation_uuid: string | null;
  data: Uint8Array | null;
  template_version: string | null;
}

/**
 * A subject by subjectId with its compact FACE template, in one statement so that the row a template is
 * bound to and the template agree (one snapshot); the newest FACE template when there are several.
 */
export function findSubjectFaceTemplate(db: Queryable, subjectId: string): Promise<SubjectFaceTemplate | undefined> {
  return db
    .selectFrom('subjects as s')
    .leftJoin('templates as t', (j) => j.onRef('t.subject_ref', '=', 's.id').on('t.modality', '=', 'FACE'))
    .select(['s.id', 's.subject_id', 's.status', 's.enrollment_operation_uuid', 't.data', 't.template_version'])
    .where('s.subject_id', '=', subjectId)
    .orderBy('t.id', 'desc')
    .executeTakeFirst();
}

/** The subject's compact FACE templates of one template version. */
export async function listFaceTemplatesOfVersion(
  db: Queryable,
  subjectRef: number,
  version: string,
): Promise<Uint8Array[]> {
  const rows = await db
    .selectFrom('templates')
    .select('data')
    .where('subject_ref', '=', subjectRef)
    .where('modality', '=', 'FACE')
    .where('template_version', '=', version)
    .execute();
  return rows.map((r) => r.data);
}

/** The templates of the subject's face samples of one template version (a sample without one is left out). */
export async function listFaceSampleTemplatesOfVersion(
  db: Queryable,
  subjectRef: number,
  version: string,
): Promise<Uint8Array[]> {
  const rows = await db
    .selectFrom('face_samples')
    .select('template')
    .where('subject_ref', '=', subjectRef)
    .where('template_version', '=', version)
    .execute();
  return rows.flatMap((r) => (r.template ? [r.template] : []));
}

/** A stored template with the version that made it. */
export interface VersionedTemplate {
  version: string;
  template: Uint8Array;
}

/** Every face sample template of a subject, whatever its version. */
export async function listFaceSampleTemplates(db: Queryable, subjectRef: number): Promise<VersionedTemplate[]> {
  const rows = await db
    .selectFrom('face_samples')
    .select(['template', 'template_version'])
    .where('subject_ref', '=', subjectRef)
    .where('template', 'is not', null)
    .execute();
  return rows.map((r) => ({ version: r.template_version, template: r.template! }));
}

/** The subject's VOICE templates (its recordings averaged), whatever their version. */
export async function listVoiceTemplates(db: Queryable, subjectRef: number): Promise<VersionedTemplate[]> {
  const rows = await db
    .selectFrom('templates')
    .select(['data', 'template_version'])
    .where('subject_ref', '=', subjectRef)
    .where('modality', '=', 'VOICE')
    .execute();
  return rows.map((r) => ({ version: r.template_version, template: r.data }));
}
