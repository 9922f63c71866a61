/* test_conv_phases.c - strided convolutions run as stride-1 convolutions over the stacked input phases
 * (autograd/conv_phases.c): the forward, the transpose (with bias and the output_padding that maps
 * odd sizes back) and the weight gradient of k4 / k6 stride 2 (and a k6 stride 3; k5 stride 2, the kernel
 * padded to 6x6 with zero taps under Winograd, k7 stride 2 to 8x8) with padding 0-3,
 * odd and non-square sizes, against double-precision definitions, under every stride-1 engine and
 * instruction set, called directly and through the ops; the same bits for 1 and 2 threads; first
 * and second derivatives through the ops with the phases on. */
#include "autograd/conv_avx512.h"
#include "autograd/conv_phases.h"
#include "autograd/kernels.h"
#include "gradcheck.h"
#include "versus/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static vs_rng R;
static vs_phases_engine default_engine; /* put back at the end of each test */

typedef struct pgeom {
    int n, c, h, w, o, kh, kw, s, ph, pw;
} pgeom;

static const pgeom GEOMS[] = {
    /* n  c   h   w   o kh kw s ph pw */
    {2, 1, 28, 28, 32, 6, 6, 2, 2, 2},   /* the GANMEX classifier's first conv */
    {2, 32, 14, 14, 64, 6, 6, 2, 2, 2},  /* its second */
    {1, 8, 13, 11, 32, 4, 4, 2, 1, 1},   /* odd sizes: rows and columns no tap reaches */
    {2, 8, 9, 10, 16, 4, 4, 2, 0, 0},    /* no padding */
    {1, 4, 11, 15, 32, 6, 6, 2, 3, 3},   /* padding 3, odd phase offsets */
    {1, 16, 7, 9, 32, 4, 4, 2, 3, 3},    /* padding 3 with k4: a phase row wholly in the padding */
    {1, 8, 10, 12, 32, 4, 6, 2, 1, 2},   /* kh != kw */
    {1, 8, 14, 13, 32, 6, 6, 3, 1, 2},   /* stride 3: nine phases */
    {2, 16, 8, 8, 32, 4, 4, 2, 1, 1},    /* StarGAN's k4 s2 (down; its transpose is the up-sampling) */
    /* from here on Winograd takes every direction (F(4x4, 2x2) on the phases read in place) */
    {1, 6, 15, 13, 40, 4, 4, 2, 1, 1},   /* k4: 6 channels a phase (packed, 8 a place, in Winograd), odd sizes */
    {2, 8, 16, 15, 40, 4, 4, 2, 0, 0},   /* k4, no padding */
    {1, 8, 14, 14, 48, 4, 4, 2, 2, 2},   /* k4, padding 2 */
    {2, 16, 14, 14, 32, 4, 4, 2, 1, 1},  /* WGAN-GP's second conv, fewer channels: 7x7 outputs */
    /* k5 s2: the kernel padded with zero taps to 6x6, F(4x4, 3x3) on 3x3 phase kernels */
    {2, 16, 24, 24, 32, 5, 5, 2, 2, 2},  /* 12 x 12 outputs */
    {1, 32, 28, 27, 32, 5, 5, 2, 0, 0},  /* no padding, an input column no tap reaches */
    {2, 16, 25, 23, 40, 5, 5, 2, 1, 1},  /* odd sizes, 12 x 11 outputs */
    {1, 16, 21, 21, 32, 5, 5, 2, 3, 3},  /* padding 3 */
    /* k7 s2: padded to 8x8, F(3x3, 4x4) on 4x4 phase kernels */
    {2, 16, 28, 28, 48, 7, 7, 2, 3, 3},  /* 14 x 14 outputs on tiles of 3x3 */
    {1, 32, 27, 25, 32, 7, 7, 2, 2, 2},  /* odd sizes, 13 x 12 outputs */
    {3, 8, 17, 17, 64, 5, 5, 2, 2, 2},   /* the sweep's 8 channels, packed: F(3x3, 3x3) on 9 x 9 outputs */
    {2, 7, 17, 15, 40, 5, 5, 2, 2, 3},   /* 7 channels, padding 2 and 3: 9 x 9 outputs */
};
#define FIRST_WINOGRAD 9
#define N_GEOMS (int)(sizeof GEOMS / sizeof GEOMS[0])

