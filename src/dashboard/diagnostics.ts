import type { Context } from 'hono';

/**
 * Two diagnostics for whoever puts a proxy in front of the dashboard (the API's, or nginx before it):
 * `echo` answers what reached the component (method, path, query, headers, body digest), and `stream` is an
 * endless event stream that shows whether the proxy streams or buffers, and whether it lets go of the
 * component when the client leaves (`openStreams` in the echo). Answers are JSON or event streams, never
 * HTML, so nothing reflected can run in the page's origin.
 */

/** Credentials and cookies are reported as digests: enough to check they arrived, useless to a reader. */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
/** The echo keeps small UTF-8 bodies as text; anything else is described by size and digest only. */
const TEXT_LIMIT = 64 * 1024;
/** Response headers a caller may ask the echo to add: its own namespace, and Connection naming only those. */
const ECHO_HEADER = /^x-echo-[a-z0-9-]{1,40}$/i;
const SAFE_VALUE = /^[\x20-\x7e]{0,200}$/;
/** How often the stream ticks, and when it ends on its own so that a forgotten tab does not hold it forever. */
const TICK_MS = 10_000;
const STREAM_LIMIT_MS = 5 * 60_000;

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The headers a caller asked for with `header=Name: value` (repeatable), or a reason to refuse. */
function requestedHeaders(values: string[]): { headers: [string, string][] } | { error: string } {
  const headers: [string, string][] = [];
  for (const spec of values) {
    const at = spec.indexOf(':');
    const name = at > 0 ? spec.slice(0, at).trim() : '';
    const value = at > 0 ? spec.slice(at + 1).trim() : '';
    const connectionOfOurs =
      name.toLowerCase() === 'connection' && value.split(',').every((t) => ECHO_HEADER.test(t.trim()));
    if (!(ECHO_HEADER.test(name) || connectionOfOurs) || !SAFE_VALUE.test(value)) {
      return {
        error: `query.header: '${spec.slice(0, 80)}' is not 'X-Echo-Name: printable value' (or Connection naming X-Echo- headers)`,
      };
    }
    headers.push([name, value]);
  }
  return { headers };
}

/**
 * `maxStreams`: streams open at once, after which `stream` answers 503 (the API's proxy bounds them per
 * address and in total before they reach here; this bound holds when the component is reached directly).
 */
export function createDiagnostics(options: { maxStreams?: number } = {}) {
  let openStreams = 0;
  const maxStreams = options.maxStreams ?? 64;

  async function echo(c: Context) {
    const url = new URL(c.req.url);
    const asked = requestedHeaders(url.searchParams.getAll('header'));
    if ('error' in asked) {
      return c.body(
        JSON.stringify({
          type: 'https://bims.dev/problems/validation',
          title: 'Invalid request',
          status: 400,
          detail: asked.error,
        }),
        400,
        {
          'Content-Type': 'application/problem+json',
        },
      );
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of c.req.raw.headers) {
      headers[name] = SECRET_HEADERS.has(name) ? await sha256(new TextEncoder().encode(value)) : value;
    }
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    let text: string | undefined;
    if (bytes.length <= TEXT_LIMIT) {
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        text = undefined;
      }
    }
    const query: Record<string, string[]> = {};
    for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
    const answer = {
      method: c.req.method,
      path: url.pathname,
      query,
      headers,
      body: { size: bytes.length, sha256: await sha256(bytes), ...(text !== undefined ? { text } : {}) },
      openStreams,
    };
    const response = new Response(JSON.stringify(answer, null, 2), {
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' },
    });
    for (const [name, value] of asked.headers) response.headers.append(name, value);
    return response;
  }

  function stream(c: Context) {
    if (openStreams >= maxStreams) {
      return c.body(
        JSON.stringify({
          type: 'https://bims.dev/problems/service-unavailable',
          title: 'Service unavailable',
          status: 503,
          detail: `At most ${maxStreams} diagnostic streams may be open at once; try again later`,
        }),
        503,
        {
          'Content-Type': 'application/problem+json',
          'Retry-After': '10',
        },
      );
    }
    const encoder = new TextEncoder();
    let timer: ReturnType<typeof setInterval> | undefined;
    let limit: ReturnType<typeof setTimeout> | undefined;
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      openStreams--;
      clearInterval(timer);
      clearTimeout(limit);
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        openStreams++;
        let n = 0;
        const tick = () =>
          controller.enqueue(
            encoder.encode(`event: tick\ndata: ${JSON.stringify({ n: ++n, at: new Date().toISOString() })}\n\n`),
          );
        // The first event goes out at once: a client that receives it knows the path streams.
        tick();
        timer = setInterval(tick, TICK_MS);
        limit = setTimeout(() => {
          close();
          controller.close();
        }, STREAM_LIMIT_MS);
      },
      cancel: close,
    });
    return new Response(body, {
      headers: {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    });
  }

  return { echo, stream };
}
