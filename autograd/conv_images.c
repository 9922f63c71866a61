/* conv_images.c - AVX-512F forward convolution with 16 images in the vector lanes (see
 * conv_images.h).
 *
 * A register tile is OB output channels x V output pixels (OB V <= 24 accumulators, each 16 images):
 * per tap it loads the V pixels' vectors of the bordered copy and broadcasts OB packed weights.
 * The output channels are cut into the fewest blocks of at most 12 (10 -> one block of 10), so no
 * lane computes a channel that does not exist.  The tiles leave their sums pixel-major in a buffer
 * of the group; a pass through 16 x 16 register transposes puts them back into the NCHW output. */
#include "autograd/conv_images.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OB 12 /* output channels per block */

#if defined(__x86_64__) && defined(__GNUC__)
#include "autograd/conv_avx512_simd.h"

#define T512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

#define MAX_V 4 /* output pixels per tile */

typedef struct img_plan {
    int64_t hp, wp;   /* the bordered image */
    int64_t group;    /* floats of a group's bordered copy: c hp wp 16 */
    int64_t npx;      /* output pixels of an image */
    int64_t taps;     /* c kh kw */
    int64_t ob, nob;  /* channels per block, blocks */
    int v;            /* pixels per tile */
} img_plan;

static img_plan plan_of(const vs_conv_fast *g)
{
    img_plan f;
    f.hp = g->h + 2 * g->ph;
    f.wp = g->w + 2 * g->pw;
    f.group = g->c * f.hp * f.wp * 16;
    f.npx = g->oh * g->ow;
    f.taps = g->c * g->kh * g->kw;
    f.nob = (g->o + MAX_OB - 1) / MAX_OB;
    f.ob = (g->o + f.nob - 1) / f.nob;
    f.v = f.ob <= 6 ? 4 : f.ob <= 8 ? 3 : 2; /* 24 accumulators at most */
    return f;
}

/* off[k] for the taps k = (c kh + ki) kw + kj: where tap k reads in the bordered copy, from the
 * output pixel's origin (its top left tap). */
static void offsets(const vs_conv_fast *g, const img_plan *f, int64_t *off)
{
    for (int64_t c = 0, k = 0; c < g->c; c++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, k++) off[k] = ((c * f->hp + ki * g->dh) * f->wp + kj * g->dw) * 16;
}

/* The bordered copy of images x[0..n) (n <= 16; the lanes past n zero) into xt, 16 columns of the
 * 16 images' rows at a time through a register transpose. */
T512 static void group_copy(const vs_conv_fast *g, const img_plan *f, const float *restrict x, int64_t n, float *restrict xt)
{
    memset(xt, 0, (size_t)f->group * sizeof(float));
    const int64_t img = g->c * g->h * g->w;
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t yy = 0; yy < g->h; yy++) {
            const float *s = x + (c * g->h + yy) * g->w;
            float *d = xt + ((c * f->hp + yy + g->ph) * f->wp + g->pw) * 16;
            for (int64_t x0 = 0; x0 < g->w; x0 += 16) {
                const int64_t nc = g->w - x0 < 16 ? g->w - x0 : 16;
                const __mmask16 m = (__mmask16)((1u << nc) - 1);
                __m512 r[16];
                for (int64_t l = 0; l < 16; l++) r[l] = l < n ? _mm512_maskz_loadu_ps(m, s + l * img + x0) : _mm512_setzero_ps();
                vs_transpose16(r);
                for (int64_t k = 0; k < nc; k++) _mm512_storeu_ps(d + (x0 + k) * 16, r[k]);
            }
        }
}

/* y[l][o][p] = buf[(o npx + p) 16 + l] for the group's n images: 16 pixels of a channel at a time
 * through a register transpose. */
