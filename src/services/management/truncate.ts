import { deleteServiceNodesExcept, listBaseTables, truncateTablesCounting } from '../../db/repositories/management.js';
import type { GalleryService } from '../gallery/gallery-service.js';
import type { ServiceContext } from '../context.js';

/**
 * Tables `truncateDatabase` never touches: the schema version record, the settings, and everything that lets
 * people sign in (accounts, OAuth clients and codes, refresh tokens, signing keys), since clearing those would
 * lock every user out. Licences and the usage counted against them stay too: clearing data must not refund
 * licence consumption.
 */
const KEPT_TABLES: readonly string[] = [
  'kysely_migration',
  'kysely_migration_lock',
  'settings',
  'accounts',
  'oauth_clients',
  'oauth_codes',
  'refresh_tokens',
  'signing_keys',
  'licences',
  'usage_counters',
  // Template keys: clearing them would invalidate every QR code and encrypted template already handed out.
  'service_keys',
  // Sign-in throttle state: clearing the data must not hand a password guesser a fresh budget.
  'login_throttle',
];

/**
 * Tables handled apart from the truncation (see below); not reported as kept, since they do change. The gateway
 * sessions are live connections, not data: clearing their rows would leave them running with no owner.
 */
const NOT_CLEARED_HERE: readonly string[] = ['service_nodes', 'gallery_changes', 'gateway_sessions', 'gateway_handles'];

/**
 * Clear the whole database except {@link KEPT_TABLES}, in one transaction, and report the rows removed per
 * table. The tables are found in the catalogue rather than listed, so a table a later migration adds is
 * cleared too unless it is added to the kept list on purpose. `service_nodes` keeps this node's row so the
 * cluster status still shows the node that did it. `gallery_changes` is not cleared either: it is bookkeeping,
 * not data, and the gallery's reset announcement appends the row that tells every node to reload (emptying
 * the log would only make a clear of an empty database report a removed row).
 */
export async function truncateDatabase(services: { ctx: ServiceContext; gallery: GalleryService }) {
  const { ctx } = services;
  // The gallery mirrors rows that are about to go: every node is told to reload, with the commit.
  const result = await services.gallery.transaction(async (trx, changes) => {
    const cleared = (await listBaseTables(trx)).filter(
      (name) => !KEPT_TABLES.includes(name) && !NOT_CLEARED_HERE.includes(name),
    );
    // Counted under a lock, then truncated in one statement (see truncateTablesCounting).
    const removed = await truncateTablesCounting(trx, cleared);
    removed.service_nodes = await deleteServiceNodesExcept(trx, ctx.node.id);
    // Announced as the transaction's last statements: a NOTIFY for listening nodes and a `reset` row in the
    // change log, so that nodes reading the log (Workers) reload instead of keeping subjects that no longer exist.
    changes.reset();
    return removed;
  });
  const total = Object.values(result).reduce((a, b) => a + b, 0);
  ctx.log.warn('database cleared', { removed: result, total });
  return { removed: result, total, kept: [...KEPT_TABLES] };
}
