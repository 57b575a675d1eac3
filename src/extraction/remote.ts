import { BiometricError, type BiometricErrorCode } from '../biometrics/errors.js';
import {
  cancelled,
  pipelineOptions,
  type ExtractOptions,
  type Extractor,
  type ExtractorOptions,
  type ExtractorStats,
  type VoiceExtractOptions,
} from './extractor.js';
import type { ImageAnalysis } from '../biometrics/face/analysis.js';
import type { VoiceAnalysis } from '../biometrics/voice/pipeline.js';
import { decodeValue } from './remote-codec.js';
import { EXTRACT_OPTIONS_HEADER } from './remote-service.js';

/** Options of the remote extractor. */
export interface RemoteExtractorOptions extends ExtractorOptions {
  /** The extraction service's base URL (BIMS_EXTRACTION_URL). */
  url: string;
  /** Its Bearer token (BIMS_EXTRACTION_TOKEN). */
  token: string;
}

/**
 * Extractor delegating to a Node extraction service (`bims extraction-service`) over HTTP: the same models
 * and pipeline run there, and the analyses come back bit-identical (remote-codec.ts). For runtimes that
 * should not hold the models themselves (Cloudflare Workers). Errors are the service's BiometricErrors;
 * an unreachable service is MODEL_UNAVAILABLE, a job past its timeout EXTRACTION_TIMEOUT.
 *
 * @example const ex = await createRemoteExtractor({ url: 'http://10.0.0.5:7091', token });
 */
export async function createRemoteExtractor(opts: RemoteExtractorOptions): Promise<Extractor> {
  const base = opts.url.replace(/\/$/, '');
  const maxQueue = opts.maxQueue ?? 64;
  const defaultTimeout = opts.jobTimeoutMs ?? 30_000;
  const st = { busy: 0, completed: 0, failed: 0 };
  let closed = false;
  let idle: (() => void) | null = null;

  const call = async (path: string, init: RequestInit, timeoutMs: number, caller?: AbortSignal): Promise<unknown> => {
    let res: Response;
    try {
      // The caller leaving aborts the call, so the service drops the job (its request's signal fires there too).
      const timeout = AbortSignal.timeout(timeoutMs);
      res = await fetch(`${base}${path}`, {
        ...init,
        headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${opts.token}` },
        signal: caller ? AbortSignal.any([timeout, caller]) : timeout,
      });
    } catch (error) {
      if (caller?.aborted) throw cancelled();
      if ((error as Error).name === 'TimeoutError')
        throw new BiometricError('EXTRACTION_TIMEOUT', `the extraction service took longer than ${timeoutMs} ms`);
      throw new BiometricError(
        'MODEL_UNAVAILABLE',
        `the extraction service at ${base} cannot be reached (${(error as Error).message})`,
      );
    }
    const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    if (res.ok && body) return body;
    const code = (body?.error?.code ?? 'EXTRACTION_FAILED') as BiometricErrorCode;
    const known = code !== ('UNAUTHORIZED' as string) && code !== ('BAD_OPTIONS' as string);
    throw new BiometricError(
      known ? code : 'MODEL_UNAVAILABLE',
      `extraction service: ${body?.error?.message ?? `HTTP ${res.status}`}`,
    );
  };

  const info = (await call('/extractor', { method: 'GET' }, defaultTimeout)) as {
    templateVersion: string;
    voiceTemplateVersion: string;
    stats: ExtractorStats;
  };

  const submit = async <R>(path: string, bytes: Uint8Array, o: ExtractOptions | VoiceExtractOptions): Promise<R> => {
    if (closed) throw new BiometricError('EXTRACTOR_CLOSED', 'extractor is closed');
    if (o.signal?.aborted) throw cancelled();
    if (st.busy >= maxQueue) throw new BiometricError('EXTRACTOR_BUSY', `too many extractions in flight (${maxQueue})`);
    st.busy++;
    try {
      const timeoutMs = o.timeoutMs ?? defaultTimeout;
      const encoded = await call(
        path,
        {
          method: 'POST',
          // The owner travels so that the service shares its queue between this node's accounts too.
          headers: {
            'content-type': 'application/octet-stream',
            [EXTRACT_OPTIONS_HEADER]: JSON.stringify({ ...pipelineOptions(o), timeoutMs, owner: o.owner }),
          },
          body: bytes as Uint8Array<ArrayBuffer>,
        },
        timeoutMs + 5_000,
        o.signal,
      ); // the service enforces the job's timeout; allow for the transfer
      st.completed++;
      return decodeValue(encoded) as R;
    } catch (error) {
      st.failed++;
      throw error;
    } finally {
      st.busy--;
      if (st.busy === 0) idle?.();
    }
  };

  return {
    templateVersion: info.templateVersion,
    voiceTemplateVersion: info.voiceTemplateVersion,
    analyseFace: (bytes, o = {}) => submit<ImageAnalysis>('/face', bytes, o),
    analyseVoice: (bytes, o = {}) => submit<VoiceAnalysis>('/voice', bytes, o),
    renderTokenImage: (bytes, o) => submit<Uint8Array>('/token', bytes, o),
    stats: () => ({
      kind: 'remote',
      workers: info.stats.workers,
      busy: st.busy,
      queued: 0,
      completed: st.completed,
      failed: st.failed,
      restarts: 0,
    }),
    async close() {
      closed = true;
      if (st.busy > 0) await new Promise<void>((resolve) => (idle = resolve));
    },
  };
}
