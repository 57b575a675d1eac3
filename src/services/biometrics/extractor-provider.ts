import type { Extractor } from '../../extraction/index.js';
import { DomainError } from '../errors.js';

/**
 * Hands out the process's face extractor, creating (and warming) it on first use rather than at start, so
 * that processes which never extract (tests of other areas, CLI commands) pay nothing. The runtime entry
 * supplies the factory: a worker-thread pool on Node, the inline extractor elsewhere.
 */
export class ExtractorProvider {
  private extractor: Promise<Extractor> | null = null;

  constructor(private readonly factory?: () => Promise<Extractor>) {}

  /** The extractor; 503 when this deployment has none or its models are missing. */
  get(): Promise<Extractor> {
    if (!this.factory) {
      return Promise.reject(new DomainError('service-unavailable', 'Face extraction is not configured in this deployment'));
    }
    if (!this.extractor) {
      this.extractor = this.factory().catch((error) => {
        this.extractor = null;
        // The cause (a model file's path, the script that fetches it) is for the operator's log.
        throw new DomainError('service-unavailable', 'The face extractor could not start: the models are not installed or cannot be loaded on this server', {
          reason: 'MODEL_UNAVAILABLE',
        }, error instanceof Error ? error.message : String(error));
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

  async close(): Promise<void> {
    const pending = this.extractor;
    this.extractor = null;
    if (pending) await (await pending.catch(() => null))?.close();
  }
}
