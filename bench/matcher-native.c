// Native baseline of the matcher bench (bench/matcher.ts builds it with the system compiler at bench time:
// cc -O3 -march=native -DDIMS=512). A plain AVX2 loop: each int8 row widened to int16, multiplied and added
// pairwise with the int16 probe (vpmovsxbw + vpmaddwd + vpaddd), one int32 score per row, one thread.
// Usage: matcher-native ROWS SEED; fills the rows then the probe from the same xorshift32 stream as the bench,
// prints "ready", then for each line read on stdin scans every row and prints {"ms":..,"checksum":..}
// (the checksum is the sum of all scores, which the bench compares with the wasm kernel's).
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef DIMS
#define DIMS 512
#endif

static uint32_t state;
static inline int8_t next_byte(void) {
  state ^= state << 13; state ^= state >> 17; state ^= state << 5;
  return (int8_t)(state >> 24);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  long n = atol(argv[1]);
  state = (uint32_t)atol(argv[2]);
  int8_t *rows = aligned_alloc(64, (size_t)n * DIMS);
  int16_t *probe = aligned_alloc(64, DIMS * sizeof(int16_t));
  int32_t *out = aligned_alloc(64, (size_t)n * sizeof(int32_t));
  if (!rows || !probe || !out) return 3;
  for (long i = 0; i < n * DIMS; i++) rows[i] = next_byte();
  for (int k = 0; k < DIMS; k++) probe[k] = next_byte();
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
      const int8_t *r = rows + (size_t)i * DIMS;
      __m256i acc = _mm256_setzero_si256();
      for (int k = 0; k < DIMS; k += 16) {
        __m256i g = _mm256_cvtepi8_epi16(_mm_load_si128((const __m128i *)(r + k)));
        __m256i p = _mm256_load_si256((const __m256i *)(probe + k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(g, p));
      }
      __m128i x = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
      x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
      x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xb1));
      out[i] = _mm_cvtsi128_si32(x);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long sum = 0;
    for (long i = 0; i < n; i++) sum += out[i];
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("{\"ms\":%.3f,\"checksum\":%lld}\n", ms, sum);
    fflush(stdout);
  }
  return 0;
}
