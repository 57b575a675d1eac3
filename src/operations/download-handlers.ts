import type { z } from 'zod';
import type { SessionDownload } from '../schemas/biometric-data.js';
import { prepareDownload, type DownloadRequest } from '../services/biometric-data/download.js';
import { preferredType } from './content-negotiation.js';
import { jsonAnswer, mediaAnswer, type HandlerInput } from './types.js';

/**
 * The HTTP side of the ZIP downloads (biometric data, images): content negotiation and headers. The
 * service plans the archive and streams it; this file only decides between the ZIP and its manifest.
 */

/** Biometric samples are personal data: never kept by browsers or proxies. */
const PRIVATE = { 'Cache-Control': 'no-store', Vary: 'Accept' };

/**
 * Whether the Accept header ranks `application/json` above `application/zip` (q-values, then exact types
 * over wildcards). Absent, `*\/*` or anything else means the ZIP.
 */
function wantsManifest(accept: string | null): boolean {
  return preferredType(accept, ['application/zip', 'application/json']) === 'application/json';
}

/** The reverse default, for JSON reads that also offer a ZIP: only an Accept ranking the ZIP first gets it. */
export function wantsZip(accept: string | null): boolean {
  return preferredType(accept, ['application/json', 'application/zip']) === 'application/zip';
}

/**
 * Answer a download: the streamed ZIP (`Content-Disposition: attachment` with a name made of safe
 * characters only), or the `SessionDownload` manifest on `Accept: application/json`.
 */
export async function answerDownload(
  { services, request }: Pick<HandlerInput, 'services' | 'request'>,
  what: DownloadRequest,
) {
  const prepared = await prepareDownload(services, what);
  if (wantsManifest(request.headers.get('accept')))
    return jsonAnswer<z.input<typeof SessionDownload>>(prepared.manifest, PRIVATE);
  return zipOf(prepared);
}

/** The streamed ZIP alone, for reads whose JSON answer is something else than the manifest (adjudication cases). */
export async function answerZip({ services }: Pick<HandlerInput, 'services'>, what: DownloadRequest) {
  return zipOf(await prepareDownload(services, what));
}

function zipOf(prepared: Awaited<ReturnType<typeof prepareDownload>>) {
  return mediaAnswer('application/zip', prepared.open(), {
    headers: { 'Content-Disposition': `attachment; filename="${prepared.manifest.fileName}"`, ...PRIVATE },
  });
}
