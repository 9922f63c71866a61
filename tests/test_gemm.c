/* test_gemm.c - vs_sgemm against the reference triple loop: every transpose combination, odd
 * shapes, padded strides, alpha/beta cases, NaN handling, bit-identical results for 1, 2 and 3
 * threads, the transposed, narrow, bias and thin (a side of 1) products against the tiled path bit
 * for bit, the scalar and SIMD kernels against each other, and AVX-512's two kernels bit for bit. */
#include "vs_check.h"
#include "autograd/kernels.h"
#include "versus/rng.h"
#include "versus/threads.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

typedef struct mats {
    bool ta, tb;
    int64_t M, N, K, lda, ldb, ldc;
    float *A, *B, *C0; /* C0: C before the product (padding included) */
} mats;

/* Random operands for C = op(A) op(B): A, B, C filled with uniform [-1, 1), every leading
 * dimension padded by `pad` so kernels that ignore lda/ldb/ldc fail. */
static mats make_mats(vs_rng *r, bool ta, bool tb, int64_t M, int64_t N, int64_t K, int64_t pad)
{
    mats m = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K};
    const int64_t arows = ta ? K : M, acols = ta ? M : K, brows = tb ? N : K, bcols = tb ? K : N;
    m.lda = acols + pad;
    m.ldb = bcols + pad;
    m.ldc = N + pad;
    m.A = malloc(sizeof(float) * (size_t)(arows * m.lda + 1));
    m.B = malloc(sizeof(float) * (size_t)(brows * m.ldb + 1));
    m.C0 = malloc(sizeof(float) * (size_t)(M * m.ldc + 1));
    ck_assert(m.A && m.B && m.C0);
    for (int64_t i = 0; i < arows * m.lda; i++) m.A[i] = 2 * vs_rng_uniformf(r) - 1;
    for (int64_t i = 0; i < brows * m.ldb; i++) m.B[i] = 2 * vs_rng_uniformf(r) - 1;
    for (int64_t i = 0; i < M * m.ldc; i++) m.C0[i] = 2 * vs_rng_uniformf(r) - 1;
    return m;
}

static void free_mats(mats *m)
{
    free(m->A);
    free(m->B);
    free(m->C0);
}

/* vs_sgemm on a copy of C0. */
static float *run_gemm(const mats *m, float alpha, float beta)
{
    float *C = malloc(sizeof(float) * (size_t)(m->M * m->ldc + 1));
    ck_assert(C != NULL);
    memcpy(C, m->C0, sizeof(float) * (size_t)(m->M * m->ldc));
    vs_sgemm(m->ta, m->tb, m->M, m->N, m->K, alpha, m->A, m->lda, m->B, m->ldb, beta, C, m->ldc);
    return C;
}

/* C against vs_sgemm_ref within the rounding-error bound of a length-K sum:
 * |c - ref| <= (K + 16) eps (|alpha| sum_k |a_ik b_kj| + |beta c0|); padding columns untouched. */
static void check_against_ref(const mats *m, const float *C, float alpha, float beta)
{
    float *R = malloc(sizeof(float) * (size_t)(m->M * m->ldc + 1));
    ck_assert(R != NULL);
    memcpy(R, m->C0, sizeof(float) * (size_t)(m->M * m->ldc));
    vs_sgemm_ref(m->ta, m->tb, m->M, m->N, m->K, alpha, m->A, m->lda, m->B, m->ldb, beta, R, m->ldc);
    for (int64_t i = 0; i < m->M; i++) {
        for (int64_t j = 0; j < m->N; j++) {
            double mag = 0;
            for (int64_t k = 0; k < m->K; k++) {
                const float a = m->ta ? m->A[k * m->lda + i] : m->A[i * m->lda + k];
                const float b = m->tb ? m->B[j * m->ldb + k] : m->B[k * m->ldb + j];
                mag += fabs((double)a * b);
            }
            mag = fabs(alpha) * mag + (beta == 0 ? 0 : fabs((double)beta * m->C0[i * m->ldc + j]));
            const double tol = (double)(m->K + 16) * FLT_EPSILON * mag + 1e-30;
            const double got = C[i * m->ldc + j], want = R[i * m->ldc + j];
            if (!(fabs(got - want) <= tol))
                ck_abort_msg("%s ta=%d tb=%d %ldx%ldx%ld alpha=%g beta=%g: C[%ld,%ld] = %.9g, reference %.9g (tol %.3g)",
                             vs_isa_name(vs_kernel_isa()), m->ta, m->tb, (long)m->M, (long)m->N, (long)m->K, alpha,
                             beta, (long)i, (long)j, got, want, tol);
        }
        for (int64_t j = m->N; j < m->ldc; j++) ck_assert(C[i * m->ldc + j] == m->C0[i * m->ldc + j]);
    }
    free(R);
}

