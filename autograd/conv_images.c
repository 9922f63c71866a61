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

#define MAX_OB 12                   /* output channels per block */
#define MAX_COPY ((int64_t)2 << 20) /* floats of a group's bordered copy */

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

/* One group of n <= 16 images (the lanes past n zero) and the scratch it is computed in.  Each
 * step below is a range function over channels, tiles or taps whose pieces write disjoint places,
 * so a group runs on one thread (a batch of several groups splits by group) or, when the batch is
 * one group, each step over the pool; the sums are the same either way. */
typedef struct img_group {
    const vs_conv_fast *g;
    const img_plan *f;
    const float *packed; /* forward: [block][tap][ob]; transpose: [tap][o] */
    const int64_t *off;  /* per tap: its place in the bordered copy, from the output pixel's origin */
    const float *bias;
    const float *in;     /* the group's first image: x (forward) or gy (transpose) */
    float *out;          /* y or dx */
    float *xt;           /* the bordered copy, image index last: c hp wp 16 floats */
    float *buf;          /* the output pixels, pixel-major: forward's sums, transpose's gy */
    int64_t n;
} img_group;

/* Channels [c0, c1) of the bordered copy of x, 16 columns of the 16 images' rows at a time through
 * a register transpose. */
T512 static void copy_range(void *ctx, int64_t c0, int64_t c1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    const int64_t img = g->c * g->h * g->w, slab = f->hp * f->wp * 16;
    memset(q->xt + c0 * slab, 0, (size_t)((c1 - c0) * slab) * sizeof(float));
    for (int64_t c = c0; c < c1; c++)
        for (int64_t yy = 0; yy < g->h; yy++) {
            const float *s = q->in + (c * g->h + yy) * g->w;
            float *d = q->xt + ((c * f->hp + yy + g->ph) * f->wp + g->pw) * 16;
            for (int64_t x0 = 0; x0 < g->w; x0 += 16) {
                const int64_t nc = g->w - x0 < 16 ? g->w - x0 : 16;
                __m512 r[16];
                vs_columns_of(s + x0, img, nc, q->n, false, r);
                for (int64_t k = 0; k < nc; k++) _mm512_storeu_ps(d + (x0 + k) * 16, r[k]);
            }
        }
}

/* y[l][o][p] = buf[(o npx + p) 16 + l] for channels [o0, o1): 16 pixels of a channel at a time
 * through a register transpose. */
