/* conv_avx512_wgrad.c - the AVX-512F weight gradient of conv2d without an im2col matrix:
 *   dw[o,c,ki,kj] = sum_{n,i,j} gy[n,o,i,j] x[n, c, i sh + ki dh - ph, j sw + kj dw - pw]
 *
 * Both operands are first copied channels-last: the output gradient as [n][pixel][o] (o padded to
 * whole 32-channel blocks with zeros), the input zero-bordered as [n][row][column][c].  A register
 * tile is 32 output channels (two vectors) x T <= 12 input channels at one tap: per output pixel two
 * vector loads of the gradient, T broadcasts of the input (T neighbouring floats) and 2 T
 * multiply-adds, over the pixels whose tap lands on the image (the border adds nothing).  A task
 * owns the taps of one kernel row for one block of o and one of c; it sums over images, then pixels
 * in row order, keeping its tiles in a buffer between images, so every element of dw is one fixed
 * sum whatever the thread count. */
#include "autograd/conv_avx512.h"
#include "autograd/kernels.h"
#include "versus/threads.h"

#include <stdlib.h>
#include <string.h>

#define OB 32     /* output channels of a tile: two vectors */
#define T_MAX 12  /* input channels of a tile */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f")))

typedef struct wg_plan {
    int64_t nob, ncb, t; /* blocks of o and of c, input channels per block (the last may have fewer) */
    int64_t opad;        /* o rounded up to OB: the gradient copy's pixel stride */
    int64_t hp, wq;      /* rows and columns of the bordered input */
} wg_plan;

static wg_plan wg_plan_of(const vs_conv_fast *g)
{
    wg_plan f;
    f.nob = (g->o + OB - 1) / OB;
    f.ncb = (g->c + T_MAX - 1) / T_MAX;
    f.t = (g->c + f.ncb - 1) / f.ncb;
    f.opad = f.nob * OB;
    f.hp = g->h + 2 * g->ph;
    f.wq = g->w + 2 * g->pw;
    return f;
}

typedef struct wg_args {
    const float *gy; /* the image's gradient copy at the tile's first output channel */
    const float *x;  /* the image's input copy at pixel (0, 0) + the tap + the tile's first channel */
    int64_t ow, opad, row, col; /* row, col: floats between input rows, columns (sh, sw apart) */
    int64_t i0, i1, j0, j1;     /* the output pixels whose tap lands on the image, not the border */
    __m512 *acc;                /* 2 T running sums */
} wg_args;

/* acc[v T + t] += sum over the image's pixels of gy[pixel][16 v ..] x[pixel's tap][t]. */
static inline __attribute__((always_inline)) T512 void wg_body(const wg_args *a, const int T)
{
    __m512 s0[T_MAX], s1[T_MAX];
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) s0[t] = a->acc[t], s1[t] = a->acc[T + t];
    for (int64_t i = a->i0; i < a->i1; i++) {
        const float *xs = a->x + i * a->row + a->j0 * a->col, *gy = a->gy + (i * a->ow + a->j0) * a->opad;
        for (int64_t j = a->j0; j < a->j1; j++, gy += a->opad, xs += a->col) {
            const __m512 g0 = _mm512_load_ps(gy), g1 = _mm512_load_ps(gy + 16);
#pragma GCC unroll 16
            for (int t = 0; t < T; t++) {
                const __m512 b = _mm512_set1_ps(xs[t]);
                s0[t] = _mm512_fmadd_ps(g0, b, s0[t]);
                s1[t] = _mm512_fmadd_ps(g1, b, s1[t]);
            }
        }
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) a->acc[t] = s0[t], a->acc[T + t] = s1[t];
}

typedef void (*wg_fn)(const wg_args *a);
#define WG_FN(T)                                                                                                                 \
    T512 static void wg_##T(const wg_args *a) { wg_body(a, T); }
WG_FN(1)
WG_FN(2)
WG_FN(3)
WG_FN(4)
WG_FN(5)
WG_FN(6)
WG_FN(7)
WG_FN(8)
WG_FN(9)
WG_FN(10)
WG_FN(11)
WG_FN(12)
static const wg_fn WG_TILES[T_MAX + 1] = {NULL, wg_1, wg_2, wg_3, wg_4, wg_5, wg_6, wg_7, wg_8, wg_9, wg_10, wg_11, wg_12};

typedef struct wg_job {
    const vs_conv_fast *g;
    const wg_plan *f;
    const float *gyt, *xt; /* the channels-last copies */
    const float *x, *gy;   /* the originals (for the copies) */
    float *dw;
    volatile int failed;
} wg_job;

