/* conv_avx512.c - AVX-512F direct convolution (see conv_avx512.h).
 *
 * A register tile is P output pixels of one output row by OB = 16 V output channels: V P
 * accumulators (4 x 7 or 2 x 14, 28 of the 32 registers).  Per tap (c, ki, kj) it loads V vectors
 * of packed weights and broadcasts P input values, one per pixel, then does V P multiply-adds:
 * the input is read in place from a zero-bordered copy of the image (any stride: a broadcast does
 * not care where its float lies), the weights are packed once per call as [block][tap][OB].
 * Output channels past o are zero weights; pixels past the row's end read the copy's next floats
 * (the buffer has slack) and are never stored. */
#include "autograd/conv_avx512.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

/* Register tiles: vectors of output channels x pixels. */
#define TILE_WIDE_V 4
#define TILE_WIDE_P 7
#define TILE_TALL_V 2
#define TILE_TALL_P 14
#define TILE_MAX_FLOATS (16 * 28)

/* Below this share of useful lanes in the tiles (channels past o, pixels past a row's end), the
 * im2col + GEMM path is the faster one. */
#define MIN_TILE_USE 0.7

typedef struct fast_plan {
    int v, p;          /* tile: vectors of output channels, pixels */
    int64_t ob, nob;   /* channels per block, blocks */
    int64_t taps;      /* c kh kw: the depth of every sum */
    int64_t wq, plane; /* padded row stride, floats of one padded plane */
    int64_t img;       /* floats of one image's padded planes, with slack */
} fast_plan;

static int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

/* Share of the lanes of (v, p) tiles that are real outputs. */
static double tile_use(const vs_conv_fast *g, int v, int p)
{
    return (double)g->o / (double)round_up(g->o, 16 * v) * (double)g->ow / (double)round_up(g->ow, p);
}

static fast_plan plan_of(const vs_conv_fast *g)
{
    fast_plan f;
    const bool wide = tile_use(g, TILE_WIDE_V, TILE_WIDE_P) >= tile_use(g, TILE_TALL_V, TILE_TALL_P);
    f.v = wide ? TILE_WIDE_V : TILE_TALL_V;
    f.p = wide ? TILE_WIDE_P : TILE_TALL_P;
    f.ob = 16 * f.v;
    f.nob = (g->o + f.ob - 1) / f.ob;
    f.taps = g->c * g->kh * g->kw;
    f.wq = g->w + 2 * g->pw;
    f.plane = (g->h + 2 * g->ph) * f.wq;
    f.img = g->c * f.plane + f.p * g->sw + 16;
    return f;
}

typedef struct tile_args {
    const float *x;     /* the tile's first pixel, tap (0, 0, 0), in the padded image */
    const float *w;     /* the block's packed weights: taps x OB */
    const int64_t *off; /* kh kw offsets of the taps (ki, kj) from a pixel's (0, 0) */
    int64_t c, kk, plane, sw;
    float *out; /* P x OB results, pixel-major */
} tile_args;

/* The tile's sums, V vectors x P pixels, S the stride along the row (0: a->sw). */
static inline __attribute__((always_inline)) T512 void tile_body(const tile_args *a, const int V, const int P,
                                                                 const int64_t S_)
{
    const int64_t S = S_ ? S_ : a->sw;
    __m512 acc[4][14];
#pragma GCC unroll 16
    for (int v = 0; v < V; v++)
#pragma GCC unroll 16
        for (int p = 0; p < P; p++) acc[v][p] = _mm512_setzero_ps();
    const float *w = a->w;
    for (int64_t c = 0; c < a->c; c++) {
        const float *xc = a->x + c * a->plane;
        for (int64_t t = 0; t < a->kk; t++, w += 16 * V) {
            const float *xs = xc + a->off[t];
            __m512 wv[4];
#pragma GCC unroll 16
            for (int v = 0; v < V; v++) wv[v] = _mm512_load_ps(w + 16 * v);
#pragma GCC unroll 16
            for (int p = 0; p < P; p++) {
                const __m512 b = _mm512_set1_ps(xs[p * S]);
#pragma GCC unroll 16
                for (int v = 0; v < V; v++) acc[v][p] = _mm512_fmadd_ps(wv[v], b, acc[v][p]);
            }
        }
    }
#pragma GCC unroll 16
    for (int p = 0; p < P; p++)
#pragma GCC unroll 16
        for (int v = 0; v < V; v++) _mm512_storeu_ps(a->out + (p * V + v) * 16, acc[v][p]);
}

typedef void (*tile_fn)(const tile_args *a);
#define TILE_FN(name, V, P, S)                                                                                                   \
    T512 static void name(const tile_args *a) { tile_body(a, V, P, S); }
TILE_FN(tile_wide_s1, TILE_WIDE_V, TILE_WIDE_P, 1)
TILE_FN(tile_wide_s2, TILE_WIDE_V, TILE_WIDE_P, 2)
TILE_FN(tile_wide_sn, TILE_WIDE_V, TILE_WIDE_P, 0)
TILE_FN(tile_tall_s1, TILE_TALL_V, TILE_TALL_P, 1)
TILE_FN(tile_tall_s2, TILE_TALL_V, TILE_TALL_P, 2)
TILE_FN(tile_tall_sn, TILE_TALL_V, TILE_TALL_P, 0)

static tile_fn tile_for(const fast_plan *f, int64_t sw)
{
    if (f->v == TILE_WIDE_V) return sw == 1 ? tile_wide_s1 : sw == 2 ? tile_wide_s2 : tile_wide_sn;
    return sw == 1 ? tile_tall_s1 : sw == 2 ? tile_tall_s2 : tile_tall_sn;
}

