/* test_conv.c - convolution, pooling and upsampling: forward values against naive double-precision
 * references over many geometries, the adjoint identities tying conv2d / conv_transpose2d /
 * conv2d_weight_grad together, first- and second-order gradient checks, a WGAN-GP gradient penalty
 * (double backward through a conv net), the DeepLIFT rescale rule of max_pool2d, shape errors. */
#include "autograd/kernels.h"
#include "gradcheck.h"
#include "versus/threads.h"

#include <math.h>
#include <string.h>

static vs_rng R;

static vs_tensor *rnd(int ndim, const int64_t *shape, float lo, float hi) { return vs_tensor_rand(ndim, shape, &R, lo, hi); }

/* Values spaced 0.1 apart in a scrambled order (no near ties for max pooling). */
static vs_tensor *spaced(int ndim, const int64_t *shape)
{
    vs_tensor *t = vs_tensor_new(ndim, shape);
    int64_t n = t->size;
    for (int64_t i = 0; i < n; i++) t->data[i] = (float)((i * 7919) % n) * 0.1f - 0.05f * (float)n;
    return t;
}

static void free_all(int n, vs_tensor **x)
{
    for (int i = 0; i < n; i++) vs_tensor_free(x[i]);
}

static double dot(const vs_tensor *a, const vs_tensor *b)
{
    ck_assert_int_eq(a->size, b->size);
    double s = 0;
    for (int64_t i = 0; i < a->size; i++) s += (double)a->data[i] * b->data[i];
    return s;
}

static double abs_dot(const vs_tensor *a, const vs_tensor *b)
{
    double s = 0;
    for (int64_t i = 0; i < a->size; i++) s += fabs((double)a->data[i] * b->data[i]);
    return s;
}

/* ---- naive references (double) --------------------------------------------------------------- */

typedef struct geom {
    int n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} geom;

