import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode } from '../services/errors.js';

/** Problem types are URIs under this base; the last segment is the error code, stable for clients. */
export const PROBLEM_BASE = 'https://bims.dev/problems';

/** The one error table: code -> HTTP status and human title. */
export const problemTable: Record<ErrorCode, { status: ContentfulStatusCode; title: string }> = {
  validation: { status: 400, title: 'Invalid request' },
  'not-found': { status: 404, title: 'Resource not found' },
  'route-not-found': { status: 404, title: 'Route not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  unauthorized: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Insufficient scope' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Request body too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  unprocessable: { status: 422, title: 'Request cannot be processed' },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'bad-gateway': { status: 502, title: 'Upstream component failed' },
  'licence-expired': { status: 403, title: 'Licence expired' },
  'licence-exhausted': { status: 402, title: 'Licence quota exhausted' },
  'licence-invalid': { status: 403, title: 'No valid licence' },
  internal: { status: 500, title: 'Internal server error' },
};

/** An RFC 9457 problem document. */
interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

/** Build the problem document for a domain error. */
function problemOf(error: DomainError, instance?: string): Problem {
  const entry = problemTable[error.code];
  // Extensions first, so that none can override the standard members.
  return {
    ...error.extras,
    type: `${PROBLEM_BASE}/${error.code}`,
    title: entry.title,
    status: entry.status,
    detail: error.detail,
    ...(instance ? { instance } : {}),
  };
}

/** Answer a domain error as `application/problem+json`, with the headers its status calls for. */
export function problemResponse(c: Context, error: DomainError): Response {
  const problem = problemOf(error, new URL(c.req.url).pathname);
  if (error.operatorDetail) {
    // What the operator must know (a missing model file, a command to run) is for the log, not the caller.
    c.get('services')?.ctx.log.warn('problem answered; operator detail', {
      requestId: c.get('requestId'),
      status: problem.status,
      type: error.code,
      detail: error.detail,
      operatorDetail: error.operatorDetail,
    });
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/problem+json' };
  if (error.code === 'unauthorized') {
    headers['WWW-Authenticate'] = `Basic realm="bims", charset="UTF-8", Bearer realm="bims"${
      error.extras.bearerError ? `, error="${String(error.extras.bearerError)}"` : ''
    }`;
  }
  if (error.code === 'forbidden' && typeof error.extras.requiredScope === 'string') {
    // RFC 6750 3.1: the challenge names the scope that would have sufficed, so a client can ask for it.
    headers['WWW-Authenticate'] =
      `Bearer realm="bims", error="insufficient_scope", scope="${error.extras.requiredScope}"`;
  }
  if (
    (error.code === 'too-many-requests' || error.code === 'service-unavailable') &&
    typeof error.extras.retryAfterSeconds === 'number'
  ) {
    headers['Retry-After'] = String(Math.ceil(error.extras.retryAfterSeconds));
  }
  delete problem.bearerError;
  return new Response(JSON.stringify(problem), { status: problem.status, headers });
}
