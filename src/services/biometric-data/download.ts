import type { z } from 'zod';
import type { SessionDownload } from '../../schemas/biometric-data.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../errors.js';
import { archiveName, operationFolder, subjectFolder } from './file-names.js';
import { imageFormat } from './present.js';
import {
  listImagesInScope,
  listVoiceDataInScope,
  loadImageBytes,
  loadVoiceAudio,
  type ImageInfoRow,
  type VoiceDataRow,
} from '../../db/repositories/biometric-data/samples.js';
import { resolveSelection, type Selection, type Selector } from './selection.js';
import { renderPendingTokenImages } from './token-images.js';
import { zipStream, type ZipFileInput } from './zip-stream.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';

/**
 * Downloads of stored samples (seed sections 4.3 and 4.4): plan the archive from metadata alone (sizes come
 * from the database, bytes stay there), refuse it when it would exceed the configured cap, and hand back
 * its manifest plus a function that streams the ZIP, loading bytes a batch at a time.
 */

type Manifest = z.output<typeof SessionDownload>;
type ManifestEntry = Manifest['entries'][number];

/** What an archive holds: the image areas serve images; the biometric-data areas add voice recordings. */
type DownloadContent = 'images' | 'images-and-voice';

export interface DownloadRequest {
  selector: Selector;
  content: DownloadContent;
  /** Words for the archive's file name, e.g. ['subject', 'alice']; cleaned before use. */
  name: readonly (string | number)[];
}

interface PreparedDownload {
  manifest: Manifest;
  /** Stream the ZIP: manifest.json first, then the files in manifest order. */
  open(): ReadableStream<Uint8Array>;
}

/** A planned file: its manifest entry and where its bytes live. */
interface Planned {
  entry: ManifestEntry;
  table: 'images' | 'voice_samples';
  rowId: number;
  modifiedAt: Date;
}

/** Bytes are loaded this many files, or this many bytes, at a time (whichever comes first). */
const BATCH_FILES = 32;
const BATCH_BYTES = 16 * 1024 * 1024;

const formats: Record<string, { extension: string; contentType: string }> = {
  JPEG: { extension: 'jpg', contentType: 'image/jpeg' },
  PNG: { extension: 'png', contentType: 'image/png' },
};

function folderOf(row: { subject_ref: number | null; subject_id: string | null; operation_uuid: string }) {
  return row.subject_ref !== null && row.subject_id !== null
    ? subjectFolder(row.subject_id, row.subject_ref)
    : operationFolder(row.operation_uuid);
}

function planImage(row: ImageInfoRow): Planned {
  const format = formats[imageFormat(row.format)] ?? { extension: 'bin', contentType: 'application/octet-stream' };
  const kind = row.kind.toLowerCase().replace('_', '-');
  return {
    table: 'images',
    rowId: row.id,
    modifiedAt: row.created_at,
    entry: {
      path: `${folderOf(row)}/${kind}-${row.id}.${format.extension}`,
      contentType: format.contentType,
      size: row.size,
      kind: row.kind,
      ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
      uuid: row.operation_uuid,
      imageId: row.id,
      createdAt: row.created_at.toISOString(),
    },
  };
}

function planVoice(row: VoiceDataRow): Planned {
  return {
    table: 'voice_samples',
    rowId: row.id,
    modifiedAt: row.created_at,
    entry: {
      path: `${folderOf(row)}/voice-${row.id}.wav`,
      contentType: 'audio/wav',
      size: row.size,
      kind: 'VOICE',
      ...(row.subject_id !== null ? { subjectId: row.subject_id } : {}),
      uuid: row.operation_uuid,
      voiceId: row.id,
      createdAt: row.created_at.toISOString(),
    },
  };
}