T512 static void store_range(void *ctx, int64_t o0, int64_t o1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    for (int64_t o = o0; o < o1; o++)
        for (int64_t p0 = 0; p0 < f->npx; p0 += 16) {
            const int64_t np = f->npx - p0 < 16 ? f->npx - p0 : 16;
            const __mmask16 m = (__mmask16)((1u << np) - 1);
            __m512 r[16];
            for (int64_t p = 0; p < 16; p++) r[p] = p < np ? _mm512_load_ps(q->buf + (o * f->npx + p0 + p) * 16) : _mm512_setzero_ps();
            vs_transpose16(r);
            for (int64_t l = 0; l < q->n; l++) _mm512_mask_storeu_ps(q->out + (l * g->o + o) * f->npx + p0, m, r[l]);
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

/* Tiles [t0, t1) of the forward: tile t is block t / T, pixels from (t mod T) V (T tiles a block). */
static void tiles_range(void *ctx, int64_t t0, int64_t t1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    const tile_fn tile = TILES[f->ob - 1];
    const int64_t per = (f->npx + f->v - 1) / f->v;
    for (int64_t tt = t0; tt < t1; tt++) {
        const int64_t b = tt / per, p0 = tt % per * f->v, o0 = b * f->ob, no = g->o - o0 < f->ob ? g->o - o0 : f->ob;
        const int nv = f->npx - p0 < f->v ? (int)(f->npx - p0) : f->v;
        img_tile t;
        for (int v = 0; v < f->v; v++) {
            const int64_t p = v < nv ? p0 + v : p0;
            t.x[v] = q->xt + (p / g->ow * g->sh * f->wp + p % g->ow * g->sw) * 16;
            t.out[v] = q->buf + (o0 * f->npx + p) * 16;
        }
        tile(&t, nv, q->off, f->taps, q->packed + b * f->taps * f->ob, q->bias ? q->bias + o0 : NULL, no, f->npx * 16);
    }
}

/* ---- the transpose: dx = conv_transpose2d(gy, w) ----------------------------------------------
 * The adjoint of the forward in its input, in the same layout: each output pixel p of gy (16
 * images) sends sum_o w[o, k] gy[p, o] to the bordered copy's place off[k] from p's origin, for every
 * tap k; p by p in order, so every element of dx is one sum in a fixed order, then dx is read back
 * out of the copy's inside. */

/* buf[(p o + c) 16 + l] = gy[l][c][p] for gy's channels [o0, o1). */
T512 static void patch_range(void *ctx, int64_t o0, int64_t o1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    for (int64_t o = o0; o < o1; o++)
        for (int64_t p0 = 0; p0 < f->npx; p0 += 16) {
            const int64_t np = f->npx - p0 < 16 ? f->npx - p0 : 16;
            __m512 r[16];
            vs_columns_of(q->in + o * f->npx + p0, g->o * f->npx, np, q->n, false, r);
            for (int64_t p = 0; p < np; p++) _mm512_store_ps(q->buf + ((p0 + p) * g->o + o) * 16, r[p]);
        }
}

#define KT 8 /* taps per pass of the transpose: independent sums, so the multiply-adds overlap */

/* The sums of dx's channels [c0, c1) into their slabs of the bordered copy (zeroed first): every
 * pixel p in order, the taps of those channels KT at a time. */
T512 static void scatter_range(void *ctx, int64_t c0, int64_t c1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    const int64_t o = g->o, kk = g->kh * g->kw, slab = f->hp * f->wp * 16, k1 = c1 * kk;
    memset(q->xt + c0 * slab, 0, (size_t)((c1 - c0) * slab) * sizeof(float));
    for (int64_t p = 0; p < f->npx; p++) {
        float *base = q->xt + (p / g->ow * g->sh * f->wp + p % g->ow * g->sw) * 16;
        const float *gp = q->buf + p * o * 16;
        int64_t k = c0 * kk;
        for (; k + KT <= k1; k += KT) {
            __m512 acc[KT];
            const float *wk = q->packed + k * o;
#pragma GCC unroll 8
            for (int t = 0; t < KT; t++) acc[t] = _mm512_setzero_ps();
            for (int64_t c = 0; c < o; c++) {
                const __m512 a = _mm512_load_ps(gp + c * 16);
#pragma GCC unroll 8
                for (int t = 0; t < KT; t++) acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(wk[t * o + c]), a, acc[t]);
            }
#pragma GCC unroll 8
            for (int t = 0; t < KT; t++) {
                float *d = base + q->off[k + t];
                _mm512_store_ps(d, _mm512_add_ps(_mm512_load_ps(d), acc[t]));
            }
        }
        for (; k < k1; k++) {
            __m512 acc = _mm512_setzero_ps();
            for (int64_t c = 0; c < o; c++) acc = _mm512_fmadd_ps(_mm512_set1_ps(q->packed[k * o + c]), _mm512_load_ps(gp + c * 16), acc);
            float *d = base + q->off[k];
            _mm512_store_ps(d, _mm512_add_ps(_mm512_load_ps(d), acc));
        }
    }
}

/* dx[l][c][y][x] = bias[c] (or 0) + xt[c][y + ph][x + pw][l] for channels [c0, c1): the inside of the
 * bordered copy back into NCHW, 16 columns at a time through a register transpose. */
T512 static void image_range(void *ctx, int64_t c0, int64_t c1)
{
    const img_group *q = ctx;
    const vs_conv_fast *g = q->g;
    const img_plan *f = q->f;
    const int64_t img = g->c * g->h * g->w;
    for (int64_t c = c0; c < c1; c++) {
        const __m512 b = _mm512_set1_ps(q->bias ? q->bias[c] : 0.0f);
        for (int64_t yy = 0; yy < g->h; yy++) {
            const float *s = q->xt + ((c * f->hp + yy + g->ph) * f->wp + g->pw) * 16;
            float *d = q->out + (c * g->h + yy) * g->w;
            for (int64_t x0 = 0; x0 < g->w; x0 += 16) {
                const int64_t nc = g->w - x0 < 16 ? g->w - x0 : 16;
                const __mmask16 m = (__mmask16)((1u << nc) - 1);
                __m512 r[16];
                for (int64_t k = 0; k < 16; k++) r[k] = k < nc ? _mm512_load_ps(s + (x0 + k) * 16) : _mm512_setzero_ps();
                vs_transpose16(r);
                for (int64_t l = 0; l < q->n; l++) _mm512_mask_storeu_ps(d + l * img + x0, m, _mm512_add_ps(r[l], b));
            }
        }
    }
}

/* One group, its steps in order; with pool set, each step over the thread pool. */
static void group_run(img_group *q, bool transpose, bool pool)
{
    const vs_conv_fast *g = q->g;
    const int64_t tiles = q->f->nob * ((q->f->npx + q->f->v - 1) / q->f->v);
    const vs_range_fn steps[2][3] = {{copy_range, tiles_range, store_range}, {patch_range, scatter_range, image_range}};
    const int64_t sizes[2][3] = {{g->c, tiles, g->o}, {g->o, g->c, g->c}};
    for (int s = 0; s < 3; s++) {
        if (pool)
            vs_parallel_for(sizes[transpose][s], 1, steps[transpose][s], q);
        else
            steps[transpose][s](q, 0, sizes[transpose][s]);
    }
}

typedef struct img_job {
    img_group proto; /* g, f, packed, off, bias, in and out of image 0 */
    bool transpose;
    volatile int failed;
} img_job;

/* Floats of a group's scratch: the bordered copy, then the output pixels. */
static int64_t group_scratch(const img_plan *f) { return f->group + f->nob * f->ob * f->npx * 16; }

/* Groups [begin, end) of 16 images, each in this thread's scratch. */
static void groups_range(void *ctx, int64_t begin, int64_t end)
{
    img_job *j = ctx;
    const vs_conv_fast *g = j->proto.g;
    void *owned;
    float *xt = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)group_scratch(j->proto.f) * sizeof(float), &owned);
    if (!xt) {
        j->failed = 1;
        return;
    }
    const int64_t img = g->c * g->h * g->w, patch = g->o * j->proto.f->npx;
    for (int64_t k = begin; k < end; k++) {
        img_group q = j->proto;
        q.n = g->n - 16 * k < 16 ? g->n - 16 * k : 16;
        q.in += 16 * k * (j->transpose ? patch : img);
        q.out += 16 * k * (j->transpose ? img : patch);
        q.xt = xt;
        q.buf = xt + j->proto.f->group;
        group_run(&q, j->transpose, false);
    }
    free(owned);
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
    /* a group's copy of at most 8 MB (each thread keeps one; 4 MB at 64x3x30x30 -> 16 transposed) */
    if ((double)g->c * (double)copy * 16.0 > (double)MAX_COPY) return false;
    return taps >= 16 && (double)(g->o * g->oh * g->ow * g->kh * g->kw) >= 4.0 * (double)copy;
