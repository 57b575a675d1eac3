import type { OperationServices } from '../operation-services.js';
import { DomainError } from '../errors.js';
import { gatewayDomainError } from '../gateway/errors.js';
import { analyseImages, embedKeptFaces, type AnalysedImage, type FaceGates } from '../biometrics/face-samples.js';
import { frameMeasures } from '../biometrics/analyse-samples.js';
import { FrameJudge, type CaptureGuidance } from './frame-judge.js';
import type { ActiveState } from './active-liveness.js';
import {
  recordTimeout,
  refuseActiveLiveness,
  refuseFrames,
  runCaptureOperation,
  type CaptureOperationContext,
} from './capture-operation.js';
import type {
  CaptureCaller,
  CaptureEvent,
  CaptureMedia,
  CaptureParams,
  CaptureResult,
  CaptureState,
} from './capture-types.js';
import {
  activeLivenessOf,
  captureGates,
  capturesModality,
  type CaptureMetrics,
  reportedMetrics,
} from './capture-setup.js';
import { sessionSettings } from './session-settings.js';
import { VoiceCollector } from './voice-collector.js';
import { IdleWatch } from './idle-watch.js';
import { RefusalPatience, refusal } from './refusal-reasons.js';
import { CaptureEventLog } from './capture-events.js';

/**
 * A biometric capture over a live video stream (issue 22): frames are analysed by the same extraction
 * pipeline as uploaded photos, judged by {@link FrameJudge} (tracking, quality gates, liveness over frames,
 * best frames), and once it is satisfied the operation runs as the JSON path runs it (storeEnrolment for ENROLL,
 * runOperation for VERIFY, IDENTIFY and CHECK) on the analyses of the selected frames, no model run again. A
 * session that reaches no result within `timeoutSeconds` ends with TIMEOUT, recorded as a FAILED operation.
 */
export class CaptureSession {
  state: CaptureState = 'WAITING_MEDIA';
  /** Date.now() of the outcome, for how long a finished capture is kept. */
  endedAt: number | null = null;
  result: CaptureResult | null = null;
  /** Its events so far, as its client reads them. */
  get events(): readonly CaptureEvent[] {
    return this.log.events;
  }
  readonly metrics: CaptureMetrics = {
    framesDecoded: 0,
    framesAnalysed: 0,
    firstFrameMs: null,
    resultMs: null,
    analyseMs: 0,
  };
  private readonly started = performance.now();
  private readonly stop = new AbortController();
  private lastGuidance: CaptureGuidance | null = null;
  private done: Promise<void> | null = null;
  /** What the operation at the end runs with (capture-operation.ts). */
  private readonly operation: CaptureOperationContext;
  /** Ends the capture when nobody was seen (or heard) for BIMS_CAPTURE_IDLE_SECONDS. */
  private readonly patience: IdleWatch;
  /** Ends the capture when every frame failed for one reason for BIMS_CAPTURE_PATIENCE_SECONDS. */
  private readonly refusals: RefusalPatience;
  /** The events its client reads (capture-events.ts). */
  private readonly log: CaptureEventLog;

  constructor(
    private readonly services: OperationServices,
    readonly params: CaptureParams,
    readonly caller: CaptureCaller,
    private readonly media: CaptureMedia,
    /** Told of every event as it happens (the gateway session's events, which getSession shows). */
    onEvent: (event: CaptureEvent) => void = () => {},
  ) {
    this.log = new CaptureEventLog(onEvent);
    this.operation = { services, params, caller, overrides: sessionSettings(params) };
    this.patience = new IdleWatch(services.ctx.config.BIMS_CAPTURE_IDLE_SECONDS * 1000, () => this.stop.abort());
    this.refusals = new RefusalPatience(services.ctx.config.BIMS_CAPTURE_PATIENCE_SECONDS * 1000);
  }

  /** Start capturing in the background; `finished` resolves when the session has its outcome. */
  start(): void {
    const { purpose, timeoutSeconds, framesPerSecond } = this.params;
    this.log.emit({ type: 'STARTED', purpose, timeoutSeconds, framesPerSecond });
    this.done = this.run()
      .catch((raw: unknown) => {
        // The extractor or the media gateway unavailable (a full queue, no models, no decoder) is said as the
        // operations say it, the operator's detail logged; anything else is ours.
        const error = gatewayDomainError(raw);
        if (error instanceof DomainError) {
          if (error.operatorDetail)
            this.services.ctx.log.warn('capture session failed', {
              detail: error.detail,
              operatorDetail: error.operatorDetail,
            });
          return this.finish('FAILED', { status: 'FAILED', reason: error.detail });
        }
        this.services.ctx.log.error('capture session failed', { error: (error as Error)?.message });
        this.finish('FAILED', { status: 'FAILED', reason: 'the capture failed on our side' });
      })
      .finally(() => this.release());
  }

