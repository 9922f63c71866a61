/* conv_avx512_wgrad.c - the AVX-512F weight gradient of conv2d without an im2col matrix:
 *   dw[o,c,ki,kj] = sum_{n,i,j} gy[n,o,i,j] x[n, c, i sh + ki dh - ph, j sw + kj dw - pw]
 *
 * The output gradient is first copied channels-last (through 16 x 16 register transposes), as
 * [n][pixel][o] with o padded to whole tiles with zeros.  A register tile is 16 V output channels
 * (V = 4 vectors, or 2 or 1 when o fills those better) x T input channels at one tap (V T <= 24:
 * T <= 6, 12 or 24): per output pixel V vector loads of the gradient, T broadcasts of the input and V T
 * multiply-adds, over the pixels whose tap lands on the image (the border adds nothing), so the
 * input is read in place, a broadcast from each of T planes.  A first layer's tiles (one or two
 * channels) take a whole kernel row instead, from a zero-bordered channels-last copy of the input.  A task
 * owns the taps of one kernel row for one block of o and one of c; it sums over images, then pixels
 * in row order, keeping its tiles in a buffer between images, so every element of dw is one fixed
 * sum whatever the thread count. */
#include "autograd/conv_avx512.h"
#include "autograd/kernels.h"
#include "versus/threads.h"

#include <stdlib.h>
#include <string.h>

#define V_MAX 4  /* vectors of output channels in a tile: 1, 2, 4, or 3 on full-width cores */
#define T_MAX 24 /* input channels of a tile (one vector; 12 with two, 6 with four) */
#define ACC_MAX 24 /* running sums of a tile, V T: 24 of the 32 vector registers */

#if defined(__x86_64__) && defined(__GNUC__)
#include "autograd/conv_avx512_simd.h"

#define T512 __attribute__((target("avx512f")))

typedef struct wg_plan {
    int v;               /* vectors of output channels per tile */
    int64_t ob;          /* output channels per tile: 16 v */
    int64_t nob, ncb, t; /* blocks of o and of c, the most input channels of a block */
    bool row_tile;       /* one tile holds a whole kernel row: columns (kj, c), kw c <= the tile's T */
    int64_t opad;        /* o rounded up to ob: the gradient copy's pixel stride */
    int64_t hp, wq;      /* rows and columns of the bordered input */
} wg_plan;

/* Share of a tile's output-channel lanes that are real channels with ob channels per tile. */
static double wg_use(int64_t o, int64_t ob) { return (double)o / (double)((o + ob - 1) / ob * ob); }

/* The most vectors of o that fill as well as fewer: per pixel 4 loads and T <= 6 broadcasts feed
 * 4 T multiply-adds, against 2 loads and T <= 12 broadcasts for 2 T, 1 and T <= 24 for T (o = 10:
 * one vector at use 0.63 instead of two at 0.31; 48: three blocks of one at 1.0, not 0.75 of
 * four, 8x27->48 k7 forward + backward 1.17x as fast).  On cores with full-width zmm FMAs (two a
 * cycle, as many vector loads as FMAs at best) a tile of V vectors x T channels costs max(V T, V +
 * T) per pixel, so one vector x 16 channels is bound by its 17 loads: there three vectors (T <= 8)
 * join the choice, taken when they fill strictly better per cycle (48 channels, 1 thread on Zen 5,
 * with conv_avx512.c's three-vector tiles: 16x16x20x20 -> 48 k7 forward + backward 4.31 -> 4.08 ms,
 * 32x8x27x27 -> 48 k7 s2 3.63 -> 3.35 ms, 8x16x28x28 -> 48 k3 s2 359 -> 333 us). */
static int wg_vectors(int64_t o, int64_t c)
{
    const double u64 = wg_use(o, 64), u32 = wg_use(o, 32), u16 = wg_use(o, 16);
    const int v = u64 >= u32 && u64 >= u16 ? 4 : u32 >= u16 ? 2 : 1;
    if (!vs_avx512_full_width()) return v;
    const int64_t t3 = c < T_MAX / 3 ? c : T_MAX / 3, tv = c < T_MAX / v ? c : T_MAX / v;
    return vs_avx512_tile_cycles(3, t3) / wg_use(o, 48) < vs_avx512_tile_cycles(v, tv) / wg_use(o, 16 * v) ? 3 : v;
}