/* W(o, c, ki, kj) in the blocked layout: packed[(b taps + t) OB + l] for o = b OB + l and tap
 * t = (c kh + ki) kw + kj; zero for o >= g->o. */
static void pack_weights(const vs_conv_fast *g, const fast_plan *f, const float *w, float *packed)
{
    const int64_t kk = g->kh * g->kw;
    for (int64_t b = 0; b < f->nob; b++)
        for (int64_t c = 0; c < g->c; c++)
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++) {
                    float *d = packed + (b * f->taps + c * kk + ki * g->kw + kj) * f->ob;
                    for (int64_t l = 0; l < f->ob; l++) {
                        const int64_t o = b * f->ob + l;
                        if (o >= g->o)
                            d[l] = 0.0f;
                        else if (g->flip)
                            d[l] = w[((c * g->o + o) * g->kh + g->kh - 1 - ki) * g->kw + g->kw - 1 - kj];
                        else
                            d[l] = w[((o * g->c + c) * g->kh + ki) * g->kw + kj];
                    }
                }
}

/* dst = image x's c planes with ph rows and pw columns of zeros around each, plus zero slack. */
static void pad_image(const vs_conv_fast *g, const fast_plan *f, const float *x, float *dst)
{
    memset(dst, 0, (size_t)f->img * sizeof(float));
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t i = 0; i < g->h; i++)
            memcpy(dst + c * f->plane + (i + g->ph) * f->wq + g->pw, x + (c * g->h + i) * g->w, (size_t)g->w * sizeof(float));
}

typedef struct fast_job {
    const vs_conv_fast *g;
    const fast_plan *f;
    const float *x, *packed, *bias;
    const int64_t *off;
    bool accumulate;
    float *y;
    volatile int failed;
} fast_job;

/* The tile's np pixels x no channels (out: pixel-major, ob floats a pixel) into the output rows
 * at y, plane floats apart: y = out + (accumulate ? y : bias, or 0 without one). */
static void store_tile(const float *restrict out, int64_t ob, int64_t np, int64_t no, bool accumulate, const float *bias,
                       float *restrict y, int64_t plane)
{
    for (int64_t l = 0; l < no; l++) {
        float *restrict d = y + l * plane;
        const float *restrict s = out + l;
        if (accumulate) {
            for (int64_t p = 0; p < np; p++) d[p] += s[p * ob];
        } else {
            const float base = bias ? bias[l] : 0.0f;
            for (int64_t p = 0; p < np; p++) d[p] = base + s[p * ob];
        }
    }
}

/* Images [begin, end): bordered into this thread's scratch, then tile by tile. */
static void images_range(void *ctx, int64_t begin, int64_t end)
{
    fast_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const fast_plan *f = j->f;
    const tile_fn tile = tile_for(f, g->sw);
    void *owned;
    float *pad = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)f->img * sizeof(float), &owned);
    if (!pad) {
        j->failed = 1;
        return;
    }
    float out[TILE_MAX_FLOATS] __attribute__((aligned(64)));
    tile_args a = {.off = j->off, .c = g->c, .kk = g->kh * g->kw, .plane = f->plane, .sw = g->sw, .out = out};
    for (int64_t n = begin; n < end; n++) {
        pad_image(g, f, j->x + n * g->c * g->h * g->w, pad);
        for (int64_t b = 0; b < f->nob; b++) {
            a.w = j->packed + b * f->taps * f->ob;
            const int64_t o0 = b * f->ob, no = g->o - o0 < f->ob ? g->o - o0 : f->ob;
            for (int64_t i = 0; i < g->oh; i++)
                for (int64_t j0 = 0; j0 < g->ow; j0 += f->p) {
                    a.x = pad + i * g->sh * f->wq + j0 * g->sw;
                    tile(&a);
                    store_tile(out, f->ob, g->ow - j0 < f->p ? g->ow - j0 : f->p, no, j->accumulate, j->bias ? j->bias + o0 : NULL,
                               j->y + ((n * g->o + o0) * g->oh + i) * g->ow + j0, g->oh * g->ow);
                }
        }
    }
    free(owned);
}
#endif

bool vs_conv_avx512_fits(const vs_conv_fast *g)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (vs_kernel_isa() != VS_ISA_AVX512) return false;
    if (g->o < 16 || g->c * g->kh * g->kw < 16) return false;
    const double use = tile_use(g, TILE_WIDE_V, TILE_WIDE_P), tall = tile_use(g, TILE_TALL_V, TILE_TALL_P);
    return (use > tall ? use : tall) >= MIN_TILE_USE;
#else
    (void)g;
    return false;
#endif
}

bool vs_conv_avx512_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                            float *y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const fast_plan f = plan_of(g);
    const int64_t kk = g->kh * g->kw;
    size_t floats = (size_t)(f.nob * f.taps * f.ob), bytes = (floats + (size_t)kk * 2) * sizeof(float);
    void *owned;
    float *packed = vs_scratch_or_own(VS_SCRATCH_CONV_WEIGHTS, bytes, &owned);
    if (!packed) return false;
    int64_t *off = (int64_t *)(packed + floats);
    for (int64_t ki = 0; ki < g->kh; ki++)
        for (int64_t kj = 0; kj < g->kw; kj++) off[ki * g->kw + kj] = ki * g->dh * f.wq + kj * g->dw;
    pack_weights(g, &f, w, packed);
    fast_job j = {.g = g, .f = &f, .x = x, .packed = packed, .bias = bias, .off = off, .accumulate = accumulate, .y = y};
    if (g->n <= 1)
        images_range(&j, 0, g->n);
    else
        vs_parallel_for(g->n, 1, images_range, &j);
    free(owned);
    return !j.failed;
#else
    (void)g, (void)x, (void)w, (void)bias, (void)accumulate, (void)y;
    return false;
#endif
}
