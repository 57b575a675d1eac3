import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../encoding/base64.js';
import { remoteVerify, RemoteVerifyError } from './remote-verify.js';

/** A fetch that records the call and answers `status` with `body`. */
function fakeFetch(status: number, body: unknown) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetcher = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof fetch;
  return { calls, fetcher };
}

describe('base64 without Buffer', () => {
  it('round-trips every byte value and large inputs, and matches Buffer', () => {
    const bytes = Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7919) & 0xff);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    expect(toBase64(new Uint8Array())).toBe('');
  });
});

describe('remoteVerify helper', () => {
  const answer = {
    verified: true,
    score: 80.5,
    threshold: 48,
    operationUuid: '00000000-0000-4000-8000-000000000000',
    subjectId: 'alice',
  };

  it('posts the base64 template and the ciphertext to the user surface with Basic credentials', async () => {
    const { calls, fetcher } = fakeFetch(200, answer);
    const r = await remoteVerify(
      'https://bims.example/',
      { username: 'ann', password: 'p:w' },
      { encryptedTemplate: 'a.b.c.d.e', template: new Uint8Array([1, 2, 3]) },
      { fetch: fetcher },
    );
    expect(r).toEqual(answer);
    expect(calls[0]!.url).toBe('https://bims.example/user/operations/remote-verify');
    expect((calls[0]!.init.headers as Record<string, string>).authorization).toBe(
      `Basic ${Buffer.from('ann:p:w').toString('base64')}`,
    );
    expect(JSON.parse(calls[0]!.init.body as string)).toEqual({ encryptedTemplate: 'a.b.c.d.e', template: 'AQID' });
  });

  it('takes a bearer token or a ready header, a base64 template, a subjectId and another surface', async () => {
    const { calls, fetcher } = fakeFetch(200, answer);
    await remoteVerify(
      'https://bims.example',
      { accessToken: 'tok' },
      { encryptedTemplate: 'x', template: 'AQID', subjectId: 'alice' },
      { fetch: fetcher, surface: 'root' },
    );
    await remoteVerify(
      new URL('https://bims.example'),
      { authorization: 'Custom z' },
      { encryptedTemplate: 'x', template: 'AQID' },
      { fetch: fetcher, surface: 'admin' },
    );
    expect(calls.map((c) => c.url)).toEqual([
      'https://bims.example/operations/remote-verify',
      'https://bims.example/admin/operations/remote-verify',
    ]);
    expect(calls.map((c) => (c.init.headers as Record<string, string>).authorization)).toEqual([
      'Bearer tok',
      'Custom z',
    ]);
    expect(JSON.parse(calls[0]!.init.body as string).subjectId).toBe('alice');
  });

  it('throws RemoteVerifyError with the status and the problem for a refusal', async () => {
    const problem = { status: 422, title: 'Unprocessable', detail: 'body.encryptedTemplate: does not decrypt' };
    const { fetcher } = fakeFetch(422, problem);
    const error = await remoteVerify(
      'https://bims.example',
      { accessToken: 't' },
      { encryptedTemplate: 'x', template: 'AQID' },
      { fetch: fetcher },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteVerifyError);
    expect(error).toMatchObject({ status: 422, problem });
    expect(error.message).toContain('does not decrypt');
  });
});
