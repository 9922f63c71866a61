/* conv_avx512.c - AVX-512F direct convolution (see conv_avx512.h), and the strided transpose as one
 * such convolution per output phase.
 *
 * A register tile is P output pixels (one row of 7, 14 or 16, or two rows of 7 or 8) by OB = 16 V
 * output channels: V P accumulators (4 x 7, 2 x 14 or 2 x 2 x 7: 28 of the 32 registers; or
 * 1 x 16 or 1 x 2 x 8).  Per tap (ki, kj) and input channel c it loads V vectors of packed weights and broadcasts P input values,
 * one per pixel, then does V P multiply-adds: the input is read in place from a zero-bordered copy
 * of the image (any stride: a broadcast does not care where its float lies), the weights are
 * packed once per call as [block][tap][c][OB].  A tap skips the tile's pixels that would read the
 * border (taps off the image, as oneDNN's direct kernels do: 12-18% of the products on the papers'
 * shapes): each tile runs a list of its taps, each with a class saying which rows and how many
 * columns at either end it leaves out; the lists are built once per call for the few distinct
 * kinds of tile (inner, at an edge, at a corner).  Output channels past o are zero weights; pixels
 * past the row's end read the copy's next floats (the buffer has slack) and are never stored. */
#include "autograd/conv_avx512.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include "autograd/conv_avx512_simd.h"

#define T512 __attribute__((target("avx512f")))
#define INLINE static inline __attribute__((always_inline))

/* Register tiles: V vectors of output channels x R output rows x PR pixels of a row (V R PR = 28
 * accumulators): wide for 64 channels and rows of 7, tall for 32 channels and rows of 14, pair for
 * 32 channels and rows of 7; and for few channels or rows of 8, 12 or 16 pixels, 16 channels x
 * 16 pixels (row: one row of up to 16, rows: two of up to 8), 16 accumulators, one weight vector
 * and a broadcast per multiply-add (on the sweep suite's rows, 1 thread: 48x25->16 k5 s2 1.96x
 * as fast as through im2col + GEMM, 96x10->24 k5 rows of 8 1.16x, 8x27->48 k7 s2 rows of 14 at
 * 48 channels 1.29x); and rows of exactly 12 or 9 pixels, 32 channels (24 or 18 accumulators) or 16
 * channels x 12, so that such rows fill their tiles (32x8x17x17 -> 64 k5 s2, rows of 9: 1.36x as
 * fast as in the wide tiles at use 0.64; 8x48x25x25 -> 16 k5 s2, rows of 12: 1.11x), and 16 channels
 * x 14 for rows of 14 at 16 or 48 channels (32x8x27x27 -> 48 k7 s2 1.05x as fast as in the row
 * tiles at use 0.875; 48 channels x rows of 7 there ran 4% slower on Zen 4).  On cores with
 * full-width zmm FMAs (Zen 5: two FMAs and at best two vector loads a cycle) a tile of one vector
 * is bound by its loads (1 + P per P multiply-adds), so there 48 channels x 7 or 8 pixels (21 or 24
 * accumulators, 3 + P loads) join, and best_kind weighs each kind by its loads per multiply-add:
 * 32x8x27x27 -> 48 k7 s2 forward 963 -> 845 us, 16x16x20x20 -> 48 k7 1249 -> 1189 us (1 thread). */
typedef struct tile_kind {
    int v, r, pr;
} tile_kind;
#define NKINDS 11
static const tile_kind KINDS[NKINDS] = {{4, 1, 7}, {2, 1, 14}, {2, 2, 7}, {1, 1, 16}, {1, 2, 8}, {2, 1, 12}, {2, 1, 9}, {1, 1, 12}, {1, 1, 14}, {3, 1, 7}, {3, 1, 8}};
#define TILE_MAX_FLOATS (16 * 16 * 4) /* 16 V channels x 16 pixel slots */

/* Classes of a tap within a tile: which pixels it reaches.  Columns: COL_CLASSES ranges
 * [CLIP_L, PR - CLIP_R) of each row (a tap reaching fewer columns runs the smallest class that
 * holds them: its extra products read the zero border or pixels never stored); rows, in two-row
 * tiles: both, the first only, the second only.  class = rows COL_CLASSES + column class. */
#define COL_CLASSES 7
#define MAX_CLIP 3
static const int CLIP_L[COL_CLASSES] = {0, 1, 2, 3, 0, 0, 0};
static const int CLIP_R[COL_CLASSES] = {0, 0, 0, 0, 1, 2, 3};

typedef struct fast_plan {
    int kind;          /* index into KINDS */
    int v, r, p;       /* the tile: vectors of output channels, rows, pixels per row */
    int64_t ob, nob;   /* channels per block, blocks */
    int64_t taps;      /* c kh kw: the depth of every sum */
    int64_t wq, plane; /* padded row stride, floats of one padded plane */
    int64_t img;       /* floats of one image's padded planes, with slack */
} fast_plan;

static int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

/* Share of the lanes of a kind's tiles that are real outputs. */
static double tile_use(const vs_conv_fast *g, const tile_kind *k)
{
    return (double)g->o / (double)round_up(g->o, 16 * k->v) * (double)g->ow / (double)round_up(g->ow, k->pr) * (double)g->oh /
           (double)round_up(g->oh, k->r);
}

/* Each tap of a tile's list costs about TAP_COST multiply-adds of dispatch and addressing besides
 * its c V R PR multiply-adds: with one input channel (32x1x29x29 -> 32 k5), tiles of 18 accumulators
 * at use 1 ran 13% slower than tiles of 28 at use 0.96. */
#define TAP_COST 10.0

/* The kind with the least time per useful lane, (1 + TAP_COST / (c V R PR)) / use (the first of
 * equals), times (V + R PR) / (V R PR) where that exceeds 1 on full-width cores (load-bound tiles). */
