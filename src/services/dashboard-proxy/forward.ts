import type { Config } from '../../config/config.js';
import { DomainError } from '../errors.js';
import { bodyLimitError } from '../payload-too-large.js';
import { releasingWhenDone, type StreamAdmission } from './stream-admission.js';

/**
 * The dashboard proxy (seed section 4.6): a request under /dashboard/** or /admin/dashboard/** goes to the
 * dashboard component unchanged (method, path, query, headers, body), and the component's answer streams
 * back unchanged. Only what belongs to one connection is dropped, both ways (RFC 9110 section 7.6.1), and the
 * X-Forwarded-* headers tell the component who asked and where. Written against web-standard fetch so that
 * it runs on every runtime the API runs on. It sits below the operation table (src/operations/dashboard.ts
 * calls it), as every service does, so the table needs nothing from src/http/, which mounts it.
 */

/** Headers that describe one connection, never forwarded (plus any the Connection header names). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Copy headers without the hop-by-hop ones, those the Connection header names, and `alsoDrop` (lower case). */
function endToEndHeaders(from: Headers, alsoDrop: readonly string[] = []): Headers {
  const named = (from.get('connection') ?? '')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  const drop = new Set([...HOP_BY_HOP, ...named, ...alsoDrop]);
  const out = new Headers();
  // Iteration yields each Set-Cookie on its own, so append keeps them apart.
  for (const [name, value] of from) if (!drop.has(name)) out.append(name, value);
  return out;
}

/** The component's URL for this request: DASHBOARD_URL's origin and path, then the request's path and query. */
function upstreamUrl(base: string, request: URL): string {
  const target = new URL(base);
  return `${target.origin}${target.pathname.replace(/\/$/, '')}${request.pathname}${request.search}`;
}

interface ProxyOptions {
  config: Pick<Config, 'DASHBOARD_URL' | 'BIMS_DASHBOARD_TIMEOUT_MS'>;
  /** The caller's address, appended to X-Forwarded-For. */
  clientAddress: string;
  /** Bounds on event streams (long-lived answers) per address and in total; unbounded without it. */
  streams?: StreamAdmission;
}

/** How a fetch reports a kept connection closed by the other side before any answer (undici, Node, Deno). */
const CLOSED_UNDER_US = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

const unreachable = (why: string) =>
  new DomainError('bad-gateway', `The dashboard component did not answer: ${why}`, { component: 'dashboard' });

/**
 * Forward one request to the dashboard component and return its answer as a streamed Response. A component
 * that is down, unset or silent beyond BIMS_DASHBOARD_TIMEOUT_MS gives 502 problem+json: the timeout covers
 * connecting and the response headers only, so a long download or an event stream is never cut.
 */
export async function forwardToDashboard(request: Request, options: ProxyOptions): Promise<Response> {
  const base = options.config.DASHBOARD_URL;
  if (!base) throw unreachable('none is configured (set DASHBOARD_URL, or let npm start run it)');
  const incoming = new URL(request.url);
  const target = upstreamUrl(base, incoming);

  // Host is the next hop's business; the request body is streamed, so its client frames it itself; the
  // runtime's server already answered any `Expect: 100-continue`, and fetch clients refuse to send it.
  const headers = endToEndHeaders(request.headers, ['host', 'content-length', 'expect']);
  // Append the address this hop saw to those earlier proxies reported (none is appended when the runtime could not tell).
  const forwardedFor = [
    request.headers.get('x-forwarded-for'),
    options.clientAddress === 'unknown' ? null : options.clientAddress,
  ].filter(Boolean);
  if (forwardedFor.length) headers.set('x-forwarded-for', forwardedFor.join(', '));
  headers.set('x-forwarded-host', request.headers.get('host') ?? incoming.host);
  headers.set('x-forwarded-proto', incoming.protocol.replace(':', ''));
  headers.set('x-forwarded-prefix', incoming.pathname.startsWith('/admin/') ? '/admin/dashboard' : '/dashboard');
  // Runtimes' fetch decode compressed answers but keep Content-Encoding, so the bytes passed on would no longer
  // match it: ask the component (on the same host, normally) for identity bodies instead.
  headers.set('accept-encoding', 'identity');

  // Aborts the upstream call when the client leaves (at once, so the component lets go of an endless stream
  // too, not at its next write) or when the component stays silent too long before answering.
  const controller = new AbortController();
  const onClientGone = () => controller.abort(new Error('the client went away'));
  request.signal?.addEventListener('abort', onClientGone, { once: true });
  const silence = setTimeout(() => controller.abort(new Error('timeout')), options.config.BIMS_DASHBOARD_TIMEOUT_MS);

  const hasBody = request.body !== null && !['GET', 'HEAD'].includes(request.method);
  const call = () =>
    fetch(target, {
      method: request.method,
      headers,
      body: hasBody ? request.body : undefined,
      redirect: 'manual',
      signal: controller.signal,
      // Stream the request body instead of buffering it (required by fetch for a stream body).
      ...(hasBody ? { duplex: 'half' } : {}),
    } as RequestInit);
  let upstream: Response;
  try {
    upstream = await call().catch((error: unknown) => {
      // A kept connection the component closed just as this request went out on it: nothing reached the
      // component, so a request without a body and without effects (GET, HEAD) is sent once more, on a new
      // connection, as proxies do; anything else is the component's failure to answer.
      const resendable = ['GET', 'HEAD'].includes(request.method) && !controller.signal.aborted;
      if (!resendable || !CLOSED_UNDER_US.has(describe(error))) throw error;
      return call();
    });
  } catch (error) {
    // The client's body passed the size limit while it streamed through: that is a 413, not the component's fault.
    const tooLarge = bodyLimitError(error);
    if (tooLarge) throw tooLarge;
    const timedOut = controller.signal.aborted && (controller.signal.reason as Error)?.message === 'timeout';
    throw unreachable(timedOut ? `no answer within ${options.config.BIMS_DASHBOARD_TIMEOUT_MS} ms` : describe(error));
  } finally {
    clearTimeout(silence);
  }

  // An event stream holds its connection for minutes: admitted only within the caller's and the process's
  // share (429 / 503 problem+json otherwise), and its slot is given back when the stream ends or the client goes.
  let body = upstream.body && endQuietlyWhenAborted(upstream.body, controller.signal);
  if (options.streams && body && /^text\/event-stream\b/i.test(upstream.headers.get('content-type') ?? '')) {
    let release: () => void;
    try {
      release = options.streams.admit(options.clientAddress);
    } catch (refusal) {
      controller.abort(new Error('refused'));
      await body.cancel().catch(() => {});
      throw refusal;
    }
    request.signal?.addEventListener('abort', release, { once: true });
    body = releasingWhenDone(body, release);
  }

  // A component that compressed anyway has had its body decoded by fetch: its length and encoding no longer apply.
  const decoded = upstream.headers.has('content-encoding') ? ['content-encoding', 'content-length'] : [];
  return new Response(body, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: endToEndHeaders(upstream.headers, decoded),
  });
}

/** The network reason of a failed fetch (undici hides it in `cause`), for the problem's detail. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/**
 * The component's body, passed on chunk by chunk; once the client has gone (our own abort), the stream just
 * ends instead of failing, since nobody reads it any more and the runtime would log the failure as an error.
 */
function endQuietlyWhenAborted(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        if (signal.aborted) controller.close();
        else controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
