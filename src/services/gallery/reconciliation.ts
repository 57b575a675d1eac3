import type { GalleryDigest } from './digest.js';

/** The last comparison of this node's gallery with the database. */
export interface ReconcileReport {
  at: string;
  /** The change-log position both sides were compared at. */
  changeId: number;
  inSync: boolean;
  memory: GalleryDigest;
  database: GalleryDigest;
}

/** What management info shows of the reconciliations so far. */
export interface ReconciliationState {
  checks: number;
  driftsRepaired: number;
  last: ReconcileReport | null;
  lastDrift: ReconcileReport | null;
}

/**
 * The record of a gallery's comparisons with the database (gallery-sync.ts makes them): how many, how many
 * found a drift (each repaired by a reload), the last one and the last drift.
 */
export class Reconciliations {
  private checks = 0;
  private driftsRepaired = 0;
  private last: ReconcileReport | null = null;
  private lastDrift: ReconcileReport | null = null;

  /** Record one comparison at change-log position `changeId`; answers the report (`inSync` false: a drift). */
  record(at: Date, changeId: number, memory: GalleryDigest, database: GalleryDigest): ReconcileReport {
    const inSync = memory.templates === database.templates && memory.sum === database.sum;
    this.checks += 1;
    this.last = { at: at.toISOString(), changeId, inSync, memory, database };
    if (!inSync) {
      this.lastDrift = this.last;
      this.driftsRepaired += 1;
    }
    return this.last;
  }

  /** The last comparison, null before the first. */
  get latest(): ReconcileReport | null {
    return this.last;
  }

  state(): ReconciliationState {
    return { checks: this.checks, driftsRepaired: this.driftsRepaired, last: this.last, lastDrift: this.lastDrift };
  }
}
