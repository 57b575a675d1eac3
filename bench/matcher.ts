// Matcher speed on synthetic int8 templates: comparisons per second (one core) and 1:N latency.
//   npm run bench -- matcher [--sizes 10000,100000,1000000]
import { FaceGallery } from '../src/biometrics/matcher.js';

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
}

/** Fills a gallery with `n` random int8 templates (Gaussian-ish components, like quantised embeddings). */
function fill(g: FaceGallery, n: number, seed: number) {
  const r = rng(seed);
  const q = new Int8Array(512);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 512; k++) q[k] = Math.round((r() + r() + r() - 1.5) * 60);
    g.add(`s${i}`, q);
  }
}

export async function matcherBench(sizes: number[], kernels: ('auto' | 'js')[] = ['auto', 'js']) {
  const out: Record<string, unknown>[] = [];
  for (const kernel of kernels) {
    for (const n of sizes) {
      if (kernel === 'js' && n > 100_000) continue; // the fallback is only measured at small sizes
      const g = new FaceGallery('bench', 512, { kernel });
      fill(g, n, 1234);
      const r = rng(99);
      const probes = Array.from({ length: 5 }, () => Int8Array.from({ length: 512 }, () => Math.round((r() + r() + r() - 1.5) * 60)));
      g.identify(probes[0], { topK: 10 }); // warm
      const reps = Math.max(3, Math.ceil(2e6 / n));
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) g.identify(probes[i % probes.length], { topK: 10 });
      const ms = (performance.now() - t0) / reps;
      out.push({ kernel: g.simd ? 'wasm-simd' : 'js', gallery: n, msPerSearch: +ms.toFixed(2), comparisonsPerSecond: Math.round((n / ms) * 1000) });
    }
  }
  return out;
}

export async function run(args: string[]) {
  const i = args.indexOf('--sizes');
  const sizes = i >= 0 ? args[i + 1].split(',').map(Number) : [10_000, 100_000, 1_000_000];
  const { loadavg } = await import('node:os');
  const matcher = await matcherBench(sizes);
  return { matcher, loadAverageAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) };
}
