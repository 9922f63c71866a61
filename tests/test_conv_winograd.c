/* test_conv_winograd.c - Winograd convolutions (autograd/conv_winograd.c) against double-precision
 * direct sums: the forward, the flipped forward (a stride-1 transpose) with bias and accumulate, and the
 * weight gradient, for 2x2, 3x3, 4x4, 5x5 and 7x7 kernels (dilated too), odd sizes (tiles cut by the border), padding 0-2, batches
 * of 1-3, channel counts that are not multiples of 16, under every instruction set; the error bar per
 * F(m, r) relative to sum |w x| (printed); 1 and 2 threads bit-identical; the ops dispatch to it and
 * VS_CONV_DIRECT switches it off. */
#include "autograd/conv_winograd.h"
#include "autograd/kernels.h"
#include "gradcheck.h"
#include "versus/threads.h"
#include "versus/versus.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static vs_rng R;

/* The error bar: max |y - exact| / sum |terms| per output (see conv_winograd.c for the measured ones). */
#define BAR 1e-5

typedef struct wgeom {
    int n, c, h, w, o, r, p, d; /* d: dilation (0: 1) */
} wgeom;

static const wgeom GEOMS[] = {
    /* n   c   h   w   o  r  p  d */
    {1, 16, 9, 11, 16, 3, 1, 1},  /* odd sizes: the last tiles hang past the border */
    {2, 19, 14, 14, 21, 3, 0, 1}, /* channels not multiples of 16, no padding */
    {3, 17, 7, 13, 33, 3, 2, 1},  /* more padding than a 'same' conv */
    {1, 32, 14, 14, 64, 5, 2, 1}, /* CEM's k5 on 14x14 */
    {2, 20, 11, 9, 17, 5, 1, 1},  /* 5x5, odd, padding 1 */
    {3, 16, 6, 5, 18, 5, 0, 1},   /* 5x5, two output rows, one column */
    {2, 24, 12, 12, 24, 3, 1, 1}, /* more than one block of tiles (2 x 9 tiles of 4x4 ... and 64 per block) */
    {1, 16, 40, 40, 16, 3, 1, 1}, /* 100 tiles: a full block and a partial one */
    {2, 64, 8, 8, 32, 2, 0, 1},   /* 2x2: a k4 s2 conv's stacked phases (7x7 outputs on 2 x 2 tiles of 4x4) */
    {3, 20, 9, 11, 17, 2, 1, 1},  /* 2x2, odd, padding 1 */
    {1, 16, 5, 4, 19, 2, 1, 1},   /* 2x2, 6 x 5 outputs: one tile row and column cut */
    {2, 64, 12, 12, 32, 3, 0, 2}, /* dilation 2: four phases of 4 x 4 outputs, one tile each */
    {2, 17, 13, 11, 20, 3, 1, 2}, /* dilation 2, odd: phases of 5 and 4 rows, 4 and 3 columns */
    {1, 16, 16, 17, 18, 3, 2, 3}, /* dilation 3, padding 2 */
    {2, 24, 15, 14, 25, 5, 2, 2}, /* 5x5, dilation 2 */
    {1, 16, 12, 11, 16, 2, 1, 2}, /* 2x2, dilation 2 */
    {2, 16, 20, 20, 48, 7, 1, 1}, /* 7x7: the sweep's k7 on 16 x 16 outputs (8 x 8 tiles of 2x2) */
    {1, 19, 13, 12, 20, 7, 3, 1}, /* 7x7, odd, 'same' padding */
    {3, 16, 9, 8, 17, 7, 0, 1},   /* 7x7, 3 x 2 outputs */
    {2, 32, 16, 17, 24, 4, 1, 1}, /* 4x4 (a k7 s2 conv's phases, padded to 8x8): 15 x 16 outputs on tiles of 3x3 */
    {1, 17, 9, 10, 20, 4, 2, 1},  /* 4x4, odd */
    {2, 20, 11, 11, 24, 3, 0, 1}, /* 3x3 on 9 x 9 outputs: F(3x3, 3x3) */
    {3, 16, 8, 6, 17, 3, 1, 1},   /* 3x3 on 8 x 6 outputs: F(3x3, 3x3) */
};
#define N_GEOMS (int)(sizeof GEOMS / sizeof GEOMS[0])

