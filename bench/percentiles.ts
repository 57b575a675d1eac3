/** Throughput and latency summary of one set of response times (milliseconds) over a run of `seconds`. */
export interface Percentiles {
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

/** Nearest-rank percentiles (the value at or below which p% of the responses fall). */
export function percentiles(times: number[], seconds: number): Percentiles {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]! : 0);
  const round = (n: number) => Number(n.toFixed(1));
  return {
    requests: sorted.length,
    requestsPerSecond: round(sorted.length / seconds),
    latencyMs: {
      p50: round(at(50)),
      p90: round(at(90)),
      p99: round(at(99)),
      max: round(sorted[sorted.length - 1] ?? 0),
      mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
    },
  };
}
