// What a capture session's init params decide before its first frame: the modalities it captures, the gates its
// frames are held to, its active liveness; and the metrics its outcome reports. The session is capture-session.ts.
import { faceGatesOf, type FaceGates } from '../biometrics/face-samples.js';
import { ActiveLiveness } from './active-liveness.js';
import type { SampleServices } from '../biometrics/sample-services.js';
import type { CaptureParams } from './capture-types.js';
import type { SessionSettings } from './session-settings.js';

/** Whether the session captures this modality: face sessions the face; multimodal ones what `modalities` says. */
export function capturesModality(params: CaptureParams, modality: 'FACE' | 'VOICE'): boolean {
  return 'modalities' in params ? params.modalities.includes(modality) : modality === 'FACE';
}

/** The modalities the session captures, as its operation records them. */
export function capturedModalities(params: CaptureParams): ('FACE' | 'VOICE')[] {
  return (['FACE', 'VOICE'] as const).filter((m) => capturesModality(params, m));
}

/** The gates of the settings, with the session's options and overrides on top. */
export function captureGates(operation: {
  services: SampleServices;
  params: CaptureParams;
  overrides: SessionSettings;
}): Promise<FaceGates> {
  return faceGatesOf(operation.services, {
    checkIcao: operation.params.checkIcao,
    detectLiveness: operation.params.detectLiveness,
    overrides: operation.overrides.gates,
  });
}

/** The session's active liveness (`activeLiveness` of the init params), or null without one. */
export function activeLivenessOf(params: CaptureParams): ActiveLiveness | null {
  const a = params.activeLiveness;
  return a
    ? new ActiveLiveness({
        challenges: a.challenges,
        kinds: a.kinds,
        challengeMs: a.challengeSeconds * 1000,
        retries: a.retries,
      })
    : null;
}

/** What a session counts while it runs (milliseconds from performance.now()). */
export interface CaptureMetrics {
  framesDecoded: number;
  framesAnalysed: number;
  firstFrameMs: number | null;
  resultMs: number | null;
  analyseMs: number;
}

/** The metrics an outcome event reports: whole milliseconds, and the analysis time per frame. */
export function reportedMetrics(m: CaptureMetrics) {
  const { framesDecoded, framesAnalysed, firstFrameMs, resultMs, analyseMs } = m;
  return {
    framesDecoded,
    framesAnalysed,
    firstFrameMs: firstFrameMs === null ? null : Math.round(firstFrameMs),
    resultMs: Math.round(resultMs ?? 0),
    analyseMsPerFrame: framesAnalysed ? Math.round(analyseMs / framesAnalysed) : null,
  };
}
