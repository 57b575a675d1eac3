;; int8 x int16 dot products for the 1:N matcher (WebAssembly SIMD).
;; dots(probe, rows, n, dims, out): for each of the n gallery rows (int8, dims bytes each, contiguous from
;; `rows`), out[i] = sum_k probe[k] * row[k] as int32, where `probe` holds the probe widened to int16.
;; Rows are taken two at a time so each probe vector load serves both. dims must be a multiple of 16.
;; Build: wat2wasm dot-i8.wat -o dot-i8.wasm (wabt >= 1.0.32), then node wasm/kernels/embed.mjs to refresh
;; src/biometrics/matcher-kernel.ts.
(module
  (memory (export "mem") 8)
  (func $hsum (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v)))))
  (func (export "dots") (param $probe i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $i i32) (local $p i32) (local $k i32) (local $r1 i32)
    (local $g0 v128) (local $g1 v128) (local $lo v128) (local $hi v128)
    (local $a0 v128) (local $a1 v128) (local $b0 v128) (local $b1 v128)
    ;; pairs of rows
    (block $pairs_done
      (loop $pairs
        (br_if $pairs_done (i32.gt_u (i32.add (local.get $i) (i32.const 2)) (local.get $n)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $b0 (v128.const i32x4 0 0 0 0))
        (local.set $b1 (v128.const i32x4 0 0 0 0))
        (local.set $p (local.get $probe))
        (local.set $r1 (i32.add (local.get $rows) (local.get $dims)))
        (local.set $k (i32.const 0))
        (block $bd
          (loop $inner
            (br_if $bd (i32.ge_u (local.get $k) (local.get $dims)))
            (local.set $lo (v128.load (local.get $p)))
            (local.set $hi (v128.load offset=16 (local.get $p)))
            (local.set $g0 (v128.load (i32.add (local.get $rows) (local.get $k))))
            (local.set $g1 (v128.load (i32.add (local.get $r1) (local.get $k))))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $g0)) (local.get $lo))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $g0)) (local.get $hi))))
            (local.set $b0 (i32x4.add (local.get $b0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $g1)) (local.get $lo))))
            (local.set $b1 (i32x4.add (local.get $b1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $g1)) (local.get $hi))))
            (local.set $k (i32.add (local.get $k) (i32.const 16)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (br $inner)))
        (i32.store (local.get $out) (call $hsum (i32x4.add (local.get $a0) (local.get $a1))))
        (i32.store offset=4 (local.get $out) (call $hsum (i32x4.add (local.get $b0) (local.get $b1))))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $rows (i32.add (local.get $r1) (local.get $dims)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $pairs)))
    ;; last odd row
    (if (i32.lt_u (local.get $i) (local.get $n))
      (then
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $p (local.get $probe))
        (local.set $k (i32.const 0))
        (block $bd2
          (loop $inner2
            (br_if $bd2 (i32.ge_u (local.get $k) (local.get $dims)))
            (local.set $g0 (v128.load (i32.add (local.get $rows) (local.get $k))))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $g0)) (v128.load (local.get $p)))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $g0)) (v128.load offset=16 (local.get $p)))))
            (local.set $k (i32.add (local.get $k) (i32.const 16)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (br $inner2)))
        (i32.store (local.get $out) (call $hsum (i32x4.add (local.get $a0) (local.get $a1)))))))
)