T512 static void group_store(const vs_conv_fast *g, const img_plan *f, const float *restrict buf, int64_t n, float *restrict y)
{
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t p0 = 0; p0 < f->npx; p0 += 16) {
            const int64_t np = f->npx - p0 < 16 ? f->npx - p0 : 16;
            const __mmask16 m = (__mmask16)((1u << np) - 1);
            __m512 r[16];
            for (int64_t p = 0; p < 16; p++) r[p] = p < np ? _mm512_load_ps(buf + (o * f->npx + p0 + p) * 16) : _mm512_setzero_ps();
            vs_transpose16(r);
            for (int64_t l = 0; l < n; l++) _mm512_mask_storeu_ps(y + (l * g->o + o) * f->npx + p0, m, r[l]);
        }
}

/* One tile: V pixels, pixel v's input at x[v] (tap offset 0) in the bordered copy, its sums at
 * out[v] (channel 0 of the block; channels ys floats apart). */
typedef struct img_tile {
    const float *x[MAX_V];
    float *out[MAX_V];
} img_tile;

/* out = bias + sum over the taps k of w[k][o] X[off[k] + pixel] for the tile's OB x V vectors (no
 * of the block's channels real; pixels past the image repeat the first and are not stored). */
INLINE T512 void tile_body(const img_tile *t, int nv, const int64_t *off, int64_t taps, const float *w, const float *bias,
                           int64_t no, int64_t ys, const int OB, const int V)
{
    __m512 acc[MAX_OB][MAX_V];
#pragma GCC unroll 16
    for (int o = 0; o < OB; o++)
#pragma GCC unroll 4
        for (int v = 0; v < V; v++) acc[o][v] = _mm512_setzero_ps();
    const float *x0 = t->x[0], *x1 = t->x[V > 1 ? 1 : 0], *x2 = t->x[V > 2 ? 2 : 0], *x3 = t->x[V > 3 ? 3 : 0];
    for (int64_t k = 0; k < taps; k++, w += OB) {
        const int64_t d = off[k];
        __m512 b[MAX_V];
        b[0] = _mm512_load_ps(x0 + d);
        if (V > 1) b[1] = _mm512_load_ps(x1 + d);
        if (V > 2) b[2] = _mm512_load_ps(x2 + d);
        if (V > 3) b[3] = _mm512_load_ps(x3 + d);
#pragma GCC unroll 16
        for (int o = 0; o < OB; o++) {
            const __m512 a = _mm512_set1_ps(w[o]);
#pragma GCC unroll 4
            for (int v = 0; v < V; v++) acc[o][v] = _mm512_fmadd_ps(a, b[v], acc[o][v]);
        }
    }
#pragma GCC unroll 16
    for (int o = 0; o < OB; o++) {
        if (o >= no) break;
        const __m512 bv = _mm512_set1_ps(bias ? bias[o] : 0.0f);
#pragma GCC unroll 4
        for (int v = 0; v < V; v++)
            if (v < nv) _mm512_store_ps(t->out[v] + o * ys, _mm512_add_ps(acc[o][v], bv));
    }
}

typedef void (*tile_fn)(const img_tile *t, int nv, const int64_t *off, int64_t taps, const float *w, const float *bias, int64_t no,
                        int64_t ys);
#define TILE_FN(OB)                                                                                                        \
    T512 static void tile_##OB(const img_tile *t, int nv, const int64_t *off, int64_t taps, const float *w, const float *bias, \
                               int64_t no, int64_t ys)                                                                      \
    {                                                                                                                      \
        tile_body(t, nv, off, taps, w, bias, no, ys, OB, OB <= 6 ? 4 : OB <= 8 ? 3 : 2);                                  \
    }
TILE_FN(1)
TILE_FN(2)
TILE_FN(3)
TILE_FN(4)
TILE_FN(5)
TILE_FN(6)
TILE_FN(7)
TILE_FN(8)
TILE_FN(9)
TILE_FN(10)
TILE_FN(11)
TILE_FN(12)
#undef TILE_FN
static const tile_fn TILES[MAX_OB] = {tile_1, tile_2, tile_3, tile_4, tile_5, tile_6, tile_7, tile_8, tile_9, tile_10, tile_11, tile_12};

