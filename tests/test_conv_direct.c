/* test_conv_direct.c - the direct kernels for convolutions with at most four output channels
 * (autograd/conv_direct.c) under every instruction set: the forward, the transpose and the weight
 * gradient against double-precision definitions over kernel heights 1-7 (the AVX-512 column tiles
 * and row-sharing weight gradient take 3, 5 and 7), kernel widths that do not fill a block of
 * columns, rows of 1-40 pixels (ragged 16- and 32-pixel blocks), short last row tiles, padding,
 * dilation, one to four channels; pixels past a row kept out of the weight gradient's sums; the
 * same bits for any thread count. */
#include "autograd/kernels.h"
#include "versus/threads.h"
#include "versus/versus.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static vs_rng R;

typedef struct dgeom {
    int n, c, h, w, o, kh, kw, ph, pw, dh, dw;
} dgeom;

static int out_len(int in, int k, int p, int d) { return in + 2 * p - d * (k - 1); }

/* Stride 1, groups 1, o <= 4: the shapes conv_direct.c takes. */
static const dgeom GEOMS[] = {
    /* n  c  h   w  o kh kw ph pw dh dw */
    {2, 3, 28, 28, 1, 7, 7, 3, 3, 1, 1}, /* a generator's last conv */
    {3, 4, 3, 3, 1, 3, 3, 1, 1, 1, 1},   /* a critic's 3 x 3 head */
    {1, 2, 9, 17, 1, 5, 5, 2, 2, 1, 1},  /* kh 5, a 17-pixel row */
    {2, 3, 12, 40, 2, 3, 4, 1, 1, 1, 1}, /* two blocks of 32, kw 4: a partial block of kernel columns */
    {1, 2, 15, 16, 3, 7, 2, 3, 0, 1, 1}, /* 15 rows: short last tiles; rows of exactly 16 */
    {2, 1, 8, 33, 4, 3, 1, 1, 0, 1, 1},  /* 33 pixels, four channels */
    {1, 3, 11, 31, 1, 3, 3, 2, 1, 2, 2}, /* dilation 2: the general kernels */
    {2, 2, 6, 1, 2, 5, 1, 2, 0, 1, 1},   /* one-pixel rows */
    {1, 2, 10, 13, 1, 2, 3, 1, 1, 1, 1}, /* kh 2: no column tile */
    {2, 5, 7, 7, 1, 1, 1, 0, 0, 1, 1},   /* 1 x 1 */
    {1, 2, 9, 20, 1, 7, 5, 0, 4, 1, 2},  /* more padding than the kernel reaches on one side */
};
#define N_GEOMS (int)(sizeof GEOMS / sizeof GEOMS[0])

static const vs_isa ISAS[3] = {VS_ISA_SCALAR, VS_ISA_AVX2, VS_ISA_AVX512};

static float xval(const dgeom *g, const float *x, int n, int c, int i, int j)
{
    if (i < 0 || i >= g->h || j < 0 || j >= g->w) return 0.0f;
    return x[((n * g->c + c) * g->h + i) * g->w + j];
}

/* |got - want| within float rounding of a sum whose terms have absolute sum mag. */
static void expect_sum(const char *what, int t, int64_t at, float got, double want, double mag)
{
    ck_assert_msg(fabs(got - want) <= 2e-6 * mag + 1e-7, "%s, geometry %d, element %lld: got %.9g, expected %.9g", what, t,
                  (long long)at, (double)got, want);
}