/* Blocks of c differ in size by
 * one at most (6, ..., 6, 2 for 32 channels ran its last block at half the rate).  With few input
 * channels (a first layer's one), the T columns of a tile are a whole kernel row's taps and
 * channels, (kj, c) at kj C + c: with dilation 1 those are T neighbouring floats of the channels-last
 * copy, as the channels of one tap are, and the tile gets T columns instead of C. */
static wg_plan wg_plan_of(const vs_conv_fast *g)
{
    wg_plan f;
    f.v = wg_vectors(g->o, g->c);
    f.ob = 16 * f.v;
    const int64_t tmax = T_MAX / f.v;
    f.nob = (g->o + f.ob - 1) / f.ob;
    f.row_tile = g->dw == 1 && g->kw * g->c <= tmax;
    f.ncb = (g->c + tmax - 1) / tmax;
    f.t = (g->c + f.ncb - 1) / f.ncb;
    f.opad = f.nob * f.ob;
    f.hp = g->h + 2 * g->ph;
    f.wq = g->w + 2 * g->pw;
    return f;
}

typedef struct wg_args {
    const float *gy; /* the image's gradient copy at the tile's first output channel */
    const float *x;  /* the input at pixel (i0, j0)'s tap, the tile's first column */
    int64_t ow, opad, row, col, cs; /* floats between input rows, columns (sh, sw apart), the tile's columns */
    int64_t i0, i1, j0, j1;     /* the output pixels whose tap lands on the image, not the border */
    __m512 *acc;                /* V T running sums: acc[v T + t] */
    bool first;                 /* the first image: the sums start at zero, acc is not read */
} wg_args;

/* acc[v T + t] += sum over the image's pixels of gy[pixel][16 v ..] x[pixel's tap][t]. */
static inline __attribute__((always_inline)) T512 void wg_body(const wg_args *a, const int V, const int T)
{
    __m512 s[ACC_MAX];
#pragma GCC unroll 24
    for (int k = 0; k < V * T; k++) s[k] = a->first ? _mm512_setzero_ps() : a->acc[k];
    for (int64_t i = a->i0; i < a->i1; i++) {
        const float *xs = a->x + (i - a->i0) * a->row, *gy = a->gy + (i * a->ow + a->j0) * a->opad;
        for (int64_t j = a->j0; j < a->j1; j++, gy += a->opad, xs += a->col) {
            __m512 gv[V_MAX];
#pragma GCC unroll 16
            for (int v = 0; v < V; v++) gv[v] = _mm512_load_ps(gy + 16 * v);
            /* more than 8 planes: a base pointer per 8 of them, each plane at one of 8 offsets
             * (24 offsets kept in registers left too few for the loop: half were reloaded) */
            const float *xb[3] = {xs, xs + 8 * a->cs, xs + 16 * a->cs};
            if (T > 8) __asm__("" : "+r"(xb[1]));
            if (T > 16) __asm__("" : "+r"(xb[2]));
#pragma GCC unroll 24
            for (int t = 0; t < T; t++) {
                const __m512 b = _mm512_set1_ps(xb[t / 8][(t % 8) * a->cs]);
#pragma GCC unroll 16
                for (int v = 0; v < V; v++) s[v * T + t] = _mm512_fmadd_ps(gv[v], b, s[v * T + t]);
            }
        }
    }
#pragma GCC unroll 24
    for (int k = 0; k < V * T; k++) a->acc[k] = s[k];
}

typedef void (*wg_fn)(const wg_args *a);
/* On 64-byte boundaries, as conv_avx512.c's tiles (their loops do not move with the rest of the library). */
#define WG_FN(V, T)                                                                                                              \
    T512 __attribute__((aligned(64))) static void wg##V##_##T(const wg_args *a) { wg_body(a, V, T); }
