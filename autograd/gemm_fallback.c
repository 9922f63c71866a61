/* gemm_fallback.c - portable row-major SGEMM used until the blocked kernels land. */
#include "autograd/internal.h"

void vs_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
              int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f)
            for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
        else if (beta != 1.0f)
            for (int64_t j = 0; j < N; j++) c[j] *= beta;
        for (int64_t k = 0; k < K; k++) {
            float a = alpha * (trans_a ? A[k * lda + i] : A[i * lda + k]);
            if (!trans_b) {
                const float *b = B + k * ldb;
                for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
            } else {
                for (int64_t j = 0; j < N; j++) c[j] += a * B[j * ldb + k];
            }
        }
    }
}