static int best_kind(const vs_conv_fast *g)
{
    int best = 0;
    double cost = 0;
    const bool full_width = vs_avx512_full_width();
    for (int k = 0; k < NKINDS; k++) {
        const tile_kind *t = &KINDS[k];
        if (t->v == 3 && !full_width) continue; /* measured only on full-width cores */
        const double u = tile_use(g, t), c = (1.0 + TAP_COST / (double)(g->c * t->v * t->r * t->pr)) / (u > 0 ? u : 1e-9) *
                                             (full_width ? vs_avx512_tile_cycles(t->v, t->r * t->pr) : 1.0);
        if (k == 0 || c < cost) best = k, cost = c; /* kind 0 is never skipped */
    }
    return best;
}

static fast_plan plan_of(const vs_conv_fast *g)
{
    fast_plan f;
    f.kind = best_kind(g);
    f.v = KINDS[f.kind].v;
    f.r = KINDS[f.kind].r;
    f.p = KINDS[f.kind].pr;
    f.ob = 16 * f.v;
    f.nob = (g->o + f.ob - 1) / f.ob;
    f.taps = g->c * g->kh * g->kw;
    f.wq = g->w + 2 * g->pw;
    f.plane = (g->h + 2 * g->ph) * f.wq;
    /* slack: the ragged last tile's pixels and rows read past the last plane's end */
    f.img = g->c * f.plane + f.p * g->sw + (f.r - 1) * g->sh * f.wq + 16;
    return f;
}

/* One tap (ki, kj) of a tile: where its input lies from the tile's first pixel at tap (0, 0), its
 * index ki kw + kj among the packed weights, and its class (which of the tile's pixels it reaches). */
typedef struct tile_tap {
    int64_t x;
    int32_t t, cls;
} tile_tap;

typedef struct tile_args {
    const float *x;        /* the tile's first pixel, tap (0, 0), channel 0, in the padded image */
    const float *w;        /* the block's packed weights: [tap][c][OB] */
    const tile_tap *taps;  /* the taps that reach one of the tile's pixels, in (ki, kj) order */
    int64_t ntaps, c, plane, sw, rs; /* rs: floats between the tile's input rows */
    float *out; /* OB channels x 16 floats: pixel p of the R PR (row-major) at out[l 16 + p] */
} tile_args;

/* acc[v][p] += sum over the nc channels of one tap, for the pixels p of rows [RLO, RHI) and
 * columns [LO, HI) of the tile only (xs: the tap's input for channel 0, w: its packed weights). */
INLINE T512 void tap_sums(__m512 acc[4][16], const float *xs, const float *w, int64_t nc, int64_t plane, int64_t rs,
                          const int V, const int R, const int PR, const int64_t S, const int LO, const int HI, const int RLO,
                          const int RHI)
{
    const int P = R * PR;
    /* 28 accumulators, a broadcast and V weight vectors: with V = 4 that is 33 registers, so the
     * last vector is read from L1 by each of its FMAs (GCC would otherwise keep it and spill an
     * accumulator to the stack, a store and a load per tap) */
    const int VR = V * P + V + 1 > 32 ? V - 1 : V;
    for (int64_t c = 0; c < nc; c++, xs += plane, w += 16 * V) {
        __m512 wv[4];
#pragma GCC unroll 16
        for (int v = 0; v < VR; v++) wv[v] = _mm512_load_ps(w + 16 * v);
#pragma GCC unroll 16
        for (int p = 0; p < P; p++) {
            if (p / PR < RLO || p / PR >= RHI || p % PR < LO || p % PR >= HI) continue;
            const __m512 b = _mm512_set1_ps(xs[(p / PR) * rs + (p % PR) * S]);
#pragma GCC unroll 16
            for (int v = 0; v < VR; v++) acc[v][p] = _mm512_fmadd_ps(wv[v], b, acc[v][p]);
            if (VR < V)
                __asm__("vfmadd231ps %1, %2, %0" : "+v"(acc[V - 1][p]) : "m"(*(const __m512 *)(w + 16 * (V - 1))), "v"(b));
        }
    }
}

/* The tile's sums, V vectors x R rows x PR pixels, S the stride along the row (0: a->sw): tap by
 * tap of the list, each over every input channel. */
INLINE T512 void tile_body(const tile_args *a, const int V, const int R, const int PR, const int64_t S_)
{
    const int64_t S = S_ ? S_ : a->sw;
    const int P = R * PR;
    __m512 acc[4][16];
#pragma GCC unroll 16
    for (int v = 0; v < V; v++)
#pragma GCC unroll 16
        for (int p = 0; p < P; p++) acc[v][p] = _mm512_setzero_ps();
    const int64_t per_tap = a->c * 16 * V;
    for (int64_t e = 0; e < a->ntaps; e++) {
        const float *xs = a->x + a->taps[e].x, *w = a->w + a->taps[e].t * per_tap;
        switch (a->taps[e].cls) {
#define TAP_CASE(k)                                                                                                              \
    case k:                                                                                                                      \
        tap_sums(acc, xs, w, a->c, a->plane, a->rs, V, R, PR, S, CLIP_L[k], PR - CLIP_R[k], 0, R);                               \
        break;                                                                                                                   \
    case COL_CLASSES + k:                                                                                                        \
        if (R > 1) tap_sums(acc, xs, w, a->c, a->plane, a->rs, V, R, PR, S, CLIP_L[k], PR - CLIP_R[k], 0, 1);                    \
        break;                                                                                                                   \
    case 2 * COL_CLASSES + k:                                                                                                    \
        if (R > 1) tap_sums(acc, xs, w, a->c, a->plane, a->rs, V, R, PR, S, CLIP_L[k], PR - CLIP_R[k], 1, 2);                    \
        break;
            TAP_CASE(0)
            TAP_CASE(1)
            TAP_CASE(2)
            TAP_CASE(3)
            TAP_CASE(4)
            TAP_CASE(5)
            TAP_CASE(6)
#undef TAP_CASE
        default:
            break;
        }
    }
#pragma GCC unroll 16
    for (int v = 0; v < V; v++) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int p = 0; p < 16; p++) r[p] = p < P ? acc[v][p] : _mm512_setzero_ps();
        vs_transpose16(r);
