/**
 * Password hashes with PBKDF2-SHA256 through WebCrypto, which every runtime we target has (Node, Deno,
 * Workers). Stored as `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` so the cost can rise later
 * without invalidating old hashes.
 */
import { fromBase64, toBase64, toBase64Url } from '../encoding/base64.js';

const encoder = new TextEncoder();

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(password), 'PBKDF2', false, ['deriveBits']);
  const bits = await crypto.subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt: salt as BufferSource, iterations },
    key,
    256,
  );
  return new Uint8Array(bits);
}

/** Hash a password with a fresh 16-byte salt. */
export async function hashPassword(password: string, iterations: number): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const hash = await derive(password, salt, iterations);
  return `pbkdf2-sha256$${iterations}$${toBase64(salt)}$${toBase64(hash)}`;
}

/** Check a password against a stored hash in constant time (for equal lengths). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterText, saltText, hashText] = stored.split('$');
  if (scheme !== 'pbkdf2-sha256' || !iterText || !saltText || !hashText) return false;
  const expected = fromBase64(hashText);
  const actual = await derive(password, fromBase64(saltText), Number(iterText));
  if (actual.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < actual.length; i++) diff |= actual[i]! ^ expected[i]!;
  return diff === 0;
}

/**
 * A stored hash no password matches, of the given strength: checked against when a user name names no
 * account, so that the answer takes one derivation as for a real account (no timing oracle on which names
 * exist). Its salt and hash are fixed: the derivation, not the comparison, is what costs.
 */
export function unmatchableHash(iterations: number): string {
  return `pbkdf2-sha256$${iterations}$${toBase64(new Uint8Array(16))}$${toBase64(new Uint8Array(32))}`;
}

/**
 * The runtime's synchronous SHA-256 where it has one (Node, Deno, Workers with Node compatibility). WebCrypto's
 * digest is a promise answered from the thread pool: a round trip per request, which for a remembered Bearer
 * token cost more than the rest of its check, and for a remembered Basic password about as much. Read through
 * globalThis: this is runtime-neutral code.
 */
type NodeCrypto = {
  createHash(algorithm: string): { update(text: string): { digest(encoding: 'base64url'): string } };
  /** The one-shot form (Node 20.12+, Deno): no Hash object per call, about half the cost. */
  hash?: (algorithm: string, text: string, encoding: 'base64url') => string;
};
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/**
 * {@link sha256}, the same text, at once where the runtime hashes synchronously (else the promise): for the keys
 * checked on every request (remembered tokens and Basic credentials), where awaiting a value already there still
 * costs a turn of the microtask queue.
 */
export function sha256Now(text: string): string | Promise<string> {
  if (nodeCrypto?.hash) return nodeCrypto.hash('sha256', text, 'base64url');
  return nodeCrypto ? nodeCrypto.createHash('sha256').update(text).digest('base64url') : sha256(text);
}

/** SHA-256 of a string as base64url: how opaque secrets (refresh tokens, codes) are stored. */
export async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  return toBase64Url(digest);
}

/** A random URL-safe secret of `bytes` bytes of entropy. */
export function randomSecret(bytes = 32): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}