typedef struct img_job {
    const vs_conv_fast *g;
    const img_plan *f;
    const float *in, *bias; /* x (forward) or gy (transpose) */
    const float *packed;    /* forward: [block][tap][ob]; transpose: [tap][o] */
    const int64_t *off;     /* per tap: its place in the bordered copy, from the output pixel's origin */
    float *out;             /* y or dx */
    bool transpose;
    volatile int failed;
} img_job;

/* The forward of one group of n images: every block of channels over the output pixels V at a time
 * into buf, then into y. */
static void group_forward(const img_job *j, const float *xt, float *buf, int64_t n, float *y)
{
    const vs_conv_fast *g = j->g;
    const img_plan *f = j->f;
    const tile_fn tile = TILES[f->ob - 1];
    for (int64_t b = 0; b < f->nob; b++) {
        const int64_t o0 = b * f->ob, no = g->o - o0 < f->ob ? g->o - o0 : f->ob;
        for (int64_t p0 = 0; p0 < f->npx; p0 += f->v) {
            img_tile t;
            const int nv = f->npx - p0 < f->v ? (int)(f->npx - p0) : f->v;
            for (int v = 0; v < f->v; v++) {
                const int64_t p = v < nv ? p0 + v : p0;
                t.x[v] = xt + (p / g->ow * g->sh * f->wp + p % g->ow * g->sw) * 16;
                t.out[v] = buf + (o0 * f->npx + p) * 16;
            }
            tile(&t, nv, j->off, f->taps, j->packed + b * f->taps * f->ob, j->bias ? j->bias + o0 : NULL, no, f->npx * 16);
        }
    }
    group_store(g, f, buf, n, y);
}

static void group_backward(const img_job *j, float *xt, float *gt, int64_t n, const float *gy, float *dx);

/* Groups [begin, end) of 16 images, each with this thread's scratch: the bordered copy and the
 * group's output pixels (the forward's sums, the transpose's gy). */
static void groups_range(void *ctx, int64_t begin, int64_t end)
{
    img_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const img_plan *f = j->f;
    void *owned;
    float *xt = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)(f->group + f->nob * f->ob * f->npx * 16) * sizeof(float), &owned);
    if (!xt) {
        j->failed = 1;
        return;
    }
    const int64_t img = g->c * g->h * g->w, patch = g->o * f->npx;
    for (int64_t q = begin; q < end; q++) {
        const int64_t n0 = q * 16, n = g->n - n0 < 16 ? g->n - n0 : 16;
        if (j->transpose) {
            group_backward(j, xt, xt + f->group, n, j->in + n0 * patch, j->out + n0 * img);
        } else {
            group_copy(g, f, j->in + n0 * img, n, xt);
            group_forward(j, xt, xt + f->group, n, j->out + n0 * patch);
        }
    }
    free(owned);
}

/* ---- the transpose: dx = conv_transpose2d(gy, w) ----------------------------------------------
 * The adjoint of the forward in its input, in the same layout: each output pixel p of gy (16
 * images) sends sum_o w[o, k] gy[p, o] to the bordered copy's place off[k] from p's origin, for every
 * tap k; p by p in order, so every element of dx is one sum in a fixed order, then dx is read back
 * out of the copy's inside. */

/* gt[(p o + c) 16 + l] = gy[l][c][p] for the group's n images (lanes past n zero). */
T512 static void group_patch(const vs_conv_fast *g, const img_plan *f, const float *restrict gy, int64_t n, float *restrict gt)
{
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t p0 = 0; p0 < f->npx; p0 += 16) {
            const int64_t np = f->npx - p0 < 16 ? f->npx - p0 : 16;
            const __mmask16 m = (__mmask16)((1u << np) - 1);
            __m512 r[16];
            for (int64_t l = 0; l < 16; l++) r[l] = l < n ? _mm512_maskz_loadu_ps(m, gy + (l * g->o + o) * f->npx + p0) : _mm512_setzero_ps();
            vs_transpose16(r);
            for (int64_t p = 0; p < np; p++) _mm512_store_ps(gt + ((p0 + p) * g->o + o) * 16, r[p]);
        }
}