#pragma GCC unroll 16
        for (int l = 0; l < 16; l++) _mm512_store_ps(a->out + (v * 16 + l) * 16, r[l]);
    }
}

typedef void (*tile_fn)(const tile_args *a);
/* Each on a 64-byte boundary, so that where the linker puts this file does not move its loops against
 * the fetch blocks (a shift of 32 bytes, from an edit elsewhere in the library, cost a stride-2 transpose
 * 10%). */
#define TILE_FN(name, K, S)                                                                                                      \
    T512 __attribute__((aligned(64))) static void name(const tile_args *a) { tile_body(a, KINDS[K].v, KINDS[K].r, KINDS[K].pr, S); }
TILE_FN(tile_wide_s1, 0, 1)
TILE_FN(tile_wide_s2, 0, 2)
TILE_FN(tile_wide_sn, 0, 0)
TILE_FN(tile_tall_s1, 1, 1)
TILE_FN(tile_tall_s2, 1, 2)
TILE_FN(tile_tall_sn, 1, 0)
TILE_FN(tile_pair_s1, 2, 1)
TILE_FN(tile_pair_s2, 2, 2)
TILE_FN(tile_pair_sn, 2, 0)
TILE_FN(tile_row_s1, 3, 1)
TILE_FN(tile_row_s2, 3, 2)
TILE_FN(tile_row_sn, 3, 0)
TILE_FN(tile_rows_s1, 4, 1)
TILE_FN(tile_rows_s2, 4, 2)
TILE_FN(tile_rows_sn, 4, 0)
TILE_FN(tile_r12_s1, 5, 1)
TILE_FN(tile_r12_s2, 5, 2)
TILE_FN(tile_r12_sn, 5, 0)
TILE_FN(tile_r9_s1, 6, 1)
TILE_FN(tile_r9_s2, 6, 2)
TILE_FN(tile_r9_sn, 6, 0)
TILE_FN(tile_one12_s1, 7, 1)
TILE_FN(tile_one12_s2, 7, 2)
TILE_FN(tile_one12_sn, 7, 0)
TILE_FN(tile_one14_s1, 8, 1)
TILE_FN(tile_one14_s2, 8, 2)
TILE_FN(tile_one14_sn, 8, 0)
TILE_FN(tile_three_s1, 9, 1)
TILE_FN(tile_three_s2, 9, 2)
TILE_FN(tile_three_sn, 9, 0)
TILE_FN(tile_three8_s1, 10, 1)
TILE_FN(tile_three8_s2, 10, 2)
TILE_FN(tile_three8_sn, 10, 0)
static const tile_fn TILES[NKINDS][3] = {{tile_wide_sn, tile_wide_s1, tile_wide_s2}, {tile_tall_sn, tile_tall_s1, tile_tall_s2},
                                         {tile_pair_sn, tile_pair_s1, tile_pair_s2}, {tile_row_sn, tile_row_s1, tile_row_s2},
                                         {tile_rows_sn, tile_rows_s1, tile_rows_s2}, {tile_r12_sn, tile_r12_s1, tile_r12_s2},
                                         {tile_r9_sn, tile_r9_s1, tile_r9_s2}, {tile_one12_sn, tile_one12_s1, tile_one12_s2},
                                         {tile_one14_sn, tile_one14_s1, tile_one14_s2}, {tile_three_sn, tile_three_s1, tile_three_s2},
                                         {tile_three8_sn, tile_three8_s1, tile_three8_s2}};

static tile_fn tile_for(const fast_plan *f, int64_t sw) { return TILES[f->kind][sw <= 2 ? sw : 0]; }

typedef struct pack_job {
    const vs_conv_fast *g;
    const fast_plan *f;
    const float *w;
    float *packed;
} pack_job;

/* Channels [16 b, 16 e) of W(o, c, ki, kj) in the blocked layout (a range for vs_parallel_for):
 * packed[(b taps + (ki kw + kj) C + c) OB + l] for o = b OB + l, C = g->c; zero for o >= g->o.
 * 16 channels x 16 taps at a time through a register transpose: scalar loops over the short
 * kk-tap runs cost 8% of the tile time, and this runs on every call. */
T512 static void pack_groups(void *ctx, int64_t b, int64_t e)
{
    const pack_job *p = ctx;
    const vs_conv_fast *g = p->g;
    const fast_plan *f = p->f;
    const float *w = p->w;
    float *packed = p->packed;
    const int64_t kk = g->kh * g->kw;
#define SLOT(ch, t) ((t) * g->c + (ch)) /* the place of tap t of channel ch in a block */
    for (int64_t o = 16 * b; o < 16 * e; o += 16) {
        const int64_t valid = g->o - o < 0 ? 0 : g->o - o < 16 ? g->o - o : 16;
        float *d = packed + (o / f->ob) * f->taps * f->ob + o % f->ob;
        __m512 r[16];
        if (!g->flip) {
            /* W(o, .) is row o of w as [o][taps] */
            int64_t c = 0, t = 0; /* tap q's channel and (ki, kj): counted, not divided (a division per
                                   * store was most of the packing's time) */
            for (int64_t q = 0; q < f->taps; q += 16) {
                const int64_t nq = f->taps - q < 16 ? f->taps - q : 16;
                /* the rows' floats 4 lines ahead (waiting on these loads was most of the packing) */
                for (int64_t i = 0; i < valid; i++) __builtin_prefetch(w + (o + i) * f->taps + q + 64, 0, 3);
                vs_columns_of(w + (valid ? o * f->taps : 0) + q, f->taps, nq, valid, false, r);
                for (int64_t k = 0; k < nq; k++) {
                    _mm512_store_ps(d + SLOT(c, t) * f->ob, r[k]);
                    if (++t == kk) t = 0, c++;
                }
            }
        } else if (kk <= 16) {
            /* W(o, c, t) = w[c, o, kk - 1 - t]: channel c's rows o, reversed */
            for (int64_t c = 0; c < g->c; c++) {
                vs_columns_of(w + (c * g->o + (valid ? o : 0)) * kk, kk, kk, valid, true, r);
                for (int64_t k = 0; k < kk; k++) _mm512_store_ps(d + SLOT(c, k) * f->ob, r[k]);
            }
        } else {
            for (int64_t l = 0; l < 16; l++)
                for (int64_t c = 0; c < g->c; c++) {
                    float *dl = d + SLOT(c, 0) * f->ob + l;
                    if (l >= valid) {
                        for (int64_t t = 0; t < kk; t++) dl[t * g->c * f->ob] = 0.0f;
                        continue;
                    }
                    const float *s = w + (c * g->o + o + l) * kk + kk - 1; /* tap t reads s[-t]: rotated */
                    for (int64_t t = 0; t < kk; t++) dl[t * g->c * f->ob] = s[-t];
                }
        }
    }
#undef SLOT
}

