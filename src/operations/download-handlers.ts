import type { z } from 'zod';
import type { SessionDownload } from '../schemas/biometric-data.js';
import { prepareDownload, type DownloadRequest } from '../services/biometric-data/download.js';
import { jsonAnswer, mediaAnswer, type HandlerInput } from './types.js';

/**
 * The HTTP side of the ZIP downloads (biometric data, images): content negotiation and headers. The
 * service plans the archive and streams it; this file only decides between the ZIP and its manifest.
 */

/** Biometric samples are personal data: never kept by browsers or proxies. */
const PRIVATE = { 'Cache-Control': 'no-store', Vary: 'Accept' };

/** How an Accept header ranks a media type: [q, specificity], specificity 2 exact, 1 type/*, 0 any, -1 absent. */
function rankOf(accept: string, offer: string): [number, number] {
  let best: [number, number] = [-1, -1];
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    const q = Number(params.find((p) => p.startsWith('q='))?.slice(2) ?? 1);
    const specific = range === offer ? 2 : range === `${offer.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specific >= 0 && q > 0 && (specific > best[1])) best = [q, specific];
  }
  return best;
}

/** Whether `a` ranks above `b` in the Accept header (q-values, then exact types over wildcards). */
function prefers(accept: string, a: string, b: string): boolean {
  const [aQ, aSpecific] = rankOf(accept, a);
  const [bQ, bSpecific] = rankOf(accept, b);
  return aQ > bQ || (aQ === bQ && aQ >= 0 && aSpecific > bSpecific);
}

/**
 * Whether the Accept header ranks `application/json` above `application/zip` (q-values, then exact types
 * over wildcards). Absent, `*\/*` or anything else means the ZIP.
 */
export function wantsManifest(accept: string | null): boolean {
  return accept ? prefers(accept, 'application/json', 'application/zip') : false;
}

/** The reverse default, for JSON reads that also offer a ZIP: only an Accept ranking the ZIP first gets it. */
export function wantsZip(accept: string | null): boolean {
  return accept ? prefers(accept, 'application/zip', 'application/json') : false;
}

/**
 * Answer a download: the streamed ZIP (`Content-Disposition: attachment` with a name made of safe
 * characters only), or the `SessionDownload` manifest on `Accept: application/json`.
 */
export async function answerDownload({ services, request }: Pick<HandlerInput, 'services' | 'request'>, what: DownloadRequest) {
  const prepared = await prepareDownload(services, what);
  if (wantsManifest(request.headers.get('accept'))) return jsonAnswer<z.input<typeof SessionDownload>>(prepared.manifest, PRIVATE);
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
