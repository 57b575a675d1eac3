// Messages to a Janus plugin and the plugin's answers: the offer whose answer comes as an event, the request Janus
// answers at once. A plugin error in either answer is a JanusApiError from the plugin.
import { JanusApiError } from '../../gateway/errors.js';
import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { JanusClient } from '../../gateway/janus-client.js';
import { DomainError } from '../errors.js';
import type { SessionTracker } from './session-tracker.js';

/** A plugin error carried in an answer's plugin data, thrown as a JanusApiError; the data otherwise. */
function pluginData(answer: JanusAnswer): Record<string, unknown> {
  const data = answer.plugindata?.data ?? {};
  if (data.error_code !== undefined || data.error !== undefined) {
    throw new JanusApiError(Number(data.error_code ?? 490), String(data.error ?? 'plugin error'), answer, true);
  }
  return data;
}

/**
 * Send a plugin message (with a JSEP) and wait for the plugin's event carrying the same transaction, which
 * holds the JSEP answer; the session's tracker sees the events, and `eventTimeoutMs` bounds the wait.
 */
export async function messageForEvent(
  janus: JanusClient,
  eventTimeoutMs: number,
  tracker: SessionTracker,
  sessionId: number,
  handleId: number,
  body: Record<string, unknown>,
  jsep?: Record<string, unknown>,
): Promise<JanusAnswer> {
  const transaction = crypto.randomUUID();
  const waiting = tracker.waitFor((e) => e.transaction === transaction && e.sender === handleId, eventTimeoutMs);
  let answer: JanusAnswer;
  try {
    answer = await janus.message(sessionId, handleId, body, jsep, transaction);
  } catch (error) {
    waiting.cancel();
    throw error;
  }
  if (answer.janus !== 'ack') waiting.cancel();
  else {
    const event = await waiting.promise;
    if (!event && tracker.isEnded) {
      throw new DomainError('service-unavailable', 'The gateway session ended before the plugin answered the offer', {
        component: 'janus',
      });
    }
    if (!event) {
      throw new DomainError('bad-gateway', `The gateway plugin did not answer the offer within ${eventTimeoutMs} ms`, {
        component: 'plugin',
      });
    }
    answer = event;
  }
  pluginData(answer);
  return answer;
}

/** A plugin request Janus answers at once (`success` with the plugin's data). */
export async function pluginRequest(
  janus: JanusClient,
  sessionId: number,
  handleId: number,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return pluginData(await janus.message(sessionId, handleId, body));
}
