import type { Context } from 'hono';
import type { AppEnv } from './env.js';

/** The caller's network address as the runtime entry reported it (for throttling and logs). */
export function clientAddress(c: Context<AppEnv>): string {
  return c.get('clientAddress') ?? 'unknown';
}
