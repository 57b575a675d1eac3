/** A component of licensing the API talks to over HTTP. */
type LicensingComponent = 'sidecar' | 'cloud';

/** The component could not be reached in time, refused our credentials, or answered outside its protocol. */
export class LicensingUnavailableError extends Error {
  override name = 'LicensingUnavailableError';
  /** `operatorDetail`: what only the operator should read (configuration to set); logged, never sent to a caller. */
  constructor(
    readonly component: LicensingComponent,
    message: string,
    readonly status?: number,
    readonly operatorDetail?: string,
  ) {
    super(message);
  }
}

/**
 * One bounded fetch: a hung peer becomes a prompt {@link LicensingUnavailableError}, never a request that
 * waits forever. Plain fetch, so it runs on every runtime.
 */
export async function fetchWithin(
  component: LicensingComponent,
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; text: string; contentType: string }> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return {
      status: response.status,
      text: await response.text(),
      contentType: response.headers.get('content-type') ?? '',
    };
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError';
    const cause = (error as { cause?: { code?: string } })?.cause?.code;
    throw new LicensingUnavailableError(
      component,
      timedOut
        ? `the ${component} did not answer within ${timeoutMs} ms`
        : `the ${component} is unreachable (${cause ?? (error as Error)?.message ?? 'network error'})`,
    );
  }
}
