import type { Kysely } from 'kysely';
import { encodePng } from '../../src/biometrics/image/encode.js';
import { encodeFaceTemplate } from '../../src/biometrics/template.js';
import { json } from '../../src/db/json.js';
import type { Database } from '../../src/db/tables.js';
import { recordOperation, type OperationType } from '../../src/services/operation-log/record.js';

/**
 * Subjects written straight into the database with Kysely, as enrolment would leave them, so the subject
 * reads and deletes can be tested without the face engine: an ENROLL operation, the subject row, per face an
 * ORIGINAL image (a small real PNG) and a face sample with its template, per voice a sample with placeholder
 * audio, and a templates row per modality. Face templates are real (`encodeFaceTemplate` of a random unit
 * 512-d embedding), so the gallery can load and match them.
 */

export const TEMPLATE_VERSION = 'face-test-v1';
const principal = { accountId: 1, username: 'admin', role: 'ADMIN' as const, via: 'basic' as const };

/** A random L2-normalised 512-d embedding. */
export function randomEmbedding(): Float32Array {
  const v = new Float32Array(512);
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] = Math.random() * 2 - 1;
    norm += v[i]! * v[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** A 4x4 PNG whose pixels are all `shade`. */
export function tinyPng(shade = 128): Uint8Array {
  return encodePng({ width: 4, height: 4, data: new Uint8Array(48).fill(shade) });
}

export interface SeedSubject {
  subjectId: string;
  status?: 'ENROLLED' | 'PENDING_ADJUDICATION' | 'REJECTED';
  metadata?: Record<string, unknown>;
  createdAt?: Date;
  /** Qualities of the face samples to store (one sample each). */
  faces?: number[];
  /** Qualities of the voice samples to store. */
  voices?: number[];
  /** The account that enrols it (the enrolment operation's account; default 1, the admin). */
  accountId?: number;
  /** The quality of a voice template stored without a voice sample (as an imported template is). */
  voiceTemplateQuality?: number;
}

export interface SeededSubject {
  id: number;
  subjectId: string;
  enrollUuid: string;
  embedding: Float32Array;
  /** The face template bytes stored with each face sample (the same embedding for all of them). */
  template: Uint8Array;
  png: Uint8Array;
}

/** Write one subject with its samples; returns what the tests need to find it again. */
export async function seedSubject(db: Kysely<Database>, spec: SeedSubject): Promise<SeededSubject> {
  const at = spec.createdAt ?? new Date();
  const faces = spec.faces ?? [80];
  const voices = spec.voices ?? [];
  const embedding = randomEmbedding();
  const template = encodeFaceTemplate(TEMPLATE_VERSION, { embedding, quality: faces[0] ?? null });
  const png = tinyPng(faces.length * 10 + voices.length);
  const enrollUuid = crypto.randomUUID();
  return db.transaction().execute(async (trx) => {
    const modalities = [...(faces.length ? ['FACE' as const] : []), ...(voices.length ? ['VOICE' as const] : [])];
    await recordOperation(trx, {
      uuid: enrollUuid,
      type: 'ENROLL',
      status: 'SUCCESS',
      subjectId: spec.subjectId,
      modalities,
      durationMs: 5,
      principal: { ...principal, accountId: spec.accountId ?? 1 },
      surface: 'admin',
      at,
    });
    const subject = await trx
      .insertInto('subjects')
      .values({
        subject_id: spec.subjectId,
        status: spec.status ?? 'ENROLLED',
        metadata: json(spec.metadata ?? {}),
        template_version: TEMPLATE_VERSION,
        enrollment_operation_uuid: enrollUuid,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const quality of faces) {
      const image = await trx
        .insertInto('images')
        .values({
          operation_uuid: enrollUuid,
          subject_ref: subject.id,
          kind: 'ORIGINAL',
          format: 'PNG',
          width: 4,
          height: 4,
          bytes: png,
          created_at: at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('face_samples')
        .values({
          subject_ref: subject.id,
          operation_uuid: enrollUuid,
          image_id: image.id,
          rectangle: json({ x: 0.4, y: 1, width: 2.6, height: 3 }),
          landmarks: json(null),
          yaw: 1.5,
          pitch: -2,
          roll: 0.5,
          quality,
          liveness_score: null,
          template_version: TEMPLATE_VERSION,
          template,
          created_at: at,
        })
        .execute();
    }
    for (const quality of voices) {
      await trx
        .insertInto('voice_samples')
        .values({
          subject_ref: subject.id,
          operation_uuid: enrollUuid,
          audio: new Uint8Array([82, 73, 70, 70, 1, 2, 3, 4]),
          duration_ms: 2000,
          sample_rate: 16000,
          quality,
          speech_ratio: 0.75,
          template_version: 'voice-test-v1',
          template: new Uint8Array([9, 9, 9, 9]),
          created_at: at,
        })
        .execute();
    }
    if (faces.length) {
      await trx
        .insertInto('templates')
        .values({
          subject_ref: subject.id,
          modality: 'FACE',
          template_version: TEMPLATE_VERSION,
          data: template,
          quality: Math.max(...faces),
          created_at: at,
        })
        .execute();
    }
    if (spec.voiceTemplateQuality !== undefined) {
      await trx
        .insertInto('templates')
        .values({
          subject_ref: subject.id,
          modality: 'VOICE',
          template_version: 'voice-test-v1',
          data: new Uint8Array([1]),
          quality: spec.voiceTemplateQuality,
        })
        .execute();
    }
    return { id: subject.id, subjectId: spec.subjectId, enrollUuid, embedding, template, png };
  });
}

/** Log another operation about a subject (a verification, say), with an unowned probe image; `accountId` records who asked (default 1). */
export async function seedOperation(
  db: Kysely<Database>,
  subjectId: string | null,
  type: OperationType = 'VERIFY',
  accountId = 1,
): Promise<string> {
  const uuid = crypto.randomUUID();
  await recordOperation(db, {
    uuid,
    type,
    status: 'SUCCESS',
    subjectId,
    modalities: ['FACE'],
    score: 90,
    threshold: 48,
    durationMs: 3,
    principal: { ...principal, accountId },
    surface: 'admin',
    at: new Date(),
  });
  await db
    .insertInto('images')
    .values({
      operation_uuid: uuid,
      subject_ref: null,
      kind: 'ORIGINAL',
      format: 'PNG',
      width: 4,
      height: 4,
      bytes: tinyPng(7),
    })
    .execute();
  return uuid;
}

/** An adjudication case with `subjectId` as the probe. */
export async function seedCase(
  db: Kysely<Database>,
  subjectId: string,
  operationUuid: string,
  status: 'PENDING' | 'SOLVED' = 'PENDING',
) {
  const row = await db
    .insertInto('adjudication_cases')
    .values({
      operation_uuid: operationUuid,
      subject_id: subjectId,
      candidates: json([]),
      status,
      ...(status === 'SOLVED' ? { outcome: 'NOT_DUPLICATE', solved_at: new Date() } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('adjudication_decisions')
    .values({ case_id: row.id, account_id: 1, decision: 'NOT_DUPLICATE' })
    .execute();
  return row.id;
}

/** Rows per table that belong to a subject (by ref, subjectId or its enrolment UUID). */
export async function rowsOf(db: Kysely<Database>, s: SeededSubject) {
  const count = async (q: { executeTakeFirstOrThrow(): Promise<{ n: number | string | bigint }> }) =>
    Number((await q.executeTakeFirstOrThrow()).n);
  return {
    subjects: await count(
      db
        .selectFrom('subjects')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('id', '=', s.id),
    ),
    faceSamples: await count(
      db
        .selectFrom('face_samples')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_ref', '=', s.id),
    ),
    voiceSamples: await count(
      db
        .selectFrom('voice_samples')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_ref', '=', s.id),
    ),
    images: await count(
      db
        .selectFrom('images')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_ref', '=', s.id),
    ),
    templates: await count(
      db
        .selectFrom('templates')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_ref', '=', s.id),
    ),
    operations: await count(
      db
        .selectFrom('operations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_id', '=', s.subjectId),
    ),
    openCases: await count(
      db
        .selectFrom('adjudication_cases')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('subject_id', '=', s.subjectId)
        .where('status', '=', 'PENDING'),
    ),
  };
}