/* Instruction sets to test on this machine: scalar always, AVX2 where the processor has it (also
 * on AVX-512 machines, whose fallback it is), and AVX-512. */
static int test_isas(vs_isa out[3])
{
    int n = 0;
    out[n++] = VS_ISA_SCALAR;
    if (vs_cpu_isa() == VS_ISA_AVX2 || vs_cpu_isa() == VS_ISA_AVX512) out[n++] = VS_ISA_AVX2;
    if (vs_cpu_isa() == VS_ISA_AVX512) out[n++] = VS_ISA_AVX512;
    return n;
}

/* Shapes as M, N, K: the odd ones, remainders of the 6 x 16 / 4 x 8 tiles, several K passes,
 * and the common layer sizes (batch x out x in). */
static const int64_t shapes[][3] = {
    {1, 1, 1},     {7, 13, 5},     {1023, 1, 17},  {1, 1023, 17},  {33, 65, 129}, {64, 256, 784},
    {64, 784, 256}, {64, 10, 256}, {128, 64, 100}, {6, 16, 300},   {5, 17, 513},   {97, 33, 1},
    {150, 40, 260}, {13, 200, 31}, {200, 130, 70}, {2, 3, 1000}, {13, 600, 37}, {12, 530, 8},
    /* A packed in 6-row slivers by transposing 8 k at a time: row stride 1024, and N >= 512 with
     * k remainders */
    {50, 40, 1024}, {61, 520, 203},
};

