import { describe, expect, it } from 'vitest';
import { hashPassword, sha256, sha256Now, verifyPassword } from './password.js';

describe('password hashing', () => {
  it('verifies the right password and rejects others, at the production cost', async () => {
    const stored = await hashPassword('correct horse battery staple', 600_000);
    expect(stored).toMatch(/^pbkdf2-sha256\$600000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
  });

  it('salts every hash', async () => {
    const a = await hashPassword('same', 10_000);
    const b = await hashPassword('same', 10_000);
    expect(a).not.toBe(b);
  });

  it('rejects malformed stored hashes instead of throwing', async () => {
    expect(await verifyPassword('x', 'plaintext')).toBe(false);
    expect(await verifyPassword('x', 'md5$1$aa$bb')).toBe(false);
  });
});

describe('sha256Now', () => {
  it('is the text WebCrypto makes, answered at once on Node', async () => {
    for (const text of ['', 'admin\u0000secret', 'é😀'.repeat(100)]) {
      const now = sha256Now(text);
      expect(typeof now).toBe('string');
      expect(now).toBe(await sha256(text));
    }
  });
});
