import { galleryDigestInDatabase } from '../../db/repositories/gallery.js';
import type { Queryable } from '../../db/repositories/queryable.js';

/**
 * A fingerprint of a gallery that a node's memory and the database can both compute, so a node can tell
 * whether its in-memory gallery still equals the database (reconcile, management info, tests).
 *
 * Every gallery template contributes one term: its row (face sample or voice template, by id), the subject it
 * belongs to and the CRC-32 that closes every template (docs/template-format.md), so a template re-extracted in
 * place (same row, new bytes) changes the digest too. The digest is the count of templates and the sum of their
 * terms: order does not matter, so the database sums in SQL and the node sums what it loaded, and neither has to
 * list the other's rows. A sum is no cryptographic hash; it is meant to catch drift (a ghost subject, a missing
 * template, a stale version), not an adversary, who cannot write the gallery anyway.
 */
export interface GalleryDigest {
  templates: number;
  /** The sum of the terms, as a decimal string (it exceeds 2^53 for large galleries). */
  sum: string;
}

/** Which table a gallery template comes from. */
type TemplateSource = 'face' | 'voice';

const SOURCE_BIT: Record<TemplateSource, bigint> = { face: 0n, voice: 1n };

/** The CRC-32 stored in a template's last four bytes (little-endian), 0 for anything shorter. */
function trailingCrc(template: Uint8Array): bigint {
  const n = template.length;
  if (n < 4) return 0n;
  return BigInt(
    template[n - 4]! + template[n - 3]! * 0x100 + template[n - 2]! * 0x10000 + template[n - 1]! * 0x1000000,
  );
}

/**
 * One template's term; {@link databaseDigest} computes exactly this in SQL. Each factor keeps the term below
 * 2^62, so PostgreSQL's int8 arithmetic cannot overflow for ids up to 2^31.
 */
export function digestTerm(source: TemplateSource, rowId: number, subjectRef: number, template: Uint8Array): bigint {
  return (BigInt(rowId) * 2n + SOURCE_BIT[source]) * 1_000_003n + BigInt(subjectRef) * 7_919n + trailingCrc(template);
}

/**
 * The digest of what the gallery should hold according to the database: the face sample templates and VOICE
 * templates of ENROLLED subjects (the rows GalleryCache loads). One query; read it in the same snapshot as the
 * change-log position it is compared at. With `slots`, a matcher shard's part (sharded/shard-map.ts).
 */
export async function databaseDigest(db: Queryable, slots?: { from: number; to: number }): Promise<GalleryDigest> {
  // The SQL twin of digestTerm (and of trailingCrc for a bytea column) is in the repository.
  return galleryDigestInDatabase(db, slots);
}