  get finished(): Promise<void> {
    return this.done ?? Promise.resolve();
  }

  /** End early (the client stopped the session): no operation runs. */
  cancel(reason: string): void {
    if (this.isOver) return;
    this.finish('FAILED', { status: 'FAILED', reason });
    this.stop.abort();
  }

  get isOver(): boolean {
    return this.state === 'DONE' || this.state === 'TIMEOUT' || this.state === 'FAILED';
  }

  private async run(): Promise<void> {
    const gates = await captureGates(this.operation);
    const judge = new FrameJudge(gates, {
      selectFrames: this.params.selectFrames,
      livenessFrames: this.params.livenessFrames,
    });
    const active = activeLivenessOf(this.params);
    // Each frame measured for what the operation at the end needs, the embedding left for the frames it keeps
    // (made in `processing`): the analyses of the frames chosen are its own.
    const measures = frameMeasures(this.params.purpose, gates, active !== null);
    const voice = capturesModality(this.params, 'VOICE')
      ? new VoiceCollector(
          this.params.kind.startsWith('MULTIMODAL') && 'minSpeechMs' in this.params ? this.params.minSpeechMs : 3000,
        )
      : null;
    if (voice) void this.listen(voice);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.stop.abort();
    }, this.params.timeoutSeconds * 1000);
    try {
      for await (const frame of this.media.frames(this.stop.signal)) {
        if (this.stop.signal.aborted) break;
        this.metrics.framesDecoded += 1;
        if (this.state === 'WAITING_MEDIA') {
          this.state = 'CAPTURING';
          this.metrics.firstFrameMs = performance.now() - this.started;
          this.log.emit({ type: 'MEDIA' });
        }
        if (!capturesModality(this.params, 'FACE')) {
          // A voice-only session: the camera only says the client is there; the voice decides.
          if (voice?.ready) return this.finish('DONE', await this.processing([], gates, voice, timer));
          continue;
        }
        const t0 = performance.now();
        // Frozen once active liveness passed: the frames the challenges were followed on stay the operation's.
        if (active?.state === 'PASSED') {
          if (voice?.ready) return this.finish('DONE', await this.processing(judge.selected(), gates, voice, timer));
          continue;
        }
        // A copy goes to the pool, which may transfer (detach) the bytes it is given; the frame stays ours to keep.
        const [analysis] = await analyseImages(this.services, [new Uint8Array(frame)], () => 'frame', measures);
        this.metrics.analyseMs += performance.now() - t0;
        this.metrics.framesAnalysed += 1;
        if (analysis!.faces.length > 0) this.patience.seen();
        if (active?.state === 'CHALLENGING') {
          // The judge's frontal frames wait while the instructions are checked on the frames that follow.
          for (const event of active.observe(analysis!, t0)) this.log.emit(event);
          const now = active.state as ActiveState; // changed by observe()
          if (now === 'IDLE') judge.restart(); // the face was lost: the passive part starts over
          if (now === 'FAILED') {
            clearTimeout(timer);
            const { framesAnalysed } = this.metrics;
            const durationMs = performance.now() - this.started;
            return this.finish('DONE', await refuseActiveLiveness(this.operation, active, framesAnalysed, durationMs));
          }
          if (now !== 'PASSED') continue;
        } else {
          const verdict = judge.judge(analysis!, frame);
          this.lastGuidance = verdict.guidance;
          this.log.guide(verdict.guidance, {
            accepted: verdict.accepted,
            needed: verdict.needed,
            ...(verdict.reason ? refusal(verdict.reason) : {}),
            ...(verdict.detail ? { detail: verdict.detail } : {}),
          });
          // An empty picture is the idle watch's to judge (BIMS_CAPTURE_IDLE_SECONDS); it neither counts
          // towards another reason's patience nor breaks it (a dark face the detector misses now and then).
          if (verdict.reason !== 'NO_FACE' && this.refusals.observe(verdict.reason ?? null, performance.now())) {
            clearTimeout(timer);
            return this.finish('DONE', await this.refuse());
          }
          if (active && judge.ready()) {
            for (const event of active.begin(judge.trackFaces, performance.now())) this.log.emit(event);
            this.log.forgetGuidance();
            continue;
          }
        }
        if (judge.ready() && (!voice || voice.ready))
          return this.finish('DONE', await this.processing(judge.selected(), gates, voice, timer));
        // The face is done; the voice is not: the client is told to keep talking (once, then SPEECH progress).
        if (judge.ready() && voice)
          this.log.guide('KEEP_SPEAKING', { speechMs: voice.speechMs, neededMs: voice.minSpeechMs });
      }
    } finally {
      clearTimeout(timer);
      this.patience.stop();
    }
    if (this.isOver) return;
    if (timedOut) return this.timedOut();
    if (this.patience.idle) return this.timedOut('IDLE');
    this.finish('FAILED', { status: 'FAILED', reason: 'the media stream ended before a result' });
  }

  /** The selected frames, as analysed and then embedded (and the heard voice), go to the operation. */
  private async processing(
    selected: (AnalysedImage & { face: { quality: number } })[],
    gates: FaceGates,
    voice: VoiceCollector | null,
    timer: ReturnType<typeof setTimeout>,
  ): Promise<CaptureResult> {
    clearTimeout(timer);
    this.state = 'PROCESSING';
    this.log.emit({
      type: 'PROCESSING',
      frames: selected.map((s) => ({ quality: Math.round(s.face.quality) })),
      ...(voice ? { speechMs: voice.speechMs, audioMs: voice.durationMs } : {}),
    });
    const t0 = performance.now();
    const frames = await embedKeptFaces(this.services, selected, () => 'frame');
    this.metrics.analyseMs += performance.now() - t0;
    return runCaptureOperation(this.operation, frames, gates, voice?.wav());
  }

  /** Hear the session's audio until it ends, telling the client how much speech there is so far. */
  private async listen(voice: VoiceCollector): Promise<void> {
    if (!this.media.audio) return;
    try {
      for await (const chunk of this.media.audio(this.stop.signal)) {
        if (this.stop.signal.aborted || this.isOver) break;
        // Speech heard before the first video frame is progress too (a loaded decoder may deliver the audio first).
        if (voice.push(chunk) && (this.state === 'WAITING_MEDIA' || this.state === 'CAPTURING')) {
          this.log.emit({ type: 'SPEECH', speechMs: voice.speechMs, neededMs: voice.minSpeechMs });
          if (!capturesModality(this.params, 'FACE')) this.patience.seen();
        }
      }
    } catch (error) {
      // The session asked for the voice: without it, the timeout says so.
      if (!this.stop.signal.aborted)
        this.services.ctx.log.warn('capture audio failed', { error: (error as Error)?.message });
    }
  }

  /** Every frame failed for one reason for the whole patience window: the capture ends with that reason. */
  private refuse(): Promise<CaptureResult> {
    const { framesAnalysed } = this.metrics;
    const patienceSeconds = this.services.ctx.config.BIMS_CAPTURE_PATIENCE_SECONDS;
    const spent = { framesAnalysed, durationMs: performance.now() - this.started, patienceSeconds };
    return refuseFrames(this.operation, this.refusals.reason!, spent);
  }

  /** No result in time, or (`IDLE`) nobody seen for the idle limit: recorded as a FAILED operation. */
  private async timedOut(why: 'TIMEOUT' | 'IDLE' = 'TIMEOUT'): Promise<void> {
    const { framesAnalysed } = this.metrics;
    const spent = { framesAnalysed, lastGuidance: this.lastGuidance, durationMs: performance.now() - this.started };
    this.finish('TIMEOUT', await recordTimeout(this.operation, why, spent, this.patience.idleMs));
  }

  private finish(state: CaptureState, result: CaptureResult): void {
    if (this.isOver) return;
    this.state = state;
    this.result = result;
    this.metrics.resultMs = performance.now() - this.started;
    this.endedAt = Date.now();
    const metrics = reportedMetrics(this.metrics);
    this.log.emit({ type: state === 'DONE' ? 'DONE' : state === 'TIMEOUT' ? 'TIMEOUT' : 'FAILED', ...result, metrics });
  }

  private async release(): Promise<void> {
    this.stop.abort();
    await this.media
      .release()
      .catch((error: unknown) =>
        this.services.ctx.log.warn('capture media release failed', { error: (error as Error)?.message }),
      );
  }
}
