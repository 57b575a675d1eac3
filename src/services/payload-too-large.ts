import { DomainError } from './errors.js';

/**
 * The 413 of a request body over the limit. The HTTP body middleware (src/http/body-limit.ts) fails a counted
 * body with it; whoever reads that body (the validator, the form reader, the dashboard proxy forwarding it)
 * recognises it with `bodyLimitError` and answers the 413 rather than a 400 or a 502.
 */
export const payloadTooLarge = (maxBytes: number) =>
  new DomainError('payload-too-large', `The request body exceeds the limit of ${maxBytes} bytes`);

/** The 413 error a counted body failed with, wherever a body read surfaces it (undici may wrap it in `cause`). */
export function bodyLimitError(error: unknown): DomainError | null {
  for (let e: unknown = error, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DomainError && e.code === 'payload-too-large') return e;
  }
  return null;
}
