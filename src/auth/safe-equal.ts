/**
 * Compare two strings in time that depends only on their lengths, so that comparing a presented secret (a
 * PKCE verifier's hash, a client secret's hash, a CSRF binding) leaks nothing about how many leading
 * characters were right.
 */
export function safeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