/* Every block, 16 channels at a time over the pool (on one thread, a serial part of every call). */
static void pack_weights(const vs_conv_fast *g, const fast_plan *f, const float *w, float *packed)
{
    pack_job p = {g, f, w, packed};
    vs_parallel_for(f->nob * f->ob / 16, 1, pack_groups, &p);
}

/* The lanes of each 16 floats of a padded plane that hold the image (the others are border):
 * mask[k] bit i for float 16 k + i.  Planes are contiguous in both the image and its padded
 * copy, so one pattern serves every plane of every image. */
static void pad_masks(const vs_conv_fast *g, const fast_plan *f, uint16_t *mask)
{
    for (int64_t k = 0; k < (f->plane + 15) / 16; k++) {
        unsigned m = 0;
        for (int64_t i = 0; i < 16 && 16 * k + i < f->plane; i++) {
            const int64_t row = (16 * k + i) / f->wq - g->ph, col = (16 * k + i) % f->wq - g->pw;
            if (row >= 0 && row < g->h && col >= 0 && col < g->w) m |= 1u << i;
        }
        mask[k] = (uint16_t)m;
    }
}

/* dst = image x's c planes with ph zero rows and pw zero columns around them: each 16 floats of
 * a padded plane in one store, their image floats in one expanding load (row by row, the short
 * rows of 7 x 7 planes cost more than the convolution's packing). */
T512 static void pad_image(const vs_conv_fast *g, const fast_plan *f, const uint16_t *mask, const float *restrict x,
                           float *restrict dst)
{
    const int64_t chunks = (f->plane + 15) / 16, tail = f->plane - 16 * (chunks - 1);
    for (int64_t c = 0; c < g->c; c++) {
        float *restrict d = dst + c * f->plane;
        for (int64_t k = 0; k + 1 < chunks; k++) {
            _mm512_storeu_ps(d + 16 * k, _mm512_maskz_expandloadu_ps(mask[k], x));
            x += __builtin_popcount(mask[k]);
        }
        const __m512 last = _mm512_maskz_expandloadu_ps(mask[chunks - 1], x);
        _mm512_mask_storeu_ps(d + 16 * (chunks - 1), (__mmask16)((1u << tail) - 1), last);
        x += __builtin_popcount(mask[chunks - 1]);
    }
}

/* ---- the taps of each kind of tile ------------------------------------------------------------
 * A tile's taps depend on where it lies only through which of its rows each kernel row reaches
 * and which of its columns each kernel column reaches: tile rows (and columns) with the same such
 * pattern share one list, so an image of any size has a handful of lists (inner tiles, edges,
 * corners), built once per call. */

typedef struct tap_lists {
    int32_t *row_kind, *col_kind; /* per row (column) of tiles: the number of its pattern */
    int64_t ncol_kinds;           /* column patterns */
    tile_tap *taps;               /* per (row pattern, column pattern): kh kw slots, ... */
    int64_t *count;               /* ... of which the first count[] are used */
    void *mem, *lists;            /* the two allocations: kinds, then taps and counts */
} tap_lists;

/* Bit r set when kernel row ki reaches row r of the tile at output row i: a row that exists, whose
 * input row is on the image. */
static int rows_reached(const vs_conv_fast *g, const fast_plan *f, int64_t i, int64_t ki)
{
    int64_t lo, hi;
    vs_conv_reach(g->oh, g->sh, g->y0 * g->sh + ki * g->dh - g->ph, g->h, &lo, &hi);
    int m = 0;
    for (int r = 0; r < f->r; r++)
        if (i + r >= lo && i + r < hi) m |= 1 << r;
    return m;
}

/* 1 + the column class of kernel column kj in the tile at output column j0; 0 when it reaches
 * none of the tile's columns (past the row's end, or input columns in the border). */
static int cols_reached(const vs_conv_fast *g, const fast_plan *f, int64_t j0, int64_t kj)
{
    int64_t lo, hi;
    vs_conv_reach(g->ow, g->sw, g->x0 * g->sw + kj * g->dw - g->pw, g->w, &lo, &hi);
    lo = lo > j0 ? lo - j0 : 0;
    hi = hi < j0 + f->p ? hi - j0 : f->p;
    if (hi <= lo) return 0;
    const int64_t cl = lo < MAX_CLIP ? lo : MAX_CLIP, cr = f->p - hi < MAX_CLIP ? f->p - hi : MAX_CLIP;
    /* both ends clipped (a kernel wider than the row): the larger clip, the rest reads zeros */
    return 1 + (int)(cl >= cr ? cl : MAX_CLIP + cr);
}

/* Number the patterns sig[t k .. t k + k) of items t < n: kind[t] = the pattern's number, first[q]
 * = the first item of pattern q; returns the number of patterns. */
