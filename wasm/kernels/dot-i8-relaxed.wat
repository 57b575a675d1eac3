;; int8 dot products for the 1:N matcher with relaxed SIMD (i32x4.relaxed_dot_i8x16_i7x16_add_s), used only
;; where the runtime validates this module; dot-i8.wat is the fallback and gives the same integers.
;; The relaxed dot is exact only when its second operand lies in 0..127 (outside it an engine may read it as
;; signed or unsigned and may saturate), so the probe p comes split as pos = max(p, 0) and neg = max(-p, 0),
;; both in 0..127 for p in -127..127, and dot(row, p) = dot(row, pos) - dot(row, neg). The gallery row is the
;; first (signed int8) operand, so any row value, -128 included, is exact; each intermediate pair sum is at
;; most 2 * 128 * 127 = 32512, so no engine saturates it. A probe holding -128 cannot be split this way: the
;; caller uses the plain kernel for it.
;; Every operand of a relaxed dot is a local, never a v128.load inside the instruction: Node 20's V8 (relaxed
;; SIMD behind --experimental-wasm-relaxed-simd) computed wrong sums when the load was folded into the dot.
;; dots(probe, rows, n, dims, out): probe = pos (dims bytes) then neg (dims bytes); out[i] = dot(probe, row i)
;; as int32. dims must be a multiple of 32. Rows are walked as four streams, as in dot-i8.wat.
;; Memory-level parallelism: the n rows are cut into four equal blocks walked side by side, one row of each
;; per pass, so the core has four independent sequential streams in flight (four prefetch streams, four
;; accumulator chains) instead of one, and the four rows share each load of the probe. The inner loop takes 32
;; bytes of each row per iteration. Measured on a 2-core EPYC at 1M rows this halved the scan time of four
;; ADJACENT rows per pass (one stream): the scan is bound by how many misses are in flight, not by arithmetic.
;; The rows left over (n mod 4) follow one at a time. The memory is imported so that one module serves a
;; private gallery and, in its `shared` form (build.mjs), a SharedArrayBuffer gallery scanned by several threads.
;; Build: node wasm/kernels/build.mjs (see there).
(module
  (import "env" "mem" (memory 1))
  (func $hsum (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v)))))
  (func (export "dots") (param $probe i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $i i32) (local $p i32) (local $end i32) (local $m i32) (local $block i32) (local $o i32)
    (local $r0 i32) (local $r1 i32) (local $r2 i32) (local $r3 i32)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128) (local $g v128)
    (local $a0 v128) (local $b0 v128) (local $a1 v128) (local $b1 v128) (local $a2 v128) (local $b2 v128) (local $a3 v128) (local $b3 v128)
    ;; m rows per stream, block = bytes between streams
    (local.set $m (i32.shr_u (local.get $n) (i32.const 2)))
    (local.set $block (i32.mul (local.get $m) (local.get $dims)))
    (block $streams_done
      (loop $pass
        (br_if $streams_done (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $a0 (v128.const i32x4 0 0 0 0)) (local.set $b0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0)) (local.set $b1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0)) (local.set $b2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0)) (local.set $b3 (v128.const i32x4 0 0 0 0))
        (local.set $r0 (i32.add (local.get $rows) (i32.mul (local.get $i) (local.get $dims))))
        (local.set $r1 (i32.add (local.get $r0) (local.get $block)))
        (local.set $r2 (i32.add (local.get $r1) (local.get $block)))
        (local.set $r3 (i32.add (local.get $r2) (local.get $block)))
        (local.set $p (local.get $probe))
        (local.set $end (i32.add (local.get $r0) (local.get $dims)))
        (loop $inner
          (local.set $q0 (v128.load (local.get $p)))
          (local.set $q1 (v128.load (i32.add (local.get $p) (local.get $dims))))
          (local.set $q2 (v128.load offset=16 (local.get $p)))
          (local.set $q3 (v128.load offset=16 (i32.add (local.get $p) (local.get $dims))))
          (local.set $g (v128.load offset=0 (local.get $r0)))
          (local.set $a0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q0) (local.get $a0)))
          (local.set $b0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q1) (local.get $b0)))
          (local.set $g (v128.load offset=0 (local.get $r1)))
          (local.set $a1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q0) (local.get $a1)))
          (local.set $b1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q1) (local.get $b1)))
          (local.set $g (v128.load offset=0 (local.get $r2)))
          (local.set $a2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q0) (local.get $a2)))
          (local.set $b2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q1) (local.get $b2)))
          (local.set $g (v128.load offset=0 (local.get $r3)))
          (local.set $a3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q0) (local.get $a3)))
          (local.set $b3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q1) (local.get $b3)))
          (local.set $g (v128.load offset=16 (local.get $r0)))
          (local.set $a0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q2) (local.get $a0)))
          (local.set $b0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q3) (local.get $b0)))
          (local.set $g (v128.load offset=16 (local.get $r1)))
          (local.set $a1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q2) (local.get $a1)))
          (local.set $b1 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q3) (local.get $b1)))
          (local.set $g (v128.load offset=16 (local.get $r2)))
          (local.set $a2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q2) (local.get $a2)))
          (local.set $b2 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q3) (local.get $b2)))
          (local.set $g (v128.load offset=16 (local.get $r3)))
          (local.set $a3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q2) (local.get $a3)))
          (local.set $b3 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q3) (local.get $b3)))
          (local.set $p (i32.add (local.get $p) (i32.const 32)))
          (local.set $r0 (i32.add (local.get $r0) (i32.const 32)))
          (local.set $r1 (i32.add (local.get $r1) (i32.const 32)))
          (local.set $r2 (i32.add (local.get $r2) (i32.const 32)))
          (local.set $r3 (i32.add (local.get $r3) (i32.const 32)))
          (br_if $inner (i32.lt_u (local.get $r0) (local.get $end))))
        ;; row i of each stream: out[j * m + i]
        (local.set $o (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))))
        (i32.store offset=0 (i32.add (local.get $o) (i32.mul (local.get $m) (i32.const 0))) (call $hsum (i32x4.sub (local.get $a0) (local.get $b0))))
        (i32.store offset=0 (i32.add (local.get $o) (i32.mul (local.get $m) (i32.const 4))) (call $hsum (i32x4.sub (local.get $a1) (local.get $b1))))
        (i32.store offset=0 (i32.add (local.get $o) (i32.mul (local.get $m) (i32.const 8))) (call $hsum (i32x4.sub (local.get $a2) (local.get $b2))))
        (i32.store offset=0 (i32.add (local.get $o) (i32.mul (local.get $m) (i32.const 12))) (call $hsum (i32x4.sub (local.get $a3) (local.get $b3))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $pass)))
    ;; the rows left over, one at a time
    (local.set $i (i32.shl (local.get $m) (i32.const 2)))
    (block $rest_done
      (loop $rest
        (br_if $rest_done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a0 (v128.const i32x4 0 0 0 0)) (local.set $b0 (v128.const i32x4 0 0 0 0))
        (local.set $r0 (i32.add (local.get $rows) (i32.mul (local.get $i) (local.get $dims))))
        (local.set $p (local.get $probe))
        (local.set $end (i32.add (local.get $r0) (local.get $dims)))
        (loop $inner1
          (local.set $g (v128.load (local.get $r0)))
          (local.set $q0 (v128.load (local.get $p)))
          (local.set $q1 (v128.load (i32.add (local.get $p) (local.get $dims))))
          (local.set $a0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q0) (local.get $a0)))
          (local.set $b0 (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $g) (local.get $q1) (local.get $b0)))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $r0 (i32.add (local.get $r0) (i32.const 16)))
          (br_if $inner1 (i32.lt_u (local.get $r0) (local.get $end))))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (call $hsum (i32x4.sub (local.get $a0) (local.get $b0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rest))))
)

