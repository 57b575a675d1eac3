import type { Extractor, JobAdmission } from '../../extraction/extractor.js';
import { DomainError } from '../errors.js';

/** Whose request the jobs serve, and the signal that says the request was abandoned. */
interface ExtractionScope {
  /** The queue the jobs wait in: one per account, so accounts are served in turn. */
  owner: string;
  /** Aborts when the client disconnects: the request's jobs still waiting are dropped. */
  signal?: AbortSignal;
}

/** `o` with the scope's owner, and a signal that aborts when either the scope's or `o`'s does. */
function admitted<T extends JobAdmission>(scope: ExtractionScope, o: T): T {
  const signals = [scope.signal, o.signal].filter((s): s is AbortSignal => s !== undefined);
  return { ...o, owner: scope.owner, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] };
}

/** The extractor as one request sees it: every job queued under the request's owner and signal. */
function scopedExtractor(extractor: Extractor, scope: ExtractionScope): Extractor {
  return {
    templateVersion: extractor.templateVersion,
    voiceTemplateVersion: extractor.voiceTemplateVersion,
    analyseFace: (bytes, o = {}) => extractor.analyseFace(bytes, admitted(scope, o)),
    analyseVoice: (bytes, o = {}) => extractor.analyseVoice(bytes, admitted(scope, o)),
    renderTokenImage: (bytes, o) => extractor.renderTokenImage(bytes, admitted(scope, o)),
    stats: () => extractor.stats(),
    close: () => extractor.close(),
  };
}

/** Told of every extraction job: its kind, whether it succeeded, and its seconds from submission to result. */
type ExtractionObserver = (kind: 'face' | 'voice' | 'token', ok: boolean, seconds: number) => void;

/** The extractor with every job timed for the metrics (queue wait included: that is what a caller waits). */
function timedExtractor(extractor: Extractor, observe: ExtractionObserver): Extractor {
  const timed = <T>(kind: 'face' | 'voice' | 'token', job: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    return job().then(
      (result) => (observe(kind, true, seconds()), result),
      (error) => {
        observe(kind, false, seconds());
        throw error;
      },
    );
  };
  return {
    ...extractor,
    analyseFace: (bytes, o) => timed('face', () => extractor.analyseFace(bytes, o)),
    analyseVoice: (bytes, o) => timed('voice', () => extractor.analyseVoice(bytes, o)),
    renderTokenImage: (bytes, o) => timed('token', () => extractor.renderTokenImage(bytes, o)),
    stats: () => extractor.stats(),
    close: () => extractor.close(),
  };
}

/**
 * Hands out the process's face extractor, creating (and warming) it on first use rather than at start, so
 * that processes which never extract (tests of other areas, CLI commands) pay nothing. The runtime entry
 * supplies the factory: a worker-thread pool on Node, the inline extractor elsewhere.
 */
export class ExtractorProvider {
  private extractor: Promise<Extractor> | null = null;
  /** Aborts the extractor's start when the provider is closed first (its pool may take seconds to warm). */
  private starting: AbortController | null = null;

  constructor(
    private readonly factory?: (signal: AbortSignal) => Promise<Extractor>,
    private readonly observe?: ExtractionObserver,
  ) {}

  /** The extractor; 503 when this deployment has none or its models are missing. */
  get(): Promise<Extractor> {
    if (!this.factory) {
      return Promise.reject(
        new DomainError('service-unavailable', 'Face extraction is not configured in this deployment'),
      );
    }
    if (!this.extractor) {
      const observe = this.observe;
      const starting = new AbortController();
      this.starting = starting;
      this.extractor = this.factory(starting.signal)
        .then((e) => (observe ? timedExtractor(e, observe) : e))
        .catch((error) => {
          if (starting.signal.aborted) throw new DomainError('service-unavailable', 'The service is stopping');
          this.extractor = null;
          // The cause (a model file's path, the script that fetches it) is for the operator's log.
          throw new DomainError(
            'service-unavailable',
            'The face extractor could not start: the models are not installed or cannot be loaded on this server',
            {
              reason: 'MODEL_UNAVAILABLE',
            },
            error instanceof Error ? error.message : String(error),
          );
        });
    }
    return this.extractor;
  }

  /** Pool state for management info, without starting the pool. */
  async stats() {
    if (!this.factory) return { state: 'not-configured' as const };
    if (!this.extractor) return { state: 'idle' as const };
    try {
      return { state: 'running' as const, ...(await this.extractor).stats() };
    } catch {
      return { state: 'failed' as const };
    }
  }

  /**
   * The same extractor for one request: its jobs wait in `scope.owner`'s queue and are dropped when
   * `scope.signal` aborts. The pool itself stays the process's (closing goes through the process's provider).
   */
  forRequest(scope: ExtractionScope): ExtractorProvider {
    return new RequestExtractors(this, scope);
  }

  async close(): Promise<void> {
    const pending = this.extractor;
    this.extractor = null;
    this.starting?.abort();
    if (pending) await (await pending.catch(() => null))?.close();
  }
}

/** {@link ExtractorProvider.forRequest}: hands out the process's extractor wrapped in one request's scope. */
class RequestExtractors extends ExtractorProvider {
  constructor(
    private readonly shared: ExtractorProvider,
    private readonly scope: ExtractionScope,
  ) {
    super();
  }

  override async get(): Promise<Extractor> {
    return scopedExtractor(await this.shared.get(), this.scope);
  }

  override stats() {
    return this.shared.stats();
  }

  /** A request does not close the process's pool. */
  override async close(): Promise<void> {}
}