static int out_len(int in, int k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

static vs_conv_opts opts_of(const geom *g, int oph, int opw)
{
    vs_conv_opts o = {{g->sh, g->sw}, {g->ph, g->pw}, {g->dh, g->dw}, {oph, opw}, g->groups};
    return o;
}

/* y[n,o,i,j] = b[o] + sum w[o,c',ki,kj] x[n, grp*cg + c', i*sh - ph + ki*dh, j*sw - pw + kj*dw] */
static double ref_conv_at(const geom *g, const float *x, const float *w, const float *b, int n, int o, int i, int j)
{
    int cg = g->c / g->groups, og = g->o / g->groups, grp = o / og;
    double s = b ? b[o] : 0;
    for (int c = 0; c < cg; c++)
        for (int ki = 0; ki < g->kh; ki++)
            for (int kj = 0; kj < g->kw; kj++) {
                int y = i * g->sh - g->ph + ki * g->dh, xx = j * g->sw - g->pw + kj * g->dw;
                if (y < 0 || y >= g->h || xx < 0 || xx >= g->w) continue;
                s += (double)w[((o * cg + c) * g->kh + ki) * g->kw + kj] * x[((n * g->c + grp * cg + c) * g->h + y) * g->w + xx];
            }
    return s;
}

/* conv_transpose2d straight from its definition: every x[n,ci,i,j] w[ci,co',ki,kj] lands on output
 * position (i*sh - ph + ki*dh, j*sw - pw + kj*dw) of channel grp*cog + co'.  Output [n, co, H, W]. */
static double *ref_conv_transpose(const float *x, const float *w, const float *b, int n, int ci, int h, int wd, int cog,
                                  int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw, int groups, int H, int W)
{
    int co = cog * groups, cig = ci / groups;
    double *y = calloc((size_t)n * co * H * W, sizeof *y);
    for (int a = 0; a < n; a++)
        for (int c = 0; c < co; c++)
            for (int k = 0; k < H * W; k++) y[(a * co + c) * H * W + k] = b ? b[c] : 0;
    for (int a = 0; a < n; a++)
        for (int c = 0; c < ci; c++)
            for (int i = 0; i < h; i++)
                for (int j = 0; j < wd; j++)
                    for (int oc = 0; oc < cog; oc++)
                        for (int ki = 0; ki < kh; ki++)
                            for (int kj = 0; kj < kw; kj++) {
                                int oy = i * sh - ph + ki * dh, ox = j * sw - pw + kj * dw;
                                if (oy < 0 || oy >= H || ox < 0 || ox >= W) continue;
                                int och = (c / cig) * cog + oc;
                                y[((a * co + och) * H + oy) * W + ox] +=
                                    (double)x[((a * ci + c) * h + i) * wd + j] * w[((c * cog + oc) * kh + ki) * kw + kj];
                            }
    return y;
}

static void expect_close(const char *what, const vs_tensor *t, const double *ref, double tol)
{
    for (int64_t i = 0; i < t->size; i++)
        ck_assert_msg(fabs(t->data[i] - ref[i]) <= tol * (1 + fabs(ref[i])), "%s[%lld]: got %.7g, expected %.7g", what, (long long)i,
                      (double)t->data[i], ref[i]);
}

/* Geometries: stride 1/2/3/4, padding 0-4, dilation 1/2, groups 1/2/4, odd sizes, kernels 1-7, batch 1-21
 * (the larger batches make several chunks of images with a remainder, see ops_conv.c). */
static const geom GEOMS[] = {
    /* n  c   h   w  o kh kw sh sw ph pw dh dw g */
    {1, 1, 5, 5, 1, 3, 3, 1, 1, 0, 0, 1, 1, 1},
    {3, 2, 7, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {2, 4, 9, 8, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2},
    {1, 4, 8, 9, 8, 5, 5, 2, 1, 2, 1, 1, 2, 4},
    {3, 3, 11, 7, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1},
    {2, 2, 10, 10, 4, 6, 6, 2, 2, 2, 2, 1, 1, 2},
    {1, 4, 6, 5, 4, 1, 3, 2, 2, 1, 0, 1, 2, 4},
    {3, 1, 13, 13, 2, 6, 6, 2, 2, 2, 2, 1, 1, 1},
    {2, 2, 5, 7, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2},
    {1, 2, 4, 4, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    {2, 6, 7, 7, 6, 3, 3, 2, 2, 0, 0, 2, 2, 2},
    {3, 4, 9, 6, 8, 5, 3, 2, 1, 2, 0, 1, 2, 4},
    {20, 2, 5, 6, 3, 3, 3, 1, 2, 1, 0, 1, 1, 1},
    {21, 2, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1}, /* 11 chunks: weight-gradient lanes of 1 and 2 chunks */
    /* At most 4 output channels, stride 1, groups 1: the direct kernels (conv_direct.c) - rows of
     * 1-7 pixels, 8, 9, 36 (two register blocks, a ragged end), kernels 1-7, dilation 2, padding
     * beyond the kernel's reach, several images and channels. */
    {2, 3, 5, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {3, 2, 9, 8, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1},
    {2, 5, 12, 40, 1, 7, 7, 1, 1, 3, 3, 1, 1, 1},
    {2, 2, 11, 13, 3, 3, 5, 1, 1, 2, 1, 2, 2, 1},
    {1, 3, 6, 9, 2, 2, 3, 1, 1, 3, 4, 1, 2, 1},
    {7, 4, 3, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1, 2},
    {2, 3, 11, 10, 2, 3, 4, 3, 3, 1, 2, 1, 1, 1},
    {3, 2, 9, 13, 3, 2, 5, 1, 4, 0, 2, 1, 2, 1},
    /* 16 or more output channels, whole register tiles mostly: the direct AVX-512 kernels
     * (conv_avx512.c) where the machine has them - 60 channels and 13-pixel rows (both ragged),
     * stride 2 x 3, dilation 2, a stem-like 7 x 7, and transposes of stride 1 (the same kernels with
     * the weights flipped) with 32 and 48 output channels, and 30 with a 5 x 5 kernel (more taps than
     * a vector: packed without the register transpose). */
    {2, 3, 9, 13, 60, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {3, 5, 10, 20, 64, 5, 3, 2, 3, 2, 1, 1, 1, 1},
    {2, 32, 8, 12, 32, 3, 3, 1, 1, 2, 1, 2, 2, 1},
    {2, 4, 6, 28, 32, 7, 7, 1, 1, 3, 3, 1, 1, 1},
    {3, 48, 7, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 30, 7, 14, 20, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    /* short sums (c kh kw < 256) with tiles 0.25-0.7 used, which take the AVX-512 kernels too
     * (vs_conv_avx512_min_use): 10 channels k1 s2 (forward and weight gradient), 64 channels in
     * rows of 9, 16 in rows of 12, 24 in rows of 8, and a stride-2 input gradient of 48 channels */
    {2, 24, 11, 11, 10, 1, 1, 2, 2, 0, 0, 1, 1, 1},
    {2, 8, 17, 17, 64, 5, 5, 2, 2, 2, 2, 1, 1, 1},
    {2, 6, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {1, 4, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {1, 48, 13, 13, 16, 5, 5, 2, 2, 1, 1, 1, 1, 1},
    /* tiles of 16 channels x 16 pixels (one row of 16, two of 8): rows of 16 at 16 channels,
     * rows of 8 at 10 channels stride 2, rows of 9 at stride 3, rows of 8 at dilation 2 */
    {1, 32, 16, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 20, 16, 16, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {1, 8, 26, 26, 16, 5, 5, 3, 3, 2, 2, 1, 1, 1},
    {2, 16, 12, 12, 32, 3, 3, 1, 1, 0, 0, 2, 2, 1},
    /* long sums (32 x 3 x 3) at tile use 0.63: 10 channels in two rows of 8 */
    {2, 32, 10, 10, 10, 3, 3, 1, 1, 0, 0, 1, 1, 1},
    /* transposes of stride 2 and 3 with 32 output channels: one AVX-512 conv per output phase
     * (k6 s2 p2 as GANMEX's, k4 s2 p1 as StarGAN's, k5 s3 with uneven phases) */
    {2, 32, 14, 14, 16, 6, 6, 2, 2, 2, 2, 1, 1, 1},
    {3, 32, 14, 14, 24, 4, 4, 2, 2, 1, 1, 1, 1, 1},
    {2, 32, 20, 21, 16, 5, 5, 3, 3, 1, 2, 1, 1, 1},
    /* The AVX-512 kernels skip the taps that read the border: every tile kind (wide, tall, pair)
     * at strides 1, 2 and 3, kernels 1-7 (even ones too), paddings 0-4, rows of 5, 6, 7, 12, 14 and
     * 28 pixels (ragged tiles: a last row of a two-row tile, columns past a row's end), a kernel
     * wider than the row (taps clipped at both ends), dilation 2; as forwards and as the flipped
     * (stride 1) and per-phase (stride 2, 3) transposes. */
    {2, 16, 7, 6, 32, 1, 1, 1, 1, 0, 0, 1, 1, 1},
    {2, 8, 6, 6, 64, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {1, 6, 13, 13, 32, 3, 3, 2, 2, 0, 0, 1, 1, 1},
    {2, 3, 10, 12, 32, 5, 5, 1, 1, 3, 3, 1, 1, 1},
    {2, 4, 17, 16, 64, 7, 7, 2, 2, 2, 2, 1, 1, 1},
    {1, 4, 5, 11, 32, 4, 6, 1, 1, 3, 2, 1, 1, 1},
    {2, 3, 5, 5, 64, 7, 7, 1, 1, 3, 3, 1, 1, 1},
    {1, 2, 9, 5, 64, 3, 5, 1, 1, 2, 4, 2, 2, 1},
    {1, 4, 14, 14, 64, 6, 6, 2, 2, 2, 2, 1, 1, 1},
    {1, 4, 20, 19, 32, 5, 5, 3, 3, 2, 2, 1, 1, 1},
    {1, 3, 27, 28, 32, 7, 7, 2, 2, 3, 3, 1, 1, 1},
    {2, 32, 7, 6, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 64, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 32, 13, 13, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {2, 64, 14, 13, 16, 4, 4, 2, 2, 1, 1, 1, 1, 1},
    /* The AVX-512 weight gradient's tiles: one or two input channels (a whole kernel row per tile,
     * two and four vectors of output channels, taps reaching past the image), channels that are
     * no multiple of 16 in the channels-last copies (20; 70 in blocks of 5 and 6), an odd width;
     * and a stride-2 transpose to 32 channels on rows of 14 (tall tiles: each half of a row's
     * pixels spread into dx's columns). */
    {2, 1, 28, 28, 32, 6, 6, 2, 2, 2, 2, 1, 1, 1},
    {2, 1, 27, 28, 64, 4, 4, 2, 2, 1, 1, 1, 1, 1},
    {2, 2, 9, 11, 48, 3, 3, 1, 1, 3, 0, 1, 1, 1},
    {3, 20, 7, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 70, 7, 7, 64, 3, 3, 1, 1, 0, 0, 1, 1, 1},
    {2, 32, 28, 28, 16, 4, 4, 2, 2, 1, 1, 1, 1, 1},
    /* The weight gradient's one-vector tiles (16 output channels x up to 24 input channels) with
     * long sums: 16 channels (48 inputs in blocks of 24), 10 (29 in blocks of 14 and 15, k7 s2),
     * 24 (two vectors: as well filled as one), 48 (three blocks of 16 on 20 inputs), and a first
     * layer's row tile of 24 columns (4 channels x 6 taps) to 16 channels */
    {2, 48, 13, 13, 16, 5, 5, 2, 2, 1, 1, 1, 1, 1},
    {2, 29, 15, 15, 10, 7, 7, 2, 2, 0, 0, 1, 1, 1},
    {2, 40, 9, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {2, 20, 10, 10, 48, 7, 7, 1, 1, 1, 1, 1, 1, 1},
    {2, 4, 12, 12, 16, 6, 6, 1, 1, 2, 2, 1, 1, 1},
    /* 16 images in the lanes (conv_images.c): 5-15 output channels, 16 images or more, sums of 64
     * taps or more - 10 channels k7 s2 on 11 x 11 (one block of 10), 7 channels on odd 9 x 13 with
     * 25 images (a second group of 9), 15 (two blocks of 8, one row unused) at stride 3 x 2 and
     * dilation 2 x 1, 13 (blocks of 7) with a padding wider than the kernel's reach */
    {16, 12, 11, 11, 10, 7, 7, 2, 2, 1, 1, 1, 1, 1},
    {25, 8, 9, 13, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {16, 9, 10, 12, 15, 3, 5, 3, 2, 2, 0, 2, 1, 1},
    {24, 6, 8, 8, 13, 4, 4, 1, 1, 2, 1, 1, 2, 1},
};
#define N_GEOMS (int)(sizeof GEOMS / sizeof GEOMS[0])

/* The forward and transpose tests run every geometry under each instruction set the machine has
 * (a missing one is lowered to the best present): the portable and AVX2 paths and the AVX-512 one. */
static const vs_isa ISAS[3] = {VS_ISA_SCALAR, VS_ISA_AVX2, VS_ISA_AVX512};
/* Variant k of N_ISA_VARIANTS: the three instruction sets, then AVX-512 once more tuned for the other
 * kind of core (split zmm FMAs or full-width: the tile choices differ, so both sets of tiles run on
 * any AVX-512 machine). */
#define N_ISA_VARIANTS 4
static void set_isa_variant(int k)
{
    vs_set_avx512_split(-1);
    vs_set_kernel_isa(ISAS[k < 3 ? k : 2]);
    if (k == 3) vs_set_avx512_split(!vs_avx512_split());
}

START_TEST(test_conv2d_forward)
{
    vs_conv_set_algorithm(VS_CONV_DIRECT); /* the direct kernels' bars; Winograd's: test_conv_winograd.c */
    for (int t = 0; t < N_GEOMS * N_ISA_VARIANTS; t++) {
        set_isa_variant(t / N_GEOMS);
        const geom *g = &GEOMS[t % N_GEOMS];
        vs_scope_begin();
        int oh = out_len(g->h, g->kh, g->sh, g->ph, g->dh), ow = out_len(g->w, g->kw, g->sw, g->pw, g->dw);
        vs_tensor *x = rnd(VS_SHAPE(g->n, g->c, g->h, g->w), -1, 1);
        vs_tensor *w = rnd(VS_SHAPE(g->o, g->c / g->groups, g->kh, g->kw), -1, 1);
        vs_tensor *b = rnd(VS_SHAPE(g->o), -1, 1);
        vs_conv_opts o = opts_of(g, 0, 0);
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            vs_tensor *y = vs_conv2d(x, w, with_bias ? b : NULL, &o);
            ck_assert_msg(y != NULL, "geometry %d: %s", t, vs_last_error()->msg);
            ck_assert_int_eq(y->shape[0], g->n);
            ck_assert_int_eq(y->shape[1], g->o);
            ck_assert_int_eq(y->shape[2], oh);
            ck_assert_int_eq(y->shape[3], ow);
            for (int n = 0; n < g->n; n++)
                for (int oc = 0; oc < g->o; oc++)
                    for (int i = 0; i < oh; i++)
                        for (int j = 0; j < ow; j++) {
                            double r = ref_conv_at(g, x->data, w->data, with_bias ? b->data : NULL, n, oc, i, j);
                            float v = y->data[((n * g->o + oc) * oh + i) * ow + j];
                            ck_assert_msg(fabs(v - r) <= 1e-5 * (1 + fabs(r)) * (1 + g->kh * g->kw / 8.0),
                                          "geometry %d at (%d,%d,%d,%d): %.7g vs %.7g", t, n, oc, i, j, (double)v, r);
                        }
        }
        vs_scope_end();
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
    vs_set_avx512_split(-1);
    vs_conv_set_algorithm(VS_CONV_AUTO);
}
END_TEST

/* conv_transpose2d against its definition, and as the exact adjoint of conv2d:
 * <conv2d(x, w), y> = <x, conv_transpose2d(y, w)>. */
START_TEST(test_conv_transpose2d_forward_and_adjoint)
{
    vs_conv_set_algorithm(VS_CONV_DIRECT); /* the direct kernels' bars; Winograd's: test_conv_winograd.c */
    for (int t = 0; t < N_GEOMS * N_ISA_VARIANTS; t++) {
        set_isa_variant(t / N_GEOMS);
        const geom *g = &GEOMS[t % N_GEOMS];
        vs_scope_begin();
        int oh = out_len(g->h, g->kh, g->sh, g->ph, g->dh), ow = out_len(g->w, g->kw, g->sw, g->pw, g->dw);
        /* output_padding bringing the transposed output back to h x w */
        int oph = (g->h + 2 * g->ph - g->dh * (g->kh - 1) - 1) % g->sh, opw = (g->w + 2 * g->pw - g->dw * (g->kw - 1) - 1) % g->sw;
        vs_tensor *x = rnd(VS_SHAPE(g->n, g->c, g->h, g->w), -1, 1);
        vs_tensor *w = rnd(VS_SHAPE(g->o, g->c / g->groups, g->kh, g->kw), -1, 1);
        vs_tensor *y = rnd(VS_SHAPE(g->n, g->o, oh, ow), -1, 1);
        vs_tensor *bc = rnd(VS_SHAPE(g->c), -1, 1);
        vs_conv_opts o = opts_of(g, oph, opw);
        vs_tensor *cx = vs_conv2d(x, w, NULL, &o);
        vs_tensor *ty = vs_conv_transpose2d(y, w, NULL, &o);
        ck_assert_msg(ty != NULL, "geometry %d: %s", t, vs_last_error()->msg);
        ck_assert_int_eq(ty->shape[1], g->c);
        ck_assert_int_eq(ty->shape[2], g->h);
        ck_assert_int_eq(ty->shape[3], g->w);
        double lhs = dot(cx, y), rhs = dot(x, ty);
        ck_assert_msg(fabs(lhs - rhs) <= 1e-5 * (1 + abs_dot(cx, y)), "geometry %d: <conv x, y> %.9g, <x, convT y> %.9g", t, lhs, rhs);

        /* Every output_padding allowed (0 .. stride-1), with a bias, against the definition. */
        for (int eh = 0; eh < g->sh; eh++)
            for (int ew = 0; ew < g->sw; ew++) {
                vs_conv_opts oe = opts_of(g, eh, ew);
                vs_tensor *te = vs_conv_transpose2d(y, w, bc, &oe);
                ck_assert_msg(te != NULL, "geometry %d: %s", t, vs_last_error()->msg);
                int H = (oh - 1) * g->sh - 2 * g->ph + g->dh * (g->kh - 1) + eh + 1;
                int W = (ow - 1) * g->sw - 2 * g->pw + g->dw * (g->kw - 1) + ew + 1;
                ck_assert_int_eq(te->shape[2], H);
                ck_assert_int_eq(te->shape[3], W);
                double *ref = ref_conv_transpose(y->data, w->data, bc->data, g->n, g->o, oh, ow, g->c / g->groups, g->kh, g->kw,
                                                 g->sh, g->sw, g->ph, g->pw, g->dh, g->dw, g->groups, H, W);
                expect_close("conv_transpose2d", te, ref, 2e-5);
                free(ref);
            }
        vs_scope_end();
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
    vs_set_avx512_split(-1);
    vs_conv_set_algorithm(VS_CONV_AUTO);
}
END_TEST

/* conv2d_weight_grad against the definition dw[o,c',ki,kj] = sum_{n,i,j} g[n,o,i,j] x[n,..] and the
 * identity <weight_grad(x, g), v> = <conv2d(x, v), g>, under each instruction set. */
START_TEST(test_weight_grad_forward)
{
    vs_conv_set_algorithm(VS_CONV_DIRECT); /* the direct kernels' bars; Winograd's: test_conv_winograd.c */
    for (int t = 0; t < N_GEOMS * N_ISA_VARIANTS; t++) {
        set_isa_variant(t / N_GEOMS);
        const geom *g = &GEOMS[t % N_GEOMS];
        vs_scope_begin();
        int oh = out_len(g->h, g->kh, g->sh, g->ph, g->dh), ow = out_len(g->w, g->kw, g->sw, g->pw, g->dw);
        int cg = g->c / g->groups, og = g->o / g->groups;
        vs_tensor *x = rnd(VS_SHAPE(g->n, g->c, g->h, g->w), -1, 1);
        vs_tensor *gy = rnd(VS_SHAPE(g->n, g->o, oh, ow), -1, 1);
        vs_tensor *v = rnd(VS_SHAPE(g->o, cg, g->kh, g->kw), -1, 1);
        vs_conv_opts o = opts_of(g, 0, 0);
        vs_tensor *dw = vs_conv2d_weight_grad(x, gy, g->kh, g->kw, &o);
        ck_assert_msg(dw != NULL, "geometry %d: %s", t, vs_last_error()->msg);
        ck_assert_int_eq(dw->shape[0], g->o);
        ck_assert_int_eq(dw->shape[1], cg);
        double *ref = calloc((size_t)dw->size, sizeof *ref);
        for (int oc = 0; oc < g->o; oc++)
            for (int c = 0; c < cg; c++)
                for (int ki = 0; ki < g->kh; ki++)
                    for (int kj = 0; kj < g->kw; kj++) {
                        double s = 0;
                        for (int n = 0; n < g->n; n++)
                            for (int i = 0; i < oh; i++)
                                for (int j = 0; j < ow; j++) {
                                    int yy = i * g->sh - g->ph + ki * g->dh, xx = j * g->sw - g->pw + kj * g->dw;
                                    if (yy < 0 || yy >= g->h || xx < 0 || xx >= g->w) continue;
                                    s += (double)gy->data[((n * g->o + oc) * oh + i) * ow + j] *
                                         x->data[((n * g->c + (oc / og) * cg + c) * g->h + yy) * g->w + xx];
                                }
                        ref[((oc * cg + c) * g->kh + ki) * g->kw + kj] = s;
                    }
        expect_close("conv2d_weight_grad", dw, ref, 5e-5);
        free(ref);
        vs_tensor *cv = vs_conv2d(x, v, NULL, &o);
        double lhs = dot(dw, v), rhs = dot(cv, gy);
        ck_assert_msg(fabs(lhs - rhs) <= 1e-5 * (1 + abs_dot(cv, gy)), "geometry %d: %.9g vs %.9g", t, lhs, rhs);
        vs_scope_end();
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
    vs_set_avx512_split(-1);
    vs_conv_set_algorithm(VS_CONV_AUTO);
}
END_TEST

/* The direct weight gradient sums whole 8-pixel blocks and masks the ragged end of a row: an input
 * pixel that no product of a tap reaches must not reach that tap's gradient, not even as 0 * inf.
 * x is 1 x 12 with inf in its last column; a 1 x 3 kernel gives 10 outputs, and only tap 2 (output
 * 9) reads column 11. */
START_TEST(test_direct_weight_grad_isolates_pixels)
{
    vs_scope_begin();
    float xs[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, INFINITY}, gs[10];
    for (int j = 0; j < 10; j++) gs[j] = 0.5f + (float)j;
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 1, 1, 12), xs), *gy = vs_tensor_from(VS_SHAPE(1, 1, 1, 10), gs);
    vs_tensor *dw = vs_conv2d_weight_grad(x, gy, 1, 3, NULL);
    ck_assert_ptr_nonnull(dw);
    for (int kj = 0; kj < 2; kj++) {
        double want = 0;
        for (int j = 0; j < 10; j++) want += (double)gs[j] * xs[j + kj];
        ck_assert_msg(fabs(dw->data[kj] - want) <= 1e-5 * want, "tap %d: got %g, expected %g", kj, (double)dw->data[kj], want);
    }
    ck_assert(isinf(dw->data[2]));
    vs_scope_end();
}
END_TEST

/* ---- pooling forward values ------------------------------------------------------------------ */

START_TEST(test_pool_forward)
{
    static const int cfg[][5] = {/* h w k s p */ {5, 5, 3, 2, 1}, {6, 7, 2, 2, 0}, {7, 5, 3, 1, 1}, {8, 8, 4, 3, 2},
                                 {5, 6, 3, 0, 0}, {9, 4, 5, 2, 2}};
    for (int t = 0; t < (int)(sizeof cfg / sizeof cfg[0]); t++) {
        int h = cfg[t][0], w = cfg[t][1], k = cfg[t][2], s = cfg[t][3] ? cfg[t][3] : k, p = cfg[t][4];
        int oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
        vs_scope_begin();
        vs_tensor *x = rnd(VS_SHAPE(3, 2, h, w), -2, 1);
        vs_tensor *mx = vs_max_pool2d(x, k, cfg[t][3], p), *av = vs_avg_pool2d(x, k, cfg[t][3], p);
        ck_assert_msg(mx && av, "config %d: %s", t, vs_last_error()->msg);
        ck_assert_int_eq(mx->shape[2], oh);
        ck_assert_int_eq(mx->shape[3], ow);
        ck_assert_int_eq(av->shape[2], oh);
        for (int pl = 0; pl < 6; pl++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double m = -INFINITY, sum = 0;
                    for (int a = 0; a < k; a++)
                        for (int b = 0; b < k; b++) {
                            int yy = i * s - p + a, xx = j * s - p + b;
                            /* padding: -inf for max, 0 (but counted) for the average */
                            double v = yy < 0 || yy >= h || xx < 0 || xx >= w ? -INFINITY : x->data[(pl * h + yy) * w + xx];
                            m = fmax(m, v);
                            sum += isinf(v) ? 0 : v;
                        }
                    int o = (pl * oh + i) * ow + j;
                    ck_assert_float_eq(mx->data[o], (float)m);
                    ck_assert_float_near(av->data[o], sum / (k * k), 1e-6);
                }
        vs_scope_end();
    }
    /* upsampling copies each pixel into a scale x scale block */
    vs_scope_begin();
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 2, 2, 3), (float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    vs_tensor *u = vs_upsample_nearest2d(x, 3);
    ck_assert_int_eq(u->shape[2], 6);
    ck_assert_int_eq(u->shape[3], 9);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 9; j++) ck_assert_float_eq(u->data[(c * 6 + i) * 9 + j], x->data[(c * 2 + i / 3) * 3 + j / 3]);
    vs_scope_end();
}
END_TEST

/* Ties: the gradient goes to the first maximum of each window (row-major order). */
START_TEST(test_max_pool_ties)
{
    vs_scope_begin();
    vs_tensor *x = vs_tensor_from(VS_SHAPE(1, 1, 2, 4), (float[]){3, 1, 2, 2, 3, 3, 2, 2});
    vs_set_requires_grad(x, true);
    vs_tensor *y = vs_max_pool2d(x, 2, 2, 0), *gx;
    ck_assert_float_eq(y->data[0], 3);
    ck_assert_float_eq(y->data[1], 2);
    ck_assert_int_eq(vs_grad(1, &y, (vs_tensor *[]){vs_tensor_from(VS_SHAPE(1, 1, 1, 2), (float[]){5, 7})}, 1, &x, &gx, false), VS_OK);
    static const float want[] = {5, 0, 7, 0, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) ck_assert_float_eq(gx->data[i], want[i]);
    vs_scope_end();
}
END_TEST

/* ---- gradient checks (first and second order) --------------------------------------------------- */

/* Squaring the output makes the second-order check exercise each backward rule's own backward. */
static vs_tensor *sq(vs_tensor *y) { return vs_mul(y, y); }

static vs_tensor *fn_conv2d_gd(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {{2, 1}, {1, 2}, {2, 1}, {0, 0}, 2};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}
START_TEST(test_grad_conv2d_groups_dilation)
{
    vs_tensor *x[3] = {rnd(VS_SHAPE(2, 4, 6, 5), -1, 1), rnd(VS_SHAPE(4, 2, 3, 3), -1, 1), rnd(VS_SHAPE(4), -1, 1)};
    gradcheck("conv2d groups+dilation", fn_conv2d_gd, NULL, 3, x);
    free_all(3, x);
}
END_TEST

static vs_tensor *fn_conv2d_plain(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1};
    return sq(vs_conv2d(x[0], x[1], NULL, &o));
}
START_TEST(test_grad_conv2d_1x1)
{
    vs_tensor *x[2] = {rnd(VS_SHAPE(2, 3, 3, 4), -1, 1), rnd(VS_SHAPE(2, 3, 1, 1), -1, 1)};
    gradcheck("conv2d 1x1", fn_conv2d_plain, NULL, 2, x);
    free_all(2, x);
}
END_TEST

static vs_tensor *fn_conv_transpose(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {{2, 2}, {1, 0}, {1, 2}, {1, 1}, 2};
    return sq(vs_conv_transpose2d(x[0], x[1], x[2], &o));
}
/* Shapes that the AVX-512 kernels take on such machines (elsewhere the GEMM path): conv2d with 24 -> 32
 * channels on rows of 14 (forward, flipped-weight input gradient, weight gradient), 32 -> 32 on
 * rows of 7, and a k4 s2 conv_transpose2d to 32 channels (one conv per output phase). */
static vs_tensor *fn_conv2d_wide(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {1, 1}, .padding = {1, 1}};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}
static vs_tensor *fn_conv2d_wide_s2(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {1, 1}};
    return sq(vs_conv2d(x[0], x[1], x[2], &o));
}
static vs_tensor *fn_conv_transpose_wide(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {.stride = {2, 2}, .padding = {1, 1}};
    return sq(vs_conv_transpose2d(x[0], x[1], x[2], &o));
}
START_TEST(test_grad_conv_avx512_shapes)
{
    vs_tensor *x[3] = {rnd(VS_SHAPE(1, 24, 2, 14), -1, 1), rnd(VS_SHAPE(32, 24, 3, 3), -0.3f, 0.3f), rnd(VS_SHAPE(32), -1, 1)};
    gradcheck("conv2d 24 -> 32 channels", fn_conv2d_wide, NULL, 3, x);
    free_all(3, x);
    /* 32 -> 32 channels on 3 rows of 7: two-row tiles, the second one half outside the image, and
     * every tap clipped at a border somewhere (forward, input gradient and weight gradient) */
    vs_tensor *p[3] = {rnd(VS_SHAPE(1, 32, 3, 7), -1, 1), rnd(VS_SHAPE(32, 32, 3, 3), -0.3f, 0.3f), rnd(VS_SHAPE(32), -1, 1)};
    gradcheck("conv2d 32 -> 32 channels, rows of 7", fn_conv2d_wide, NULL, 3, p);
    free_all(3, p);
    /* one input channel, stride 2: the weight gradient's row tiles (a kernel row's taps per tile) */
    vs_tensor *r[3] = {rnd(VS_SHAPE(1, 1, 9, 10), -1, 1), rnd(VS_SHAPE(32, 1, 4, 4), -0.3f, 0.3f), rnd(VS_SHAPE(32), -1, 1)};
    gradcheck("conv2d 1 -> 32 channels, k4 s2", fn_conv2d_wide_s2, NULL, 3, r);
    free_all(3, r);
    vs_tensor *t[3] = {rnd(VS_SHAPE(1, 8, 2, 7), -1, 1), rnd(VS_SHAPE(8, 32, 4, 4), -0.3f, 0.3f), rnd(VS_SHAPE(32), -1, 1)};
    gradcheck("conv_transpose2d k4 s2 to 32 channels", fn_conv_transpose_wide, NULL, 3, t);
    free_all(3, t);
    /* 16 images, 8 -> 10 channels: the forward (and the second order's forwards) with the images in
     * the lanes (conv_images.c) */
    vs_tensor *u[3] = {rnd(VS_SHAPE(16, 8, 3, 3), -1, 1), rnd(VS_SHAPE(10, 8, 3, 3), -0.3f, 0.3f), rnd(VS_SHAPE(10), -1, 1)};
    gradcheck("conv2d 16 images, 8 -> 10 channels", fn_conv2d_wide, NULL, 3, u);
    free_all(3, u);
}
END_TEST

START_TEST(test_grad_conv_transpose2d)
{
    vs_tensor *x[3] = {rnd(VS_SHAPE(2, 4, 3, 3), -1, 1), rnd(VS_SHAPE(4, 1, 3, 3), -1, 1), rnd(VS_SHAPE(2), -1, 1)};
    gradcheck("conv_transpose2d output_padding", fn_conv_transpose, NULL, 3, x);
    free_all(3, x);
}
END_TEST

static vs_tensor *fn_weight_grad(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o = {{2, 1}, {1, 1}, {1, 1}, {0, 0}, 2};
    return sq(vs_conv2d_weight_grad(x[0], x[1], 3, 3, &o));
}
START_TEST(test_grad_weight_grad)
{
    /* x [2,2,5,5] -> g [2,4,3,5] with stride (2,1), padding 1, kernel 3 */
    vs_tensor *x[2] = {rnd(VS_SHAPE(2, 2, 5, 5), -1, 1), rnd(VS_SHAPE(2, 4, 3, 5), -1, 1)};
    gradcheck("conv2d_weight_grad", fn_weight_grad, NULL, 2, x);
    free_all(2, x);
}
END_TEST

static vs_tensor *fn_max_pool_overlap(vs_tensor **x, void *c)
{
    (void)c;
    return sq(vs_max_pool2d(x[0], 3, 2, 1));
}
static vs_tensor *fn_max_pool_odd(vs_tensor **x, void *c)
{
    (void)c;
    return sq(vs_max_pool2d(x[0], 2, 0, 0));
}
START_TEST(test_grad_max_pool)
{
    vs_tensor *x[1] = {spaced(VS_SHAPE(2, 2, 5, 5))};
    gradcheck("max_pool2d k3 s2 p1", fn_max_pool_overlap, NULL, 1, x);
    free_all(1, x);
    x[0] = spaced(VS_SHAPE(1, 3, 5, 7));
    gradcheck("max_pool2d k2 odd sizes", fn_max_pool_odd, NULL, 1, x);
    free_all(1, x);
}
END_TEST

static vs_tensor *fn_avg_pool(vs_tensor **x, void *c)
{
    (void)c;
    return sq(vs_avg_pool2d(x[0], 3, 2, 1));
}
START_TEST(test_grad_avg_pool)
{
    vs_tensor *x[1] = {rnd(VS_SHAPE(2, 2, 5, 6), -1, 1)};
    gradcheck("avg_pool2d padding", fn_avg_pool, NULL, 1, x);
    free_all(1, x);
}
END_TEST

static vs_tensor *fn_upsample(vs_tensor **x, void *c)
{
    int s = *(int *)c;
    return sq(vs_upsample_nearest2d(x[0], s));
}
START_TEST(test_grad_upsample)
{
    for (int s = 2; s <= 3; s++) {
        vs_tensor *x[1] = {rnd(VS_SHAPE(2, 2, 3, 2), -1, 1)};
        gradcheck("upsample_nearest2d", fn_upsample, &s, 1, x);
        free_all(1, x);
    }
}
END_TEST

/* A small net mixing every op: conv -> tanh -> max_pool -> upsample -> conv_transpose -> avg_pool. */
static vs_tensor *fn_chain(vs_tensor **x, void *c)
{
    (void)c;
    vs_conv_opts o1 = {{1, 1}, {1, 1}, {1, 1}, {0, 0}, 1}, o2 = {{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1};
    vs_tensor *h = vs_tanh(vs_conv2d(x[0], x[1], NULL, &o1));
    h = vs_upsample_nearest2d(vs_max_pool2d(h, 2, 2, 0), 2);
    return vs_avg_pool2d(vs_tanh(vs_conv_transpose2d(h, x[2], NULL, &o2)), 2, 2, 1);
}
START_TEST(test_grad_chain)
{
    vs_tensor *x[3] = {rnd(VS_SHAPE(1, 2, 4, 4), -1, 1), rnd(VS_SHAPE(3, 2, 3, 3), -0.5f, 0.5f), rnd(VS_SHAPE(3, 2, 3, 3), -0.5f, 0.5f)};
    gradcheck_full("conv chain", fn_chain, NULL, 3, x, 1e-3, 3e-2, true);
    free_all(3, x);
}
END_TEST

/* ---- WGAN-GP: penalty = mean_i (||dD(x_i)/dx_i|| - 1)^2, D = conv -> leaky_relu -> conv -> mean ---- */

typedef struct wgan_ctx {
    vs_tensor *x;
} wgan_ctx;

static const vs_conv_opts WG1 = {{2, 2}, {1, 1}, {1, 1}, {0, 0}, 1}, WG2 = {{1, 1}, {1, 1}, {1, 1}, {0, 0}, 1};

static vs_tensor *fn_wgan_gp(vs_tensor **p, void *c)
{
    wgan_ctx *ctx = c;
    bool prev = vs_set_grad_enabled(true); /* the penalty needs the graph even when the caller does not */
    vs_tensor *x = ctx->x;
    vs_tensor *h = vs_leaky_relu(vs_conv2d(x, p[0], p[1], &WG1), 0.2f);
    vs_tensor *d = vs_mean(vs_conv2d(h, p[2], p[3], &WG2), VS_AXIS(1) | VS_AXIS(2) | VS_AXIS(3), false); /* [n] */
    vs_tensor *total = vs_sum(d, VS_ALL_AXES, false), *gx = NULL;
    ck_assert_int_eq(vs_grad(1, &total, NULL, 1, &x, &gx, true), VS_OK);
    vs_tensor *norm = vs_sqrt(vs_sum(vs_mul(gx, gx), VS_AXIS(1) | VS_AXIS(2) | VS_AXIS(3), false));
    vs_tensor *pen = vs_mean(vs_pow_scalar(vs_add_scalar(norm, -1.0f), 2.0f), VS_ALL_AXES, false);
    vs_set_grad_enabled(prev);
    return pen;
}

START_TEST(test_wgan_gp_double_backward)
{
    int64_t live0 = vs_live_tensors();
    wgan_ctx ctx = {rnd(VS_SHAPE(2, 2, 6, 6), -1, 1)};
    vs_set_requires_grad(ctx.x, true);
    /* Keep the first layer's pre-activations away from leaky_relu's kink, where the penalty jumps:
     * draw weights until every |pre-activation| exceeds the finite-difference reach. */
    vs_tensor *p[4] = {NULL, NULL, NULL, NULL};
    float margin = 0;
    for (int tries = 0; tries < 200 && margin < 0.02f; tries++) {
        free_all(2, p);
        p[0] = rnd(VS_SHAPE(3, 2, 3, 3), -0.6f, 0.6f);
        p[1] = rnd(VS_SHAPE(3), -0.3f, 0.3f);
        bool prev = vs_set_grad_enabled(false);
        vs_tensor *pre = vs_conv2d(ctx.x, p[0], p[1], &WG1);
        vs_set_grad_enabled(prev);
        margin = INFINITY;
        for (int64_t i = 0; i < pre->size; i++) margin = fminf(margin, fabsf(pre->data[i]));
        vs_tensor_free(pre);
    }
    ck_assert_float_ge(margin, 0.02f);
    p[2] = rnd(VS_SHAPE(1, 3, 3, 3), -0.6f, 0.6f);
    p[3] = rnd(VS_SHAPE(1), -0.3f, 0.3f);
    /* The penalty is visibly away from its minimum, so its weight gradient is not trivially 0. */
    vs_scope_begin();
    float pen = vs_item(fn_wgan_gp(p, &ctx));
    ck_assert_float_gt(pen, 1e-3);
    vs_scope_end();
    gradcheck_full("wgan-gp penalty", fn_wgan_gp, &ctx, 4, p, 1e-3, 2e-2, false);
    free_all(4, p);
    vs_tensor_free(ctx.x);
    ck_assert_int_eq(vs_live_tensors(), live0);
}
END_TEST

/* ---- DeepLIFT rescale rule of max_pool2d ---------------------------------------------------------- */

START_TEST(test_max_pool_rescale)
{
    vs_scope_begin();
    /* batch [x0, x1, ref0, ref1], overlapping windows so one input can win several */
    vs_tensor *x = rnd(VS_SHAPE(4, 2, 5, 5), -1, 1);
    vs_set_requires_grad(x, true);
    vs_backward_rule prev = vs_set_backward_rule(VS_RULE_RESCALE);
    vs_tensor *y = vs_max_pool2d(x, 3, 2, 1);
    vs_set_backward_rule(prev);
    int64_t hx = x->size / 2, hy = y->size / 2, px = hx / 2, py = hy / 2;
    vs_tensor *w = vs_zeros_like(y), *gx;
    for (int64_t j = 0; j < hy; j++) w->data[j] = 1;
    ck_assert_int_eq(vs_grad(1, &y, &w, 1, &x, &gx, false), VS_OK);
    /* summation-to-delta per sample: sum_i m_i (x_i - ref_i) = sum_w (y_w - y_ref_w) */
    for (int n = 0; n < 2; n++) {
        double lhs = 0, rhs = 0;
        for (int64_t i = n * px; i < (n + 1) * px; i++) lhs += (double)gx->data[i] * (x->data[i] - x->data[i + hx]);
        for (int64_t j = n * py; j < (n + 1) * py; j++) rhs += (double)y->data[j] - y->data[j + hy];
        ck_assert_msg(fabs(lhs - rhs) < 1e-5, "sample %d: sum m dx = %.8g, sum dy = %.8g", n, lhs, rhs);
        ck_assert(fabs(rhs) > 0.1); /* a real delta, not 0 = 0 */
    }
    /* the rule differs from the gradient (which sends 1 per window to the argmax) */
    vs_tensor *yg = vs_max_pool2d(x, 3, 2, 1), *gg;
    ck_assert_int_eq(vs_grad(1, &yg, &w, 1, &x, &gg, false), VS_OK);
    double diff = 0;
    for (int64_t i = 0; i < hx; i++) diff += fabs(gg->data[i] - gx->data[i]);
    ck_assert(diff > 0.1);
    /* the reference half gets the same multiplier at the same positions */
    vs_tensor *ones = vs_ones_like(y), *g2;
    ck_assert_int_eq(vs_grad(1, &y, &ones, 1, &x, &g2, false), VS_OK);
    for (int64_t i = 0; i < hx; i++) {
        ck_assert_float_eq(g2->data[i + hx], g2->data[i]);
        ck_assert_float_eq(g2->data[i], gx->data[i]);
    }
    vs_scope_end();

    /* Zero delta at the argmax: those windows fall back to the gradient rule (g to the argmax).
     * Reference = input except at the top-left window's maximum, lowered by 0.5. */
    vs_scope_begin();
    vs_tensor *z = rnd(VS_SHAPE(2, 1, 4, 4), -1, 1);
    memcpy(z->data + 16, z->data, 16 * sizeof(float));
    static const int win[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
    int arg[4];
    for (int k = 0; k < 4; k++) {
        arg[k] = win[k][0];
        for (int e = 1; e < 4; e++)
            if (z->data[win[k][e]] > z->data[arg[k]]) arg[k] = win[k][e];
    }
    z->data[16 + arg[0]] -= 0.5f;
    vs_set_requires_grad(z, true);
    prev = vs_set_backward_rule(VS_RULE_RESCALE);
    vs_tensor *yz = vs_max_pool2d(z, 2, 2, 0);
    vs_set_backward_rule(prev);
    const float gw[4] = {2, 3, 5, 7};
    vs_tensor *wz = vs_tensor_from(VS_SHAPE(2, 1, 2, 2), (float[]){2, 3, 5, 7, 0, 0, 0, 0}), *gz;
    ck_assert_int_eq(vs_grad(1, &yz, &wz, 1, &z, &gz, false), VS_OK);
    float want[16] = {0};
    for (int k = 0; k < 4; k++) want[arg[k]] = gw[k];
    float ref_max = -INFINITY;
    for (int e = 0; e < 4; e++) ref_max = fmaxf(ref_max, z->data[16 + win[0][e]]);
    want[arg[0]] = 2 * (z->data[arg[0]] - ref_max) / 0.5f;
    ck_assert_float_near(yz->data[0] - yz->data[4], z->data[arg[0]] - ref_max, 1e-7);
    for (int i = 0; i < 16; i++) ck_assert_float_near(gz->data[i], want[i], 1e-5);
    ck_assert(want[arg[0]] != 2.0f); /* the rescaled window really differs from the gradient rule */
    vs_scope_end();
}
END_TEST

/* ---- shape and argument errors -------------------------------------------------------------------- */

static void expect_error(vs_tensor *t, const char *needle)
{
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(vs_last_error()->msg, needle) != NULL, "message '%s' lacks '%s'", vs_last_error()->msg, needle);
}

START_TEST(test_errors)
{
    vs_scope_begin();
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(1, 3, 5, 5));
    vs_conv_opts o = {{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1};
    expect_error(vs_conv2d(x, vs_tensor_zeros(VS_SHAPE(2, 1, 3, 3)), NULL, &o), "conv2d: input has 3 channels, weight expects 1");
    expect_error(vs_conv2d(x, vs_tensor_zeros(VS_SHAPE(2, 3, 7, 7)), NULL, &o), "output would be empty");
    expect_error(vs_conv2d(x, vs_tensor_zeros(VS_SHAPE(2, 3, 3, 3)), vs_tensor_zeros(VS_SHAPE(3)), &o), "bias must be [2]");
    expect_error(vs_conv2d(vs_tensor_zeros(VS_SHAPE(3, 5, 5)), vs_tensor_zeros(VS_SHAPE(2, 3, 3, 3)), NULL, &o),
                 "input must be [n,c,h,w]");
    vs_conv_opts og = o;
    og.groups = 2;
    expect_error(vs_conv2d(x, vs_tensor_zeros(VS_SHAPE(2, 1, 3, 3)), NULL, &og), "do not both split into 2 groups");
    vs_conv_opts on = o;
    on.stride[0] = -1;
    expect_error(vs_conv2d(x, vs_tensor_zeros(VS_SHAPE(2, 3, 3, 3)), NULL, &on), "negative");
    vs_conv_opts ot = {{2, 2}, {0, 0}, {1, 1}, {2, 0}, 1};
    expect_error(vs_conv_transpose2d(x, vs_tensor_zeros(VS_SHAPE(3, 2, 3, 3)), NULL, &ot), "must be smaller than the stride");
    expect_error(vs_conv_transpose2d(x, vs_tensor_zeros(VS_SHAPE(2, 2, 3, 3)), NULL, &o), "input has 3 channels, weight expects 2");
    expect_error(vs_conv2d_weight_grad(x, vs_tensor_zeros(VS_SHAPE(1, 2, 4, 3)), 3, 3, &o), "output gradient is 4 x 3");
    expect_error(vs_conv2d_weight_grad(x, vs_tensor_zeros(VS_SHAPE(1, 2, 3, 3)), 0, 3, &o), "kernel 0 x 3");
    expect_error(vs_max_pool2d(x, 2, 2, 2), "padding 2 exceeds half the kernel size 2");
    expect_error(vs_avg_pool2d(x, 7, 1, 0), "output would be empty");
    expect_error(vs_max_pool2d(x, 0, 1, 0), "kernel >= 1");
    expect_error(vs_upsample_nearest2d(x, 0), "scale 0 must be at least 1");
    /* NULL in, NULL out */
    ck_assert_ptr_null(vs_conv2d(NULL, x, NULL, &o));
    ck_assert_ptr_null(vs_max_pool2d(NULL, 2, 2, 0));
    /* NULL opts mean defaults */
    vs_tensor *y = vs_conv2d(x, vs_tensor_full(VS_SHAPE(1, 3, 1, 1), 1.0f), NULL, NULL);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->shape[2], 5);
    vs_scope_end();
}
END_TEST

/* Empty batches and zero input channels give empty (or bias-only) results, forward and backward. */
START_TEST(test_empty_shapes)
{
    vs_scope_begin();
    vs_conv_opts o = {{2, 2}, {1, 1}, {1, 1}, {0, 0}, 1};
    vs_tensor *x = vs_tensor_zeros(VS_SHAPE(0, 2, 5, 5)), *w = rnd(VS_SHAPE(3, 2, 3, 3), -1, 1), *gx, *gw;
    vs_set_requires_grad(x, true);
    vs_set_requires_grad(w, true);
    vs_tensor *y = vs_conv2d(x, w, NULL, &o);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(y->size, 0);
    ck_assert_int_eq(y->shape[2], 3);
    vs_tensor *loss = vs_sum(vs_max_pool2d(y, 2, 1, 0), VS_ALL_AXES, false);
    ck_assert_int_eq(vs_grad(1, &loss, NULL, 1, &w, &gw, false), VS_OK);
    for (int64_t i = 0; i < gw->size; i++) ck_assert_float_eq(gw->data[i], 0);
    /* no input channels: the output is the bias */
    vs_tensor *x0 = vs_tensor_zeros(VS_SHAPE(2, 0, 4, 4)), *b = vs_tensor_from(VS_SHAPE(3), (float[]){1, 2, 3});
    vs_set_requires_grad(x0, true);
    vs_tensor *y0 = vs_conv2d(x0, vs_tensor_zeros(VS_SHAPE(3, 0, 3, 3)), b, &o);
    ck_assert_ptr_nonnull(y0);
    for (int64_t i = 0; i < y0->size; i++) ck_assert_float_eq(y0->data[i], (float)(1 + (i / 4) % 3));
    vs_tensor *l0 = vs_sum(y0, VS_ALL_AXES, false);
    ck_assert_int_eq(vs_grad(1, &l0, NULL, 1, &x0, &gx, false), VS_OK);
    ck_assert_int_eq(gx->size, 0);
    vs_scope_end();
}
END_TEST

/* The batch is split over the thread pool: results are bit-identical for 1, 2 and 3 threads, for
 * im2col + GEMM (4 output channels, stride 2 x 1), the direct kernels (2 channels, stride 1) and
 * the AVX-512 ones (32 channels). */
START_TEST(test_threads_bit_identical)
{
    vs_rng r;
    vs_rng_seed(&r, 31);
    for (int variant = 0; variant < 6; variant++) {
        /* variant 2: 32 channels in and out, rows of 14 pixels - the AVX-512 kernels on such machines;
         * variant 3: 32 -> 64 channels, k4 stride 2 - their weight gradient's four-vector tiles and the
         * strided transpose's output phases; variant 4: 32 -> 10 channels, stride 1 - the weight
         * gradient's one-vector tiles, and the forward with 16 images in the lanes (two groups, one
         * per thread); variant 5: 16 images, 12 -> 10 channels k7 s2 on 11 x 11 (one group: the steps
         * of its forward and transpose split over the threads) */
        const bool direct = variant == 1, wide = variant == 2 || variant >= 4, phases = variant == 3;
        const int batch = variant == 5 ? 16 : 25;
        const int o_ch = phases ? 64 : variant >= 4 ? 10 : wide ? 32 : direct ? 2 : 4, k = variant == 5 ? 7 : phases ? 4 : direct ? 5 : 3;
        const int sh = (direct || wide) && variant != 5 ? 1 : 2, sw = phases || variant == 5 ? 2 : 1, pad = direct ? 2 : 1;
        const int c_ch = variant == 5 ? 12 : wide || phases ? 32 : 3, cols = variant == 5 ? 11 : wide || phases ? 14 : 10;
        /* 25 images of 60 output pixels: 13 chunks of 2, dealt to 8 weight-gradient lanes unevenly. */
        vs_tensor *x = vs_tensor_randn(VS_SHAPE(batch, c_ch, 11, cols), &r, 0, 1), *w = vs_tensor_randn(VS_SHAPE(o_ch, c_ch, k, k), &r, 0, 1);
        vs_tensor *b = vs_tensor_randn(VS_SHAPE(o_ch), &r, 0, 1);
        vs_conv_opts o = {.stride = {sh, sw}, .padding = {pad, pad}};
        float *ref[3] = {NULL, NULL, NULL};
        int64_t sizes[3];
        for (int t = 1; t <= 3; t++) {
            vs_set_threads(t);
            vs_scope_begin();
            vs_tensor *y = vs_conv2d(x, w, b, &o);
            vs_tensor *dw = vs_conv2d_weight_grad(x, y, k, k, &o);
            vs_tensor *dx = vs_conv_transpose2d(y, w, NULL, &(vs_conv_opts){.stride = {sh, sw}, .padding = {pad, pad}});
            vs_tensor *outs[3] = {y, dw, dx};
            for (int q = 0; q < 3; q++) {
                ck_assert_ptr_nonnull(outs[q]);
                if (t == 1) {
                    sizes[q] = outs[q]->size;
                    ref[q] = malloc((size_t)sizes[q] * sizeof(float));
                    memcpy(ref[q], outs[q]->data, (size_t)sizes[q] * sizeof(float));
                } else {
                    ck_assert_int_eq(outs[q]->size, sizes[q]);
                    ck_assert_msg(memcmp(ref[q], outs[q]->data, (size_t)sizes[q] * sizeof(float)) == 0,
                                  "%s: output %d differs with %d threads", phases ? "avx512 s2" : wide ? "avx512" : direct ? "direct" : "gemm", q,
                                  t);
                }
            }
            vs_scope_end();
        }
        vs_set_threads(0);
        for (int q = 0; q < 3; q++) free(ref[q]);
        vs_tensor_free(x);
        vs_tensor_free(w);
        vs_tensor_free(b);
    }
}
END_TEST

static Suite *conv_suite(void)
{
    vs_rng_seed(&R, 2024);
    Suite *s = suite_create("conv");
    TCase *tc = vs_tcase(s, "forward", 60);
    tcase_add_test(tc, test_conv2d_forward);
    tcase_add_test(tc, test_conv_transpose2d_forward_and_adjoint);
    tcase_add_test(tc, test_weight_grad_forward);
    tcase_add_test(tc, test_pool_forward);
    tcase_add_test(tc, test_max_pool_ties);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_empty_shapes);
    tc = vs_tcase(s, "gradients", 120);
    tcase_add_test(tc, test_grad_conv2d_groups_dilation);
    tcase_add_test(tc, test_grad_conv2d_1x1);
    tcase_add_test(tc, test_grad_conv_transpose2d);
    tcase_add_test(tc, test_grad_conv_avx512_shapes);
    tcase_add_test(tc, test_grad_weight_grad);
    tcase_add_test(tc, test_grad_max_pool);
    tcase_add_test(tc, test_grad_avg_pool);
    tcase_add_test(tc, test_grad_upsample);
    tcase_add_test(tc, test_grad_chain);
    tc = vs_tcase(s, "double_backward_and_rules", 120);
    tcase_add_test(tc, test_wgan_gp_double_backward);
    tcase_add_test(tc, test_max_pool_rescale);
    tcase_add_test(tc, test_threads_bit_identical);
    tcase_add_test(tc, test_direct_weight_grad_isolates_pixels);
    return s;
}

VS_TEST_MAIN(conv_suite)