static int64_t group_patterns(const signed char *sig, int64_t n, int64_t k, int32_t *kind, int64_t *first)
{
    int64_t np = 0;
    for (int64_t t = 0; t < n; t++) {
        int64_t q = 0;
        while (q < np && memcmp(sig + first[q] * k, sig + t * k, (size_t)k)) q++;
        if (q == np) first[np++] = t;
        kind[t] = (int32_t)q;
    }
    return np;
}

static void tap_lists_free(tap_lists *L)
{
    free(L->mem);
    free(L->lists);
}

/* The lists of g's tiles (f's kind); false when out of memory.  Free with tap_lists_free. */
static bool tap_lists_build(const vs_conv_fast *g, const fast_plan *f, tap_lists *L)
{
    const int64_t nrow = (g->oh + f->r - 1) / f->r, ncol = (g->ow + f->p - 1) / f->p, kk = g->kh * g->kw;
    const size_t ints = (size_t)(nrow + ncol), sig = (size_t)(nrow * g->kh + ncol * g->kw);
    *L = (tap_lists){0};
    L->mem = malloc(ints * (sizeof(int32_t) + sizeof(int64_t)) + sig);
    if (!L->mem) return false;
    int64_t *first = L->mem;
    L->row_kind = (int32_t *)(first + ints);
    L->col_kind = L->row_kind + nrow;
    signed char *rsig = (signed char *)(L->col_kind + ncol), *csig = rsig + nrow * g->kh;
    for (int64_t t = 0; t < nrow; t++)
        for (int64_t ki = 0; ki < g->kh; ki++) rsig[t * g->kh + ki] = (signed char)rows_reached(g, f, t * f->r, ki);
    for (int64_t t = 0; t < ncol; t++)
        for (int64_t kj = 0; kj < g->kw; kj++) csig[t * g->kw + kj] = (signed char)cols_reached(g, f, t * f->p, kj);
    const int64_t nrk = group_patterns(rsig, nrow, g->kh, L->row_kind, first);
    int64_t *cfirst = first + nrk;
    const int64_t nck = group_patterns(csig, ncol, g->kw, L->col_kind, cfirst);
    L->ncol_kinds = nck;
    L->lists = malloc((size_t)(nrk * nck) * ((size_t)kk * sizeof(tile_tap) + sizeof(int64_t)));
    if (!L->lists) {
        tap_lists_free(L);
        return false;
    }
    L->taps = L->lists;
    L->count = (int64_t *)(L->taps + nrk * nck * kk);
    const int full = (1 << f->r) - 1;
    for (int64_t rk = 0; rk < nrk; rk++)
        for (int64_t ck = 0; ck < nck; ck++) {
            tile_tap *list = L->taps + (rk * nck + ck) * kk;
            int64_t n = 0;
            for (int64_t ki = 0; ki < g->kh; ki++) {
                const int rows = rsig[first[rk] * g->kh + ki];
                if (!rows) continue;
                for (int64_t kj = 0; kj < g->kw; kj++) {
                    const int cols = csig[cfirst[ck] * g->kw + kj];
                    if (!cols) continue;
                    /* rows: 0 every row, 1 the first only, 2 the second only */
                    list[n++] = (tile_tap){ki * g->dh * f->wq + kj * g->dw, (int32_t)(ki * g->kw + kj),
                                           (rows == full ? 0 : rows) * COL_CLASSES + cols - 1};
                }
            }
            L->count[rk * nck + ck] = n;
        }
    return true;
}

/* Where output (n, o, i, j) lies: y + n img + o plane + i row + j col floats (col 1 or 2, or any
 * other stride through a scatter): the dense [n, o, oh, ow] tensor, or the places of one output
 * phase of a strided transpose in the whole output. */
typedef struct out_layout {
    int64_t img, plane, row, col;
} out_layout;

/* One convolution of a job: its geometry, plan, tap lists, packed weights and output.  The parts
 * of a job read the same input with the same border (the output phases of a strided transpose),
 * so each image is bordered once for all of them. */
typedef struct conv_part {
    vs_conv_fast g;
    fast_plan f;
    tap_lists lists;
    float *packed;
    float *y;
    out_layout lay;
} conv_part;

typedef struct fast_job {
    const conv_part *parts;
    int64_t nparts;
    int64_t img; /* floats of the bordered copy: the most any part reads */
    const float *x, *bias;
    const uint16_t *pad_mask; /* see pad_masks */
    bool accumulate;
    volatile int failed;
} fast_job;

/* The tile's np pixels x no channels (out: channel-major, 16 floats a channel) into the output
 * rows at y, plane floats apart, pixels col floats apart: y = out + (accumulate ? y : bias, or 0
 * without one).  Column stride 2 (a stride-2 transpose's output phase): each half of the pixels
 * spread over the even lanes of 16 floats by one expanding move; larger strides: a gather and a
 * scatter. */
T512 static void store_tile(const float *restrict out, int64_t np, int64_t no, bool accumulate, const float *bias,
                            float *restrict y, int64_t plane, int64_t col)
{
    const __mmask16 m = (__mmask16)((1u << np) - 1);
    const __mmask16 even = 0x5555, mlo = (__mmask16)(even & ((1u << (2 * (np < 8 ? np : 8))) - 1)),
                    mhi = (__mmask16)(np > 8 ? even & ((1u << (2 * (np - 8))) - 1) : 0);
    const __m512i lanes = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32((int)col));
    for (int64_t l = 0; l < no; l++) {
        float *restrict d = y + l * plane;
        const __m512 s = _mm512_loadu_ps(out + l * 16); /* row r of a two-row tile starts at out + 7 r */
        const __m512 b = _mm512_set1_ps(bias ? bias[l] : 0.0f);
        if (col == 1) {
            const __m512 base = accumulate ? _mm512_maskz_loadu_ps(m, d) : b;
            _mm512_mask_storeu_ps(d, m, _mm512_add_ps(base, s));
        } else if (col == 2) {
            const __m512 lo = _mm512_maskz_expand_ps(even, s), hi = _mm512_maskz_expand_ps(even, _mm512_shuffle_f32x4(s, s, 0xee));
            _mm512_mask_storeu_ps(d, mlo, _mm512_add_ps(accumulate ? _mm512_maskz_loadu_ps(mlo, d) : b, lo));
            if (mhi) _mm512_mask_storeu_ps(d + 16, mhi, _mm512_add_ps(accumulate ? _mm512_maskz_loadu_ps(mhi, d + 16) : b, hi));
        } else {
            const __m512 base = accumulate ? _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lanes, d, 4) : b;
            _mm512_mask_i32scatter_ps(d, m, lanes, _mm512_add_ps(base, s), 4);
        }
    }
}

