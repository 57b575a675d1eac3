import { serverVersion } from '../../db/connect.js';
import {
  countPendingAdjudicationCases,
  countSubjectsByStatus,
  countTableRows,
} from '../../db/repositories/management.js';
import type { ServiceContext } from '../context.js';
import { CURRENT_FACE_TEMPLATE_VERSION } from './template-version.js';
import { modeOf } from '../licensing/licence-terms.js';
import type { ExtractorProvider } from '../biometrics/extractor-provider.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { LicensingService } from '../licensing/licensing-service.js';

const subjectStatuses = ['ENROLLED', 'PENDING_ADJUDICATION', 'REJECTED'] as const;

async function subjectCounts(ctx: ServiceContext) {
  const rows = await countSubjectsByStatus(ctx.db);
  const counts = { total: 0, ENROLLED: 0, PENDING_ADJUDICATION: 0, REJECTED: 0 };
  for (const row of rows) {
    if ((subjectStatuses as readonly string[]).includes(row.status)) counts[row.status] = row.count;
    counts.total += row.count;
  }
  return counts;
}

/**
 * Information and vital parameters of this node: version, template version, uptime, database, live counts,
 * and the state of the extraction worker pool and licence (`licence.mode` says UNLICENSED when no licensing
 * key is configured).
 */
export async function managementInfo(services: {
  ctx: ServiceContext;
  extractors: ExtractorProvider;
  gallery: GalleryService;
  licensing: LicensingService;
}) {
  const { ctx } = services;
  const [version, subjects, operations, accounts, pendingAdjudicationCases, exceptions, workerPool, licence, gallery] =
    await Promise.all([
      serverVersion(ctx.db),
      subjectCounts(ctx),
      countTableRows(ctx.db, 'operations'),
      countTableRows(ctx.db, 'accounts'),
      // CONFLICTED cases (adjudicators disagreed) still wait for a decision, so they count as pending.
      countPendingAdjudicationCases(ctx.db),
      countTableRows(ctx.db, 'exceptions'),
      services.extractors.stats(),
      services.licensing.current(),
      // What this node's in-memory gallery holds, with the digest and the reconciliation record, so operators
      // and tests can see that it agrees with the database (each node keeps its own copy).
      services.gallery.state(),
    ]);
  return {
    version: ctx.node.version,
    templateVersion: CURRENT_FACE_TEMPLATE_VERSION,
    startedAt: ctx.startedAt.toISOString(),
    uptimeSeconds: Math.max(0, Math.floor((ctx.now().getTime() - ctx.startedAt.getTime()) / 1000)),
    database: { dialect: ctx.dialect, serverVersion: version },
    counts: { subjects, operations, accounts, pendingAdjudicationCases, exceptions },
    node: { id: ctx.node.id, hostname: ctx.node.hostname, runtime: ctx.node.runtime },
    workerPool,
    gallery,
    licence: { ...modeOf(licence), expiresAt: licence.licence?.expiresAt },
  };
}