START_TEST(test_direct_against_definitions)
{
    for (int s = 0; s < 3 * N_GEOMS; s++) {
        vs_set_kernel_isa(ISAS[s / N_GEOMS]);
        const int t = s % N_GEOMS;
        const dgeom *g = &GEOMS[t];
        const int oh = out_len(g->h, g->kh, g->ph, g->dh), ow = out_len(g->w, g->kw, g->pw, g->dw);
        vs_scope_begin();
        vs_tensor *x = vs_tensor_rand(VS_SHAPE(g->n, g->c, g->h, g->w), &R, -1, 1);
        vs_tensor *w = vs_tensor_rand(VS_SHAPE(g->o, g->c, g->kh, g->kw), &R, -1, 1);
        vs_tensor *b = vs_tensor_rand(VS_SHAPE(g->o), &R, -1, 1);
        vs_tensor *gy = vs_tensor_rand(VS_SHAPE(g->n, g->o, oh, ow), &R, -1, 1);
        const vs_conv_opts o = {{1, 1}, {g->ph, g->pw}, {g->dh, g->dw}, {0, 0}, 1};
        vs_tensor *y = vs_conv2d(x, w, b, &o), *dx = vs_conv_transpose2d(gy, w, NULL, &o);
        vs_tensor *dw = vs_conv2d_weight_grad(x, gy, g->kh, g->kw, &o);
        ck_assert_msg(y && dx && dw, "geometry %d: %s", t, vs_last_error()->msg);
        ck_assert_int_eq(y->shape[2], oh);
        ck_assert_int_eq(y->shape[3], ow);
        double *rx = calloc((size_t)x->size, sizeof *rx), *mx = calloc((size_t)x->size, sizeof *mx);
        double *rw = calloc((size_t)w->size, sizeof *rw), *mw = calloc((size_t)w->size, sizeof *mw);
        for (int n = 0; n < g->n; n++)
            for (int oc = 0; oc < g->o; oc++)
                for (int i = 0; i < oh; i++)
                    for (int j = 0; j < ow; j++) {
                        const int64_t at = ((int64_t)(n * g->o + oc) * oh + i) * ow + j;
                        double sum = b->data[oc], mag = fabs(b->data[oc]);
                        for (int c = 0; c < g->c; c++)
                            for (int ki = 0; ki < g->kh; ki++)
                                for (int kj = 0; kj < g->kw; kj++) {
                                    const int yy = i - g->ph + ki * g->dh, xx = j - g->pw + kj * g->dw;
                                    const int64_t wi = ((int64_t)(oc * g->c + c) * g->kh + ki) * g->kw + kj;
                                    const double v = xval(g, x->data, n, c, yy, xx), p = w->data[wi] * v, q = gy->data[at] * v;
                                    sum += p, mag += fabs(p);
                                    rw[wi] += q, mw[wi] += fabs(q);
                                    if (yy >= 0 && yy < g->h && xx >= 0 && xx < g->w) {
                                        const int64_t xi = ((int64_t)(n * g->c + c) * g->h + yy) * g->w + xx;
                                        rx[xi] += (double)w->data[wi] * gy->data[at], mx[xi] += fabs((double)w->data[wi] * gy->data[at]);
                                    }
                                }
                        expect_sum("forward", s, at, y->data[at], sum, mag);
                    }
        for (int64_t k = 0; k < x->size; k++) expect_sum("transpose", s, k, dx->data[k], rx[k], mx[k]);
        for (int64_t k = 0; k < w->size; k++) expect_sum("weight gradient", s, k, dw->data[k], rw[k], mw[k]);
        free(rx), free(mx), free(rw), free(mw);
        vs_scope_end();
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* The row-sharing weight gradient (kernel of 3 rows) masks the ragged end of a row: x is 3 x 20 with
 * inf in the last column of the middle row; a 3 x 3 kernel without padding gives one row of 18
 * outputs, and only tap (1, 2) reads that pixel. */
START_TEST(test_rows_weight_grad_isolates_pixels)
{
    for (int s = 0; s < 3; s++) {
        vs_set_kernel_isa(ISAS[s]);
        vs_scope_begin();
        float xs[60], gs[18];
        for (int k = 0; k < 60; k++) xs[k] = 0.25f * (float)(k % 7) - 0.5f;
        xs[39] = INFINITY;
        for (int j = 0; j < 18; j++) gs[j] = 0.5f + (float)j;
        vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 1, 3, 20), xs), *gy = vs_tensor_from(VS_SHAPE(1, 1, 1, 18), gs);
        vs_tensor *dw = vs_conv2d_weight_grad(x, gy, 3, 3, NULL);
        ck_assert_ptr_nonnull(dw);
        for (int ki = 0; ki < 3; ki++)
            for (int kj = 0; kj < 3; kj++) {
                if (ki == 1 && kj == 2) {
                    ck_assert(isinf(dw->data[5]));
                    continue;
                }
                double want = 0;
                for (int j = 0; j < 18; j++) want += (double)gs[j] * xs[ki * 20 + j + kj];
                ck_assert_msg(fabs(dw->data[ki * 3 + kj] - want) <= 1e-5 * (1 + fabs(want)), "isa %d, tap (%d,%d): got %g, expected %g",
                              s, ki, kj, (double)dw->data[ki * 3 + kj], want);
            }
        vs_scope_end();
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* Every output element is summed by one thread in a fixed order: 1, 2 and 3 threads give the same bits. */
START_TEST(test_direct_threads_bit_identical)
{
    const dgeom *g = &GEOMS[0];
    const int oh = out_len(g->h, g->kh, g->ph, g->dh), ow = out_len(g->w, g->kw, g->pw, g->dw);
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(5, g->c, g->h, g->w), &R, -1, 1);
    vs_tensor *w = vs_tensor_rand(VS_SHAPE(g->o, g->c, g->kh, g->kw), &R, -1, 1);
    vs_tensor *gy = vs_tensor_rand(VS_SHAPE(5, g->o, oh, ow), &R, -1, 1);
    const vs_conv_opts o = {{1, 1}, {g->ph, g->pw}, {1, 1}, {0, 0}, 1};
    float *ref[3] = {NULL, NULL, NULL};
    for (int t = 1; t <= 3; t++) {
        vs_set_threads(t);
        vs_scope_begin();
        vs_tensor *outs[3] = {vs_conv2d(x, w, NULL, &o), vs_conv_transpose2d(gy, w, NULL, &o), vs_conv2d_weight_grad(x, gy, g->kh, g->kw, &o)};
        for (int q = 0; q < 3; q++) {
            ck_assert_ptr_nonnull(outs[q]);
            const size_t bytes = (size_t)outs[q]->size * sizeof(float);
            if (t == 1) {
                ref[q] = malloc(bytes);
                memcpy(ref[q], outs[q]->data, bytes);
            } else {
                ck_assert_msg(memcmp(ref[q], outs[q]->data, bytes) == 0, "output %d differs with %d threads", q, t);
            }
        }
        vs_scope_end();
    }
    vs_set_threads(0);
    for (int q = 0; q < 3; q++) free(ref[q]);
    vs_tensor_free(x);
    vs_tensor_free(w);
    vs_tensor_free(gy);
}
END_TEST

static Suite *conv_direct_suite(void)
{
    vs_rng_seed(&R, 77);
    Suite *s = suite_create("conv_direct");
    TCase *tc = vs_tcase(s, "direct", 60);
    tcase_add_test(tc, test_direct_against_definitions);
    tcase_add_test(tc, test_rows_weight_grad_isolates_pixels);
    tcase_add_test(tc, test_direct_threads_bit_identical);
    return s;
}

VS_TEST_MAIN(conv_direct_suite)