/* dx[l][c][y][x] = bias[c] (or 0) + xt[c][y + ph][x + pw][l] for the group's n images: the inside of
 * the bordered copy back into NCHW, 16 columns at a time through a register transpose. */
T512 static void group_image(const vs_conv_fast *g, const img_plan *f, const float *restrict xt, const float *bias, int64_t n,
                             float *restrict dx)
{
    const int64_t img = g->c * g->h * g->w;
    for (int64_t c = 0; c < g->c; c++) {
        const __m512 b = _mm512_set1_ps(bias ? bias[c] : 0.0f);
        for (int64_t yy = 0; yy < g->h; yy++) {
            const float *s = xt + ((c * f->hp + yy + g->ph) * f->wp + g->pw) * 16;
            float *d = dx + (c * g->h + yy) * g->w;
            for (int64_t x0 = 0; x0 < g->w; x0 += 16) {
                const int64_t nc = g->w - x0 < 16 ? g->w - x0 : 16;
                const __mmask16 m = (__mmask16)((1u << nc) - 1);
                __m512 r[16];
                for (int64_t k = 0; k < 16; k++) r[k] = k < nc ? _mm512_load_ps(s + (x0 + k) * 16) : _mm512_setzero_ps();
                vs_transpose16(r);
                for (int64_t l = 0; l < n; l++) _mm512_mask_storeu_ps(d + l * img + x0, m, _mm512_add_ps(r[l], b));
            }
        }
    }
}

#define KT 8 /* taps per pass of the transpose: independent sums, so the multiply-adds overlap */

/* The group's sums into xt (zeroed first): wt[k][o] the weights tap-major, gt from group_patch. */
T512 static void group_transpose(const vs_conv_fast *g, const img_plan *f, const float *restrict gt, const float *restrict wt,
                                 const int64_t *off, float *restrict xt)
{
    memset(xt, 0, (size_t)f->group * sizeof(float));
    const int64_t o = g->o;
    for (int64_t p = 0; p < f->npx; p++) {
        float *base = xt + (p / g->ow * g->sh * f->wp + p % g->ow * g->sw) * 16;
        const float *gp = gt + p * o * 16;
        int64_t k = 0;
        for (; k + KT <= f->taps; k += KT) {
            __m512 acc[KT];
            const float *wk = wt + k * o;
#pragma GCC unroll 8
            for (int t = 0; t < KT; t++) acc[t] = _mm512_setzero_ps();
            for (int64_t c = 0; c < o; c++) {
                const __m512 a = _mm512_load_ps(gp + c * 16);
#pragma GCC unroll 8
                for (int t = 0; t < KT; t++) acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(wk[t * o + c]), a, acc[t]);
            }
#pragma GCC unroll 8
            for (int t = 0; t < KT; t++) {
                float *d = base + off[k + t];
                _mm512_store_ps(d, _mm512_add_ps(_mm512_load_ps(d), acc[t]));
            }
        }
        for (; k < f->taps; k++) {
            __m512 acc = _mm512_setzero_ps();
            for (int64_t c = 0; c < o; c++) acc = _mm512_fmadd_ps(_mm512_set1_ps(wt[k * o + c]), _mm512_load_ps(gp + c * 16), acc);
            float *d = base + off[k];
            _mm512_store_ps(d, _mm512_add_ps(_mm512_load_ps(d), acc));
        }
    }
}

/* The transpose of one group of n images. */
static void group_backward(const img_job *j, float *xt, float *gt, int64_t n, const float *gy, float *dx)
{
    group_patch(j->g, j->f, gy, n, gt);
    group_transpose(j->g, j->f, gt, j->packed, j->off, xt);
    group_image(j->g, j->f, xt, j->bias, n, dx);
}
#endif

