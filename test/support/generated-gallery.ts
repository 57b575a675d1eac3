// A gallery of generated face templates written straight into a migrated database (no extraction): ENROLLED
// subjects with one or two templates each, and some templates shared by several subjects so that searches meet
// exactly equal scores (the tie-break of biometrics/candidate-order.ts). For matcher suites and benchmarks.
import { sql, type Kysely } from 'kysely';
import { FACE_CALIBRATION } from '../../src/biometrics/calibration.js';
import { encodeTemplate } from '../../src/biometrics/template.js';
import type { Database } from '../../src/db/tables.js';

/** One generated subject as stored. */
export interface GeneratedSubject {
  subjectRef: number;
  subjectId: string;
  embeddings: Float32Array[];
}

/** A reproducible stream of numbers in [-0.5, 0.5) (xorshift32). */
export function randomStream(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296 - 0.5;
  };
}

/** A unit vector from the stream; with `near`, that vector moved towards `near` by weight w. */
export function generatedEmbedding(next: () => number, near?: Float32Array, w = 0.6, dims = 512): Float32Array {
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = near ? near[i]! * w + next() * (1 - w) * 0.09 : next();
  let n = 0;
  for (let i = 0; i < dims; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  for (let i = 0; i < dims; i++) v[i]! /= n;
  return v;
}

/** A face template of the current version holding `embedding`. */
export function faceTemplate(embedding: Float32Array): Uint8Array {
  return encodeTemplate({
    templateVersion: FACE_CALIBRATION.templateVersion,
    records: [{ modality: 'face', embedding }],
  });
}

/**
 * Insert `count` ENROLLED subjects (`${prefix}-${i}`): every third has a second template near its first, and
 * every tenth shares its first template with the subject before it (equal scores for any probe). Batched
 * multi-row inserts (unnest of arrays): thousands per statement.
 */
export async function insertGeneratedGallery(
  db: Kysely<Database>,
  options: { count: number; seed: number; prefix?: string },
): Promise<GeneratedSubject[]> {
  const next = randomStream(options.seed);
  const prefix = options.prefix ?? 'gen';
  const made: { subjectId: string; embeddings: Float32Array[] }[] = [];
  for (let i = 0; i < options.count; i++) {
    const first = i % 10 === 9 && made.length ? made[made.length - 1]!.embeddings[0]! : generatedEmbedding(next);
    const embeddings = i % 3 === 0 ? [first, generatedEmbedding(next, first)] : [first];
    made.push({ subjectId: `${prefix}-${i}`, embeddings });
  }
  const out: GeneratedSubject[] = [];
  const BATCH = 2000;
  for (let at = 0; at < made.length; at += BATCH) {
    const part = made.slice(at, at + BATCH);
    const { rows } = await sql<{ id: number; subject_id: string }>`
      insert into subjects (subject_id, status, template_version)
      select s, 'ENROLLED', ${FACE_CALIBRATION.templateVersion} from unnest(${part.map((p) => p.subjectId)}::text[]) s
      returning id, subject_id`.execute(db);
    const refOf = new Map(rows.map((r) => [r.subject_id, Number(r.id)]));
    const refs: number[] = [];
    const templates: Buffer[] = [];
    for (const p of part) {
      const ref = refOf.get(p.subjectId)!;
      out.push({ subjectRef: ref, subjectId: p.subjectId, embeddings: p.embeddings });
      for (const e of p.embeddings) {
        refs.push(ref);
        templates.push(Buffer.from(faceTemplate(e)));
      }
    }
    await sql`
      insert into face_samples (subject_ref, operation_uuid, rectangle, template_version, template)
      select r, gen_random_uuid(), '{"x":0,"y":0,"width":1,"height":1}'::jsonb, ${FACE_CALIBRATION.templateVersion}, t
      from unnest(${refs}::int[], ${templates}::bytea[]) as u(r, t)`.execute(db);
  }
  return out;
}
