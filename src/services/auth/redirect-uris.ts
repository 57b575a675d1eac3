/**
 * Redirect URI rules. Registered URIs match exactly (string equality: no prefix or path matching, which is
 * how open redirectors and code theft happen). The one exception is native apps (RFC 8252 7.3): they listen
 * on a loopback port chosen at run time, so a client may register a loopback pattern such as
 * `http://127.0.0.1:*\/*` that accepts any port and path on that loopback host, and nothing else.
 */

/** Loopback patterns a native client may register; `bims-cli` registers all three. */
export const LOOPBACK_PATTERNS = ['http://127.0.0.1:*/*', 'http://[::1]:*/*', 'http://localhost:*/*'] as const;

const loopbackHost: Record<string, string> = {
  'http://127.0.0.1:*/*': '127\\.0\\.0\\.1',
  'http://[::1]:*/*': '\\[::1\\]',
  'http://localhost:*/*': 'localhost',
};

/**
 * Whether `uri` may be registered: a loopback pattern, or an absolute http(s) URL without fragment or
 * user info (RFC 6749 3.1.2). Plain http is accepted because on-premises deployments often have no TLS.
 */
export function isRegistrableRedirectUri(uri: string): boolean {
  if ((LOOPBACK_PATTERNS as readonly string[]).includes(uri)) return true;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    !uri.includes('#') &&
    !url.username &&
    !url.password &&
    uri.length <= 2000
  );
}

/**
 * Whether a requested redirect URI is allowed for a client with these registered URIs. The raw string is
 * checked, not a parsed URL, because the raw string is what the browser is redirected to: `http://127.1/`
 * parses to 127.0.0.1 but is not accepted as loopback.
 */
export function redirectUriAllowed(registered: readonly string[], requested: string): boolean {
  if (requested.length > 2000) return false;
  for (const entry of registered) {
    const host = loopbackHost[entry];
    if (host === undefined) {
      if (entry === requested) return true;
      continue;
    }
    if (new RegExp(`^http://${host}(:\\d{1,5})?(/[^#\\s\\\\]*)?$`).test(requested) && URL.canParse(requested))
      return true;
  }
  return false;
}
