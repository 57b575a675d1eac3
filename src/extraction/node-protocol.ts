// Messages between the Node pool and workers/face.worker.ts (types only; no runtime code).
import type { BiometricErrorCode } from '../biometrics/errors.js';
import type { AnalyseOptions, ImageAnalysis } from '../biometrics/face/analysis.js';
import type { VoiceAnalyseOptions, VoiceAnalysis } from '../biometrics/voice/pipeline.js';

export type WorkerJob =
  | { type: 'analyse'; id: number; bytes: Uint8Array; opts: AnalyseOptions }
  | { type: 'voice'; id: number; bytes: Uint8Array; opts: VoiceAnalyseOptions }
  | { type: 'token'; id: number; bytes: Uint8Array; landmarks: [number, number][] };

export type WorkerReply =
  // cpuStat: the worker thread's /proc stat file (Linux), read by the pool to hold a decode to its CPU budget.
  | { type: 'ready'; cpuStat?: string }
  | { type: 'init-error'; error: { code: BiometricErrorCode | string; message: string } }
  // The job's image is decoded: the decode's budget is met, what follows is the analysis's.
  | { type: 'decoded'; id: number }
  // `memory`: the worker's own bytes after the job (V8 heap + external, WebAssembly memories included), so the
  // pool can replace a worker that a large image left grown (WebAssembly memories never shrink).
  | { type: 'result'; id: number; result: ImageAnalysis | VoiceAnalysis | Uint8Array; memory?: number }
  | { type: 'error'; id: number; error: { code: BiometricErrorCode; message: string }; memory?: number };