static const vs_isa ISAS[3] = {VS_ISA_SCALAR, VS_ISA_AVX2, VS_ISA_AVX512};

/* The F(m x m, r x r) the kernels run. */
#define N_KINDS 6
static const int KIND_M[N_KINDS] = {4, 4, 3, 3, 2, 2}, KIND_R[N_KINDS] = {2, 3, 3, 4, 5, 7};

static int dil(const wgeom *g) { return g->d ? g->d : 1; }

static int out_len(const wgeom *g, int in) { return in + 2 * g->p - dil(g) * (g->r - 1); }

static float xat(const wgeom *g, const float *x, int n, int c, int i, int j)
{
    if (i < 0 || i >= g->h || j < 0 || j >= g->w) return 0.0f;
    return x[((n * g->c + c) * g->h + i) * g->w + j];
}

static vs_conv_fast fast_of(const wgeom *g)
{
    return (vs_conv_fast){g->n, g->c, g->h, g->w, g->o, out_len(g, g->h), out_len(g, g->w), g->r, g->r, 1, 1, g->p, g->p, dil(g),
                          dil(g), false, 0, 0};
}

static float *rand_floats(int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t k = 0; k < n; k++) v[k] = 2 * vs_rng_uniformf(&R) - 1;
    return v;
}

/* Relative error of one element; worst kept in *worst. */
static void check_rel(const char *what, int t, int64_t at, float got, double want, double mag, double *worst)
{
    const double e = fabs(got - want) / (mag + 1e-30);
    if (e > *worst) *worst = e;
    ck_assert_msg(e <= BAR, "%s, geometry %d, element %lld: got %.9g, expected %.9g (error %.3g of sum |terms| %.4g)", what, t,
                  (long long)at, (double)got, want, e, mag);
}

/* The forward (with a bias; shifted by y0 = x0 = 1; flipped and accumulated onto y) and the weight gradient of one
 * geometry against double sums; the worst relative errors go to worst[r == 5]. */
