import { GatewayProtocolError, GatewayUnavailableError, type GatewayComponent } from './errors.js';

interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * One HTTP exchange with a gateway component, bounded by `timeoutMs` so a hung peer becomes a prompt
 * {@link GatewayUnavailableError} instead of a request that never ends. Janus answers errors with status 200
 * and a JSON body; an empty or non-JSON body is returned as `body: null` for the caller to judge.
 */
export async function exchangeJson(
  component: GatewayComponent,
  url: string,
  init: { method: 'GET' | 'POST' | 'DELETE'; body?: unknown; headers?: Record<string, string> },
  timeoutMs: number,
  outerSignal?: AbortSignal,
): Promise<JsonAnswer> {
  const signal = outerSignal
    ? anySignal([outerSignal, AbortSignal.timeout(timeoutMs)])
    : AbortSignal.timeout(timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: init.method,
      headers: {
        Accept: 'application/json',
        ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...init.headers,
      },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal,
    });
    text = await response.text();
  } catch (error) {
    const timedOut = (error as Error)?.name === 'TimeoutError' || signal.reason?.name === 'TimeoutError';
    const cause = (error as { cause?: { code?: string } })?.cause?.code;
    throw new GatewayUnavailableError(
      component,
      timedOut
        ? `${component} did not answer within ${timeoutMs} ms`
        : `${component} is unreachable (${cause ?? (error as Error)?.message ?? 'network error'})`,
    );
  }
  if (text.trim() === '') return { status: response.status, body: null };
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    throw new GatewayProtocolError(
      component,
      `${component} answered ${response.status} with a body that is not JSON`,
      response.status,
    );
  }
}

/** AbortSignal.any where the runtime lacks it (Node 20.0-20.2): aborts when the first of the signals does. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (any) return any(signals);
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) return AbortSignal.abort(s.reason);
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
