// Messages between the Node pool and workers/face.worker.ts (types only; no runtime code).
import type { BiometricErrorCode } from '../biometrics/errors.js';
import type { AnalyseOptions, ImageAnalysis } from '../biometrics/face/pipeline.js';
import type { VoiceAnalyseOptions, VoiceAnalysis } from '../biometrics/voice/pipeline.js';

export type WorkerJob =
  | { type: 'analyse'; id: number; bytes: Uint8Array; opts: AnalyseOptions }
  | { type: 'voice'; id: number; bytes: Uint8Array; opts: VoiceAnalyseOptions }
  | { type: 'token'; id: number; bytes: Uint8Array; landmarks: [number, number][] }
  | { type: 'crash'; id: number };

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'init-error'; error: { code: BiometricErrorCode | string; message: string } }
  | { type: 'result'; id: number; result: ImageAnalysis | VoiceAnalysis | Uint8Array }
  | { type: 'error'; id: number; error: { code: BiometricErrorCode; message: string } };
