import { SessionDownload } from '../schemas/biometric-data.js';
import { prepareDownload, type DownloadRequest } from '../services/biometric-data/download.js';
import type { HandlerInput } from './types.js';

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
export function wantsManifest(accept: string | null): boolean {
  if (!accept) return false;
  const rank = (offer: string): [number, number] => {
    let best: [number, number] = [-1, -1];
    for (const part of accept.split(',')) {
      const [range = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
      const q = Number(params.find((p) => p.startsWith('q='))?.slice(2) ?? 1);
      const specific = range === offer ? 2 : range === `${offer.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
      if (specific >= 0 && q > 0 && (specific > best[1])) best = [q, specific];
    }
    return best;
  };
  const [jsonQ, jsonSpecific] = rank('application/json');
  const [zipQ, zipSpecific] = rank('application/zip');
  return jsonQ > zipQ || (jsonQ === zipQ && jsonQ >= 0 && jsonSpecific > zipSpecific);
}

/**
 * Answer a download: the streamed ZIP (`Content-Disposition: attachment` with a name made of safe
 * characters only), or the `SessionDownload` manifest on `Accept: application/json`.
 */
export async function answerDownload({ services, request }: HandlerInput, what: DownloadRequest): Promise<Response> {
  const prepared = await prepareDownload(services.ctx, what);
  if (wantsManifest(request.headers.get('accept'))) {
    return new Response(JSON.stringify(SessionDownload.parse(prepared.manifest)), {
      headers: { 'Content-Type': 'application/json', ...PRIVATE },
    });
  }
  return new Response(prepared.open(), {
    headers: {
      'Content-Type': 'application/zip',
      'Content-Disposition': `attachment; filename="${prepared.manifest.fileName}"`,
      ...PRIVATE,
    },
  });
}
