/**
 * A capture's patience with an empty camera (BIMS_CAPTURE_IDLE_SECONDS): `seen()` when a face (or, in a
 * voice-only session, speech) comes; when none came for `idleMs`, `onIdle` runs once. A capture that sees
 * nobody then ends and gives back its decoder, its room and its place under the caps, instead of holding
 * them to its own timeout (up to 600 s), which let one account keep every decoder of the service busy.
 */
export class IdleWatch {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private fired = false;

  constructor(
    readonly idleMs: number,
    private readonly onIdle: () => void,
  ) {
    this.seen();
  }

  /** Something worth waiting for came: the wait starts over. */
  seen(): void {
    if (this.fired) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onIdle();
    }, this.idleMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Whether the wait ran out. */
  get idle(): boolean {
    return this.fired;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
