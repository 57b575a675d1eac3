/**
 * The dashboard's files, held in memory: there are few and they are small, and serving from memory lets the
 * component compute each ETag once at start. A name is a path relative to the public folder.
 */
interface StaticFile {
  bytes: Uint8Array;
  contentType: string;
  etag: string;
}

export type StaticFiles = ReadonlyMap<string, StaticFile>;

/** Media types of the file kinds the dashboard ships; other files are not served at all. */
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  json: 'application/json',
};

/** Whether a file of this name is served (by extension). */
export function servable(name: string): boolean {
  return (name.split('.').pop() ?? '') in TYPES;
}

/** Index files by name, with their media type and a strong ETag from their content. */
export async function indexFiles(files: Iterable<{ name: string; bytes: Uint8Array }>): Promise<StaticFiles> {
  const out = new Map<string, StaticFile>();
  for (const { name, bytes } of files) {
    const type = TYPES[name.split('.').pop() ?? ''];
    if (!type) continue;
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
    const etag = `"${Array.from(digest.slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('')}"`;
    out.set(name, { bytes, contentType: type, etag });
  }
  return out;
}
