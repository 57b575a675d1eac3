// The sidecar's media decoders are shared fairly (issue 32, point 7): each owner holds at most its share, the
// last places are kept for owners holding less than one capture's two (video and audio), and past the total the
// answer is 503. Real ffmpeg processes behind the sidecar's own routes, asked as the API asks them.
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { mountDecoderRoutes } from '../../src/sidecar/decoders/routes.js';

const app = new Hono();
const decoders = mountDecoderRoutes(app, { log: { info: () => {}, warn: () => {} }, caps: { perOwner: 2, total: 6 } });
afterAll(() => decoders.stopAll());

async function open(owner: string) {
  const res = await app.request('/v1/decoders', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ codec: 'VP8', payloadType: 96, framesPerSecond: 2, maxSeconds: 60, owner }),
  });
  const body = (await res.json()) as { id?: string; error?: string };
  return { status: res.status, retryAfter: res.headers.get('retry-after'), id: body.id, error: body.error };
}

describe('the decoders of the sidecar, by owner (2 each, 6 in all)', () => {
  it('an owner past its share gets 429, the reserve stays for owners holding less than two, the total 503', async () => {
    const a1 = await open('account:a');
    const a2 = await open('account:a');
    expect([a1.status, a2.status]).toEqual([201, 201]);
    expect(await open('account:a')).toMatchObject({ status: 429, retryAfter: '10', error: 'owner-share' });
    expect((await open('account:b')).status).toBe(201);
    expect((await open('account:b')).status).toBe(201);
    // Four of six taken: the last two go to owners holding fewer than two, one capture's video and audio.
    expect(await open('account:b')).toMatchObject({ status: 429 });
    expect((await open('account:c')).status).toBe(201);
    expect((await open('account:c')).status).toBe(201);
    expect(await open('account:d')).toMatchObject({ status: 503, retryAfter: '10', error: 'busy' });
    // One given back is one more for its owner.
    expect((await app.request(`/v1/decoders/${a1.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await open('account:a')).status).toBe(201);
  }, 60_000);

  it('a request naming no owner is refused before any decoder starts', async () => {
    const res = await app.request('/v1/decoders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ codec: 'VP8', payloadType: 96, framesPerSecond: 2, maxSeconds: 60 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/owner/);
  });
});
