/* One decode step of a decoder-only T5 network (runtime.Network.step) in one call.
 *
 * NumPy's step is ~60 calls per layer on arrays of 5 rows, and on the slower (AVX2) machine their
 * overhead was half of the step: 2 of 4.3 ms for the shipped model, where the products took the
 * other 2. Here the same computation runs without leaving C: per layer the RMS norm, the
 * query/key/value product, attention over the context's keys and the beams' own, the output
 * product, the MLP (one activation or a gated pair), and the logits at the end. The products are
 * few_rows_product's (_few_rows.c); the rest is plain loops the compiler vectorizes.
 *
 * Layouts (all float32, C-contiguous; code_t5/engine/native.py checks them before calling):
 *   x           [batch, d]                the embeddings of the tokens fed (read, not written)
 *   weights     7 per layer: self-attention norm [d], query|key|value [d, 3 * heads * head_dim],
 *               attention out [heads * head_dim, d], MLP norm [d], MLP in [d, d_ff], the gated
 *               pair's second MLP in [d, d_ff] (or NULL), MLP out [d_ff, d]
 *   keys_t      per layer [heads, head_dim, n]   the context's keys, transposed
 *   values      per layer [heads, n, head_dim]   the context's values
 *   context_bias [heads, n]; own_bias [heads, t + 1]
 *   own_keys, own_values  per layer [batch, heads, capacity, head_dim]: the beams' positions
 *               0..t-1 are read, position t is written (t < capacity)
 *   logits      [batch, vocab], written
 * Returns 0, or -1 when its scratch memory could not be allocated (nothing written then).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "_native.h"

enum { LINEAR = 0, RELU = 1, GELU = 2 };

#define EPSILON 1e-6f
#define INLINE static inline __attribute__((always_inline))

INLINE void rms_norm(const float *x, const float *scale, float *out, size_t rows, size_t d) {
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    float sum = 0.0f;
    for (size_t i = 0; i < d; i++) sum += xr[i] * xr[i];
    float inverse = 1.0f / sqrtf(sum / (float)d + EPSILON);
    for (size_t i = 0; i < d; i++) out[r * d + i] = xr[i] * inverse * scale[i];
  }
}

INLINE void activate(float *x, size_t count, int activation) {
  if (activation == RELU) {
    for (size_t i = 0; i < count; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
  } else if (activation == GELU) {
    const float c = 0.7978845608028654f; /* sqrt(2 / pi), the tanh approximation Mesh TF uses */
    for (size_t i = 0; i < count; i++) {
      float v = x[i];
      x[i] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
    }
  }
}

INLINE void softmax(float *x, size_t count) {
  float top = x[0];
  for (size_t i = 1; i < count; i++) top = x[i] > top ? x[i] : top;
  float sum = 0.0f;
  for (size_t i = 0; i < count; i++) sum += (x[i] = expf(x[i] - top));
  float inverse = 1.0f / sum;
  for (size_t i = 0; i < count; i++) x[i] *= inverse;
}

/* out[head_dim] += sum_j weights[j] * rows[j, :] over `count` rows. Where head_dim is 64 (every
   T5 size) the 64 sums stay in registers; else they are updated in memory row by row. */
INLINE void weigh(const float *weights, const float *rows, size_t count, size_t head_dim,
                  float *out) {
  if (head_dim == 64) {
    v8 sums[8];
    for (int c = 0; c < 8; c++) sums[c] = *(const v8 *)(out + 8 * c);
    for (size_t j = 0; j < count; j++) {
      const float w = weights[j], *row = rows + j * 64;
      for (int c = 0; c < 8; c++) sums[c] += w * *(const v8 *)(row + 8 * c);
    }
    for (int c = 0; c < 8; c++) *(v8 *)(out + 8 * c) = sums[c];
    return;
  }
  for (size_t j = 0; j < count; j++) {
    const float w = weights[j], *row = rows + j * head_dim;
    for (size_t e = 0; e < head_dim; e++) out[e] += w * row[e];
  }
}

/* Context positions whose values are weighed for every beam while they are in L1 (8 kB). */
#define VALUE_BLOCK 32

/* One head for every beam: out_b[head_dim] = softmax(q_b . keys + biases) . values. The
   context's keys and values (~115 kB each for ~450 positions) are read once for all beams, not
   once per beam: from L3, that was most of the attention's time. q_b is at q + b * q_stride,
   out_b at out + b * out_stride; the beam's own keys/values at own_* + b * own_stride. */
INLINE void attend(
    size_t batch, const float *q, size_t q_stride, size_t head_dim, size_t n,
    const float *keys_t, const float *values, const float *context_bias, size_t own,
    const float *own_keys, const float *own_values, size_t own_stride, const float *own_bias,
    float *scores, float *out, size_t out_stride) {
  const size_t width = n + own; /* one beam's scores */
  for (size_t b = 0; b < batch; b++) memcpy(scores + b * width, context_bias, n * sizeof(float));
  /* The context's keys, four rows of head_dim at a time: each beam's n scores updated once per
     four. */
  size_t e = 0;
  for (; e + 4 <= head_dim; e += 4) {
    const float *r0 = keys_t + e * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    for (size_t b = 0; b < batch; b++) {
      const float *qb = q + b * q_stride;
      const float s0 = qb[e], s1 = qb[e + 1], s2 = qb[e + 2], s3 = qb[e + 3];
      float *sb = scores + b * width;
      for (size_t j = 0; j < n; j++) {
        float sum = sb[j];
        sum += s0 * r0[j];
        sum += s1 * r1[j];
        sum += s2 * r2[j];
        sum += s3 * r3[j];
        sb[j] = sum;
      }
    }
  }
  for (; e < head_dim; e++)
    for (size_t b = 0; b < batch; b++) {
      const float s = q[b * q_stride + e], *row = keys_t + e * n;
      float *sb = scores + b * width;
      for (size_t j = 0; j < n; j++) sb[j] += s * row[j];
    }
  for (size_t b = 0; b < batch; b++) {
    const float *qb = q + b * q_stride;
    float *sb = scores + b * width;
    for (size_t j = 0; j < own; j++) {
      const float *key = own_keys + b * own_stride + j * head_dim;
      float sum = 0.0f;
      for (size_t k = 0; k < head_dim; k++) sum += qb[k] * key[k];
      sb[n + j] = sum + own_bias[j];
    }
    softmax(sb, width);
    memset(out + b * out_stride, 0, head_dim * sizeof(float));
  }
  for (size_t j = 0; j < n; j += VALUE_BLOCK) {
    size_t count = n - j < VALUE_BLOCK ? n - j : VALUE_BLOCK;
    for (size_t b = 0; b < batch; b++)
      weigh(scores + b * width + j, values + j * head_dim, count, head_dim, out + b * out_stride);
  }
  for (size_t b = 0; b < batch; b++)
    weigh(scores + b * width + n, own_values + b * own_stride, own, head_dim,
          out + b * out_stride);
}

