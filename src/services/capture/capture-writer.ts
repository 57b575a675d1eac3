import type { Logger } from '../../logger.js';

/** Changes within this window go to the database in one write (guidance comes at most at the frame rate). */
const BATCH_MS = 200;
/** After a failed write (the database unreachable), the next try waits this long. */
const RETRY_MS = 1000;

/**
 * Writes one capture's row as it changes, a few times a second at most: the first change (the row is made)
 * and the urgent ones (an outcome, the operation starting) go at once; others are gathered for
 * {@link BATCH_MS}. One write at a time, each carrying the capture's whole latest view, so a write that is
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
    },
  ) {}

  /** The capture changed; `urgent`: write without waiting for more changes. */
  changed(urgent: boolean): void {
    if (this.stopped) return;
    this.dirty = true;
    this.urgent ||= urgent || this.first;
    if (!this.inFlight) this.schedule();
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

  private schedule(delayMs = this.urgent ? 0 : BATCH_MS): void {
    if (this.stopped || this.inFlight) return;
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
      if (this.dirty && !this.stopped) this.schedule(failed ? RETRY_MS : undefined);
    });
  }
}
