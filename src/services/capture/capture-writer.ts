import type { Logger } from '../../logger.js';

/**
 * Progress (guidance, accepted frames, challenges, speech) within this window goes to the database in one
 * write: a capture's row is rewritten about once a second while it runs, not at the frame rate. It is the bound
 * on how late another node's reader sees such an event (plus one write); the node running the capture answers
 * its own readers from memory (CaptureRegistry.view), so its client sees each event at once.
 */
export const PROGRESS_WRITE_MS = 1000;
/** After a failed write (the database unreachable), the next try waits this long. */
const RETRY_MS = 1000;

/**
 * Writes one capture's row as it changes, about once a second at most: the first change (the row is made)
 * and the urgent ones (a change of state: the media, the operation starting, an outcome) go at once; others
 * are gathered for {@link PROGRESS_WRITE_MS} (or, without `progressWrites`, until the next urgent one). One write at a time, each carrying the capture's whole latest view, so a write that is
 * late or lost is repaired by the next one. A write the row refuses (another node settled the capture, or a
 * new connect replaced it) stops the writer and tells its capture.
 */
export class CaptureWriter {
  private first = true;
  private dirty = false;
  private urgent = false;
  private stopped = false;
  private inFlight: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly o: {
      /** Write the latest view; `first`: make the row. Answers whether the row took it. */
      write(first: boolean): Promise<boolean>;
      settledElsewhere(): void;
      log: Logger;
      /**
       * False: progress alone is never written; it goes with the next urgent write (or a flush), which carries
       * the whole view. For a single node (PGlite), whose running captures nobody reads from the database.
       */
      progressWrites?: boolean;
    },
  ) {}

  /** The capture changed; `urgent`: write without waiting for more changes. */
  changed(urgent: boolean): void {
    if (this.stopped) return;
    this.dirty = true;
    this.urgent ||= urgent || this.first;
    if (!this.inFlight) this.schedule();
  }

  /** The row refused a write: another node settled the capture, or a new connect replaced it. */
  get refused(): boolean {
    return this.stopped;
  }

  /** Nothing left to write. */
  get idle(): boolean {
    return !this.inFlight && (!this.dirty || this.stopped);
  }

  /** Resolves once every change so far was written (or could not be: the failure is logged). */
  async flushed(): Promise<void> {
    for (let round = 0; round < 3 && !this.idle; round++) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      if (!this.inFlight) this.writeNow();
      await this.inFlight;
    }
  }

  private schedule(delayMs = this.urgent ? 0 : PROGRESS_WRITE_MS, retry = false): void {
    if (this.stopped || this.inFlight) return;
    // Progress waits for the next urgent write; a failed write is tried again all the same.
    if (!this.urgent && !retry && this.o.progressWrites === false) return;
    if (delayMs === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      return this.writeNow();
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.inFlight) this.writeNow();
    }, delayMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private writeNow(): void {
    const first = this.first;
    this.dirty = false;
    this.urgent = false;
    let failed = false;
    this.inFlight = (async () => {
      try {
        const took = await this.o.write(first);
        this.first = false;
        if (!took) {
          this.stopped = true;
          this.o.settledElsewhere();
        }
      } catch (error) {
        failed = true;
        this.dirty = true;
        this.o.log.warn('capture state not written', { error: (error as Error)?.message });
      }
    })().finally(() => {
      this.inFlight = null;
      if (this.dirty && !this.stopped) this.schedule(failed ? RETRY_MS : undefined, failed);
    });
  }
}