START_TEST(test_shapes_all_transposes)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 1000 + (uint64_t)_i);
    const int64_t *s = shapes[_i];
    for (int combo = 0; combo < 4; combo++) {
        mats m = make_mats(&r, combo & 1, combo & 2, s[0], s[1], s[2], 3);
        for (int t = 0; t < nisa; t++) {
            vs_set_kernel_isa(isas[t]);
            float *C = run_gemm(&m, 1.0f, 0.0f);
            check_against_ref(&m, C, 1.0f, 0.0f);
            free(C);
            C = run_gemm(&m, -0.75f, 1.5f);
            check_against_ref(&m, C, -0.75f, 1.5f);
            free(C);
        }
        free_mats(&m);
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

START_TEST(test_random_shapes)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 77);
    const float alphas[] = {1.0f, 2.0f, -0.5f}, betas[] = {0.0f, 1.0f, -3.0f};
    for (int rep = 0; rep < 24; rep++) {
        const int64_t M = 1 + (int64_t)vs_rng_below(&r, 90), N = 1 + (int64_t)vs_rng_below(&r, 90);
        const int64_t K = 1 + (int64_t)vs_rng_below(&r, 600), pad = (int64_t)vs_rng_below(&r, 5);
        mats m = make_mats(&r, vs_rng_below(&r, 2), vs_rng_below(&r, 2), M, N, K, pad);
        const float alpha = alphas[rep % 3], beta = betas[(rep / 3) % 3];
        for (int t = 0; t < nisa; t++) {
            vs_set_kernel_isa(isas[t]);
            float *C = run_gemm(&m, alpha, beta);
            check_against_ref(&m, C, alpha, beta);
            free(C);
        }
        free_mats(&m);
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

START_TEST(test_beta_zero_ignores_nan)
{
    vs_rng r;
    vs_rng_seed(&r, 5);
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    for (int t = 0; t < nisa; t++) {
        vs_set_kernel_isa(isas[t]);
        mats m = make_mats(&r, false, true, 20, 37, 50, 2);
        for (int64_t i = 0; i < m.M; i++)
            for (int64_t j = 0; j < m.N; j++) m.C0[i * m.ldc + j] = NAN;
        float *C = run_gemm(&m, 1.0f, 0.0f);
        for (int64_t i = 0; i < m.M; i++)
            for (int64_t j = 0; j < m.N; j++) ck_assert(isfinite(C[i * m.ldc + j]));
        check_against_ref(&m, C, 1.0f, 0.0f);
        free(C);
        free_mats(&m);
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

START_TEST(test_alpha_zero_and_empty_k)
{
    vs_rng r;
    vs_rng_seed(&r, 6);
    mats m = make_mats(&r, false, false, 9, 11, 7, 1);
    m.A[0] = NAN; /* alpha == 0: A and B are not read, so NaN does not reach C */
    float *C = run_gemm(&m, 0.0f, 2.0f);
    for (int64_t i = 0; i < m.M; i++)
        for (int64_t j = 0; j < m.N; j++) ck_assert(C[i * m.ldc + j] == 2.0f * m.C0[i * m.ldc + j]);
    free(C);
    C = run_gemm(&m, 0.0f, 0.0f);
    for (int64_t i = 0; i < m.M; i++)
        for (int64_t j = 0; j < m.N; j++) ck_assert(C[i * m.ldc + j] == 0.0f);
    free(C);
    /* K == 0: C = beta C. */
    float c[6] = {1, 2, 3, 4, 5, 6};
    vs_sgemm(false, false, 2, 3, 0, 1.0f, m.A, 1, m.B, 3, -1.0f, c, 3);
    for (int i = 0; i < 6; i++) ck_assert(c[i] == -(float)(i + 1));
    /* M == 0 and N == 0 touch nothing. */
    vs_sgemm(false, false, 0, 3, 2, 1.0f, m.A, 2, m.B, 3, 0.0f, c, 3);
    vs_sgemm(false, false, 2, 0, 2, 1.0f, m.A, 2, m.B, 1, 0.0f, c, 1);
    ck_assert(c[0] == -1.0f && c[5] == -6.0f);
    free_mats(&m);
}
END_TEST

/* Exact small case: [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50], in every transpose layout. */
START_TEST(test_known_values)
{
    const float a[4] = {1, 2, 3, 4}, at[4] = {1, 3, 2, 4}, b[4] = {5, 6, 7, 8}, bt[4] = {5, 7, 6, 8};
    const float want[4] = {19, 22, 43, 50};
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    for (int t = 0; t < nisa; t++) {
        vs_set_kernel_isa(isas[t]);
        for (int combo = 0; combo < 4; combo++) {
            const bool ta = combo & 1, tb = combo & 2;
            float c[4] = {NAN, NAN, NAN, NAN};
            vs_sgemm(ta, tb, 2, 2, 2, 1.0f, ta ? at : a, 2, tb ? bt : b, 2, 0.0f, c, 2);
            for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], want[i]);
            vs_sgemm(ta, tb, 2, 2, 2, 0.5f, ta ? at : a, 2, tb ? bt : b, 2, 1.0f, c, 2);
            for (int i = 0; i < 4; i++) ck_assert_float_eq(c[i], 1.5f * want[i]);
        }
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* Large enough to be split over threads, in both the packed and the in-place paths. */
static const int64_t thread_shapes[][3] = {
    {64, 256, 784}, {64, 784, 256}, {300, 520, 257}, {131, 77, 600}, {512, 64, 128}, {1023, 33, 64},
    {90, 250, 256}, {16, 1000, 300}, /* B read in place */
    {64, 1100, 300}, /* B's rows 4 KiB apart and B over 1 MiB: packed row by row instead */
};

START_TEST(test_bit_identical_across_threads)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 4242 + (uint64_t)_i);
    const int64_t *s = thread_shapes[_i];
    for (int combo = 0; combo < 4; combo++) {
        mats m = make_mats(&r, combo & 1, combo & 2, s[0], s[1], s[2], 1);
        for (int t = 0; t < nisa; t++) {
            vs_set_kernel_isa(isas[t]);
            vs_set_threads(1);
            float *C1 = run_gemm(&m, 1.25f, 0.5f);
            for (int threads = 2; threads <= 3; threads++) {
                vs_set_threads(threads);
                float *Cn = run_gemm(&m, 1.25f, 0.5f);
                if (memcmp(C1, Cn, sizeof(float) * (size_t)(m.M * m.ldc)) != 0)
                    ck_abort_msg("%s ta=%d tb=%d %ldx%ldx%ld: %d threads differ from 1", vs_isa_name(isas[t]),
                                 m.ta, m.tb, (long)m.M, (long)m.N, (long)m.K, threads);
                free(Cn);
            }
            if (combo == 0) check_against_ref(&m, C1, 1.25f, 0.5f);
            free(C1);
        }
        free_mats(&m);
    }
    vs_set_threads(0);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* y = x W^T with few rows of x is computed as y^T = W x^T (gemm.c's gemm_swapped): the same bits as
 * y = x (W^T copied out), which takes the direct path, for every ISA, beta 0 and not, 1 and 2 threads. */
static const int64_t swap_shapes[][3] = {{64, 1200, 300}, {128, 784, 400}, {128, 400, 784}, {7, 100, 33}, {100, 450, 129}, {1, 5, 2}};

START_TEST(test_swapped_product_same_bits)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 77 + (uint64_t)_i);
    const int64_t *s = swap_shapes[_i];
    mats nt = make_mats(&r, false, true, s[0], s[1], s[2], 2);
    mats nn = nt;
    nn.tb = false;
    nn.ldb = nt.N;
    nn.B = malloc(sizeof(float) * (size_t)(nt.K * nt.N));
    ck_assert_ptr_nonnull(nn.B);
    for (int64_t k = 0; k < nt.K; k++)
        for (int64_t j = 0; j < nt.N; j++) nn.B[k * nt.N + j] = nt.B[j * nt.ldb + k];
    for (int t = 0; t < nisa; t++) {
        vs_set_kernel_isa(isas[t]);
        for (int threads = 1; threads <= 2; threads++) {
            vs_set_threads(threads);
            for (int b = 0; b < 2; b++) {
                const float beta = b ? 1.5f : 0.0f;
                float *Cs = run_gemm(&nt, 0.75f, beta), *Cd = run_gemm(&nn, 0.75f, beta);
                if (memcmp(Cs, Cd, sizeof(float) * (size_t)(nt.M * nt.ldc)) != 0)
                    ck_abort_msg("%s %ldx%ldx%ld beta %g, %d threads: x W^T differs from x (W^T copied)",
                                 vs_isa_name(isas[t]), (long)nt.M, (long)nt.N, (long)nt.K, (double)beta, threads);
                if (t == 0 && threads == 1) check_against_ref(&nt, Cs, 0.75f, beta);
                free(Cs);
                free(Cd);
            }
        }
    }
    free(nn.B);
    free_mats(&nt);
    vs_set_threads(0);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* A product whose C is a little narrower than a tile (nr/2 < N < nr) runs transposed (gemm.c's
 * want_swap): its bits are those of the same columns of a product wide enough to run directly
 * (N + 40 columns, the narrow B a block of the wide one), for every transpose combination and ISA,
 * beta 0 and not, 1 and 2 threads. */
static const int64_t narrow_shapes[][3] = {{128, 20, 400}, {400, 20, 128}, {100, 24, 77}, {70, 17, 300}, {64, 28, 5}};

START_TEST(test_narrow_product_same_bits)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 515 + (uint64_t)_i);
    const int64_t *s = narrow_shapes[_i];
    for (int combo = 0; combo < 4; combo++) {
        const bool ta = combo & 1, tb = combo & 2;
        mats wide = make_mats(&r, ta, tb, s[0], s[1] + 40, s[2], 0);
        mats narrow = wide; /* same A and B: a narrow B is the first N columns (or rows) of the wide one */
        narrow.N = s[1];
        narrow.ldc = s[1];
        for (int t = 0; t < nisa; t++) {
            vs_set_kernel_isa(isas[t]);
            for (int threads = 1; threads <= 2; threads++) {
                vs_set_threads(threads);
                for (int b = 0; b < 2; b++) {
                    const float beta = b ? 1.5f : 0.0f;
                    float *Cw = run_gemm(&wide, 0.75f, beta);
                    float *Cn = malloc(sizeof(float) * (size_t)(narrow.M * narrow.N));
                    ck_assert_ptr_nonnull(Cn);
                    for (int64_t i = 0; i < narrow.M; i++)
                        memcpy(Cn + i * narrow.N, wide.C0 + i * wide.ldc, sizeof(float) * (size_t)narrow.N);
                    vs_sgemm(ta, tb, narrow.M, narrow.N, narrow.K, 0.75f, narrow.A, narrow.lda, narrow.B, narrow.ldb,
                             beta, Cn, narrow.N);
                    for (int64_t i = 0; i < narrow.M; i++)
                        if (memcmp(Cn + i * narrow.N, Cw + i * wide.ldc, sizeof(float) * (size_t)narrow.N) != 0)
                            ck_abort_msg("%s ta=%d tb=%d %ldx%ldx%ld beta %g, %d threads: row %ld differs from the wide product",
                                         vs_isa_name(isas[t]), ta, tb, (long)narrow.M, (long)narrow.N, (long)narrow.K,
                                         (double)beta, threads, (long)i);
                    free(Cw);
                    free(Cn);
                }
            }
        }
        free_mats(&wide);
    }
    vs_set_threads(0);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* vs_sgemm_bias gives the bits of vs_sgemm (beta 1) on a C whose rows hold the bias, for products
 * that run transposed (x W^T of few rows, narrow C) and directly, K = 0 included, every ISA, 1 and
 * 2 threads; padding columns of C untouched. */
static const int64_t bias_shapes[][5] = {
    /* M, N, K, trans_a, trans_b */
    {128, 784, 400, 0, 1}, {64, 300, 77, 0, 1}, {128, 20, 400, 0, 1}, {100, 24, 33, 1, 0}, {70, 90, 50, 0, 0}, {5, 7, 0, 0, 1},
    /* direct with the bias read by the tiles' first pass: two passes of K, partial and narrow tiles,
     * packed and in-place B; and the thin loops (M, N or K of 1), which take C filled first */
    {256, 200, 300, 0, 1}, {301, 37, 129, 0, 0}, {200, 13, 260, 1, 0}, {1, 50, 30, 0, 1}, {40, 1, 30, 0, 0}, {33, 45, 1, 0, 1},
};

START_TEST(test_bias_product_same_bits)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 606 + (uint64_t)_i);
    const int64_t *s = bias_shapes[_i];
    mats m = make_mats(&r, s[3], s[4], s[0], s[1], s[2], 2);
    float *bias = malloc(sizeof(float) * (size_t)m.N);
    ck_assert_ptr_nonnull(bias);
    for (int64_t j = 0; j < m.N; j++) bias[j] = 2 * vs_rng_uniformf(&r) - 1;
    for (int64_t i = 0; i < m.M; i++) memcpy(m.C0 + i * m.ldc, bias, sizeof(float) * (size_t)m.N);
    for (int t = 0; t < nisa; t++) {
        vs_set_kernel_isa(isas[t]);
        for (int threads = 1; threads <= 2; threads++) {
            vs_set_threads(threads);
            float *Cw = run_gemm(&m, 0.5f, 1.0f), *Cb = malloc(sizeof(float) * (size_t)(m.M * m.ldc + 1));
            ck_assert_ptr_nonnull(Cb);
            for (int64_t i = 0; i < m.M * m.ldc; i++) Cb[i] = i % m.ldc < m.N ? NAN : m.C0[i];
            vs_sgemm_bias(m.ta, m.tb, m.M, m.N, m.K, 0.5f, m.A, m.lda, m.B, m.ldb, bias, Cb, m.ldc);
            if (memcmp(Cw, Cb, sizeof(float) * (size_t)(m.M * m.ldc)) != 0)
                ck_abort_msg("%s ta=%d tb=%d %ldx%ldx%ld, %d threads: the bias product differs from beta 1 on bias rows",
                             vs_isa_name(isas[t]), m.ta, m.tb, (long)m.M, (long)m.N, (long)m.K, threads);
            free(Cw);
            free(Cb);
        }
    }
    free(bias);
    free_mats(&m);
    vs_set_threads(0);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* Products with M, N or K equal to 1 run through gemm_thin.c's loops instead of the tiles (those whose
 * long side is strided in memory only up to 64 elements; 65 takes the tiles): their bits
 * are those of the top-left block of a product 40 rows and 40 columns larger, which the tiles compute
 * (for K = 1, one of depth 2 whose second column of op(A) is zero: adding 0 b to a nonzero sum
 * changes nothing), for every transpose combination and ISA, beta 0 and not, 1 and 2 threads (the
 * larger shapes run on both). */