/* Part p's tiles of one image, read from its bordered copy pad. */
static void part_image(const fast_job *j, const conv_part *p, int64_t n, const float *pad, float *out)
{
    const vs_conv_fast *g = &p->g;
    const fast_plan *f = &p->f;
    const tap_lists *L = &p->lists;
    const out_layout *lay = &p->lay;
    const tile_fn tile = tile_for(f, g->sw);
    const int64_t kk = g->kh * g->kw;
    tile_args a = {.c = g->c, .plane = f->plane, .sw = g->sw, .rs = g->sh * f->wq, .out = out};
    for (int64_t b = 0; b < f->nob; b++) {
        a.w = p->packed + b * f->taps * f->ob;
        const int64_t o0 = b * f->ob, no = g->o - o0 < f->ob ? g->o - o0 : f->ob;
        for (int64_t i = 0; i < g->oh; i += f->r)
            for (int64_t j0 = 0; j0 < g->ow; j0 += f->p) {
                a.x = pad + (i + g->y0) * g->sh * f->wq + (j0 + g->x0) * g->sw;
                const int64_t kind = L->row_kind[i / f->r] * L->ncol_kinds + L->col_kind[j0 / f->p];
                a.taps = L->taps + kind * kk;
                a.ntaps = L->count[kind];
                const int64_t np = g->ow - j0 < f->p ? g->ow - j0 : f->p;
                float *y = p->y + n * lay->img + o0 * lay->plane + i * lay->row + j0 * lay->col;
                /* the output rows are seldom in cache: ask for them now, so that they arrive
                 * while the tile computes instead of stalling its stores (not for sums of fewer
                 * than 64 taps: a first layer's tile computes for less time than its 2 r no
                 * prefetches take, 12% of WGAN-GP's 1 -> 64 channel conv) */
                for (int64_t r = 0; r < f->r && i + r < g->oh && f->taps >= 64; r++)
                    for (int64_t l = 0; l < no; l++) {
                        __builtin_prefetch(y + l * lay->plane + r * lay->row, 1, 3);
                        __builtin_prefetch(y + l * lay->plane + r * lay->row + (np - 1) * lay->col, 1, 3);
                    }
                tile(&a);
                for (int64_t r = 0; r < f->r && i + r < g->oh; r++)
                    store_tile(out + r * f->p, np, no, j->accumulate, j->bias ? j->bias + o0 : NULL, y + r * lay->row, lay->plane,
                               lay->col);
            }
    }
}

/* Images [begin, end): bordered into this thread's scratch once, then every part tile by tile. */
static void images_range(void *ctx, int64_t begin, int64_t end)
{
    fast_job *j = ctx;
    const vs_conv_fast *g = &j->parts[0].g;
    const fast_plan *f = &j->parts[0].f;
    void *owned;
    float *pad = vs_scratch_or_own(VS_SCRATCH_CONV, (size_t)j->img * sizeof(float), &owned);
    if (!pad) {
        j->failed = 1;
        return;
    }
    float out[TILE_MAX_FLOATS] __attribute__((aligned(64)));
    /* the slack past the last plane (pad_image writes the planes, borders included) */
    memset(pad + g->c * f->plane, 0, (size_t)(j->img - g->c * f->plane) * sizeof(float));
    for (int64_t n = begin; n < end; n++) {
        pad_image(g, f, j->pad_mask, j->x + n * g->c * g->h * g->w, pad);
        for (int64_t q = 0; q < j->nparts; q++) part_image(j, &j->parts[q], n, pad, out);
    }
    free(owned);
}

static void parts_free(conv_part *parts, int64_t np)
{
    for (int64_t q = 0; q < np; q++) tap_lists_free(&parts[q].lists);
}

/* The plans and tap lists of parts [0, np) (g, y and lay set), their packed weights' places in one
 * block with the border mask after them (*mem, free it and then parts_free); false when out of
 * memory. */
static bool parts_prepare(conv_part *parts, int64_t np, uint16_t **mask, void **mem)
{
    size_t floats = 0;
    for (int64_t q = 0; q < np; q++) parts[q].lists = (tap_lists){0};
    for (int64_t q = 0; q < np; q++) {
        parts[q].f = plan_of(&parts[q].g);
        if (!tap_lists_build(&parts[q].g, &parts[q].f, &parts[q].lists)) {
            parts_free(parts, q);
            return false;
        }
        floats += (size_t)(parts[q].f.nob * parts[q].f.taps * parts[q].f.ob);
    }
    const size_t chunks = (size_t)(parts[0].f.plane + 15) / 16;
    float *packed = vs_scratch_or_own(VS_SCRATCH_CONV_WEIGHTS, floats * sizeof(float) + chunks * sizeof(uint16_t), mem);
    if (!packed) {
        parts_free(parts, np);
        return false;
    }
    for (int64_t q = 0; q < np; q++) {
        parts[q].packed = packed;
        packed += parts[q].f.nob * parts[q].f.taps * parts[q].f.ob;
    }
    *mask = (uint16_t *)packed;
    pad_masks(&parts[0].g, &parts[0].f, *mask);
    return true;
}

/* y = (accumulate ? y : bias, or 0) + conv(x, W) for every part (weights packed); false when out
 * of memory. */