#else
    (void)g;
    return false;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The forward or the transpose: weights packed in blocks of ob channels (the transpose: one block
 * of all o), then the groups over the pool (one group: its steps over the pool); false when out
 * of memory. */
static bool images_run(const vs_conv_fast *g, const float *in, const float *w, const float *bias, float *out, bool transpose)
{
    img_plan f = plan_of(g);
    if (transpose) f.nob = 1, f.ob = g->o;
    /* the offsets after the weights, 64-byte aligned */
    const size_t packed = (size_t)(f.nob * f.ob * f.taps + 15) / 16 * 16, bytes = packed * sizeof(float) + (size_t)f.taps * sizeof(int64_t);
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
    img_job j = {.proto = {.g = g, .f = &f, .packed = p, .off = off, .bias = bias, .in = in, .out = out}, .transpose = transpose};
    const int64_t groups = (g->n + 15) / 16;
    if (groups > 1) {
        vs_parallel_for(groups, 1, groups_range, &j);
    } else {
        void *mine;
        float *xt = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)group_scratch(&f) * sizeof(float), &mine);
        if (xt) {
            img_group q = j.proto;
            q.n = g->n, q.xt = xt, q.buf = xt + f.group;
            group_run(&q, transpose, true);
            free(mine);
        }
        j.failed = !xt;
    }
    free(owned);
    return !j.failed;
}
#else
/* Without AVX-512 code vs_conv_images_fits takes nothing, so this never runs. */
static bool images_run(const vs_conv_fast *g, const float *in, const float *w, const float *bias, float *out, bool transpose)
{
    (void)g, (void)in, (void)w, (void)bias, (void)out, (void)transpose;
    return false;
}
#endif

bool vs_conv_images_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, float *y)
{
    return images_run(g, x, w, bias, y, false);
}

bool vs_conv_images_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx)
{
    return images_run(g, gy, w, bias, dx, true);
}