static void check_geometry(int t, double *worst)
{
    const wgeom *g = &GEOMS[t];
    const vs_conv_fast f = fast_of(g);
    const int oh = (int)f.oh, ow = (int)f.ow, r = g->r;
    const int64_t nx = (int64_t)g->n * g->c * g->h * g->w, nw = (int64_t)g->o * g->c * r * r, ny = (int64_t)g->n * g->o * oh * ow;
    float *x = rand_floats(nx), *w = rand_floats(nw), *gy = rand_floats(ny), *b = rand_floats(g->o);
    float *y = malloc((size_t)ny * sizeof *y), *yf = rand_floats(ny), *dw = malloc((size_t)nw * sizeof *dw);
    float *wt = malloc((size_t)nw * sizeof *wt); /* w as [c, o, r, r] rotated: the flipped layout */
    for (int o = 0; o < g->o; o++)
        for (int c = 0; c < g->c; c++)
            for (int k = 0; k < r * r; k++) wt[((int64_t)c * g->o + o) * r * r + (r * r - 1 - k)] = w[((int64_t)o * g->c + c) * r * r + k];
    double *y0 = malloc((size_t)ny * sizeof *y0);
    for (int64_t k = 0; k < ny; k++) y0[k] = yf[k];
    vs_conv_fast ff = f, fs = f; /* fs: the output shifted by one row and column (y0 = x0 = 1) */
    ff.flip = true;
    fs.y0 = fs.x0 = 1, fs.oh = oh - 1, fs.ow = ow - 1;
    float *ys = malloc((size_t)(g->n * g->o * fs.oh * fs.ow + 1) * sizeof *ys);
    if (fs.oh > 0 && fs.ow > 0) ck_assert(vs_conv_winograd_forward(&fs, x, w, b, false, ys));
    ck_assert(vs_conv_winograd_forward(&f, x, w, b, false, y));
    ck_assert(vs_conv_winograd_forward(&ff, x, wt, b, true, yf));
    const bool wgrad = r != 7 || g->d < 2; /* 7x7: four 4x4 parts (F(7x7, 2x2) misses the bar), undilated */
    if (wgrad) ck_assert(vs_conv_winograd_weight_grad(&f, x, gy, dw));
    double *rw = calloc((size_t)nw, sizeof *rw), *mw = calloc((size_t)nw, sizeof *mw);
    for (int n = 0; n < g->n; n++)
        for (int o = 0; o < g->o; o++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    const int64_t at = ((int64_t)(n * g->o + o) * oh + i) * ow + j;
                    double sum = 0, mag = 0;
                    for (int c = 0; c < g->c; c++)
                        for (int ki = 0; ki < r; ki++)
                            for (int kj = 0; kj < r; kj++) {
                                const int64_t wi = ((int64_t)(o * g->c + c) * r + ki) * r + kj;
                                const double v = xat(g, x, n, c, i + ki * dil(g) - g->p, j + kj * dil(g) - g->p), p = w[wi] * v, q = gy[at] * v;
                                sum += p, mag += fabs(p);
                                rw[wi] += q, mw[wi] += fabs(q);
                            }
                    check_rel("forward", t, at, y[at], b[o] + sum, mag + fabs(b[o]), worst);
                    if (i > 0 && j > 0)
                        check_rel("shifted forward", t, at, ys[((int64_t)(n * g->o + o) * fs.oh + i - 1) * fs.ow + j - 1], b[o] + sum,
                                  mag + fabs(b[o]), worst);
                    /* accumulate: the bias is not added */
                    check_rel("flipped forward, accumulated", t, at, yf[at], y0[at] + sum, mag + fabs(y0[at]), worst);
                }
    for (int64_t k = 0; wgrad && k < nw; k++) check_rel("weight gradient", t, k, dw[k], rw[k], mw[k], worst + 2);
    free(x), free(w), free(gy), free(b), free(y), free(yf), free(dw), free(wt), free(y0), free(rw), free(mw), free(ys);
}