WG_FN(1, 1)
WG_FN(1, 2)
WG_FN(1, 3)
WG_FN(1, 4)
WG_FN(1, 5)
WG_FN(1, 6)
WG_FN(1, 7)
WG_FN(1, 8)
WG_FN(1, 9)
WG_FN(1, 10)
WG_FN(1, 11)
WG_FN(1, 12)
WG_FN(1, 13)
WG_FN(1, 14)
WG_FN(1, 15)
WG_FN(1, 16)
WG_FN(1, 17)
WG_FN(1, 18)
WG_FN(1, 19)
WG_FN(1, 20)
WG_FN(1, 21)
WG_FN(1, 22)
WG_FN(1, 23)
WG_FN(1, 24)
WG_FN(2, 1)
WG_FN(2, 2)
WG_FN(2, 3)
WG_FN(2, 4)
WG_FN(2, 5)
WG_FN(2, 6)
WG_FN(2, 7)
WG_FN(2, 8)
WG_FN(2, 9)
WG_FN(2, 10)
WG_FN(2, 11)
WG_FN(2, 12)
WG_FN(3, 1)
WG_FN(3, 2)
WG_FN(3, 3)
WG_FN(3, 4)
WG_FN(3, 5)
WG_FN(3, 6)
WG_FN(3, 7)
WG_FN(3, 8)
WG_FN(4, 1)
WG_FN(4, 2)
WG_FN(4, 3)
WG_FN(4, 4)
WG_FN(4, 5)
WG_FN(4, 6)
/* [v - 1][t]: v vectors of output channels x t input channels */
static const wg_fn WG_TILES[V_MAX][T_MAX + 1] = {
    {NULL,   wg1_1,  wg1_2,  wg1_3,  wg1_4,  wg1_5,  wg1_6,  wg1_7,  wg1_8,  wg1_9,  wg1_10, wg1_11, wg1_12,
     wg1_13, wg1_14, wg1_15, wg1_16, wg1_17, wg1_18, wg1_19, wg1_20, wg1_21, wg1_22, wg1_23, wg1_24},
    {NULL, wg2_1, wg2_2, wg2_3, wg2_4, wg2_5, wg2_6, wg2_7, wg2_8, wg2_9, wg2_10, wg2_11, wg2_12},
    {NULL, wg3_1, wg3_2, wg3_3, wg3_4, wg3_5, wg3_6, wg3_7, wg3_8},
    {NULL, wg4_1, wg4_2, wg4_3, wg4_4, wg4_5, wg4_6}};

typedef struct wg_job {
    const vs_conv_fast *g;
    const wg_plan *f;
    const float *gyt, *xt; /* the channels-last copies */
    const float *x, *gy;   /* the originals (for the copies) */
    float *dw;
    volatile int failed;
} wg_job;

/* Images [b, e): gyt[n][pixel][o] = gy[n][o][pixel], zero for o past g->o: 16 channels x 16 pixels
 * at a time through a register transpose (float by float, the strided stores cost a tenth of the
 * weight gradient). */
T512 static void copy_gy(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const int64_t px = g->oh * g->ow, opad = j->f->opad;
    float *gyt = (float *)j->gyt;
    __m512 r[16];
    for (int64_t n = b; n < e; n++) {
        float *d = gyt + n * px * opad;
        const float *s = j->gy + n * g->o * px;
        for (int64_t o = 0; o < opad; o += 16) {
            const int64_t valid = g->o - o < 0 ? 0 : g->o - o < 16 ? g->o - o : 16;
            for (int64_t q = 0; q < px; q += 16) {
                const int64_t nq = px - q < 16 ? px - q : 16;
                vs_columns_of(s + (valid ? o * px : 0) + q, px, nq, valid, false, r);
#pragma GCC unroll 16
                for (int k = 0; k < 16; k++)
                    if (k < nq) _mm512_store_ps(d + (q + k) * opad + o, r[k]);
            }
        }
    }
}

/* Images [b, e): xt[n][row][col][c] = x[n][c][row - ph][col - pw], zero in the border: the border
 * zeroed, the image 16 channels x 16 columns at a time through a register transpose (one channel:
 * a row copy). */
