import type { JanusAnswer } from '../../gateway/janus-answer.js';
import type { OperationServices } from '../operation-services.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { CaptureGateway, ConnectInput } from './capture-gateway.js';
import type { SessionTracker } from '../gateway/session-tracker.js';
import { ownerKeyOf } from '../gateway/gateway-owner.js';
import { subjectIdTaken } from '../../db/repositories/subjects/lookup.js';
import { CaptureSession } from './capture-session.js';
import { type CaptureCaller, type CaptureMedia, type CaptureParams } from './capture-types.js';
import { CaptureStore, LOST_MARGIN_MS, type CaptureSnapshot, type CaptureView } from './capture-store.js';
import { CaptureWriter } from './capture-writer.js';
import { captureEvent, liveView, runningView, writtenAtOnce } from './capture-views.js';
import { closeDecoders, forwardToDecoders, openDecoders, publisherMedia } from './publisher-media.js';
import { audioMidOf, createRoom, destroyRoom, joinAndPublish, newRoomNumber, videoMidOf } from './videoroom.js';

/** What a connect needs to start a capture: the services the operation runs with, and who asked. */
export interface CaptureStarter {
  services: OperationServices;
  caller: CaptureCaller;
}

interface Entry {
  session: CaptureSession;
  captureId: string;
  /** Whose it is, under the gateway's owner key (as its row says). */
  owner: string;
  sessionId: number;
  handleId: number;
  writer: CaptureWriter;
  /** Its client's end of candidates reached Janus: the polls that repeat it need not (GatewayService.trickle). */
  candidatesEnded: boolean;
}

/**
 * The capture sessions this node runs, by gateway session and handle. A connect on a VideoRoom handle makes a
 * private room, publishes the client's offer into it and starts a {@link CaptureSession} whose frames come
 * from the sidecar's decoder once the PeerConnection is up; at the end the forwarding, the decoder, the room
 * and the gateway session are released. What a client reads of each capture is written to the database as
 * it changes ({@link CaptureStore}), so every node answers it alike: by the account that started it (and
 * admins), in the answer to trickleGateway on its handle (see {@link view}) and in getSession.
 */
