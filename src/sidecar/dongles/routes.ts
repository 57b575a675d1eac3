import type { Hono } from 'hono';
import { z } from 'zod';
import { DongleCounter } from '../../licensing/document.js';
import type { Dongles } from './dongles.js';
import type { SidecarDongle } from '../../protocols/sidecar.js';

const DumpBody = z.object({ counters: z.array(DongleCounter).max(10_000).default([]) });
const UpdateBody = z.object({
  package: z
    .string()
    .min(1)
    .max(256 * 1024),
});

/**
 * The dongle routes of the sidecar, under /v1 (so behind its Bearer token): list, signed dump, apply an
 * update, and the state of the last update. Errors answer `{error, detail}` as the rest of the sidecar does.
 */
export function mountDongleRoutes(app: Hono, dongles: Dongles): void {
  const noStore = { 'Cache-Control': 'no-store' };
  app.get('/v1/dongles', async (c) =>
    c.json({ dongles: (await dongles.list()) satisfies SidecarDongle[] }, 200, noStore),
  );
  app.post('/v1/dongles/dump', async (c) => {
    const body = DumpBody.safeParse(await c.req.json().catch(() => null));
    if (!body.success) return c.json({ error: 'invalid', detail: body.error.message }, 400);
    const result = await dongles.dump(c.req.query('dongleId') || undefined, body.data.counters);
    if ('error' in result) return c.json({ error: 'refused', detail: result.error }, result.status);
    return c.json(result, 200, noStore);
  });
  app.post('/v1/dongles/update', async (c) => {
    const body = UpdateBody.safeParse(await c.req.json().catch(() => null));
    if (!body.success) return c.json({ error: 'invalid', detail: body.error.message }, 400);
    const result = await dongles.applyUpdate(body.data.package);
    if ('error' in result) return c.json({ error: 'refused', detail: result.error }, result.status);
    return c.json(result, 200, noStore);
  });
  app.get('/v1/dongles/update-status', async (c) => c.json(await dongles.updateState(), 200, noStore));
}