static bool parts_run(const conv_part *parts, int64_t np, const uint16_t *mask, const float *x, const float *bias, bool accumulate)
{
    fast_job j = {.parts = parts, .nparts = np, .x = x, .bias = bias, .pad_mask = mask, .accumulate = accumulate};
    for (int64_t q = 0; q < np; q++) j.img = parts[q].f.img > j.img ? parts[q].f.img : j.img;
    const int64_t n = parts[0].g.n;
    /* chunks of a few images: the slack of the bordered copy is cleared once a chunk */
    if (n <= 1)
        images_range(&j, 0, n);
    else
        vs_parallel_for(n, (n + 15) / 16, images_range, &j);
    return !j.failed;
}
#endif

bool vs_conv_avx512_short_sums(const vs_conv_fast *g) { return g->c * g->kh * g->kw < 256; }

/* Whether the kernels run now and suit g at tiles with at least min_use of their lanes useful
 * (channels past o and pixels past a row's end are the unused ones). */
static bool fits_at(const vs_conv_fast *g, double min_use)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (vs_kernel_isa() != VS_ISA_AVX512) return false;
    if (g->c * g->kh * g->kw < 16) return false;
    return tile_use(g, &KINDS[best_kind(g)]) >= min_use;
#else
    (void)g, (void)min_use;
    return false;
#endif
}

/* Bars of tile use: 0.25 for short sums, else 0.6 (64x22->10 k7 s2 in two rows of 8 at use 0.63 ran
 * 1.4x as fast as through GEMM; 0.57 on 96x10->64 k3 in the wide tiles was 13% slower, before the
 * 16 x 16 tiles took it at use 1). */
bool vs_conv_avx512_fits(const vs_conv_fast *g) { return fits_at(g, vs_conv_avx512_short_sums(g) ? 0.25 : 0.6); }

bool vs_conv_avx512_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate,
                            float *y)
{
#if defined(__x86_64__) && defined(__GNUC__)
    conv_part p = {.g = *g, .y = y, .lay = {g->o * g->oh * g->ow, g->oh * g->ow, g->ow, 1}};
    uint16_t *mask;
    void *owned;
    if (!parts_prepare(&p, 1, &mask, &owned)) return false;
    pack_weights(&p.g, &p.f, w, p.packed);
    const bool ok = parts_run(&p, 1, mask, x, bias, accumulate);
    free(owned);
    parts_free(&p, 1);
    return ok;
#else
    (void)g, (void)x, (void)w, (void)bias, (void)accumulate, (void)y;
    return false;
#endif
}

/* ---- strided transpose: one stride-1 conv per output phase --------------------------------------
 * Along one dimension (stride s, padding p, kernel k): output position y receives the taps
 * ki = r + s m (r = (y + p) mod s, m < M = ceil((k - r) / s)) from input position
 * U - m, U = (y + p - r) / s.  So the positions y = y0 + s Y of phase r (y0 the first) are a
 * stride-1 conv of the input, padded by M - 1, with those taps flipped, read from row Y + e,
 * e = (y0 + p - r) / s; rows past the input's reach get nothing. */

typedef struct phase_dim {
    int64_t y0, count, taps, e; /* first output position, positions, taps M, row offset e */
} phase_dim;

/* Phase r of a dimension: in output length h, input length ih, kernel k, stride s, padding p. */
static phase_dim phase_of(int64_t r, int64_t h, int64_t ih, int64_t k, int64_t s, int64_t p)
{
    phase_dim d;
    d.y0 = ((r - p) % s + s) % s;
    d.count = d.y0 < h ? (h - 1 - d.y0) / s + 1 : 0;
    d.taps = r < k ? (k - r + s - 1) / s : 0;
    d.e = (d.y0 + p - r) / s;
    /* rows U = Y + e past ih + M - 2 (the padded input's last) receive nothing */
    const int64_t last = ih + d.taps - 1 - d.e;
    if (d.count > last) d.count = last > 0 ? last : 0;
    return d;
}

/* The stride-1 conv of phase (ry, rx): input gy, output [n, c, rows.count, cols.count]. */
static vs_conv_fast phase_conv(const vs_conv_fast *g, const phase_dim *rows, const phase_dim *cols)
{
    return (vs_conv_fast){g->n, g->o, g->oh, g->ow, g->c, rows->count, cols->count, rows->taps, cols->taps, 1, 1,
                          rows->taps - 1, cols->taps - 1, 1, 1, true, rows->e, cols->e};
}

/* Phase (ry, rx) of the output: its rows, columns and stride-1 conv; false when it gets nothing. */
static bool phase_at(const vs_conv_fast *g, int64_t ry, int64_t rx, phase_dim *rows, phase_dim *cols, vs_conv_fast *pc)
{
    *rows = phase_of((ry + g->ph) % g->sh, g->h, g->oh, g->kh, g->sh, g->ph);
    *cols = phase_of((rx + g->pw) % g->sw, g->w, g->ow, g->kw, g->sw, g->pw);
    if (rows->count == 0 || cols->count == 0 || rows->taps == 0 || cols->taps == 0) return false;
    *pc = phase_conv(g, rows, cols);
    return true;
}