#define STEP_ARGUMENTS                                                                            \
  size_t batch, const float *x_in, size_t layers, size_t d, size_t heads, size_t head_dim,       \
      size_t d_ff, int activation, int gated_activation, const float *const *weights, size_t n,  \
      const float *const *keys_t, const float *const *values, const float *context_bias,         \
      size_t capacity, size_t t, float *const *own_keys, float *const *own_values,              \
      const float *own_bias, const float *final_norm, const float *logits_kernel, size_t vocab,  \
      float *logits
#define STEP_VALUES                                                                               \
  batch, x_in, layers, d, heads, head_dim, d_ff, activation, gated_activation, weights, n,       \
      keys_t, values, context_bias, capacity, t, own_keys, own_values, own_bias, final_norm,     \
      logits_kernel, vocab, logits

/* The step, inlined below into a baseline and an AVX2+FMA copy (its loops vectorized for each). */
INLINE int step(STEP_ARGUMENTS) {
  const size_t width = heads * head_dim, own = t + 1;
  float *x = malloc(batch * d * sizeof(float)), *h = malloc(batch * d * sizeof(float));
  float *qkv = malloc(batch * 3 * width * sizeof(float));
  float *mixed = malloc(batch * width * sizeof(float)), *added = malloc(batch * d * sizeof(float));
  float *hidden = malloc(batch * d_ff * sizeof(float));
  float *gate = malloc(batch * d_ff * sizeof(float));
  float *scores = malloc(batch * (n + own) * sizeof(float));
  int ok = x && h && qkv && mixed && added && hidden && gate && scores;
  if (ok) {
    memcpy(x, x_in, batch * d * sizeof(float));
    for (size_t l = 0; l < layers; l++) {
      const float *const *w = weights + 7 * l;
      rms_norm(x, w[0], h, batch, d);
      few_rows_product(h, w[1], qkv, batch, d, 3 * width);
      for (size_t b = 0; b < batch; b++) /* this position's keys and values into the cache */
        for (size_t a = 0; a < heads; a++) {
          const float *row = qkv + b * 3 * width + a * head_dim;
          size_t cache = ((b * heads + a) * capacity + t) * head_dim;
          memcpy(own_keys[l] + cache, row + width, head_dim * sizeof(float));
          memcpy(own_values[l] + cache, row + 2 * width, head_dim * sizeof(float));
        }
      for (size_t a = 0; a < heads; a++)
        attend(batch, qkv + a * head_dim, 3 * width, head_dim, n, keys_t[l] + a * head_dim * n,
               values[l] + a * n * head_dim, context_bias + a * n, own,
               own_keys[l] + a * capacity * head_dim, own_values[l] + a * capacity * head_dim,
               heads * capacity * head_dim, own_bias + a * own, scores, mixed + a * head_dim,
               width);
      few_rows_product(mixed, w[2], added, batch, width, d);
      for (size_t i = 0; i < batch * d; i++) x[i] += added[i];
      rms_norm(x, w[3], h, batch, d);
      few_rows_product(h, w[4], hidden, batch, d, d_ff);
      activate(hidden, batch * d_ff, activation);
      if (w[5] != NULL) {
        few_rows_product(h, w[5], gate, batch, d, d_ff);
        activate(gate, batch * d_ff, gated_activation);
        for (size_t i = 0; i < batch * d_ff; i++) hidden[i] *= gate[i];
      }
      few_rows_product(hidden, w[6], added, batch, d_ff, d);
      for (size_t i = 0; i < batch * d; i++) x[i] += added[i];
    }
    rms_norm(x, final_norm, h, batch, d);
    few_rows_product(h, logits_kernel, logits, batch, d, vocab);
  }
  free(x); free(h); free(qkv); free(mixed); free(added); free(hidden); free(gate); free(scores);
  return ok ? 0 : -1;
}

static int step_baseline(STEP_ARGUMENTS) { return step(STEP_VALUES); }

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) static int step_avx2(STEP_ARGUMENTS) {
  return step(STEP_VALUES);
}
#endif

/* The interface's version: native.py uses a library only if it says the version native.py was
   written for (a library built from older sources, left beside newer ones, is not called). Bump
   it with any change to an exported function's arguments. */
int native_interface(void) { return 1; }

int decode_step(STEP_ARGUMENTS) {
#if defined(__x86_64__) || defined(__i386__)
  if (few_rows_vectors()) return step_avx2(STEP_VALUES);
#endif
  return step_baseline(STEP_VALUES);
}
