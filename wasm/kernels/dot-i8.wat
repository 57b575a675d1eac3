;; int8 x int16 dot products for the 1:N matcher (WebAssembly SIMD).
;; dots(probe, rows, n, dims, out): for each of the n gallery rows (int8, dims bytes each, contiguous from
;; `rows`), out[i] = sum_k probe[k] * row[k] as int32, where `probe` holds the probe widened to int16.
;; dims must be a multiple of 32. Build: wat2wasm dot-i8.wat -o dot-i8.wasm (wabt >= 1.0.32), then
;; node wasm/kernels/embed.mjs to refresh src/biometrics/matcher-kernel.ts.
(module
  (memory (export "mem") 8)
  (func (export "dots") (param $probe i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $i i32) (local $p i32) (local $end i32) (local $g0 v128) (local $g1 v128) (local $a0 v128) (local $a1 v128) (local $s v128)
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $p (local.get $probe))
        (local.set $end (i32.add (local.get $rows) (local.get $dims)))
        (block $bd
          (loop $inner
            (br_if $bd (i32.ge_u (local.get $rows) (local.get $end)))
            (local.set $g0 (v128.load (local.get $rows)))
            (local.set $g1 (v128.load offset=16 (local.get $rows)))
            (local.set $a0 (i32x4.add (local.get $a0)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $g0)) (v128.load (local.get $p)))))
            (local.set $a1 (i32x4.add (local.get $a1)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $g0)) (v128.load offset=16 (local.get $p)))))
            (local.set $a0 (i32x4.add (local.get $a0)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $g1)) (v128.load offset=32 (local.get $p)))))
            (local.set $a1 (i32x4.add (local.get $a1)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $g1)) (v128.load offset=48 (local.get $p)))))
            (local.set $rows (i32.add (local.get $rows) (i32.const 32)))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (br $inner)))
        (local.set $s (i32x4.add (local.get $a0) (local.get $a1)))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $s)) (i32x4.extract_lane 1 (local.get $s)))
            (i32.add (i32x4.extract_lane 2 (local.get $s)) (i32x4.extract_lane 3 (local.get $s)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $row))))
)