static const int64_t thin_shapes[][3] = {
    {1, 6272, 16}, {16, 1, 6272}, {16, 6272, 1}, {1, 1, 300}, {1, 300, 1}, {300, 1, 1}, {1, 1, 1},
    {1, 1500, 700}, {1500, 1, 700}, {700, 1500, 1}, {33, 257, 1}, {1, 257, 513}, {513, 1, 257}, {100, 20, 1},
    {1, 64, 300}, {1, 65, 300}, {64, 1, 300}, {65, 1, 300},
};

START_TEST(test_thin_product_same_bits)
{
    vs_isa isas[3];
    const int nisa = test_isas(isas);
    vs_rng r;
    vs_rng_seed(&r, 909 + (uint64_t)_i);
    const int64_t *s = thin_shapes[_i];
    const int64_t M = s[0], N = s[1], K = s[2];
    for (int combo = 0; combo < 4; combo++) {
        const bool ta = combo & 1, tb = combo & 2;
        mats big = make_mats(&r, ta, tb, M + 40, N + 40, K == 1 ? 2 : K, 1);
        if (K == 1)
            for (int64_t i = 0; i < big.M; i++) big.A[ta ? big.lda + i : i * big.lda + 1] = 0.0f;
        for (int t = 0; t < nisa; t++) {
            vs_set_kernel_isa(isas[t]);
            for (int threads = 1; threads <= 2; threads++) {
                vs_set_threads(threads);
                for (int b = 0; b < 2; b++) {
                    const float beta = b ? 1.5f : 0.0f;
                    float *Cb = run_gemm(&big, 0.75f, beta), *Ct = malloc(sizeof(float) * (size_t)(big.M * big.ldc));
                    ck_assert_ptr_nonnull(Ct);
                    memcpy(Ct, big.C0, sizeof(float) * (size_t)(big.M * big.ldc));
                    vs_sgemm(ta, tb, M, N, K, 0.75f, big.A, big.lda, big.B, big.ldb, beta, Ct, big.ldc);
                    for (int64_t i = 0; i < big.M; i++)
                        for (int64_t j = 0; j < big.ldc; j++) {
                            const float want = i < M && j < N ? Cb[i * big.ldc + j] : big.C0[i * big.ldc + j];
                            if (memcmp(&Ct[i * big.ldc + j], &want, sizeof want) != 0)
                                ck_abort_msg("%s ta=%d tb=%d %ldx%ldx%ld beta %g, %d threads: C[%ld,%ld] = %a, want %a",
                                             vs_isa_name(isas[t]), ta, tb, (long)M, (long)N, (long)K, (double)beta,
                                             threads, (long)i, (long)j, (double)Ct[i * big.ldc + j], (double)want);
                        }
                    free(Cb);
                    free(Ct);
                }
            }
        }
        free_mats(&big);
    }
    vs_set_threads(0);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* Scalar and SIMD kernels both match the reference; here also each other, elementwise. */
START_TEST(test_scalar_and_simd_agree)
{
    if (vs_cpu_isa() == VS_ISA_SCALAR) {
        printf("SKIP: no SIMD instruction set on this machine\n");
        return;
    }
    unsetenv("VERSUS_ISA");
    vs_rng r;
    vs_rng_seed(&r, 99);
    mats m = make_mats(&r, false, true, 70, 90, 333, 0);
    vs_set_kernel_isa(VS_ISA_SCALAR);
    ck_assert_int_eq(vs_kernel_isa(), VS_ISA_SCALAR);
    float *Cs = run_gemm(&m, 1.0f, 0.0f);
    vs_set_kernel_isa(VS_ISA_AUTO);
    ck_assert_int_eq(vs_kernel_isa(), vs_cpu_isa());
    float *Cv = run_gemm(&m, 1.0f, 0.0f);
    double maxdiff = 0;
    for (int64_t i = 0; i < m.M * m.ldc; i++) maxdiff = fmax(maxdiff, fabs((double)Cs[i] - Cv[i]));
    /* |c| is about sqrt(333)/3 here; sums of 333 products agree to a few ulps of that. */
    ck_assert_double_le(maxdiff, 1e-4);
    ck_assert_double_gt(fabs(Cv[0]), 0.0);
    free(Cs);
    free(Cv);
    free_mats(&m);
    if (vs_cpu_isa() < VS_ISA_AVX512) printf("NOTE: AVX-512 kernel compiled but not run (CPU lacks avx512f)\n");
}
END_TEST

/* The AVX-512 kernels for cores that split a zmm FMA into halves (broadcast inside the FMA) and for
 * full-width cores (broadcast into a register) form the same FMAs in the same order: the same bits,
 * over every transpose, the packed and in-place paths, partial tiles and narrow (ymm) tiles. */
START_TEST(test_avx512_split_same_bits)
{
    if (vs_cpu_isa() != VS_ISA_AVX512) {
        printf("SKIP: test_avx512_split_same_bits: this CPU has no AVX-512\n");
        return;
    }
    vs_set_kernel_isa(VS_ISA_AVX512);
    vs_rng r;
    vs_rng_seed(&r, 77);
    static const int64_t split_shapes[][3] = {{64, 256, 784}, {7, 13, 5}, {300, 520, 257}, {128, 8, 300},
                                              {61, 520, 203}, {256, 200, 300}, {20, 40, 1024}};
    for (size_t i = 0; i < sizeof split_shapes / sizeof split_shapes[0]; i++)
        for (int combo = 0; combo < 4; combo++) {
            const int64_t *sh = split_shapes[i];
            mats m = make_mats(&r, combo & 1, combo & 2, sh[0], sh[1], sh[2], 3);
            ck_assert(vs_set_avx512_split(1));
            float *Cs = run_gemm(&m, 0.75f, 1.5f);
            ck_assert(!vs_set_avx512_split(0));
            float *Cw = run_gemm(&m, 0.75f, 1.5f);
            if (memcmp(Cs, Cw, sizeof(float) * (size_t)(m.M * m.ldc)) != 0)
                ck_abort_msg("ta=%d tb=%d %ldx%ldx%ld: the split and full-width AVX-512 kernels differ", m.ta, m.tb,
                             (long)m.M, (long)m.N, (long)m.K);
            if (combo == 3) check_against_ref(&m, Cw, 0.75f, 1.5f);
            free(Cs);
            free(Cw);
            free_mats(&m);
        }
    vs_set_avx512_split(-1);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

START_TEST(test_isa_selection)
{
    unsetenv("VERSUS_ISA"); /* AUTO falls back to the environment; test the CPU's choice */
    ck_assert_int_eq(vs_set_kernel_isa(VS_ISA_SCALAR), VS_ISA_SCALAR);
    ck_assert_str_eq(vs_isa_name(vs_kernel_isa()), "scalar");
    /* Asking for more than the CPU has lowers to what it has. */
    ck_assert_int_eq(vs_set_kernel_isa(VS_ISA_AVX512), vs_cpu_isa());
    ck_assert_int_eq(vs_set_kernel_isa(VS_ISA_AUTO), vs_cpu_isa());
    /* The environment chooses when nothing is forced. */
    setenv("VERSUS_ISA", "scalar", 1);
    ck_assert_int_eq(vs_set_kernel_isa(VS_ISA_AUTO), VS_ISA_SCALAR);
    unsetenv("VERSUS_ISA");
    ck_assert_int_eq(vs_set_kernel_isa(VS_ISA_AUTO), vs_cpu_isa());
    ck_assert_str_eq(vs_isa_name(VS_ISA_AVX2), "avx2");
    ck_assert_str_eq(vs_isa_name(VS_ISA_AUTO), "auto");
}
END_TEST

static Suite *gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = vs_tcase(s, "reference", 120);
    tcase_add_loop_test(tc, test_shapes_all_transposes, 0, (int)(sizeof shapes / sizeof shapes[0]));
    tcase_add_test(tc, test_random_shapes);
    tcase_add_test(tc, test_beta_zero_ignores_nan);
    tcase_add_test(tc, test_alpha_zero_and_empty_k);
    tcase_add_test(tc, test_known_values);
    tc = vs_tcase(s, "threads", 120);
    tcase_add_loop_test(tc, test_bit_identical_across_threads, 0, (int)(sizeof thread_shapes / sizeof thread_shapes[0]));
    tcase_add_loop_test(tc, test_bias_product_same_bits, 0, (int)(sizeof bias_shapes / sizeof bias_shapes[0]));
    tcase_add_loop_test(tc, test_narrow_product_same_bits, 0, (int)(sizeof narrow_shapes / sizeof narrow_shapes[0]));
    tcase_add_loop_test(tc, test_swapped_product_same_bits, 0, (int)(sizeof swap_shapes / sizeof swap_shapes[0]));
    tcase_add_loop_test(tc, test_thin_product_same_bits, 0, (int)(sizeof thin_shapes / sizeof thin_shapes[0]));
    tc = vs_tcase(s, "isa", 60);
    tcase_add_test(tc, test_scalar_and_simd_agree);
    tcase_add_test(tc, test_isa_selection);
    tcase_add_test(tc, test_avx512_split_same_bits);
    return s;
}

VS_TEST_MAIN(gemm_suite)
