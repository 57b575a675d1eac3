import { call } from './api.js';
import { unzip } from './zip.js';

/**
 * Images arrive as ZIP downloads (the API's way of serving stored images): unpack one, and hand back each
 * image as an object URL an <img> can show, keyed by image id, with the manifest's facts. Object URLs hold
 * memory until revoked: every page revokes those it made when the reader leaves it (see `releaseImages`).
 */

let live = [];

/** Load the images a download path answers: Map(imageId -> { url, kind, subjectId, uuid, contentType }). */
export async function loadImages(path, query) {
  const res = await call(path, { query, accept: 'application/zip', raw: true });
  const files = await unzip(await res.arrayBuffer());
  const manifestFile = files.find((f) => f.name === 'manifest.json');
  if (!manifestFile) throw new Error('The download has no manifest.json');
  const manifest = JSON.parse(new TextDecoder().decode(manifestFile.bytes));
  const byPath = new Map(files.map((f) => [f.name, f.bytes]));
  const images = new Map();
  for (const entry of manifest.entries ?? []) {
    const bytes = byPath.get(entry.path);
    if (!bytes || entry.imageId === undefined) continue;
    const url = URL.createObjectURL(new Blob([bytes], { type: entry.contentType }));
    live.push(url);
    images.set(entry.imageId, {
      url,
      kind: entry.kind,
      subjectId: entry.subjectId,
      uuid: entry.uuid,
      contentType: entry.contentType,
    });
  }
  return images;
}

/** Forget every image the previous page showed. */
export function releaseImages() {
  for (const url of live) URL.revokeObjectURL(url);
  live = [];
}

/** The image to show first for a set of Image records: the normalised face (TOKEN), else the original. */
export function bestImage(records) {
  const order = { TOKEN: 0, FACE_CROP: 1, ORIGINAL: 2 };
  return [...records].sort((a, b) => (order[a.kind] ?? 9) - (order[b.kind] ?? 9))[0];
}