START_TEST(test_winograd_against_double_sums)
{
    for (int s = 0; s < 3; s++) {
        const vs_isa isa = vs_set_kernel_isa(ISAS[s]);
        double worst[2][N_KINDS] = {{0}}; /* forward, weight gradient; per F */
        for (int t = 0; t < N_GEOMS; t++) {
            double w2[3] = {0, 0, 0};
            check_geometry(t, w2);
            const vs_conv_fast f = fast_of(&GEOMS[t]);
            const int d = dil(&GEOMS[t]), m = vs_conv_winograd_tile(GEOMS[t].r, (f.oh + d - 1) / d, (f.ow + d - 1) / d);
            int k = 0;
            while (KIND_M[k] != m || KIND_R[k] != GEOMS[t].r) k++;
            worst[0][k] = fmax(worst[0][k], w2[0]);
            worst[1][k] = fmax(worst[1][k], w2[2]);
        }
        for (int d = 0; d < 2; d++) {
            printf("winograd %s %s:", vs_isa_name(isa), d ? "weight gradient" : "forward");
            for (int k = 0; k < N_KINDS; k++) {
                const int r = KIND_R[k], m = KIND_M[k];
                if (d == 0 || r != 7)
                    printf(" F(%dx%d,%dx%d) %.2e", d ? r : m, d ? r : m, d ? m : r, d ? m : r, worst[d][k]);
                else
                    printf(" 7x7 as 4x4 parts %.2e", worst[d][k]);
            }
            printf(" (max |error| / sum |terms|)\n");
        }
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

/* The hardcoded matrices are Cook-Toom's for the first alpha - 1 of the points 0, 1, -1, 1/2, -2, 2, -1/2 and infinity (derived here
 * again, in double: E_k[j][i] = p_j^i, E_k[inf][i] = [i = k-1]; B^T[j] = the coefficients of
 * prod_{l != j} (x - p_l); G = diag(1/f, 1) E_k, f_j = prod_{l != j} (p_j - p_l)), and the unrolled
 * transforms give the reference loops' bits. */
START_TEST(test_winograd_matrices_and_transforms)
{
    static const double p[7] = {0, 1, -1, 0.5, -2, 2, -0.5};
    for (int ri = 0; ri < N_KINDS; ri++) {
        const int r = KIND_R[ri], m = KIND_M[ri], al = m + r - 1, np = al - 1; /* np finite points */
        const int rows[5] = {al, m, al, al, r}, cols[5] = {al, al, r, m, al};
        for (int which = 0; which < 5; which++) {
            const float *P = vs_conv_winograd_matrix(m, r, which);
            ck_assert_ptr_nonnull(P);
            for (int a = 0; a < rows[which]; a++)
                for (int b = 0; b < cols[which]; b++) {
                    double want;
                    if (which == 0) { /* B^T[a][b]: coefficient of x^b in prod_{l != a} (x - p_l) */
                        double c[8] = {1, 0, 0, 0, 0, 0, 0, 0};
                        for (int l = 0; l < np; l++) {
                            if (l == a) continue;
                            for (int e = 7; e >= 0; e--) c[e] = (e > 0 ? c[e - 1] : 0) - p[l] * c[e];
                        }
                        want = c[b];
                    } else {
                        const bool transposed = which == 1 || which == 4; /* A^T = E^T */
                        const int j = transposed ? b : a, i = transposed ? a : b, k = transposed ? rows[which] : cols[which];
                        double e = j == np ? (i == k - 1) : pow(p[j], i), f = 1;
                        if (!transposed && j < np)
                            for (int l = 0; l < np; l++)
                                if (l != j) f *= p[j] - p[l];
                        want = e / f;
                    }
                    ck_assert_msg(P[a * cols[which] + b] == (float)want, "r %d matrix %d [%d][%d]: %.9g, expected %.9g", r, which,
                                  a, b, (double)P[a * cols[which] + b], want);
                }
            float X[64 * 16], Z[2][64 * 16];
            for (int k = 0; k < 64 * 16; k++) X[k] = 2 * vs_rng_uniformf(&R) - 1;
            vs_conv_winograd_transform(m, r, which, false, X, Z[0]);
            vs_conv_winograd_transform(m, r, which, true, X, Z[1]);
            ck_assert_msg(memcmp(Z[0], Z[1], (size_t)rows[which] * rows[which] * 16 * sizeof(float)) == 0,
                          "r %d transform %d: the unrolled code and the reference differ", r, which);
        }
    }
}
END_TEST

/* Blocks of a fixed tile count: 1 and 2 threads give the same bits (forward and weight gradient).
 * Two blocks run whole on 1 thread and spread over 2; five run whole on either; and the newer kinds. */
START_TEST(test_winograd_threads_bit_identical)
{
    const wgeom gs[6] = {
        {3, 24, 21, 19, 40, 3, 1, 1}, /* 3 x 6 x 5 tiles of 4x4: 90 (two blocks) */
        {9, 24, 21, 19, 40, 3, 1, 1}, /* 270 (five) */
        {5, 20, 16, 16, 24, 3, 0, 2}, /* dilation 2: 5 x 4 phases x 2 x 2 tiles */
        {6, 16, 12, 13, 33, 7, 1, 1}, /* 7x7: F(2x2, 7x7), the weight gradient in 4x4 parts */
        {6, 18, 11, 11, 20, 3, 0, 1}, /* 9 x 9 outputs: F(3x3, 3x3) */
        {4, 17, 14, 15, 19, 4, 1, 1}, /* 4x4: F(3x3, 4x4) */
    };
    for (int k = 0; k < 6; k++) {
        const wgeom g = gs[k];
        const int n = g.n;
        const vs_conv_fast f = fast_of(&g);
        const int64_t nx = (int64_t)g.n * g.c * g.h * g.w, nw = (int64_t)g.o * g.c * g.r * g.r, ny = (int64_t)g.n * g.o * f.oh * f.ow;
        float *x = rand_floats(nx), *w = rand_floats(nw), *gy = rand_floats(ny), *b = rand_floats(g.o);
        float *y[2], *dw[2];
        for (int t = 0; t < 2; t++) {
            vs_set_threads(t + 1);
            y[t] = malloc((size_t)ny * sizeof(float)), dw[t] = malloc((size_t)nw * sizeof(float));
            ck_assert(vs_conv_winograd_forward(&f, x, w, b, false, y[t]));
            ck_assert(vs_conv_winograd_weight_grad(&f, x, gy, dw[t]));
        }
        vs_set_threads(0);
        ck_assert_msg(memcmp(y[0], y[1], (size_t)ny * sizeof(float)) == 0, "n %d: forward differs", n);
        ck_assert_msg(memcmp(dw[0], dw[1], (size_t)nw * sizeof(float)) == 0, "n %d: weight gradient differs", n);
        free(x), free(w), free(gy), free(b), free(y[0]), free(y[1]), free(dw[0]), free(dw[1]);
    }
}
END_TEST

/* vs_conv2d, vs_conv_transpose2d and vs_conv2d_weight_grad take Winograd for a 3x3 layer of 32
 * channels (the results differ from the direct kernels' in the last bits but stay within the bar),
 * and VS_CONV_DIRECT gives the direct kernels' bits back; few channels and badly used tiles stay direct. */
START_TEST(test_winograd_ops_dispatch)
{
    vs_set_avx512_split(1); /* the dispatch measured on Zen 4 (full-width cores: test_winograd_full_width_dispatch) */
    vs_scope_begin();
    vs_tensor *x = vs_tensor_rand(VS_SHAPE(2, 32, 12, 12), &R, -1, 1);
    vs_tensor *w = vs_tensor_rand(VS_SHAPE(32, 32, 3, 3), &R, -1, 1);
    vs_tensor *gy = vs_tensor_rand(VS_SHAPE(2, 32, 12, 12), &R, -1, 1);
    const vs_conv_opts o = {{1, 1}, {1, 1}, {1, 1}, {0, 0}, 1};
    vs_tensor *out[2][3];
    for (int a = 0; a < 2; a++) {
        ck_assert_int_eq(vs_conv_set_algorithm(a ? VS_CONV_DIRECT : VS_CONV_AUTO), a ? VS_CONV_DIRECT : VS_CONV_AUTO);
        out[a][0] = vs_conv2d(x, w, NULL, &o);
        out[a][1] = vs_conv_transpose2d(gy, w, NULL, &o);
        out[a][2] = vs_conv2d_weight_grad(x, gy, 3, 3, &o);
        for (int k = 0; k < 3; k++) ck_assert_ptr_nonnull(out[a][k]);
    }
    const vs_conv_fast f = {2, 32, 12, 12, 32, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 0};
    ck_assert(!vs_conv_winograd_fits(&f));
    vs_conv_set_algorithm(VS_CONV_AUTO);
    ck_assert(vs_conv_winograd_fits(&f));
    vs_conv_fast few = f, ragged = f, k5 = f;
    few.c = 16; /* 16 + 32 */
    ragged.oh = ragged.ow = 5; /* 2 x 2 tiles of 4 x 4 for 25 outputs */
    k5.kh = k5.kw = 5, k5.c = k5.o = 24;
    ck_assert(!vs_conv_winograd_fits(&few) && !vs_conv_winograd_fits(&ragged) && !vs_conv_winograd_fits(&k5));
    /* 7x7: the sweep's 16x16x20x20 -> 48 (padding 1) forward, not its transpose (16 output channels), nor
     * 'same' padding on 14 x 14 (a quarter of the taps in the padding), nor its weight gradient (32 input
     * channels or more: four 4x4 parts) */
    const vs_conv_fast k7 = {16, 16, 20, 20, 48, 16, 16, 7, 7, 1, 1, 1, 1, 1, 1, false, 0, 0};
    const vs_conv_fast k7t = {16, 48, 16, 16, 16, 20, 20, 7, 7, 1, 1, 5, 5, 1, 1, true, 0, 0};
    const vs_conv_fast k7same = {16, 16, 14, 14, 48, 14, 14, 7, 7, 1, 1, 3, 3, 1, 1, false, 0, 0};
    vs_conv_fast k7c = k7;
    k7c.c = 32;
    vs_set_avx512_split(1); /* the rule measured on Zen 4 (and on any machine without AVX-512) */
    ck_assert(vs_conv_winograd_fits(&k7) && !vs_conv_winograd_weight_grad_fits(&k7) && vs_conv_winograd_weight_grad_fits(&k7c));
    ck_assert(!vs_conv_winograd_fits(&k7t) && !vs_conv_winograd_fits(&k7same));
    /* full-width AVX-512 cores: 7x7 needs 32 input channels as well (16 -> 48 runs the direct 48-channel tiles) */
    vs_set_avx512_split(0);
    ck_assert(vs_conv_winograd_fits(&k7c));
    if (vs_kernel_isa() == VS_ISA_AVX512) ck_assert(!vs_conv_winograd_fits(&k7));
    vs_set_avx512_split(-1);
    for (int k = 0; k < 3; k++) {
        double diff = 0, mag = 0;
        for (int64_t e = 0; e < out[0][k]->size; e++) {
            diff = fmax(diff, fabs(out[0][k]->data[e] - out[1][k]->data[e]));
            mag = fmax(mag, fabs(out[1][k]->data[e]));
        }
        ck_assert_msg(diff > 0, "op %d: Winograd gave the direct bits (was it dispatched?)", k);
        ck_assert_msg(diff <= 1e-4 * mag, "op %d: Winograd differs from the direct kernels by %g (largest %g)", k, diff, mag);
    }
    vs_scope_end();
    vs_set_avx512_split(-1);
}
END_TEST

/* On full-width AVX-512 cores (Zen 5) the direct kernels beat Winograd on fewer channels than on Zen 4:
 * 3x3 forwards need 32 output channels, 5x5 ones c o > 16 (c + o), 3x3 and 5x5 weight gradients 64 input
 * channels, 7x7 forwards 32 input channels. */
START_TEST(test_winograd_full_width_dispatch)
{
    if (vs_cpu_isa() != VS_ISA_AVX512) {
        printf("SKIP: test_winograd_full_width_dispatch: this CPU has no AVX-512\n");
        return;
    }
    vs_set_kernel_isa(VS_ISA_AVX512);
    const vs_conv_fast k3 = {64, 64, 14, 14, 16, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 0};
    const vs_conv_fast k5 = {32, 24, 14, 14, 48, 14, 14, 5, 5, 1, 1, 2, 2, 1, 1, false, 0, 0};
    vs_conv_fast k3o = k3, k5c = k5, k5w = k5;
    k3o.o = 32;
    k5c.c = 32, k5c.o = 64;     /* CEM's second conv: 32 x 64 > 16 x 96 */
    k5w.c = 64, k5w.o = 64;
    for (int split = 1; split >= 0; split--) {
        vs_set_avx512_split(split);
        ck_assert(vs_conv_winograd_fits(&k3) == (split == 1));
        ck_assert(vs_conv_winograd_fits(&k3o));
        ck_assert(vs_conv_winograd_fits(&k5) == (split == 1));
        ck_assert(vs_conv_winograd_fits(&k5c));
        ck_assert(vs_conv_winograd_weight_grad_fits(&k5c) == (split == 1));
        ck_assert(vs_conv_winograd_weight_grad_fits(&k5w));
    }
    vs_set_avx512_split(-1);
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

static vs_tensor *fn_conv(vs_tensor **x, void *c)
{
    vs_tensor *y = vs_conv2d(x[0], x[1], x[2], c);
    return vs_mul(y, y);
}

/* First and second derivatives of two convs of 32 -> 32 channels whose forward, input gradient (the
 * flipped forward) and weight gradient run Winograd (the 3x3 one runs in test_conv.c's "32 -> 32
 * channels, rows of 7"): a 5x5 on 4 x 4 (2 x 2 tiles of F(2x2, 5x5)), and a 3x3 with dilation 2 on 10 x
 * 10 (four dilation phases of 4 x 4 outputs, one tile of F(4x4, 3x3) each; its input gradient, 7 x 7 per
 * phase on 2 x 2 tiles, stays direct). */
START_TEST(test_winograd_gradcheck)
{
    vs_set_avx512_split(1); /* the dispatch measured on Zen 4 (full-width cores: test_winograd_full_width_dispatch) */
    const struct {
        const char *what;
        int h, k, p, d;
    } cases[2] = {{"conv2d k5 32 -> 32 (Winograd)", 4, 5, 2, 1}, {"conv2d k3 dilation 2, 32 -> 32 (Winograd)", 10, 3, 1, 2}};
    for (int t = 0; t < 2; t++) {
        const int h = cases[t].h, k = cases[t].k, p = cases[t].p, d = cases[t].d, oh = h + 2 * p - d * (k - 1);
        vs_tensor *x[3] = {vs_tensor_rand(VS_SHAPE(1, 32, h, h), &R, -1, 1), vs_tensor_rand(VS_SHAPE(32, 32, k, k), &R, -0.2f, 0.2f),
                           vs_tensor_rand(VS_SHAPE(32), &R, -1, 1)};
        const vs_conv_fast f = {1, 32, h, h, 32, oh, oh, k, k, 1, 1, p, p, d, d, false, 0, 0};
        ck_assert(vs_conv_winograd_fits(&f));
        vs_conv_opts o = {.stride = {1, 1}, .padding = {p, p}, .dilation = {d, d}};
        gradcheck(cases[t].what, fn_conv, &o, 3, x);
        for (int e = 0; e < 3; e++) vs_tensor_free(x[e]);
    }
    vs_set_avx512_split(-1);
}
END_TEST

/* conv2d(x, w) + b with w fixed (the context): 7x7 weights of 48 x 16 channels are too many to
 * difference one by one, and F(7x7, 2x2) does not run their gradient anyway. */
static vs_tensor *fn_conv_k7(vs_tensor **x, void *w)
{
    const vs_conv_opts o = {.stride = {1, 1}};
    vs_tensor *y = vs_conv2d(x[0], w, x[1], &o);
    return vs_mul(y, y);
}

/* First and second derivatives in x and the bias of a 7x7 conv2d of 16 -> 48 channels on 10 x 10 (2 x 2
 * tiles of F(2x2, 7x7) in the forward and in the Hessian products' forwards). */
START_TEST(test_winograd_gradcheck_k7)
{
    vs_tensor *x[2] = {vs_tensor_rand(VS_SHAPE(1, 16, 10, 10), &R, -1, 1), vs_tensor_rand(VS_SHAPE(48), &R, -1, 1)};
    vs_tensor *w = vs_tensor_rand(VS_SHAPE(48, 16, 7, 7), &R, -0.1f, 0.1f);
    const vs_conv_fast f = {1, 16, 10, 10, 48, 4, 4, 7, 7, 1, 1, 0, 0, 1, 1, false, 0, 0};
    vs_set_avx512_split(1); /* where 16 input channels take Winograd (not on full-width AVX-512 cores) */
    ck_assert(vs_conv_winograd_fits(&f));
    gradcheck("conv2d k7 16 -> 48 (Winograd forward)", fn_conv_k7, w, 2, x);
    vs_set_avx512_split(-1);
    for (int e = 0; e < 2; e++) vs_tensor_free(x[e]);
    vs_tensor_free(w);
}
END_TEST

static Suite *conv_winograd_suite(void)
{
    vs_rng_seed(&R, 2016);
    Suite *s = suite_create("conv_winograd");
    TCase *tc = vs_tcase(s, "winograd", 120);
    tcase_add_test(tc, test_winograd_matrices_and_transforms);
    tcase_add_test(tc, test_winograd_against_double_sums);
    tcase_add_test(tc, test_winograd_threads_bit_identical);
    tcase_add_test(tc, test_winograd_ops_dispatch);
    tcase_add_test(tc, test_winograd_full_width_dispatch);
    tcase_add_test(tc, test_winograd_gradcheck);
    tcase_add_test(tc, test_winograd_gradcheck_k7);
    return s;
}

VS_TEST_MAIN(conv_winograd_suite)