/* ---- the rule ------------------------------------------------------------------------------------
 * Measured on the sweep suite's forwards (1 thread, Zen 4) against the paths that took them before:
 * 16x96x11x11 -> 10 k7 s2 2.6x as fast as im2col + GEMM, 64x48x20x20 -> 10 k3 1.6x, 16x64x22x22 -> 10
 * k7 s2 1.4x than the channel-blocked tiles; at 24 to 64 output channels the channel-blocked tiles
 * are as fast or faster (96x10 -> 24 k5 the same; 32x28 -> 64 k5 s2 8% faster), and with 8 images
 * (half the lanes) 5x slower.  On shapes outside the suite (32 images): 1 to 4 channels at stride
 * 2 or 3 (8 -> 3 k3 s2 on 28 x 28, 8 -> 1 k5 s2, 3 -> 1 k7 s2, 24 -> 4 k3 s2) 2.2-4x as fast as GEMM,
 * 10 channels 1.1-2.4x (c 1 to 16, k 3 to 7, s 1 to 3).  The bordered copy is written once per
 * group and read by every tile, so its floats must each feed a few multiply-adds: o oh ow kh kw /
 * (hp wp) of them, 46 at 96x11 k7 s2, 5.9 at 8x28 -> 3 k3 s2 (2.2x), but 2.7 at 64x96x25x25 -> 10
 * k1 s2, which ran 1.4x slower than GEMM (a 3.8 MB copy per group, a float in four read). */
bool vs_conv_images_fits(const vs_conv_fast *g)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (vs_kernel_isa() != VS_ISA_AVX512 || g->flip || g->y0 || g->x0 || g->o >= 16 || g->n < 16) return false;
    /* at least 3/4 of the lanes real: 16, 24, 25 or 64 images, not 17 or 20 */
    if (4 * g->n < 3 * 16 * ((g->n + 15) / 16)) return false;
    const int64_t taps = g->c * g->kh * g->kw, copy = (g->h + 2 * g->ph) * (g->w + 2 * g->pw);
    return taps >= 16 && (double)(g->o * g->oh * g->ow * g->kh * g->kw) >= 4.0 * (double)copy;
#else
    (void)g;
    return false;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The forward or the transpose: weights packed in blocks of ob channels (the transpose: one block
 * of all o), then the groups over the pool; false when out of memory. */
static bool images_run(const vs_conv_fast *g, const float *in, const float *w, const float *bias, float *out, bool transpose)
{
    img_plan f = plan_of(g);
    if (transpose) f.nob = 1, f.ob = g->o;
    const size_t packed = (size_t)(f.nob * f.ob * f.taps), bytes = packed * sizeof(float) + (size_t)f.taps * sizeof(int64_t);
    void *owned;
    float *p = vs_scratch_or_own(VS_SCRATCH_CONV_WEIGHTS, bytes, &owned);
    if (!p) return false;
    int64_t *off = (int64_t *)(p + packed);
    /* packed[b][k][l] = w[b ob + l][k], 0 past o */
    for (int64_t b = 0; b < f.nob; b++)
        for (int64_t k = 0; k < f.taps; k++)
            for (int64_t l = 0; l < f.ob; l++) {
                const int64_t o = b * f.ob + l;
                p[(b * f.taps + k) * f.ob + l] = o < g->o ? w[o * f.taps + k] : 0.0f;
            }
    offsets(g, &f, off);
    img_job j = {.g = g, .f = &f, .in = in, .bias = bias, .packed = p, .off = off, .out = out, .transpose = transpose};
    const int64_t groups = (g->n + 15) / 16;
    if (groups <= 1)
        groups_range(&j, 0, groups);
    else
        vs_parallel_for(groups, 1, groups_range, &j);
    free(owned);
    return !j.failed;
}
#endif

bool vs_conv_images_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, float *y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return images_run(g, x, w, bias, y, false);
#else
    (void)g, (void)x, (void)w, (void)bias, (void)y;
    return false;
#endif
}

bool vs_conv_images_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return images_run(g, gy, w, bias, dx, true);
#else
    (void)g, (void)gy, (void)w, (void)bias, (void)dx;
    return false;
#endif
}
