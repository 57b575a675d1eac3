/**
 * Names of the files inside a download and of the download itself. SubjectIds are the client's free text
 * (up to 128 characters, anything but control characters), so they may hold '/', '..', ':', '*', non-Latin
 * letters and so on; a name built from one must be safe to extract on every operating system (no path
 * traversal, no reserved characters) and must never let two subjects share a folder.
 */

/** Longest cleaned part of a name taken from client text. */
const MAX_SEGMENT = 64;

/**
 * `text` reduced to ASCII letters, digits, '-' and '_' (every other run becomes one '_'), trimmed of '_',
 * at most 64 characters, never empty. No '.' survives, so '..' and hidden files cannot appear.
 *
 * @example safeSegment('../etc/passwd') // 'etc_passwd'
 */
export function safeSegment(text: string): string {
  const cleaned = text
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_SEGMENT);
  return cleaned || '_';
}

/**
 * The folder of one subject: its subjectId when that is already safe, otherwise the cleaned form followed
 * by `~` and the internal id. Safe subjectIds never contain '~', so a suffixed name can collide neither
 * with one of them nor (the internal id being unique) with another suffixed one.
 *
 * @example subjectFolder('alice', 7) // 'subjects/alice'
 * @example subjectFolder('a/b', 9)   // 'subjects/a_b~9'
 */
export function subjectFolder(subjectId: string, subjectRef: number): string {
  const safe = safeSegment(subjectId);
  return `subjects/${safe === subjectId ? safe : `${safe}~${subjectRef}`}`;
}

/** The folder of samples that belong to no subject (probes of VERIFY, IDENTIFY, CHECK): their operation. */
export function operationFolder(operationUuid: string): string {
  return `operations/${safeSegment(operationUuid)}`;
}

/** `20261125T234500Z`: a timestamp that sorts and is safe in a file name. */
function compactTimestamp(at: Date): string {
  return at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/**
 * The download's own name, for Content-Disposition and the manifest: only safe characters, so the header
 * needs no quoting rules beyond the plain quoted string.
 *
 * @example archiveName('images', ['subject', 'alice'], at) // 'bims-images-subject-alice-20261125T234500Z.zip'
 */
export function archiveName(area: string, parts: readonly (string | number)[], at: Date): string {
  const middle = [area, ...parts].map((p) => safeSegment(String(p))).join('-');
  return `bims-${middle}-${compactTimestamp(at)}.zip`;
}