static int out_len(int in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

static vs_conv_fast fast_of(const pgeom *g)
{
    const int oh = out_len(g->h, g->kh, g->s, g->ph), ow = out_len(g->w, g->kw, g->s, g->pw);
    return (vs_conv_fast){g->n, g->c, g->h, g->w, g->o, oh, ow, g->kh, g->kw, g->s, g->s, g->ph, g->pw, 1, 1, false, 0, 0};
}

/* The definitions in double, with the absolute sums of their terms. */
typedef struct refs {
    double *y, *my, *dx, *mdx, *dw, *mdw;
} refs;

static refs refs_of(const pgeom *g, const float *x, const float *w, const float *b, const float *gy)
{
    const vs_conv_fast f = fast_of(g);
    const int64_t nx = (int64_t)g->n * g->c * g->h * g->w, nw = (int64_t)g->o * g->c * g->kh * g->kw, ny = f.n * f.o * f.oh * f.ow;
    refs r = {calloc((size_t)ny, sizeof(double)), calloc((size_t)ny, sizeof(double)), calloc((size_t)nx, sizeof(double)),
              calloc((size_t)nx, sizeof(double)), calloc((size_t)nw, sizeof(double)), calloc((size_t)nw, sizeof(double))};
    for (int n = 0; n < g->n; n++)
        for (int c = 0; c < g->c; c++) /* dx's bias: b is also used as the transpose's (c channels) */
            for (int k = 0; k < g->h * g->w; k++) {
                r.dx[(n * g->c + c) * g->h * g->w + k] = b[c];
                r.mdx[(n * g->c + c) * g->h * g->w + k] = fabs(b[c]);
            }
    for (int n = 0; n < g->n; n++)
        for (int o = 0; o < g->o; o++)
            for (int i = 0; i < f.oh; i++)
                for (int j = 0; j < f.ow; j++) {
                    const int64_t at = ((n * f.o + o) * f.oh + i) * f.ow + j;
                    r.y[at] = b[o];
                    r.my[at] = fabs(b[o]);
                    for (int c = 0; c < g->c; c++)
                        for (int ki = 0; ki < g->kh; ki++)
                            for (int kj = 0; kj < g->kw; kj++) {
                                const int y = i * g->s + ki - g->ph, xx = j * g->s + kj - g->pw;
                                if (y < 0 || y >= g->h || xx < 0 || xx >= g->w) continue;
                                const int64_t ix = ((int64_t)(n * g->c + c) * g->h + y) * g->w + xx;
                                const int64_t iw = ((int64_t)(o * g->c + c) * g->kh + ki) * g->kw + kj;
                                r.y[at] += (double)w[iw] * x[ix];
                                r.my[at] += fabs((double)w[iw] * x[ix]);
                                r.dx[ix] += (double)w[iw] * gy[at];
                                r.mdx[ix] += fabs((double)w[iw] * gy[at]);
                                r.dw[iw] += (double)gy[at] * x[ix];
                                r.mdw[iw] += fabs((double)gy[at] * x[ix]);
                            }
                }
    return r;
}

static void refs_free(refs *r)
{
    free(r->y);
    free(r->my);
    free(r->dx);
    free(r->mdx);
    free(r->dw);
    free(r->mdw);
}

/* Every element within tol of the sum of |terms| behind it. */
static void expect_near(const char *what, int t, const float *got, const double *want, const double *mag, int64_t n, double tol)
{
    for (int64_t k = 0; k < n; k++)
        ck_assert_msg(fabs(got[k] - want[k]) <= tol * mag[k] + 1e-7, "%s, geometry %d, element %lld: got %.9g, expected %.9g (|terms| %.3g)",
                      what, t, (long long)k, (double)got[k], want[k], mag[k]);
}

static const vs_isa ISAS[3] = {VS_ISA_SCALAR, VS_ISA_AVX2, VS_ISA_AVX512};
static const vs_phases_engine ENGINES[] = {VS_PHASES_WINOGRAD, VS_PHASES_DIRECT, VS_PHASES_OFF};
#define N_ENGINES (int)(sizeof ENGINES / sizeof ENGINES[0])
#define TOL 1e-5

/* Winograd takes g in every direction (the direct engine's bars are its own: it may not), but the weight
 * gradient of a padded kernel of 8 channels or fewer. */
static void expect_taken(const pgeom *g, vs_phases_engine e)
{
    const vs_conv_fast f = fast_of(g);
    const bool wgrad = g->c > 8 || g->kh % g->s == 0;
    if (e == VS_PHASES_WINOGRAD)
        ck_assert_msg(vs_conv_phases_forward_fits(&f) && vs_conv_phases_transpose_fits(&f) && vs_conv_phases_weight_grad_fits(&f) == wgrad,
                      "%d x %d -> %d k%d s%d p%d: Winograd declined (forward %d, transpose %d, weight gradient %d)", g->h, g->w,
                      g->o, g->kh, g->s, g->ph, vs_conv_phases_forward_fits(&f), vs_conv_phases_transpose_fits(&f),
                      vs_conv_phases_weight_grad_fits(&f));
}

START_TEST(test_phases_against_definitions)
{
    vs_set_avx512_split(1); /* Winograd takes these on any machine as on Zen 4 (full-width cores decline some) */
    int taken[N_ENGINES][3] = {{0}}; /* forward, transpose, weight gradient run by the phases */
    for (int e = 0; e < N_ENGINES; e++)
        for (int s = 0; s < 3 * N_GEOMS; s++) {
            vs_conv_phases_engine(ENGINES[e]);
            vs_set_kernel_isa(ISAS[s / N_GEOMS]);
            const int t = s % N_GEOMS;
            const pgeom *g = &GEOMS[t];
            const vs_conv_fast f = fast_of(g);
            vs_scope_begin();
            vs_tensor *x = vs_tensor_rand(VS_SHAPE(g->n, g->c, g->h, g->w), &R, -1, 1);
            vs_tensor *w = vs_tensor_rand(VS_SHAPE(g->o, g->c, g->kh, g->kw), &R, -1, 1);
            vs_tensor *b = vs_tensor_rand(VS_SHAPE(g->o > g->c ? g->o : g->c), &R, -1, 1);
            vs_tensor *gy = vs_tensor_rand(VS_SHAPE(g->n, g->o, f.oh, f.ow), &R, -1, 1);
            refs r = refs_of(g, x->data, w->data, b->data, gy->data);
            /* through the ops: the phases where they fit, the other kernels elsewhere */
            const vs_conv_opts o = {{g->s, g->s}, {g->ph, g->pw}, {1, 1}, {(g->h + 2 * g->ph - g->kh) % g->s, (g->w + 2 * g->pw - g->kw) % g->s}, 1};
            vs_tensor *bo = vs_slice(b, 0, 0, g->o), *bc = vs_slice(b, 0, 0, g->c);
            vs_tensor *y = vs_conv2d(x, w, bo, &o), *dx = vs_conv_transpose2d(gy, w, bc, &o);
            vs_tensor *dw = vs_conv2d_weight_grad(x, gy, g->kh, g->kw, &o);
            ck_assert_msg(y && dx && dw, "geometry %d: %s", t, vs_last_error()->msg);
            ck_assert_int_eq(dx->shape[2], g->h);
            ck_assert_int_eq(dx->shape[3], g->w);
            expect_near("conv2d", t, y->data, r.y, r.my, y->size, TOL);
            expect_near("conv_transpose2d", t, dx->data, r.dx, r.mdx, dx->size, TOL);
            expect_near("conv2d_weight_grad", t, dw->data, r.dw, r.mdw, dw->size, TOL);
            if (t >= FIRST_WINOGRAD) expect_taken(g, ENGINES[e]);
            /* the phases called directly, where the engine takes them */
            if (vs_conv_phases_forward_fits(&f)) {
                taken[e][0]++;
                memset(y->data, 0xff, (size_t)y->size * sizeof(float));
                ck_assert(vs_conv_phases_forward(&f, x->data, w->data, bo->data, y->data));
                expect_near("phases forward", t, y->data, r.y, r.my, y->size, TOL);
            }
            if (vs_conv_phases_transpose_fits(&f)) {
                taken[e][1]++;
                memset(dx->data, 0xff, (size_t)dx->size * sizeof(float));
                ck_assert(vs_conv_phases_transpose(&f, gy->data, w->data, bc->data, dx->data));
                expect_near("phases transpose", t, dx->data, r.dx, r.mdx, dx->size, TOL);
            }
            if (vs_conv_phases_weight_grad_fits(&f)) {
                taken[e][2]++;
                memset(dw->data, 0xff, (size_t)dw->size * sizeof(float));
                ck_assert(vs_conv_phases_weight_grad(&f, x->data, gy->data, dw->data));
                expect_near("phases weight gradient", t, dw->data, r.dw, r.mdw, dw->size, TOL);
            }
            refs_free(&r);
            vs_scope_end();
        }
    vs_set_kernel_isa(VS_ISA_AUTO);
    vs_conv_phases_engine(default_engine);
    /* Winograd runs on every instruction set, the direct engine on AVX-512 only */
    for (int d = 0; d < 3; d++) {
        ck_assert_msg(taken[0][d] > 0, "direction %d never ran through Winograd", d);
        ck_assert_msg(taken[1][d] > 0 || vs_cpu_isa() != VS_ISA_AVX512, "direction %d never ran through the direct kernels", d);
        ck_assert_int_eq(taken[2][d], 0);
    }
    vs_set_avx512_split(-1);
}
END_TEST

/* An engine that cannot run (off) takes nothing: the ops keep their own kernels. */
START_TEST(test_phases_off_takes_nothing)
{
    vs_conv_phases_engine(VS_PHASES_OFF);
    for (int t = 0; t < N_GEOMS; t++) {
        const vs_conv_fast f = fast_of(&GEOMS[t]);
        ck_assert(!vs_conv_phases_forward_fits(&f) && !vs_conv_phases_transpose_fits(&f) && !vs_conv_phases_weight_grad_fits(&f));
    }
    /* shapes the map does not cover, whatever the engine */
    vs_conv_phases_engine(VS_PHASES_DIRECT);
    vs_conv_fast f = fast_of(&GEOMS[1]);
    f.kh = 5; /* odd kernel: padded only for Winograd */
    ck_assert(!vs_conv_phases_forward_fits(&f));
    f = fast_of(&GEOMS[FIRST_WINOGRAD + 4]); /* the k5 s2 one Winograd pads */
    ck_assert(!vs_conv_phases_forward_fits(&f));
    vs_conv_phases_engine(VS_PHASES_WINOGRAD);
    ck_assert(vs_conv_phases_forward_fits(&f));
    f.o = 16; /* too few output channels for the padded taps */
    ck_assert(!vs_conv_phases_forward_fits(&f));
    vs_conv_phases_engine(VS_PHASES_DIRECT);
    f = fast_of(&GEOMS[1]);
    f.sh = f.sw = 1; /* stride 1 */
    ck_assert(!vs_conv_phases_forward_fits(&f));
    f = fast_of(&GEOMS[1]);
    f.dh = 2; /* dilation */
    ck_assert(!vs_conv_phases_weight_grad_fits(&f));
    vs_conv_phases_engine(default_engine);
}
END_TEST

/* k6 (GANMEX) and k4 (WGAN-GP) stride 2, under each engine. */
START_TEST(test_phases_threads_bit_identical)
{
    vs_set_avx512_split(1); /* Winograd takes these on any machine as on Zen 4 (full-width cores decline some) */
    vs_conv_phases_engine(ENGINES[_i / 2]);
    const pgeom *g = &GEOMS[_i % 2 ? 12 : 1];
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(9, g->c, g->h, g->w), &R, 0, 1), *w = vs_tensor_randn(VS_SHAPE(g->o, g->c, g->kh, g->kw), &R, 0, 1);
    vs_tensor *b = vs_tensor_randn(VS_SHAPE(g->o), &R, 0, 1);
    const vs_conv_opts o = {.stride = {2, 2}, .padding = {g->ph, g->pw}};
    float *ref[3] = {NULL, NULL, NULL};
    for (int t = 1; t <= 2; t++) {
        vs_set_threads(t);
        vs_scope_begin();
        vs_tensor *y = vs_conv2d(x, w, b, &o);
        vs_tensor *outs[3] = {y, vs_conv2d_weight_grad(x, y, g->kh, g->kw, &o), vs_conv_transpose2d(y, w, NULL, &o)};
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
    vs_conv_phases_engine(default_engine);
    for (int q = 0; q < 3; q++) free(ref[q]);
    vs_tensor_free(x);
    vs_tensor_free(w);
    vs_tensor_free(b);
    vs_set_avx512_split(-1);
}
END_TEST

static vs_tensor *sq(vs_tensor *y) { return vs_mul(y, y); }

static vs_tensor *fn_conv_k6(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {2, 2}};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}

