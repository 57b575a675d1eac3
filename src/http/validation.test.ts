import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../services/errors.js';
import { MAX_JSON_DEPTH, queryObject, validate } from './validation.js';
import { readJsonBody } from './json-body.js';

const post = (body: string) =>
  new Request('http://x/', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
const nested = (depth: number) => `{"metadata":{"a":${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;

describe('queryObject', () => {
  // Found by the generated bad input suite: `?__proto__=1` vanished before the strict schema could refuse it.
  it('keeps __proto__ as an ordinary key, so strict schemas refuse it', () => {
    const query = queryObject(new URL('http://x/?id=1&__proto__=a&__proto__=b'));
    expect(Object.keys(query).sort()).toEqual(['__proto__', 'id']);
    expect(Object.getPrototypeOf(query)).toBe(Object.prototype);
    expect(() => validate(z.strictObject({ id: z.string() }), query, 'query')).toThrow(
      /query.__proto__ is not a known field/,
    );
  });
});

describe('readJsonBody', () => {
  it(`accepts nesting up to ${MAX_JSON_DEPTH} levels, brackets inside strings not counted`, async () => {
    await expect(readJsonBody(post(nested(MAX_JSON_DEPTH)))).resolves.toBeTruthy();
    await expect(readJsonBody(post(JSON.stringify({ s: '['.repeat(1000) + '\\"{' })))).resolves.toBeTruthy();
  });

  // Found by the generated bad input suite: 5,000 levels in createSubject's metadata was a 500 (stack overflow).
  it('refuses deeper bodies with a 400 naming the body', async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const error = await readJsonBody(post(nested(depth))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'validation', extras: { errors: [{ field: 'body' }] } });
    }
  });
});

describe('validate', () => {
  // Found by the generated bad input suite: `{"username":"\udfff\ud800"}` reached PostgreSQL and was a 500.
  it('refuses unpaired surrogates in values and keys with a 400 naming the field, and keeps paired ones', () => {
    const schema = z.object({ username: z.string() }).catchall(z.unknown());
    for (const [value, field] of [
      [{ username: '\udfff\ud800' }, 'body.username'],
      [{ username: 'ok\ud800' }, 'body.username'],
      [{ username: 'ok', ['k\udc00']: 1 }, 'body.k\ufffd'],
    ] as const) {
      expect(() => validate(schema, value, 'body')).toThrow(DomainError);
      try {
        validate(schema, value, 'body');
      } catch (error) {
        expect((error as DomainError).extras.errors).toEqual([
          { field, message: expect.stringMatching(/unpaired surrogate/) },
        ]);
      }
    }
    expect(validate(schema, { username: 'emoji 😀 fine' }, 'body')).toEqual({ username: 'emoji 😀 fine' });
  });
});

describe('readJsonBody and UTF-8', () => {
  const raw = (bytes: number[]) =>
    new Request('http://x/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(bytes),
    });
  const json = (s: string) => [...new TextEncoder().encode(s)];

  // Seen through the generated bad input suite: malformed bytes became U+FFFD and were stored as if sent.
  it('refuses malformed UTF-8 with a 400 naming the body', async () => {
    for (const bad of [
      [0xff, 0xfe],
      [0xc3, 0x28],
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
    ]) {
      const error = await readJsonBody(raw([...json('{"subjectId":"a'), ...bad, ...json('"}')])).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'validation',
        extras: { errors: [{ field: 'body', message: 'is not valid UTF-8' }] },
      });
    }
  });

  it('reads well-formed UTF-8, a leading byte order mark included', async () => {
    await expect(readJsonBody(raw([0xef, 0xbb, 0xbf, ...json('{"name":"Zoë 😀"}')]))).resolves.toEqual({
      name: 'Zoë 😀',
    });
  });
});
