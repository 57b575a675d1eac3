import { DomainError } from '../errors.js';

/**
 * Admission of long-lived answers (event streams through the dashboard proxy). Such an answer holds a
 * connection, an upstream fetch and timers for minutes, and the proxy's GET takes no credentials, so without
 * a bound a stranger opening hundreds of them starves everyone else (708 streams slowed /health to 13 s).
 * Each address may hold `perAddress` at once and the process `total`: past the first the answer is a 429 for
 * that caller, past the second a 503 for everyone, both problem+json with Retry-After, so nobody is served
 * half a stream.
 */
export class StreamAdmission {
  private readonly byAddress = new Map<string, number>();
  private open = 0;

  constructor(
    readonly perAddress: number,
    readonly total: number,
  ) {}

  /** Take a slot for `address`; returns the function that gives it back (idempotent). @throws DomainError 429/503 */
  admit(address: string): () => void {
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.perAddress) {
      throw new DomainError(
        'too-many-requests',
        `At most ${this.perAddress} event streams may be open from one address at once; close one first`,
        {
          limit: this.perAddress,
          retryAfterSeconds: 10,
        },
      );
    }
    if (this.open >= this.total) {
      throw new DomainError(
        'service-unavailable',
        `At most ${this.total} event streams may be open at once; try again later`,
        {
          limit: this.total,
          retryAfterSeconds: 10,
        },
      );
    }
    this.byAddress.set(address, mine + 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
  }

  /** Streams open now, in total and from `address`. */
  count(address?: string): number {
    return address === undefined ? this.open : (this.byAddress.get(address) ?? 0);
  }
}

/** One admission per process (per service context), created on first use with the settings in force. */
const perProcess = new WeakMap<object, StreamAdmission>();

export function streamAdmissionOf(owner: object, limits: { perAddress: number; total: number }): StreamAdmission {
  let admission = perProcess.get(owner);
  if (!admission) {
    admission = new StreamAdmission(limits.perAddress, limits.total);
    perProcess.set(owner, admission);
  }
  return admission;
}

/**
 * `body`, passed on unchanged, calling `release` once when it ends, fails or is cancelled by the reader
 * (the runtime cancels it when the client goes away).
 */
export function releasingWhenDone(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}