export class CaptureRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly gateway: CaptureGateway,
    readonly store: CaptureStore,
  ) {}

  async connect(input: ConnectInput, tracker: SessionTracker, starter: CaptureStarter): Promise<JanusAnswer> {
    const { sessionId, handleId } = input;
    const params = input.params as CaptureParams; // validated by ConnectData
    const mid = videoMidOf(String(input.jsep.sdp ?? ''));
    if (!mid) throw invalid('body.jsep.sdp', 'the offer carries no video track to capture from');
    const wantsVoice = 'modalities' in params && params.modalities.includes('VOICE');
    const audioMid = wantsVoice ? audioMidOf(String(input.jsep.sdp ?? '')) : undefined;
    if (wantsVoice && !audioMid)
      throw invalid('body.jsep.sdp', 'the offer carries no audio track, and the session captures the voice');
    await this.checkSubject(starter.services, params);
    const owner = ownerKeyOf(starter.caller.principal);
    // A first look at the caps before the gateway does any work for it (a refused flood costs Janus nothing) ...
    await this.store.check(owner, { sessionId, handleId });
    const adminKey = await this.gateway.adminKey();
    const room = newRoomNumber();
    // The decoders start while Janus makes the room and takes the offer (publisher-media.ts says why).
    const opening = openDecoders(this.gateway, { params, owner, audio: audioMid !== undefined });
    opening.catch(() => {}); // awaited below; a failure before then must not be unhandled
    let answer: JanusAnswer;
    let captureId: string;
    let roomMade = false;
    try {
      await this.gateway.pluginRequest(sessionId, handleId, createRoom(room, adminKey));
      roomMade = true;
      answer = await this.gateway.messageForEvent(tracker, sessionId, handleId, joinAndPublish(room), input.jsep);
      // ... and its place taken with its row: of concurrent connects that passed the first look, those now past
      // the cap are refused here, their room (and publisher) destroyed and their decoders closed.
      captureId = await this.admit(sessionId, handleId, params, starter);
    } catch (error) {
      if (roomMade) await this.gateway.pluginRequest(sessionId, handleId, destroyRoom(room, adminKey)).catch(() => {});
      await closeDecoders(this.gateway, await opening.catch(() => ({}))).catch(() => {});
      throw error;
    }
    // The answer goes back at once: ICE and DTLS (a few hundred ms) overlap the decoders' start, and the
    // forwarding is in place once they are up, the camera asked for a keyframe when its video flows.
    const publisherId = Number(answer.plugindata?.data?.id);
    const { timeoutSeconds } = params;
    const forwarded = opening.then(async (opened) => {
      await forwardToDecoders(this.gateway, {
        ...{ sessionId, handleId, room, publisherId, mid, audioMid, adminKey, tracker, timeoutSeconds },
        decoders: opened,
      });
      return opened;
    });
    forwarded.catch(() => {}); // read by the capture's frames, which fail with it
    const media = publisherMedia(this.gateway, { sessionId, handleId, room, adminKey, opened: opening, forwarded });
    const session = await this.start({ sessionId, handleId, params, starter, media, captureId });
    // With its first events: STARTED says the rate the frames are analysed at, which the client's camera need
    // not exceed (the SDK asks its browser to send no more: docs/gateway-capture.md, "Frame rate").
    return { ...answer, capture: runningView(session) };
  }

  /**
   * Run a capture on a handle with its media, its row written before this returns (so any node reads it
   * from the connect's answer on). Connect calls it with the forwarded stream, once {@link admit} gave it its
   * `captureId`; tests call it with frames of their own, and it is then admitted here. @throws DomainError 429/503
   */
  async start(m: {
    sessionId: number;
    handleId: number;
    params: CaptureParams;
    starter: CaptureStarter;
    media: CaptureMedia;
    captureId?: string;
  }): Promise<CaptureSession> {
    const { sessionId, handleId, params, starter } = m;
    const key = keyOf(sessionId, handleId);
    const captureId = m.captureId ?? (await this.admit(sessionId, handleId, params, starter));
    const timesOutAt = this.gateway.now().getTime() + params.timeoutSeconds * 1000;
    let processingAt = 0;
    let session!: CaptureSession;
    const snapshot = (): CaptureSnapshot => {
      // The operation after the frames (PROCESSING) may outlast the timeout: the deadline moves past its start.
      if (session.state === 'PROCESSING' && !processingAt) processingAt = this.gateway.now().getTime();
      return {
        state: session.state,
        events: [...session.events],
        result: session.result,
        over: session.isOver,
        deadlineAt: new Date(Math.max(timesOutAt, processingAt) + LOST_MARGIN_MS),
      };
    };
    const writer = new CaptureWriter({
      write: () => this.store.write(sessionId, handleId, captureId, snapshot()),
      // Another node settled the row (the client stopped the session there) or a new connect replaced it:
      // this capture ends too, and its row keeps what it says.
      settledElsewhere: () => session.cancel('ended on another node'),
      log: starter.services.ctx.log,
      // On PGlite (one node) nobody reads a running capture's row (see view and events): its progress goes
      // with its next change of state, about three writes a capture instead of one a second besides.
      progressWrites: !this.store.soleNode,
    });
    session = new CaptureSession(starter.services, params, starter.caller, m.media, (event) =>
      writer.changed(writtenAtOnce(event.type)),
    );
    this.forgetFinished();
    this.entries.get(key)?.session.cancel('replaced by a new connect');
    this.entries.set(key, {
      session,
      captureId,
      owner: ownerKeyOf(starter.caller.principal),
      sessionId,
      handleId,
      writer,
      candidatesEnded: false,
    });
    session.start();
    await writer.flushed();
    return session;
  }

  /**
   * The capture on a handle as its client reads it, on any node, or undefined when the handle has none or it
   * is not `actsOn`'s (null: anyone's, on /admin): another account is told nothing, so it can neither follow
   * nor disturb it. `here`: this node runs it. The row decides whose it is and whether it is over; while it
   * runs here, its events and state are this node's own, which may be ahead of the row by the progress not
   * yet written (CaptureWriter gathers it for a second): its client sees each event as it happens. An outcome
   * is only shown once the row holds it (an urgent write), so what one node answers as over, every node does.
   * On PGlite (one node, whose rows nobody else writes) a capture running here is not read from the database
   * at all: a page polls its capture about three times a second.
   */
  async view(
    sessionId: number,
    handleId: number,
    actsOn: string | null,
  ): Promise<{ view: CaptureView; over: boolean; here: boolean } | undefined> {
    const running = this.entries.get(keyOf(sessionId, handleId));
    if (this.store.soleNode && running && !running.session.isOver && !running.writer.refused) {
      if (actsOn !== null && running.owner !== actsOn) return undefined;
      return { view: runningView(running.session), over: false, here: true };
    }
    const stored = await this.store.read(sessionId, handleId);
    if (!stored) return undefined;
    const owner = stored.owner ?? (stored.accountId === null ? null : `account:${stored.accountId}`);
    if (actsOn !== null && owner !== actsOn) return undefined;
    const entry = this.entries.get(keyOf(sessionId, handleId));
    const runs = entry !== undefined && entry.captureId === stored.captureId;
    const here = runs && !entry.session.isOver;
    if (!runs || stored.over) return { view: stored.view, over: stored.over, here };
    return { view: liveView(entry.session, stored.view), over: false, here };
  }

  /** Whether a capture running here had its client's `completed` forwarded to Janus (`note`: it now has). */
  candidatesEnded(sessionId: number, handleId: number, note = false): boolean {
    const entry = this.entries.get(keyOf(sessionId, handleId));
    const ended = entry?.candidatesEnded === true && !entry.session.isOver;
    if (entry && note) entry.candidatesEnded = true;
    return ended;
  }

  /**
   * The capture events of a gateway session (or of one handle) as getSession shows them beside Janus's own,
   * read from the database so that every node shows the same; on PGlite (one node) a capture running here
   * shows its events as this node holds them, since its row takes its progress only with its next change of
   * state (CaptureWriter's `progressWrites`).
   */
  async events(sessionId: number, handleId?: number): Promise<JanusAnswer[]> {
    const captures = await this.store.ofSession(sessionId, handleId);
    return captures.flatMap(({ handleId: handle, capture }) => {
      const entry = this.entries.get(keyOf(sessionId, handle));
      const live = this.store.soleNode && !capture.over && entry?.captureId === capture.captureId;
      const { events } = live ? liveView(entry.session, capture.view) : capture.view;
      return events.map((event) => captureEvent(sessionId, handle, event));
    });
  }

  /** The client stopped the gateway session: its captures end without an operation, on whichever node they run. */
  async stop(sessionId: number, reason: string): Promise<void> {
    this.cancel(sessionId, reason);
    await Promise.all(
      [...this.entries.values()].filter((e) => e.sessionId === sessionId).map((e) => e.writer.flushed()),
    );
    await this.store
      .stopSession(sessionId, reason)
      .catch((error: unknown) =>
        this.gateway.log.warn('capture stop not recorded', { error: (error as Error)?.message }),
      );
  }

  /** This node's captures of a gateway session end (the session is gone from the gateway, or was stopped). */
  cancel(sessionId: number, reason: string): void {
    for (const entry of this.entries.values()) if (entry.sessionId === sessionId) entry.session.cancel(reason);
  }

  /** At shutdown: every capture ends, and its last write is awaited. */
  async close(): Promise<void> {
    for (const entry of this.entries.values()) entry.session.cancel('service closing');
    await Promise.all([...this.entries.values()].map((e) => e.writer.flushed()));
  }

  /** The capture's place under the caps, and its row (waiting for its media) written: its id. */
  private async admit(
    sessionId: number,
    handleId: number,
    params: CaptureParams,
    starter: CaptureStarter,
  ): Promise<string> {
    const captureId = crypto.randomUUID();
    const deadline = this.gateway.now().getTime() + params.timeoutSeconds * 1000 + LOST_MARGIN_MS;
    await this.store.admit({
      sessionId,
      handleId,
      captureId,
      owner: ownerKeyOf(starter.caller.principal),
      accountId: starter.caller.principal.accountId,
      purpose: params.purpose,
      snapshot: { state: 'WAITING_MEDIA', events: [], result: null, over: false, deadlineAt: new Date(deadline) },
    });
    return captureId;
  }

  /** As the JSON path would refuse them, before any media flows: a VERIFY of nobody, an ENROLL of a subjectId taken. */
  private async checkSubject(services: OperationServices, params: CaptureParams): Promise<void> {
    if (params.purpose !== 'VERIFY' && params.purpose !== 'ENROLL') return;
    const exists = await subjectIdTaken(services.ctx.db, params.subjectId!);
    if (params.purpose === 'VERIFY' && !exists) throw notFound(`Subject '${params.subjectId}'`);
    if (params.purpose === 'ENROLL' && exists)
      throw conflict(`A subject with subjectId '${params.subjectId}' already exists`);
  }

  /** Finished captures are the database's to keep; this node forgets them once their last write is done. */
  private forgetFinished(): void {
    for (const [key, entry] of this.entries) if (entry.session.isOver && entry.writer.idle) this.entries.delete(key);
  }
}

const keyOf = (sessionId: number, handleId: number) => `${sessionId}/${handleId}`;
