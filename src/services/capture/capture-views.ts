// What readers see of a capture this node runs: which events are written at once for readers on other nodes,
// the live view a client reads from memory, and an event shaped as the gateway session's events carry it.
import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { CaptureSession } from './capture-session.js';
import type { CaptureEvent } from './capture-types.js';
import type { CaptureView } from './capture-store.js';

/** Events a reader on another node should not wait for: the start, the media, the operation starting, the outcome. */
export const writtenAtOnce = (type: string) =>
  type === 'DONE' ||
  type === 'TIMEOUT' ||
  type === 'FAILED' ||
  type === 'STARTED' ||
  type === 'MEDIA' ||
  type === 'PROCESSING';

/** A capture running on this node as its client reads it, from the node's memory (its row may lag behind). */
export function runningView(session: CaptureSession): CaptureView {
  return { state: session.state, purpose: session.params.purpose, events: [...session.events] };
}

/**
 * A capture this node runs and whose row is not over, as this node holds it: the row's fields, the events and
 * state as they are now. An outcome whose write is still on its way is left out (the row's state stands), so a
 * client never reads an outcome that a reader elsewhere could not, and the list it reads never shrinks.
 */
export function liveView(session: CaptureSession, stored: CaptureView): CaptureView {
  if (!session.isOver) return { ...stored, state: session.state, events: [...session.events] };
  const before = session.events.slice(0, -1);
  // At the cap of kept events the list no longer grows: the row's may then be the longer one.
  return before.length < stored.events.length ? stored : { ...stored, events: before };
}

/**
 * A capture event as the gateway session's events carry it: shaped like a plugin event, from the plugin
 * "bims.capture" (this service, not Janus), with the event's fields as its data.
 */
export function captureEvent(sessionId: number, handleId: number, event: CaptureEvent): JanusAnswer {
  return {
    janus: 'event',
    session_id: sessionId,
    sender: handleId,
    plugindata: { plugin: 'bims.capture', data: { ...event } },
  };
}
