/** A reproducible pseudo-random unit vector (xorshift32 from `seed`), for matcher and template tests. */
export function unitVector(seed: number, n = 512): Float32Array {
  let s = seed >>> 0 || 1;
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    v[i] = s / 4294967296 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
