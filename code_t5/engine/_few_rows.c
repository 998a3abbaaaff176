/* The product of a few rows by a weight matrix, reading the matrix once for all of them.
 *
 * out[r, :] = sum_i x[r, i] * w[i, :] for a few rows r (up to 12 in runtime._product; any number
 * works, six per pass), x [rows, d], w [d, k], out [rows, k], all float32 and C-contiguous
 * (code_t5/engine/native.py checks them before calling).
 *
 * Why: a decode step multiplies its beams' vectors (5 of them by default) by every weight matrix
 * of the network, ~21 MB for the shipped model. OpenBLAS's matrix product of so few rows packs the
 * whole matrix first, and its vector-matrix product, row by row (what runtime._product did before),
 * streams the matrix from memory once per row. Here four rows of w at a time are read once, and
 * each output row (a few kB, in L1 or L2) is updated once per four. Each output is summed over i in
 * order, as a vector-matrix product does, with fused multiply-adds where the CPU has them.
 *
 * Plain C with GCC/Clang vector extensions (no intrinsics): on x86-64 it is compiled twice, for
 * AVX2+FMA and for the baseline, and picks one at run time; elsewhere the compiler's own vectors.
 * Nothing here allocates or keeps state.
 */
#include <string.h>

#include "_native.h"

#define MAX_ROWS 6 /* rows per pass: their 4 x MAX_ROWS scalars of x stay in registers */

/* One pass: NR rows (1..MAX_ROWS) of x. */
#define PASS(NAME, NR, TARGET)                                                                    \
  TARGET static void NAME(const float *x, const float *w, float *out, size_t d, size_t k) {      \
    size_t k8 = k / 8 * 8;                                                                        \
    for (int r = 0; r < NR; r++) memset(out + r * k, 0, k * sizeof(float));                       \
    size_t i = 0;                                                                                 \
    for (; i + 4 <= d; i += 4) {                                                                  \
      const float *w0 = w + i * k, *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;                      \
      float s[NR][4];                                                                             \
      for (int r = 0; r < NR; r++)                                                                \
        for (int q = 0; q < 4; q++) s[r][q] = x[r * d + i + q];                                   \
      for (size_t j = 0; j < k8; j += 8) {                                                        \
        v8 a = *(const v8 *)(w0 + j), b = *(const v8 *)(w1 + j);                                  \
        v8 c = *(const v8 *)(w2 + j), e = *(const v8 *)(w3 + j);                                  \
        for (int r = 0; r < NR; r++) {                                                            \
          v8 o = *(v8 *)(out + r * k + j);                                                        \
          o += s[r][0] * a;                                                                       \
          o += s[r][1] * b;                                                                       \
          o += s[r][2] * c;                                                                       \
          o += s[r][3] * e;                                                                       \
          *(v8 *)(out + r * k + j) = o;                                                           \
        }                                                                                         \
      }                                                                                           \
      for (size_t j = k8; j < k; j++)                                                             \
        for (int r = 0; r < NR; r++) {                                                            \
          float o = out[r * k + j];                                                               \
          o += s[r][0] * w0[j];                                                                   \
          o += s[r][1] * w1[j];                                                                   \
          o += s[r][2] * w2[j];                                                                   \
          o += s[r][3] * w3[j];                                                                   \
          out[r * k + j] = o;                                                                     \
        }                                                                                         \
    }                                                                                             \
    for (; i < d; i++)                                                                            \
      for (int r = 0; r < NR; r++) {                                                              \
        float s = x[r * d + i];                                                                   \
        for (size_t j = 0; j < k; j++) out[r * k + j] += s * w[i * k + j];                        \
      }                                                                                           \
  }

typedef void (*pass_fn)(const float *, const float *, float *, size_t, size_t);

#define PASSES(SUFFIX, TARGET)                                                                    \
  PASS(pass1_##SUFFIX, 1, TARGET)                                                                 \
  PASS(pass2_##SUFFIX, 2, TARGET)                                                                 \
  PASS(pass3_##SUFFIX, 3, TARGET)                                                                 \
  PASS(pass4_##SUFFIX, 4, TARGET)                                                                 \
  PASS(pass5_##SUFFIX, 5, TARGET)                                                                 \
  PASS(pass6_##SUFFIX, 6, TARGET)                                                                 \
  static const pass_fn PASSES_##SUFFIX[MAX_ROWS + 1] = {                                          \
      0, pass1_##SUFFIX, pass2_##SUFFIX, pass3_##SUFFIX, pass4_##SUFFIX, pass5_##SUFFIX,          \
      pass6_##SUFFIX};

PASSES(baseline, )
#if defined(__x86_64__) || defined(__i386__)
PASSES(avx2, __attribute__((target("avx2,fma"))))
#endif

static void product(const pass_fn *passes, const float *x, const float *w, float *out,
                    size_t rows, size_t d, size_t k) {
  for (size_t r = 0; r < rows; r += MAX_ROWS) {
    size_t n = rows - r < MAX_ROWS ? rows - r : MAX_ROWS;
    passes[n](x + r * d, w, out + r * k, d, k);
  }
}

int few_rows_vectors(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return 0;
#endif
}

void few_rows_product(const float *x, const float *w, float *out, size_t rows, size_t d, size_t k) {
#if defined(__x86_64__) || defined(__i386__)
  if (few_rows_vectors()) {
    product(PASSES_avx2, x, w, out, rows, d, k);
    return;
  }
#endif
  product(PASSES_baseline, x, w, out, rows, d, k);
}

/* The baseline code on every CPU (the tests compare both with NumPy). */
void few_rows_product_baseline(const float *x, const float *w, float *out, size_t rows, size_t d,
                               size_t k) {
  product(PASSES_baseline, x, w, out, rows, d, k);
}
