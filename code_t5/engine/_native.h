/* What the engine's C library's two sources share (_few_rows.c, _decode_step.c): including it in
 * both lets the compiler check each definition against the declaration the other file calls. */
#ifndef CODE_T5_ENGINE_NATIVE_H_
#define CODE_T5_ENGINE_NATIVE_H_

#include <stddef.h>

/* Eight floats, at any float-aligned address (rows of weights need not be 32-byte aligned). */
typedef float v8 __attribute__((vector_size(32), aligned(4)));

/* 1 where few_rows_product runs the AVX2+FMA code, 0 where the baseline's. */
int few_rows_vectors(void);

/* out [rows, k] = x [rows, d] @ w [d, k] (_few_rows.c). */
void few_rows_product(const float *x, const float *w, float *out, size_t rows, size_t d, size_t k);

#endif /* CODE_T5_ENGINE_NATIVE_H_ */
