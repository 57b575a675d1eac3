import { countOutdatedSubjectsByVersion, listOutdatedSubjectsAfter } from '../../db/repositories/reextract.js';
import { DomainError } from '../errors.js';
import { CURRENT_FACE_TEMPLATE_VERSION, CURRENT_VOICE_TEMPLATE_VERSION } from '../management/template-version.js';
import { reextractStoredSubject } from './stored-subject.js';
import type { Caller } from './refuse.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { ServiceContext } from '../context.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { SettingsService } from '../settings/settings.js';

/** Where the job stands; handed to `onProgress` after every subject (and once before the first). */
export interface ReextractProgress {
  /** Subjects handled so far, re-extracted or failed. */
  done: number;
  /** Subjects the run means to handle (outdated ones at the start, capped by `limit`). */
  total: number;
  failed: number;
  /** The subject just handled; null before the first. */
  currentSubjectId: string | null;
}

interface ReextractJobOptions {
  /** Count the outdated subjects and stop: no extractor is started, nothing is written. */
  dryRun?: boolean;
  /** Handle at most this many subjects in this run (the rest wait for the next run). */
  limit?: number;
  /** Subject ids read per query (default 100). */
  batchSize?: number;
  /** Subjects re-extracted at the same time (default 1); match it to the extraction pool's workers. */
  concurrency?: number;
  onProgress?: (progress: ReextractProgress) => void;
  /** Stop after the subjects in flight; the next run carries on from there. */
  signal?: AbortSignal;
  /** Recorded on every REEXTRACT operation; by default an administrator with no account (the CLI). */
  caller?: Caller;
}

interface ReextractJobSummary {
  templateVersion: string;
  dryRun: boolean;
  /** Outdated subjects found at the start of the run, by their current template version. */
  outdated: number;
  byVersion: Record<string, number>;
  total: number;
  done: number;
  reextracted: number;
  failed: number;
  /** Why each failed subject was refused; it stays outdated and is tried again by the next run. */
  failures: { subjectId: string; reason: string; operationUuid?: string }[];
  /** True when the signal stopped the run early. */
  stopped: boolean;
  durationMs: number;
}

const JOB_CALLER: Caller = {
  principal: { accountId: null, username: 'reextract-job', role: 'ADMIN', via: 'basic' },
  surface: 'admin',
};

/**
 * Re-extract the whole gallery after a model upgrade: every subject whose template version (or that of any
 * of its face or voice samples) differs from the current extractor's, in id order, in batches, each subject in its
 * own transaction through {@link reextractStoredSubject} (the same function as `reextractSubject`).
 *
 * Resumable without any bookkeeping: a run picks only subjects not yet at the current version, so after a
 * crash or a stop the next run simply finds what is left. Within a run a cursor on the id moves forward, so a
 * subject that fails (recorded as a refused operation and in the summary) is not retried until the next run
 * and cannot stall this one. Runtime-neutral: it needs only the services.
 *
 * @example
 * const summary = await runReextractJob(services, { onProgress: (p) => draw(p.done, p.total) });
 */
export async function runReextractJob(
  services: { ctx: ServiceContext; settings: SettingsService; extractors: ExtractorProvider; gallery: GalleryService },
  options: ReextractJobOptions = {},
): Promise<ReextractJobSummary> {
  const started = performance.now();
  const { db } = services.ctx;
  // A dry run reads the version from the model manifest, which is what the extractor writes, without starting the pool.
  const current = options.dryRun ? CURRENT_FACE_TEMPLATE_VERSION : (await services.extractors.get()).templateVersion;
  const currentVoice = options.dryRun
    ? CURRENT_VOICE_TEMPLATE_VERSION
    : (await services.extractors.get()).voiceTemplateVersion;
  // A subject is outdated when its face or its voice templates are: re-extraction redoes both.
  const versions = { face: current, voice: currentVoice };
  const outdated = await countOutdatedSubjectsByVersion(db, versions);
  const byVersion = Object.fromEntries(outdated.map((v) => [v.templateVersion ?? 'none', v.count]));
  const count = outdated.reduce((sum, v) => sum + v.count, 0);
  const total = Math.min(count, options.limit ?? Infinity);
  const summary: ReextractJobSummary = {
    templateVersion: current,
    dryRun: options.dryRun === true,
    outdated: count,
    byVersion,
    total,
    done: 0,
    reextracted: 0,
    failed: 0,
    failures: [],
    stopped: false,
    durationMs: 0,
  };
  const report = (currentSubjectId: string | null) =>
    options.onProgress?.({ done: summary.done, total, failed: summary.failed, currentSubjectId });
  report(null);

  const caller = options.caller ?? JOB_CALLER;
  const batchSize = Math.max(1, options.batchSize ?? 100);
  const concurrency = Math.max(1, options.concurrency ?? 1);
  let after = 0;
  while (!options.dryRun && summary.done < total && !options.signal?.aborted) {
    const batch = await listOutdatedSubjectsAfter(db, versions, after, Math.min(batchSize, total - summary.done));
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;
    let next = 0;
    const lane = async () => {
      while (next < batch.length && !options.signal?.aborted) {
        const subject = batch[next++]!;
        try {
          await reextractStoredSubject(services, subject.subject_id, caller);
          summary.reextracted += 1;
        } catch (error) {
          summary.failed += 1;
          summary.failures.push({
            subjectId: subject.subject_id,
            reason:
              error instanceof DomainError ? error.detail : error instanceof Error ? error.message : String(error),
            ...(error instanceof DomainError && typeof error.extras.operationUuid === 'string'
              ? { operationUuid: error.extras.operationUuid }
              : {}),
          });
        }
        summary.done += 1;
        report(subject.subject_id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, lane));
  }
  summary.stopped = options.signal?.aborted === true && summary.done < total;
  summary.durationMs = Math.round(performance.now() - started);
  return summary;
}