T512 static void copy_x(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const wg_plan *f = j->f;
    const int64_t C = g->c, row = f->wq * C, img = f->hp * row, plane = g->h * g->w;
    float *xt = (float *)j->xt;
    __m512 r[16];
    for (int64_t n = b; n < e; n++) {
        float *d = xt + n * img;
        const float *s = j->x + n * C * plane;
        memset(d, 0, (size_t)(g->ph * row) * sizeof(float));
        memset(d + (g->ph + g->h) * row, 0, (size_t)(g->ph * row) * sizeof(float));
        for (int64_t y = 0; y < g->h; y++) {
            float *dr = d + (y + g->ph) * row;
            memset(dr, 0, (size_t)(g->pw * C) * sizeof(float));
            memset(dr + (g->pw + g->w) * C, 0, (size_t)(g->pw * C) * sizeof(float));
            dr += g->pw * C;
            if (C == 1) {
                memcpy(dr, s + y * g->w, (size_t)g->w * sizeof(float));
                continue;
            }
            /* the planes' rows four ahead: 16 planes read at once are 16 streams, more than the
             * hardware prefetcher follows (waiting on these loads was most of the copy) */
            if (y + 4 < g->h)
                for (int64_t c = 0; c < C; c++) __builtin_prefetch(s + c * plane + (y + 4) * g->w, 0, 3);
            for (int64_t c = 0; c < C; c += 16) {
                const int64_t valid = C - c < 16 ? C - c : 16;
                const __mmask16 m = (__mmask16)((1u << valid) - 1);
                for (int64_t x = 0; x < g->w; x += 16) {
                    const int64_t nx = g->w - x < 16 ? g->w - x : 16;
                    vs_columns_of(s + c * plane + y * g->w + x, plane, nx, valid, false, r);
#pragma GCC unroll 16
                    for (int k = 0; k < 16; k++)
                        if (k < nx) _mm512_mask_storeu_ps(dr + (x + k) * C + c, m, r[k]);
                }
            }
        }
    }
}

/* What task number task stands for: kernel row ki, the nt input channels from c0, the output
 * channels from o0. */
typedef struct wg_task {
    int64_t ki, c0, nt, o0;
} wg_task;

static wg_task wg_task_of(const vs_conv_fast *g, const wg_plan *f, int64_t task)
{
    const int64_t cb = task / g->kh % f->ncb, ob = task / g->kh / f->ncb, c0 = cb * g->c / f->ncb;
    return (wg_task){task % g->kh, c0, (cb + 1) * g->c / f->ncb - c0, ob * f->ob};
}

/* Tasks [b, e): task = (o block, c block, kernel row ki), image by image: each image's copies
 * are read from memory once for all the tasks (task by task, the batch was streamed from L3 once
 * per task: 30 times for CEM's conv), the tasks' running sums wait in a buffer between images. */
static void wg_tasks(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const wg_plan *f = j->f;
    const int64_t per_task = g->kw * f->v * f->t; /* vectors of sums */
    void *owned;
    __m512 *acc = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)((e - b) * per_task) * sizeof(__m512), &owned);
    if (!acc) {
        j->failed = 1;
        return;
    }
    const int64_t img = f->hp * f->wq * g->c, px = g->oh * g->ow, plane = g->h * g->w;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t task = b; task < e; task++) {
            const wg_task k = wg_task_of(g, f, task);
            wg_args a = {.ow = g->ow, .opad = f->opad, .first = n == 0};
            vs_conv_reach(g->oh, g->sh, k.ki * g->dh - g->ph, g->h, &a.i0, &a.i1);
            a.gy = j->gyt + n * px * f->opad + k.o0;
            if (f->row_tile) {
                /* the pixels some tap of the row reaches; the others' taps read the zero border,
                 * adding exact zeros: the same sums */
                int64_t lo;
                vs_conv_reach(g->ow, g->sw, (g->kw - 1) * g->dw - g->pw, g->w, &a.j0, &lo);
                vs_conv_reach(g->ow, g->sw, -g->pw, g->w, &lo, &a.j1);
                a.row = g->sh * f->wq * g->c, a.col = g->sw * g->c, a.cs = 1;
                a.x = j->xt + n * img + ((a.i0 * g->sh + k.ki * g->dh) * f->wq + a.j0 * g->sw) * g->c;
                a.acc = acc + (task - b) * per_task;
                WG_TILES[f->v - 1][g->kw * g->c](&a);
                continue;
            }
            /* the input read in place: the tiles' pixels are those whose taps land on the image */
            a.row = g->sh * g->w, a.col = g->sw, a.cs = plane;
            const float *xn = j->x + (n * g->c + k.c0) * plane;
            for (int64_t kj = 0; kj < g->kw; kj++) {
                vs_conv_reach(g->ow, g->sw, kj * g->dw - g->pw, g->w, &a.j0, &a.j1);
                a.x = a.i0 < a.i1 && a.j0 < a.j1
                          ? xn + (a.i0 * g->sh + k.ki * g->dh - g->ph) * g->w + a.j0 * g->sw + kj * g->dw - g->pw
                          : xn;
                a.acc = acc + (task - b) * per_task + kj * f->v * k.nt;
                WG_TILES[f->v - 1][k.nt](&a);
            }
        }
    /* dw[o, c, ki, kj] = lane o - o0 of vector (o - o0) / 16, column c - c0, of tile kj (a row
     * tile: its column kj C + c) of task (o0, c0, ki): written in dw's order, the kernel rows of a
     * run of tasks with the same blocks after one another, not the tiles' (o fastest strides dw by
     * c kh kw floats a store: a page apart for 64 channels and 4 x 4 kernels) */
    for (int64_t t0 = b, t1; t0 < e; t0 = t1) {
        const wg_task k = wg_task_of(g, f, t0);
        for (t1 = t0 + 1; t1 < e && wg_task_of(g, f, t1).ki > k.ki; t1++) continue;
        const int64_t no = g->o - k.o0 < f->ob ? g->o - k.o0 : f->ob;
        const int64_t per_kj = 16 * (f->row_tile ? g->c : f->v * k.nt), per_v = 16 * (f->row_tile ? g->kw * g->c : k.nt);
        for (int64_t l = 0; l < no; l++)
            for (int64_t t = 0; t < k.nt; t++) {
                float *d = j->dw + (((k.o0 + l) * g->c + k.c0 + t) * g->kh + k.ki) * g->kw;
                for (int64_t task = t0; task < t1; task++, d += g->kw) {
                    const float *st = (const float *)(acc + (task - b) * per_task) + (l / 16) * per_v + t * 16 + l % 16;
                    for (int64_t kj = 0; kj < g->kw; kj++) d[kj] = st[kj * per_kj];
                }
            }
    }
    free(owned);
}

