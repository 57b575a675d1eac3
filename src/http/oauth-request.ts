import { fromBase64 } from '../encoding/base64.js';
import type { BasicCredentials } from '../services/auth/client-auth.js';
import { OAuthError, invalidRequest } from '../services/auth/oauth-error.js';

/**
 * Reading token requests and writing their answers in the shapes RFC 6749 prescribes: form-encoded
 * parameters in (JSON accepted too, for clients that find forms awkward), JSON out, never cached.
 */

/** RFC 6749 5.1: token responses and their errors must not be cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/** Longest value of any token parameter; codes, tokens and verifiers are far shorter. */
const MAX_PARAM = 4096;

/**
 * Decode the body of a token request into single-valued parameters. RFC 6749 3.2 forbids repeating a
 * parameter, so a repeat is invalid_request rather than silently picking one of the values.
 */
export async function readTokenParams(request: Request): Promise<Record<string, string>> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const text = await request.text();
  const params: Record<string, string> = {};
  const put = (key: string, value: string) => {
    if (Object.hasOwn(params, key)) throw invalidRequest(`${key.slice(0, 40)} is given more than once`);
    if (value.length > MAX_PARAM) throw invalidRequest(`${key.slice(0, 40)} is too long`);
    params[key] = value;
  };
  if (type === 'application/x-www-form-urlencoded' || (type === '' && text === '')) {
    for (const [key, value] of new URLSearchParams(text)) put(key, value);
    return params;
  }
  if (type === 'application/json') {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw invalidRequest('The body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw invalidRequest('The JSON body must be an object');
    for (const [key, value] of Object.entries(body)) {
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string') throw invalidRequest(`${key.slice(0, 40)} must be a string`);
      put(key, value);
    }
    return params;
  }
  // Declared media types only; anything else is named as such (415), not read as a malformed form.
  throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded (or application/json)', {
    status: 415,
  });
}

/** Undo RFC 6749 2.3.1's form encoding of Basic client credentials; raw text if it is not valid encoding. */
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * Client credentials from `Authorization: Basic`. Per RFC 6749 2.3.1 the id and secret are form-encoded
 * before base64. Generated ids and secrets never contain characters that encoding changes; account
 * passwords may, and are often sent unencoded, so the undecoded pair is kept too (the token service tries
 * it when the decoded one fails). Other schemes are not client authentication and are ignored.
 */
export function basicClientCredentials(header: string | undefined): BasicCredentials {
  if (!header || !/^basic /i.test(header)) return undefined;
  let decoded: string;
  try {
    const bytes = fromBase64(header.slice(6).trim());
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'malformed';
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) return 'malformed';
  const raw = { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  const id = formDecode(raw.id);
  const secret = formDecode(raw.secret);
  return { id, secret, ...(id !== raw.id || secret !== raw.secret ? { raw } : {}) };
}

/** The RFC 6749 5.2 answer for an OAuth error. */
export function oauthErrorResponse(error: OAuthError): Response {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...NO_STORE };
  if (error.options.basicChallenge) headers['WWW-Authenticate'] = 'Basic realm="bims", charset="UTF-8"';
  if (error.options.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(Math.max(1, Math.ceil(error.options.retryAfterSeconds)));
  return new Response(JSON.stringify(error.toJSON()), { status: error.status, headers });
}

export { OAuthError };