/** Every sample of the selection, without bytes, in a stable order (subject folders, then by id). */
async function plan(ctx: ServiceContext, selection: Selection, content: DownloadContent): Promise<Planned[]> {
  if (selection.operationUuids.length === 0 && selection.subjectRefs.length === 0) return [];
  const images = await listImagesInScope(ctx.db, selection);
  const voices = content === 'images-and-voice' ? await listVoiceDataInScope(ctx.db, selection) : [];
  const planned = [...images.map(planImage), ...voices.map(planVoice)];
  const folder = (p: Planned) => p.entry.path.slice(0, p.entry.path.lastIndexOf('/'));
  return planned.sort((a, b) => {
    const fa = folder(a);
    const fb = folder(b);
    if (fa !== fb) return fa < fb ? -1 : 1;
    if (a.table !== b.table) return a.table === 'images' ? -1 : 1;
    return a.rowId - b.rowId;
  });
}

/** Load the bytes of some planned files, in their order; a file deleted since planning fails the stream. */
async function loadBytes(ctx: ServiceContext, batch: Planned[]): Promise<Uint8Array[]> {
  const imageIds = batch.filter((p) => p.table === 'images').map((p) => p.rowId);
  const voiceIds = batch.filter((p) => p.table === 'voice_samples').map((p) => p.rowId);
  const [images, voices] = [await loadImageBytes(ctx.db, imageIds), await loadVoiceAudio(ctx.db, voiceIds)];
  return batch.map((p) => {
    const bytes = (p.table === 'images' ? images : voices).get(p.rowId);
    if (!bytes) throw new Error(`${p.entry.path} was deleted while the download was being written`);
    return bytes;
  });
}

async function* files(
  ctx: ServiceContext,
  manifest: Manifest,
  planned: Planned[],
  at: Date,
): AsyncGenerator<ZipFileInput> {
  yield {
    path: 'manifest.json',
    bytes: new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`),
    modifiedAt: at,
  };
  let start = 0;
  while (start < planned.length) {
    let end = start;
    let bytes = 0;
    while (
      end < planned.length &&
      end - start < BATCH_FILES &&
      (end === start || bytes + planned[end]!.entry.size <= BATCH_BYTES)
    ) {
      bytes += planned[end]!.entry.size;
      end++;
    }
    const batch = planned.slice(start, end);
    const loaded = await loadBytes(ctx, batch);
    for (let i = 0; i < batch.length; i++)
      yield { path: batch[i]!.entry.path, bytes: loaded[i]!, modifiedAt: batch[i]!.modifiedAt };
    start = end;
  }
}

/**
 * Resolve, plan and cap a download. Throws 404 (`not-found`, naming every unknown identifier) or 422
 * (`unprocessable`, when the files would exceed `BIMS_MAX_DOWNLOAD_BYTES`) before any byte is sent.
 */
export async function prepareDownload(
  services: { ctx: ServiceContext; extractors: ExtractorProvider },
  request: DownloadRequest,
): Promise<PreparedDownload> {
  const { ctx } = services;
  const selection = await resolveSelection(ctx, request.selector);
  const limit = ctx.config.BIMS_MAX_DOWNLOAD_BYTES;
  const refuseOver = (planned: Planned[]) => {
    const size = planned.reduce((sum, p) => sum + p.entry.size, 0);
    if (size <= limit) return size;
    throw new DomainError(
      'unprocessable',
      `The download would hold ${planned.length} files of ${size} bytes, over the limit of ${limit} bytes; ask for fewer identifiers`,
      { size, limit, files: planned.length },
    );
  };
  // What is already stored decides a refusal before any token image is made for a download that cannot be.
  let planned = await plan(ctx, selection, request.content);
  refuseOver(planned);
  if (
    await renderPendingTokenImages(services, {
      operationUuids: selection.operationUuids,
      subjectRefs: selection.subjectRefs,
    })
  ) {
    planned = await plan(ctx, selection, request.content);
  }
  const size = refuseOver(planned);
  const at = ctx.now();
  const manifest: Manifest = {
    fileName: archiveName(request.content === 'images' ? 'images' : 'biometric-data', request.name, at),
    contentType: 'application/zip',
    size,
    createdAt: at.toISOString(),
    entries: planned.map((p) => p.entry),
  };
  return { manifest, open: () => zipStream(files(ctx, manifest, planned, at)) };
}