/* fn over [0, n) in ranges of grain, on the calling thread when there is one item. */
static void run(wg_job *j, int64_t n, int64_t grain, vs_range_fn fn)
{
    if (n <= 1)
        fn(j, 0, n);
    else
        vs_parallel_for(n, grain, fn, j);
}
#endif

bool vs_conv_avx512_weight_grad_fits(const vs_conv_fast *g)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (vs_kernel_isa() != VS_ISA_AVX512 || g->flip) return false;
    /* Lanes of the tiles that are real channels: at least 0.7 with two or four vectors, 0.6 with
     * one, or 0.25 for short sums (96x25->10 k1 s2 at 0.31 ran its backward 1.2x as fast; with two
     * vectors at 0.31, 48x20->10 k3, 432 long, 7% slower; with one at 0.63, 1.23x as fast, and
     * 64x22->10 k7 s2 1.29x, 96x11->10 k7 s2 1.2x, 48x25->16 k5 s2 at 1.0 1.68x: forward +
     * backward, 1 thread); few pixels leave the sums too short. */
    const int v = wg_vectors(g->o, g->c);
    const double bar = vs_conv_avx512_short_sums(g) ? 0.25 : v == 1 ? 0.6 : 0.7;
    return wg_use(g->o, 16 * v) >= bar && g->oh * g->ow >= 16;
#else
    (void)g;
    return false;
#endif
}

bool vs_conv_avx512_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (g->n == 0) { /* no image writes the sums */
        memset(dw, 0, (size_t)(g->o * g->c * g->kh * g->kw) * sizeof(float));
        return true;
    }
    const wg_plan f = wg_plan_of(g);
    size_t ngy = (size_t)(g->n * g->oh * g->ow * f.opad), nx = f.row_tile ? (size_t)(g->n * f.hp * f.wq * g->c) : 0;
    void *owned;
    float *buf = vs_scratch_or_own(VS_SCRATCH_CONV_WEIGHTS, (ngy + nx) * sizeof(float), &owned);
    if (!buf) return false;
    wg_job j = {.g = g, .f = &f, .gyt = buf, .xt = buf + ngy, .x = x, .gy = gy, .dw = dw};
    run(&j, g->n, 1, copy_gy);
    if (f.row_tile) run(&j, g->n, 1, copy_x);
    /* two chunks of tasks per thread: few passes over the batch, some room to balance (a task's
     * sums do not depend on its chunk, so neither do the results on the thread count) */
    const int64_t tasks = f.nob * f.ncb * g->kh, chunks = 2 * (int64_t)vs_get_threads();
    run(&j, tasks, (tasks + chunks - 1) / chunks, wg_tasks);
    free(owned);
    return !j.failed;
#else
    (void)g, (void)x, (void)gy, (void)dw;
    return false;
#endif
}
