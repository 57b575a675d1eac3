/**
 * How onnxruntime-node runs a face model in BIMS: on the CPU, one thread per session (the pool runs one model at a
 * time per worker thread, one worker per core), every graph optimisation, warnings only. The native runner and
 * the benchmarks that compare wasm against it share these, so a benchmark's "native" is what the service runs.
 */
export const NATIVE_SESSION_OPTIONS = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  logSeverityLevel: 3,
} as const;
