/* gemm_ref.c - portable SGEMM pieces: the scalar micro-kernel (used when no SIMD set is available
 * or VERSUS_ISA=scalar) and vs_sgemm_ref, the plain triple loop the tests compare against. */
#include "autograd/gemm_kernel.h"
#include "autograd/kernels.h"

#define SC_MR 4
#define SC_NR 8

/* C tile = alpha A B + beta C over a 4 x 8 tile, one multiply and one add per step (no fused
 * multiply-add, which portable C cannot promise to be fast). */
static void gemm_ukernel_scalar(int64_t kc, const float *a, int64_t rsa, int64_t csa, const float *b,
                                int64_t rsb, float *c, int64_t rsc, int64_t csc, int64_t mr, int64_t nr,
                                float alpha, float beta, const float *bias)
{
    float acc[SC_MR][SC_NR] = {{0}};
    const float *ar[SC_MR];
    for (int64_t i = 0; i < SC_MR; i++) ar[i] = a + (i < mr ? i : 0) * rsa;
    for (int64_t k = 0; k < kc; k++) {
        const float *bk = b + k * rsb;
        for (int64_t i = 0; i < SC_MR; i++) {
            const float x = ar[i][k * csa];
            for (int64_t j = 0; j < SC_NR; j++) acc[i][j] += x * bk[j];
        }
    }
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) {
            float *p = c + i * rsc + j * csc;
            const float r = alpha * acc[i][j];
            *p = bias ? r + 1.0f * bias[j] : beta == 0 ? r : r + beta * *p;
        }
}

const vs_gemm_arch vs_gemm_arch_scalar = {
    .name = "scalar", .mr = SC_MR, .nr = SC_NR, .mc = 96, .kc = 256, .kc_big = 256, .nc = 4096, .kernel = gemm_ukernel_scalar,
    .kernel_packed = gemm_ukernel_scalar, .thin = vs_gemm_thin_plain,
};

void vs_sgemm_ref(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            if (alpha != 0)
                for (int64_t k = 0; k < K; k++) {
                    const double x = trans_a ? A[k * lda + i] : A[i * lda + k];
                    const double y = trans_b ? B[j * ldb + k] : B[k * ldb + j];
                    s += x * y;
                }
            float *p = C + i * ldc + j;
            *p = (float)(beta == 0 ? alpha * s : alpha * s + (double)beta * *p);
        }
}