static vs_tensor *fn_conv_k4(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {1, 1}};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}

static vs_tensor *fn_conv_k5(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {2, 2}};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}

static vs_tensor *fn_transpose_k6(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {2, 2}, .output_padding = {1, 0}};
    return sq(vs_conv_transpose2d(x[0], x[1], x[2], &o));
}

/* First and second order through the ops with the phases on (WGAN-GP's penalty differentiates the
 * critic's input gradient: the transpose's derivatives are the forward and the weight gradient). */
START_TEST(test_phases_gradcheck)
{
    vs_set_avx512_split(1); /* Winograd takes these on any machine as on Zen 4 (full-width cores decline some) */
    vs_conv_phases_engine(ENGINES[_i]);
    expect_taken(&(pgeom){1, 4, 7, 8, 48, 6, 6, 2, 2, 2}, ENGINES[_i]);
    /* 4 input channels stack to 16, the fewest Winograd takes (with 64 in and out together) */
    vs_tensor *x[3] = {vs_tensor_rand(VS_SHAPE(1, 4, 7, 8), &R, -1, 1), vs_tensor_rand(VS_SHAPE(48, 4, 6, 6), &R, -0.3f, 0.3f),
                       vs_tensor_rand(VS_SHAPE(48), &R, -1, 1)};
    gradcheck_full("conv2d k6 s2 through the phases", fn_conv_k6, NULL, 3, x, 1e-3, 3e-2, true);
    for (int i = 0; i < 3; i++) vs_tensor_free(x[i]);
    /* 3 x 4 inputs to 7 x 8 outputs (output_padding 1, 0): the conv above seen from the other side */
    vs_tensor *t[3] = {vs_tensor_rand(VS_SHAPE(1, 48, 3, 4), &R, -1, 1), vs_tensor_rand(VS_SHAPE(48, 4, 6, 6), &R, -0.3f, 0.3f),
                       vs_tensor_rand(VS_SHAPE(4), &R, -1, 1)};
    gradcheck_full("conv_transpose2d k6 s2 through the phases", fn_transpose_k6, NULL, 3, t, 1e-3, 3e-2, true);
    for (int i = 0; i < 3; i++) vs_tensor_free(t[i]);
    /* k4 s2 p1 on 14 x 13: four 2x2 phase kernels, F(4x4, 2x2) */
    expect_taken(&(pgeom){1, 4, 14, 13, 48, 4, 4, 2, 1, 1}, ENGINES[_i]);
    vs_tensor *k[3] = {vs_tensor_rand(VS_SHAPE(1, 4, 14, 13), &R, -1, 1), vs_tensor_rand(VS_SHAPE(48, 4, 4, 4), &R, -0.3f, 0.3f),
                       vs_tensor_rand(VS_SHAPE(48), &R, -1, 1)};
    gradcheck_full("conv2d k4 s2 through the phases", fn_conv_k4, NULL, 3, k, 1e-3, 3e-2, true);
    for (int i = 0; i < 3; i++) vs_tensor_free(k[i]);
    /* k5 s2 p2 on 7 x 7: 4 x 4 outputs, the kernel padded to 6x6 under Winograd */
    expect_taken(&(pgeom){1, 16, 7, 7, 32, 5, 5, 2, 2, 2}, ENGINES[_i]);
    vs_tensor *f5[3] = {vs_tensor_rand(VS_SHAPE(1, 16, 7, 7), &R, -1, 1), vs_tensor_rand(VS_SHAPE(32, 16, 5, 5), &R, -0.3f, 0.3f),
                        vs_tensor_rand(VS_SHAPE(32), &R, -1, 1)};
    gradcheck_full("conv2d k5 s2 through the phases", fn_conv_k5, NULL, 3, f5, 1e-3, 3e-2, true);
    for (int i = 0; i < 3; i++) vs_tensor_free(f5[i]);
    vs_conv_phases_engine(default_engine);
    vs_set_avx512_split(-1);
}
END_TEST

static Suite *conv_phases_suite(void)
{
    vs_rng_seed(&R, 2020);
    default_engine = vs_conv_phases_engine(VS_PHASES_OFF);
    vs_conv_phases_engine(default_engine);
    Suite *s = suite_create("conv_phases");
    TCase *tc = vs_tcase(s, "phases", 120);
    tcase_add_test(tc, test_phases_against_definitions);
    tcase_add_test(tc, test_phases_off_takes_nothing);
    tcase_add_loop_test(tc, test_phases_threads_bit_identical, 0, 4); /* Winograd, direct; k6, k4 */
    tcase_add_loop_test(tc, test_phases_gradcheck, 0, 2);
    return s;
}

VS_TEST_MAIN(conv_phases_suite)
