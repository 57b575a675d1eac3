// Janus's HTTP transport hands each asynchronous event of a session to one long poll only. When a client makes
// its gateway session on one node and sends its offer through another (a load balancer between them), both nodes
// poll that session, and the plugin's answer (the JSEP) may go to the node that did not ask: the asking node
// waited BIMS_GATEWAY_EVENT_TIMEOUT_MS (15 s) and answered 502. The node that took it relays it to the others
// on a PostgreSQL channel, where the asking node's tracker takes it (session-tracker.ts, deliver).
import { notifyGatewayEvent } from '../../db/repositories/gateway-sessions.js';
import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { ServiceContext } from '../context.js';

export const GATEWAY_EVENT_CHANNEL = 'bims_gateway_event';
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more; an SDP answer is a few kB. */
const MAX_PAYLOAD = 7_900;

/** Relay an event nobody here waits for to the other nodes (PostgreSQL only: PGlite is one node). */
export async function relayGatewayEvent(ctx: ServiceContext, event: JanusAnswer): Promise<void> {
  if (!ctx.config.DATABASE_URL) return;
  const payload = JSON.stringify(event);
  if (payload.length > MAX_PAYLOAD) {
    ctx.log.warn('gateway event too large to relay to other nodes', {
      sessionId: event.session_id,
      bytes: payload.length,
    });
    return;
  }
  await notifyGatewayEvent(ctx.db, GATEWAY_EVENT_CHANNEL, payload).catch((error: unknown) =>
    ctx.log.warn('gateway event not relayed', { error: (error as Error)?.message }),
  );
}

/** A relayed event, or null for a payload that is not one. */
export function parseRelayed(payload: string): JanusAnswer | null {
  try {
    const event = JSON.parse(payload) as JanusAnswer;
    return typeof event?.session_id === 'number' && typeof event.transaction === 'string' ? event : null;
  } catch {
    return null;
  }
}
