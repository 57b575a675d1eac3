import { serverVersion } from '../../db/connect.js';
import type { ServiceContext } from '../context.js';
import type { Services } from '../index.js';
import { CURRENT_FACE_TEMPLATE_VERSION } from './template-version.js';
import { modeOf } from '../licensing/answers.js';

const subjectStatuses = ['ENROLLED', 'PENDING_ADJUDICATION', 'REJECTED'] as const;

/** Rows of a table, as a number (count(*) is int8, which the drivers are set to parse as numbers). */
async function countOf(ctx: ServiceContext, table: 'operations' | 'accounts' | 'exceptions') {
  const row = await ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

async function subjectCounts(ctx: ServiceContext) {
  const rows = await ctx.db
    .selectFrom('subjects')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute();
  const counts = { total: 0, ENROLLED: 0, PENDING_ADJUDICATION: 0, REJECTED: 0 };
  for (const row of rows) {
    if ((subjectStatuses as readonly string[]).includes(row.status)) counts[row.status] = Number(row.count);
    counts.total += Number(row.count);
  }
  return counts;
}

async function pendingCases(ctx: ServiceContext) {
  // CONFLICTED cases (adjudicators disagreed) still wait for a decision, so they count as pending.
  const row = await ctx.db
    .selectFrom('adjudication_cases')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', 'in', ['PENDING', 'CONFLICTED'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}


/**
 * Information and vital parameters of this node: version, template version, uptime, database, live counts,
 * and the state of the extraction worker pool and licence (`licence.mode` says UNLICENSED when no licensing
 * key is configured).
 */
export async function managementInfo(services: Services) {
  const { ctx } = services;
  const [version, subjects, operations, accounts, pendingAdjudicationCases, exceptions, workerPool, licence, gallery] = await Promise.all([
    serverVersion(ctx.db),
    subjectCounts(ctx),
    countOf(ctx, 'operations'),
    countOf(ctx, 'accounts'),
    pendingCases(ctx),
    countOf(ctx, 'exceptions'),
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
