import type { Context } from 'hono';
import type { AppEnv } from './env.js';

/** The headers every answer carries whatever it is, in the order they are set. */
const FIXED: readonly [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  // No other site may embed our answers (QR codes and images carry biometric data); CORS reads are not
  // affected, CORP applies to no-cors loads such as <img> and <script>.
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  // Sent over plain http too: browsers ignore it there (RFC 6797 8.1), and behind a TLS-terminating proxy
  // the service cannot reliably tell whether the client saw https. No includeSubDomains: other hosts of
  // the operator's domain are not ours to bind.
  ['Strict-Transport-Security', 'max-age=31536000'],
];
const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'";
/** No camera, microphone or location for any answer, unless a page says it needs one (the dashboard's camera page). */
const DEFAULT_PERMISSIONS = 'camera=(), microphone=(), geolocation=()';
const ORIGIN_IN_VARY = /(^|,)\s*origin\s*(,|$)/i;
const EXPOSED = 'X-Request-Id, X-Bims-Operation, WWW-Authenticate, Retry-After';

/**
 * The headers of an answer that sets none of its own, as a plain record (lower-case names, as a `Headers`
 * object sends them), for answers built with all their headers at once ({@link jsonAnswer}).
 */
const DEFAULT_RECORD: Readonly<Record<string, string>> = Object.fromEntries([
  ...FIXED.map(([name, value]) => [name.toLowerCase(), value]),
  ['content-security-policy', DEFAULT_CSP],
  ['permissions-policy', DEFAULT_PERMISSIONS],
  ['cache-control', 'no-store'],
]);

/**
 * A JSON answer with its security headers already in place, as one plain record: the Node adapter then writes
 * that record as it is. An answer whose headers are set one by one afterwards ({@link SecurityHeaders.after})
 * makes it build a `Headers` object, set each header through it and turn it back into a record: about a tenth
 * of a `/health` request. Such an answer is left alone afterwards. For answers with no headers of their own
 * (those take `c.json` and the headers afterwards), so nothing they set can meet a default here.
 */
export function jsonAnswer(c: Context<AppEnv>, data: unknown, status = 200): Response {
  if (!c.get('answerHeaders')) return c.json(data as object, status as 200);
  return jsonTextAnswer(c, JSON.stringify(data), status);
}

/**
 * {@link jsonAnswer} for an answer that is already its JSON text (a `PresentedJson`: the subject reads), or that
 * text's UTF-8 bytes. The same headers, in one record: before, such answers went through `c.body` and had their
 * security headers set one by one afterwards, which made the Node adapter build a `Headers` object for every
 * subject read (a twentieth of it).
 */
export function jsonTextAnswer(c: Context<AppEnv>, text: string | Uint8Array<ArrayBuffer>, status = 200): Response {
  const own = c.get('answerHeaders');
  if (!own) return c.body(text, status as 200, { 'Content-Type': 'application/json' });
  const headers: Record<string, string> = { 'content-type': 'application/json', ...DEFAULT_RECORD, ...own };
  // Names the seed operation that answered, as the headers set afterwards do.
  const operationId = c.get('operationId');
  if (operationId) headers['x-bims-operation'] = operationId;
  const res = new Response(text, { status, headers });
  c.set('completeAnswer', res);
  return res;
}

/** A request header by its lower-case name (the runtime's cheapest way to read it; see `everyRequest`). */
export type HeaderReader = (c: Context<AppEnv>, name: string) => string | undefined;

/** The two halves of the security headers, around the handler (both run by `everyRequest`). */
interface SecurityHeaders {
  /**
   * Before the handler: notes the headers this request's answer carries besides the defaults (the request id;
   * CORS when open) for {@link jsonAnswer}, and answers an allowed CORS preflight itself (the handler is then
   * not run).
   */
  before(c: Context<AppEnv>, header: HeaderReader): Response | undefined;
  /** After it: every header an answer must carry and does not yet (none for a {@link jsonAnswer} answer). */
  after(c: Context<AppEnv>): void;
}

/**
 * Security headers on every response (preflights, errors and 404s included), and CORS closed unless origins
 * are configured (comma-separated BIMS_CORS_ORIGINS, or `*`). Pages that need more than `default-src 'none'`
 * (the docs page, the sign-in form) set their own Content-Security-Policy, which is kept; likewise a page that
 * needs the camera (the dashboard's capture.html, through the proxy) sets its own Permissions-Policy.
 */
export function securityHeaders(corsOrigins: string): SecurityHeaders {
  const allowed = corsOrigins
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  // Once CORS is open, answers depend on the Origin header (an allowed origin is echoed, with `*` too), so
  // shared caches must key on it, including for answers to origins that were not allowed.
  const variesByOrigin = allowed.length > 0;
  const anyOrigin = allowed.includes('*');
  return {
    before(c, header) {
      const own: Record<string, string> = { 'x-request-id': c.get('requestId') };
      c.set('answerHeaders', own);
      // Without configured origins no Origin header changes anything: it is not even read.
      if (!variesByOrigin) return undefined;
      own.vary = 'Origin';
      const origin = header(c, 'origin');
      if (origin === undefined || !(anyOrigin || allowed.includes(origin))) return undefined;
      own['access-control-allow-origin'] = origin;
      own['access-control-expose-headers'] = EXPOSED;
      if (c.req.method !== 'OPTIONS' || !header(c, 'access-control-request-method')) return undefined;
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, PATCH',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, X-Request-Id',
          'Access-Control-Max-Age': '600',
        },
      });
    },
    after(c) {
      if (c.get('completeAnswer') === c.res) return;
      const h = c.res.headers;
      for (const [name, value] of FIXED) h.set(name, value);
      if (!h.has('Content-Security-Policy')) h.set('Content-Security-Policy', DEFAULT_CSP);
      if (!h.has('Permissions-Policy')) h.set('Permissions-Policy', DEFAULT_PERMISSIONS);
      if (!h.has('Cache-Control')) h.set('Cache-Control', 'no-store');
      h.set('X-Request-Id', c.get('requestId'));
      // Names the seed operation that answered, so clients and tests can tell which route matched.
      const operationId = c.get('operationId');
      if (operationId) h.set('X-Bims-Operation', operationId);
      if (variesByOrigin && !ORIGIN_IN_VARY.test(h.get('Vary') ?? '')) h.append('Vary', 'Origin');
      const origin = c.get('answerHeaders')?.['access-control-allow-origin'];
      if (origin !== undefined) {
        h.set('Access-Control-Allow-Origin', origin);
        h.set('Access-Control-Expose-Headers', EXPOSED);
      }
    },
  };
}