/* Images [b, e): gyt[n][pixel][o] = gy[n][o][pixel], zero for o past g->o. */
static void copy_gy(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const int64_t px = g->oh * g->ow, opad = j->f->opad;
    float *gyt = (float *)j->gyt;
    for (int64_t n = b; n < e; n++) {
        float *d = gyt + n * px * opad;
        const float *s = j->gy + n * g->o * px;
        for (int64_t q = 0; q < px; q++) {
            for (int64_t o = 0; o < g->o; o++) d[q * opad + o] = s[o * px + q];
            for (int64_t o = g->o; o < opad; o++) d[q * opad + o] = 0.0f;
        }
    }
}

/* Images [b, e): xt[n][row][col][c] = x[n][c][row - ph][col - pw], zero in the border. */
static void copy_x(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const wg_plan *f = j->f;
    const int64_t img = f->hp * f->wq * g->c;
    float *xt = (float *)j->xt;
    for (int64_t n = b; n < e; n++) {
        float *d = xt + n * img;
        memset(d, 0, (size_t)img * sizeof(float));
        for (int64_t c = 0; c < g->c; c++)
            for (int64_t y = 0; y < g->h; y++) {
                const float *s = j->x + ((n * g->c + c) * g->h + y) * g->w;
                float *r = d + ((y + g->ph) * f->wq + g->pw) * g->c + c;
                for (int64_t x = 0; x < g->w; x++) r[x * g->c] = s[x];
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
    const int64_t cb = task / g->kh % f->ncb, ob = task / g->kh / f->ncb, c0 = cb * f->t;
    return (wg_task){task % g->kh, c0, g->c - c0 < f->t ? g->c - c0 : f->t, ob * OB};
}

/* Tasks [b, e): task = (o block, c block, kernel row ki), image by image: each image's copies
 * are read from memory once for all the tasks (task by task, the batch was streamed from L3 once
 * per task: 30 times for CEM's conv), the tasks' running sums wait in a buffer between images. */
static void wg_tasks(void *ctx, int64_t b, int64_t e)
{
    wg_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const wg_plan *f = j->f;
    const int64_t per_task = g->kw * 2 * T_MAX; /* vectors of sums */
    void *owned;
    __m512 *acc = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)((e - b) * per_task) * sizeof(__m512), &owned);
    if (!acc) {
        j->failed = 1;
        return;
    }
    memset(acc, 0, (size_t)((e - b) * per_task) * sizeof(__m512));
    const int64_t img = f->hp * f->wq * g->c, px = g->oh * g->ow;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t task = b; task < e; task++) {
            const wg_task k = wg_task_of(g, f, task);
            wg_args a = {.ow = g->ow, .opad = f->opad, .row = g->sh * f->wq * g->c, .col = g->sw * g->c};
            vs_conv_reach(g->oh, g->sh, k.ki * g->dh - g->ph, g->h, &a.i0, &a.i1);
            a.gy = j->gyt + n * px * f->opad + k.o0;
            for (int64_t kj = 0; kj < g->kw; kj++) {
                vs_conv_reach(g->ow, g->sw, kj * g->dw - g->pw, g->w, &a.j0, &a.j1);
                a.x = j->xt + n * img + (k.ki * g->dh * f->wq + kj * g->dw) * g->c + k.c0;
                a.acc = acc + (task - b) * per_task + kj * 2 * k.nt;
                WG_TILES[k.nt](&a);
            }
        }
    for (int64_t task = b; task < e; task++) {
        const wg_task k = wg_task_of(g, f, task);
        /* dw[o, c, ki, kj] = lane o - o0 of vector (o - o0) / 16 of tile kj, column c - c0 */
        const int64_t no = g->o - k.o0 < OB ? g->o - k.o0 : OB;
        for (int64_t kj = 0; kj < g->kw; kj++) {
            const float *s = (const float *)(acc + (task - b) * per_task + kj * 2 * k.nt);
            for (int64_t t = 0; t < k.nt; t++)
                for (int64_t l = 0; l < no; l++)
                    j->dw[(((k.o0 + l) * g->c + k.c0 + t) * g->kh + k.ki) * g->kw + kj] = s[((l / 16) * k.nt + t) * 16 + l % 16];
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
    /* Lanes of the two-vector tiles that are real channels; few pixels leave the sums too short. */
    const int64_t opad = (g->o + OB - 1) / OB * OB;
    return (double)g->o / (double)opad >= 0.7 && g->oh * g->ow >= 16;
#else
    (void)g;
    return false;
#endif
}

bool vs_conv_avx512_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const wg_plan f = wg_plan_of(g);
    size_t ngy = (size_t)(g->n * g->oh * g->ow * f.opad), nx = (size_t)(g->n * f.hp * f.wq * g->c);
    void *owned;
    float *buf = vs_scratch_or_own(VS_SCRATCH_CONV_WEIGHTS, (ngy + nx) * sizeof(float), &owned);
    if (!buf) return false;
    wg_job j = {.g = g, .f = &f, .gyt = buf, .xt = buf + ngy, .x = x, .gy = gy, .dw = dw};
    run(&j, g->n, 1, copy_gy);
    run(&j, g->n, 1, copy_x);
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