bool vs_conv_avx512_transpose_fits(const vs_conv_fast *g)
{
    if (g->flip || g->dh != 1 || g->dw != 1 || (g->sh == 1 && g->sw == 1)) return false;
    for (int64_t ry = 0; ry < g->sh; ry++)
        for (int64_t rx = 0; rx < g->sw; rx++) {
            phase_dim rows, cols;
            vs_conv_fast pc;
            /* the phases' bars are higher than the forward's: on the sweep's input gradients of
             * short sums, tiles at use 0.5 (16x28->48 k3 s2) ran 10% slower than the GEMM path,
             * above 0.6 (48x25->16 k5 s2) 12% faster; long sums at 0.6 lost 10% (48x25->16) */
            if (phase_at(g, ry, rx, &rows, &cols, &pc) && !fits_at(&pc, vs_conv_avx512_short_sums(&pc) ? 0.6 : 0.7)) return false;
        }
    return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Where tap k = ki kw + kj of the conv2d's kernel goes among the output phases' packed weights:
 * part (-1: a phase that gets nothing) and its flipped tap t (the phase's m-th row and q-th column
 * of taps is its tap (M - 1 - m) M' + M' - 1 - q). */
typedef struct phase_tap {
    int32_t part, t;
} phase_tap;

typedef struct phase_pack {
    const vs_conv_fast *g;
    const conv_part *parts;
    const phase_tap *taps; /* kh kw of them */
    const float *w;
} phase_pack;

/* Groups [b, e) of 16 of the transpose's output channels (dx's), every phase's packed weights in
 * one pass over w: the 16 channels' kernels through a register transpose, 16 taps at a time,
 * each tap's vector stored in its phase's blocked layout (phase by phase, with each phase's taps
 * picked out into a kernel of their own first, this took twice as long). */
T512 static void pack_phase_groups(void *ctx, int64_t b, int64_t e)
{
    const phase_pack *p = ctx;
    const vs_conv_fast *g = p->g;
    const int64_t kk = g->kh * g->kw;
    __m512 r[16];
    for (int64_t o = 16 * b; o < 16 * e; o += 16) {
        const int64_t valid = g->c - o < 0 ? 0 : g->c - o < 16 ? g->c - o : 16;
        for (int64_t c = 0; c < g->o; c++)
            for (int64_t q = 0; q < kk; q += 16) {
                const int64_t nq = kk - q < 16 ? kk - q : 16;
                /* w[c, o + i, tap q + k] for i < 16: the conv2d's weights are [o, c, kh, kw] */
                vs_columns_of(p->w + (valid ? (c * g->c + o) * kk : 0) + q, kk, nq, valid, false, r);
                for (int64_t k = 0; k < nq; k++) {
                    const phase_tap pt = p->taps[q + k];
                    if (pt.part < 0) continue;
                    const conv_part *part = &p->parts[pt.part];
                    const fast_plan *f = &part->f;
                    if (o >= f->nob * f->ob) continue;
                    _mm512_store_ps(part->packed + (o / f->ob) * f->taps * f->ob + (pt.t * g->o + c) * f->ob + o % f->ob, r[k]);
                }
            }
    }
}
#endif

bool vs_conv_avx512_transpose_covers(const vs_conv_fast *g)
{
    int64_t reached = 0;
    for (int64_t ry = 0; ry < g->sh; ry++)
        for (int64_t rx = 0; rx < g->sw; rx++) {
            phase_dim rows, cols;
            vs_conv_fast pc;
            if (phase_at(g, ry, rx, &rows, &cols, &pc)) reached += rows.count * cols.count;
        }
    return reached == g->h * g->w;
}

bool vs_conv_avx512_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, bool accumulate,
                              float *dx)
{
#if defined(__x86_64__) && defined(__GNUC__)
    /* every phase's stride-1 conv of gy, bordered as much as the widest needs (a phase with
     * fewer taps starts that much further in: the same input rows), so that gy is bordered once
     * per image for all of them; each adds its outputs straight into dx's rows y0 + Y sh, columns
     * x0 + X sw (a buffer and a pass over it was a tenth of the transpose) */
    conv_part *parts = malloc((size_t)(g->sh * g->sw) * sizeof *parts);
    phase_tap *taps = malloc((size_t)(g->kh * g->kw) * sizeof *taps);
    void *owned = NULL;
    bool ok = parts && taps;
    int64_t np = 0, bh = 0, bw = 0, groups = 0;
    uint16_t *mask;
    for (int64_t k = 0; ok && k < g->kh * g->kw; k++) taps[k] = (phase_tap){-1, 0};
    for (int64_t ry = 0; ry < g->sh && ok; ry++)
        for (int64_t rx = 0; rx < g->sw; rx++) {
            phase_dim rows, cols;
            if (!phase_at(g, ry, rx, &rows, &cols, &parts[np].g)) continue;
            parts[np].y = dx + rows.y0 * g->w + cols.y0;
            parts[np].lay = (out_layout){g->c * g->h * g->w, g->h * g->w, g->sh * g->w, g->sw};
            bh = parts[np].g.ph > bh ? parts[np].g.ph : bh;
            bw = parts[np].g.pw > bw ? parts[np].g.pw : bw;
            /* its taps ki = r0 + sh m, kj = q0 + sw q */
            const int64_t r0 = (ry + g->ph) % g->sh, q0 = (rx + g->pw) % g->sw;
            for (int64_t m = 0; m < rows.taps; m++)
                for (int64_t q = 0; q < cols.taps; q++)
                    taps[(r0 + g->sh * m) * g->kw + q0 + g->sw * q] =
                        (phase_tap){(int32_t)np, (int32_t)(rows.taps * cols.taps - 1 - (m * cols.taps + q))};
            np++;
        }
    for (int64_t q = 0; q < np; q++) {
        parts[q].g.y0 += bh - parts[q].g.ph, parts[q].g.ph = bh;
        parts[q].g.x0 += bw - parts[q].g.pw, parts[q].g.pw = bw;
    }
    ok = ok && (np == 0 || parts_prepare(parts, np, &mask, &owned));
    if (ok && np > 0) {
        for (int64_t q = 0; q < np; q++) {
            const int64_t gq = parts[q].f.nob * parts[q].f.ob / 16;
            groups = gq > groups ? gq : groups;
        }
        phase_pack pp = {g, parts, taps, w};
        vs_parallel_for(groups, 1, pack_phase_groups, &pp);
        ok = parts_run(parts, np, mask, gy, bias, accumulate);
        free(owned);
        parts_free(parts, np);
    }
    free(taps);
    free(parts);
    return ok;
#else
    (void)g, (void)gy, (void)w, (void)bias, (void)accumulate, (void)dx;
    return false;
#endif
}
