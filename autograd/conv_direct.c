/* conv_direct.c - direct convolution for layers with at most VS_CONV_DIRECT_MAX_O output channels
 * (see conv_direct.h).  Each image's planes are copied once into a zero-bordered buffer, so the
 * inner loops are unit-stride vector loads with no bounds tests: 32 output pixels of a row are
 * four 8-float vectors summed over (c, ki, kj) in registers.  Lanes past the end of a row are
 * computed from the buffer's zero (or neighbouring) columns and never stored; the weight gradient,
 * which sums over output pixels, does the ragged end of each row one pixel at a time instead, so
 * nothing outside the convolution's own products enters a sum.
 *
 * Where the kernels may use AVX-512 (vs_kernel_isa()), the same loops run on 16-float vectors with
 * fused multiply-adds, a register tile sharing each broadcast weight over several rows and each
 * loaded row over several output channels (avx512 section below); the vector-extension loops are
 * the AVX2 and portable path, and the tests compare the two. */
#include "autograd/alloc.h"
#include "autograd/conv_direct.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DIRECT_AVX512 1
#endif

/* GCC/Clang vector extension: AVX registers in the AVX2 clones, SSE pairs in the baseline ones. */
typedef float v8 __attribute__((vector_size(32)));
#define VB 32 /* output pixels of a row per register block: four v8 */

/* Unaligned load and store of 8 floats.  Macros, not functions: a function taking or returning a
 * v8 would be compiled for the baseline ISA too, where its calling convention differs. */
#define ld(p)                                                                                          \
    __extension__({                                                                                    \
        v8 v_;                                                                                         \
        memcpy(&v_, (p), sizeof v_);                                                                   \
        v_;                                                                                            \
    })
#define st(p, v)                                                                                       \
    do {                                                                                               \
        const v8 s_ = (v);                                                                             \
        memcpy((p), &s_, sizeof s_);                                                                   \
    } while (0)

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Zero rows after an image's bordered planes: the AVX-512 tiles' rows past the last read them. */
#define SLACK_ROWS 8

/* n planes of h x w from src into dst, each plane ph rows x ws floats, placed at row top, column
 * left, the rest zero. */
static void pad_planes(float *dst, const float *src, int64_t n, int64_t h, int64_t w, int64_t rows, int64_t ws, int64_t top,
                       int64_t left)
{
    memset(dst, 0, (size_t)(n * rows * ws) * sizeof(float));
    for (int64_t p = 0; p < n; p++)
        for (int64_t i = 0; i < h; i++) memcpy(dst + (p * rows + top + i) * ws + left, src + (p * h + i) * w, (size_t)w * sizeof(float));
}

/* Scratch of `floats` floats for this thread: the kept per-thread buffer, or *owned when larger. */
static float *scratch_floats(size_t floats, void **owned)
{
    *owned = NULL;
    if (floats > SIZE_MAX / sizeof(float) / 2) return NULL;
    return vs_scratch_or_own(VS_SCRATCH_CONV, floats * sizeof(float), owned);
}

/* ---- forward: y = conv2d(x, w) + bias --------------------------------------------------------- */

typedef struct direct_job {
    const vs_conv_direct *g;
    const float *a, *w, *bias; /* forward: x; transpose: y; weight grad: x */
    const float *b;            /* weight grad: gy */
    float *out;
    bool transpose;            /* images_range: the transpose rather than the forward */
    bool avx512;               /* run the AVX-512 kernels */
    volatile int failed;
} direct_job;

/* Rows of the forward's padded input planes and their stride (the last block of a row reads up
 * to VB - 1 floats past the row's end; the weight gradient's padded taps up to 3 dw). */
static int64_t fwd_rows(const vs_conv_direct *g) { return g->h + 2 * g->ph; }
static int64_t fwd_stride(const vs_conv_direct *g) { return g->w + 2 * g->pw + VB + 3 * g->dw; }

VS_VECTOR_CLONES static void forward_image(const vs_conv_direct *g, const float *pad, const float *w, const float *bias,
                                           float *y)
{
    const int64_t rows = fwd_rows(g), ws = fwd_stride(g);
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t i = 0; i < g->oh; i++)
            for (int64_t xb = 0; xb < g->ow; xb += VB) {
                const float b = bias ? bias[o] : 0.0f;
                v8 a0 = (v8){0} + b, a1 = a0, a2 = a0, a3 = a0;
                for (int64_t c = 0; c < g->c; c++)
                    for (int64_t ki = 0; ki < g->kh; ki++) {
                        const float *row = pad + (c * rows + i + ki * g->dh) * ws + xb;
                        const float *wr = w + ((o * g->c + c) * g->kh + ki) * g->kw;
                        for (int64_t kj = 0; kj < g->kw; kj++) {
                            const float *s = row + kj * g->dw;
                            const float wv = wr[kj];
                            a0 += wv * ld(s);
                            a1 += wv * ld(s + 8);
                            a2 += wv * ld(s + 16);
                            a3 += wv * ld(s + 24);
                        }
                    }
                float t[VB];
                st(t, a0);
                st(t + 8, a1);
                st(t + 16, a2);
                st(t + 24, a3);
                memcpy(y + (o * g->oh + i) * g->ow + xb, t, (size_t)min64(VB, g->ow - xb) * sizeof(float));
            }
}

/* ---- transpose: x += conv_transpose2d(y, w) ------------------------------------------------------
 * x[c, i, j] += sum_{o,ki,kj} w[o,c,ki,kj] y[o, i + ph - ki dh, j + pw - kj dw]: the output
 * gradient's planes get a border of (kh - 1) dh rows and (kw - 1) dw columns, so every tap reads
 * the buffer. */

static int64_t tr_top(const vs_conv_direct *g) { return g->dh * (g->kh - 1); }
static int64_t tr_left(const vs_conv_direct *g) { return g->dw * (g->kw - 1); }
static int64_t tr_rows(const vs_conv_direct *g) { return g->oh + 2 * tr_top(g); }
static int64_t tr_stride(const vs_conv_direct *g) { return g->ow + 2 * tr_left(g) + VB; }

/* The AVX-512 kernels' row strides: whole 16-float lines, and only the slack their reads need (the
 * last 32-pixel block of a row, kernel columns up to kw + 1 for the weight gradient's blocks of
 * three), so an image's planes take about half the floats of the AVX2 layout. */
static int64_t round16(int64_t a) { return (a + 15) / 16 * 16; }
static int64_t ceil32(int64_t a) { return (a + 31) / 32 * 32; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t fwd_stride512(const vs_conv_direct *g) { return round16(max64(g->w + 2 * g->pw, ceil32(g->ow) + (g->kw + 1) * g->dw)); }
static int64_t tr_stride512(const vs_conv_direct *g)
{
    return round16(max64(g->ow + 2 * tr_left(g), g->pw + ceil32(g->w) + (g->kw - 1) * g->dw));
}

VS_VECTOR_CLONES static void transpose_image(const vs_conv_direct *g, const float *pad, const float *w, float *x)
{
    const int64_t rows = tr_rows(g), ws = tr_stride(g);
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t i = 0; i < g->h; i++)
            for (int64_t xb = 0; xb < g->w; xb += VB) {
                float *dst = x + (c * g->h + i) * g->w + xb;
                const int64_t len = min64(VB, g->w - xb);
                float t[VB] = {0};
                memcpy(t, dst, (size_t)len * sizeof(float));
                v8 a0 = ld(t), a1 = ld(t + 8), a2 = ld(t + 16), a3 = ld(t + 24);
                for (int64_t o = 0; o < g->o; o++)
                    for (int64_t ki = 0; ki < g->kh; ki++) {
                        const float *row = pad + (o * rows + i + g->ph + g->dh * (g->kh - 1 - ki)) * ws + xb + g->pw;
                        const float *wr = w + ((o * g->c + c) * g->kh + ki) * g->kw;
                        for (int64_t kj = 0; kj < g->kw; kj++) {
                            const float *s = row + g->dw * (g->kw - 1 - kj);
                            const float wv = wr[kj];
                            a0 += wv * ld(s);
                            a1 += wv * ld(s + 8);
                            a2 += wv * ld(s + 16);
                            a3 += wv * ld(s + 24);
                        }
                    }
                st(t, a0);
                st(t + 8, a1);
                st(t + 16, a2);
                st(t + 24, a3);
                memcpy(dst, t, (size_t)len * sizeof(float));
            }
}

/* ---- AVX-512: the forward and the transpose as one tiled plane convolution ---------------------
 * out[oc, i, j] (+)= sum_{ic,ki,kj} W(oc, ic, ki, kj) pad[ic, r0 + i + ki dh, c0 + j + kj dw], with
 * W(oc, ic, ki, kj) = w[oc s_out + ic s_in + ki s_ki + kj s_kj]: the forward reads the weights as
 * they lie, the transpose flipped (negative tap strides) with the output and input channels
 * swapped.  A tile is OB output channels x R rows x 32 pixels (two vectors): per tap it broadcasts
 * OB weights and loads 2 R vectors for 2 R OB multiply-adds.  Every output element is one sum in
 * (ic, ki, kj) order.  A tile always computes all its rows and channels (the weights of channels
 * past the end are zero) and stores only the real ones: the padded planes carry SLACK_ROWS rows of
 * zeros after the last one, so the rows of a short last tile read the buffer. */

#ifdef DIRECT_AVX512
#define T512 __attribute__((target("avx512f")))
#define INLINE512 static inline __attribute__((always_inline)) T512

typedef struct plane_conv {
    const float *pad;
    int64_t rows, ws, n_in;                 /* input planes [n_in][rows][ws] */
    const float *w;
    int64_t s_out, s_in, s_ki, s_kj;         /* W's strides */
    int64_t kh, kw, dh, dw, r0, c0;
    float *out;
    int64_t n_out, oh, ow;                   /* output planes [n_out][oh][ow] */
    const float *bias;                       /* forward: per output channel, or NULL */
    bool accumulate;                         /* transpose: out += the sums */
} plane_conv;

/* Lanes of the 32-pixel block at column xb that are real pixels: two 16-lane masks. */
INLINE512 void block_masks(int64_t ow, int64_t xb, __mmask16 *m0, __mmask16 *m1)
{
    const int64_t len = ow - xb;
    *m0 = len >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << len) - 1);
    *m1 = len >= 32 ? (__mmask16)0xffff : len <= 16 ? (__mmask16)0 : (__mmask16)((1u << (len - 16)) - 1);
}

/* One tile: output channels [oc, oc + nob), rows [i, i + nr), pixels [xb, xb + 32) of the row. */
INLINE512 void plane_tile(const plane_conv *p, int64_t oc, int nob, int64_t i, int nr, int64_t xb, const int OB, const int R)
{
    __m512 acc[4][8][2];
    __mmask16 m0, m1;
    block_masks(p->ow, xb, &m0, &m1);
    const int64_t plane = p->oh * p->ow;
#pragma GCC unroll 4
    for (int b = 0; b < OB; b++)
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            acc[b][r][0] = acc[b][r][1] = _mm512_setzero_ps();
            if (b >= nob || r >= nr) continue;
            float *y = p->out + (oc + b) * plane + (i + r) * p->ow + xb;
            if (p->accumulate) {
                acc[b][r][0] = _mm512_maskz_loadu_ps(m0, y);
                acc[b][r][1] = _mm512_maskz_loadu_ps(m1, y + 16);
            } else {
                acc[b][r][0] = acc[b][r][1] = _mm512_set1_ps(p->bias ? p->bias[oc + b] : 0.0f);
            }
        }
    for (int64_t ic = 0; ic < p->n_in; ic++)
        for (int64_t ki = 0; ki < p->kh; ki++) {
            const float *row = p->pad + (ic * p->rows + p->r0 + i + ki * p->dh) * p->ws + p->c0 + xb;
            const float *wr = p->w + oc * p->s_out + ic * p->s_in + ki * p->s_ki;
            for (int64_t kj = 0; kj < p->kw; kj++) {
                const float *src = row + kj * p->dw;
                __m512 wv[4];
#pragma GCC unroll 4
                for (int b = 0; b < OB; b++) wv[b] = b < nob ? _mm512_set1_ps(wr[b * p->s_out + kj * p->s_kj]) : _mm512_setzero_ps();
#pragma GCC unroll 8
                for (int r = 0; r < R; r++) {
                    const __m512 v0 = _mm512_loadu_ps(src + r * p->ws), v1 = _mm512_loadu_ps(src + r * p->ws + 16);
#pragma GCC unroll 4
                    for (int b = 0; b < OB; b++) {
                        acc[b][r][0] = _mm512_fmadd_ps(wv[b], v0, acc[b][r][0]);
                        acc[b][r][1] = _mm512_fmadd_ps(wv[b], v1, acc[b][r][1]);
                    }
                }
            }
        }
#pragma GCC unroll 4
    for (int b = 0; b < OB; b++)
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            if (b >= nob || r >= nr) continue;
            float *y = p->out + (oc + b) * plane + (i + r) * p->ow + xb;
            _mm512_mask_storeu_ps(y, m0, acc[b][r][0]);
            _mm512_mask_storeu_ps(y + 16, m1, acc[b][r][1]);
        }
}

/* The tile shapes: OB channels x R rows, OB R <= 12 (24 accumulators). */
#define PLANE_TILE(OB, R)                                                                              \
    static T512 void plane_tile_##OB##_##R(const plane_conv *p, int64_t oc, int nob, int64_t i, int nr, int64_t xb) \
    {                                                                                                  \
        plane_tile(p, oc, nob, i, nr, xb, OB, R);                                                      \
    }
PLANE_TILE(1, 7)
PLANE_TILE(2, 6)
PLANE_TILE(4, 3)

/* One output channel (a forward with o = 1), a kernel of KH rows, dilation 1 down the columns: R
 * rows of output, where each input row loaded (t) serves every output row r it reaches (kernel row
 * t - r) and a kernel column's KH weights stay in registers: per input channel and kernel column,
 * R + KH - 1 row loads and KH broadcasts for R KH multiply-adds of two vectors. */
INLINE512 void column_tile(const plane_conv *p, int64_t oc, int64_t i, int nr, int64_t xb, const int KH, const int R)
{
    __m512 acc[8][2];
    __mmask16 m0, m1;
    block_masks(p->ow, xb, &m0, &m1);
    float *y = p->out + oc * p->oh * p->ow + i * p->ow + xb;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();
        if (r >= nr) continue;
        if (p->accumulate) {
            acc[r][0] = _mm512_maskz_loadu_ps(m0, y + r * p->ow);
            acc[r][1] = _mm512_maskz_loadu_ps(m1, y + r * p->ow + 16);
        } else {
            acc[r][0] = acc[r][1] = _mm512_set1_ps(p->bias ? p->bias[oc] : 0.0f);
        }
    }
    for (int64_t ic = 0; ic < p->n_in; ic++) {
        const float *base = p->pad + (ic * p->rows + p->r0 + i) * p->ws + p->c0 + xb;
        const float *wc = p->w + oc * p->s_out + ic * p->s_in;
        for (int64_t kj = 0; kj < p->kw; kj++) {
            __m512 wk[KH];
#pragma GCC unroll 8
            for (int a = 0; a < KH; a++) wk[a] = _mm512_set1_ps(wc[a * p->s_ki + kj * p->s_kj]);
            const float *src = base + kj * p->dw;
#pragma GCC unroll 16
            for (int t = 0; t < R + KH - 1; t++) {
                const __m512 v0 = _mm512_loadu_ps(src + t * p->ws), v1 = _mm512_loadu_ps(src + t * p->ws + 16);
#pragma GCC unroll 8
                for (int r = 0; r < R; r++) {
                    const int a = t - r;
                    if (a < 0 || a >= KH) continue;
                    acc[r][0] = _mm512_fmadd_ps(wk[a], v0, acc[r][0]);
                    acc[r][1] = _mm512_fmadd_ps(wk[a], v1, acc[r][1]);
                }
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        if (r >= nr) continue;
        _mm512_mask_storeu_ps(y + r * p->ow, m0, acc[r][0]);
        _mm512_mask_storeu_ps(y + r * p->ow + 16, m1, acc[r][1]);
    }
}

#define COLUMN_TILE(KH, R)                                                                             \
    static T512 void column_tile_##KH(const plane_conv *p, int64_t oc, int64_t i, int nr, int64_t xb) \
    {                                                                                                  \
        column_tile(p, oc, i, nr, xb, KH, R);                                                          \
    }
COLUMN_TILE(3, 8)
COLUMN_TILE(5, 8)
COLUMN_TILE(7, 7)

/* Rows of a column tile for a kernel of kh rows (0: no column tile for it). */
static int column_rows(int64_t kh) { return kh == 3 || kh == 5 ? 8 : kh == 7 ? 7 : 0; }

static T512 void plane_conv_run(const plane_conv *p)
{
    const int cr = p->n_out == 1 && p->dh == 1 ? column_rows(p->kh) : 0;
    for (int64_t i = 0; cr && i < p->oh; i += cr) {
        const int nr = (int)min64(cr, p->oh - i);
        for (int64_t xb = 0; xb < p->ow; xb += 32) {
            if (p->kh == 3) column_tile_3(p, 0, i, nr, xb);
            else if (p->kh == 5) column_tile_5(p, 0, i, nr, xb);
            else column_tile_7(p, 0, i, nr, xb);
        }
    }
    if (cr) return;
    const int ob = p->n_out >= 4 ? 4 : p->n_out >= 2 ? 2 : 1, r = ob == 4 ? 3 : ob == 2 ? 6 : 7;
    for (int64_t oc = 0; oc < p->n_out; oc += ob) {
        const int nob = (int)min64(ob, p->n_out - oc);
        for (int64_t i = 0; i < p->oh; i += r) {
            const int nr = (int)min64(r, p->oh - i);
            for (int64_t xb = 0; xb < p->ow; xb += 32) {
                if (ob == 4) plane_tile_4_3(p, oc, nob, i, nr, xb);
                else if (ob == 2) plane_tile_2_6(p, oc, nob, i, nr, xb);
                else plane_tile_1_7(p, oc, nob, i, nr, xb);
            }
        }
    }
}

/* The forward and the transpose of one image from its bordered planes (the layouts of
 * forward_image and transpose_image). */
static void forward_image512(const vs_conv_direct *g, const float *pad, const float *w, const float *bias, float *y)
{
    const plane_conv p = {pad, fwd_rows(g), fwd_stride512(g), g->c, w, g->c * g->kh * g->kw, g->kh * g->kw, g->kw, 1,
                          g->kh, g->kw, g->dh, g->dw, 0, 0, y, g->o, g->oh, g->ow, bias, false};
    plane_conv_run(&p);
}

static void transpose_image512(const vs_conv_direct *g, const float *pad, const float *w, float *x)
{
    /* x[c, i, j] += sum w[o, c, kh-1-a, kw-1-b] pad[o, ph + i + a dh, pw + j + b dw] */
    const plane_conv p = {pad, tr_rows(g), tr_stride512(g), g->o, w + (g->kh - 1) * g->kw + g->kw - 1, g->kh * g->kw,
                          g->c * g->kh * g->kw, -g->kw, -1, g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, x, g->c, g->h, g->w, NULL,
                          true};
    plane_conv_run(&p);
}

/* The weight gradient of one image for input channel c: acc[(o kh + ki) kw + kj] (16 lanes each)
 * += gy[o] (*) pad at tap (ki, kj), over output rows and 16-pixel blocks, eight taps of a kernel
 * row at a time in registers; the ragged block of a row loads both sides masked, so pixels past
 * the row never enter a sum. */
static T512 void weight_grad_image512(const vs_conv_direct *g, const float *pad, const float *gy, float *acc)
{
    const int64_t ws = fwd_stride512(g), full = g->ow - g->ow % 16, dw = g->dw;
    const __mmask16 tail = (__mmask16)((1u << (g->ow - full)) - 1);
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t k0 = 0; k0 < g->kw; k0 += 8) {
                const int nk = (int)min64(8, g->kw - k0);
                float *a = acc + ((o * g->kh + ki) * g->kw + k0) * 16;
                __m512 s[8];
#pragma GCC unroll 8
                for (int k = 0; k < 8; k++) s[k] = k < nk ? _mm512_loadu_ps(a + k * 16) : _mm512_setzero_ps();
                for (int64_t i = 0; i < g->oh; i++) {
                    const float *gr = gy + (o * g->oh + i) * g->ow;
                    const float *pr = pad + (i + ki * g->dh) * ws + k0 * dw;
                    for (int64_t xb = 0; xb < full; xb += 16) {
                        const __m512 d = _mm512_loadu_ps(gr + xb);
#pragma GCC unroll 8
                        for (int k = 0; k < 8; k++)
                            if (k < nk) s[k] = _mm512_fmadd_ps(d, _mm512_loadu_ps(pr + xb + k * dw), s[k]);
                    }
                    if (tail) {
                        const __m512 d = _mm512_maskz_loadu_ps(tail, gr + full);
#pragma GCC unroll 8
                        for (int k = 0; k < 8; k++)
                            if (k < nk) s[k] = _mm512_fmadd_ps(d, _mm512_maskz_loadu_ps(tail, pr + full + k * dw), s[k]);
                    }
                }
#pragma GCC unroll 8
                for (int k = 0; k < 8; k++)
                    if (k < nk) _mm512_storeu_ps(a + k * 16, s[k]);
            }
}

/* weight_grad_image512 for a kernel of exactly KH rows and dilation 1 down the columns: input row t
 * serves the taps (a, kj) of output rows t - a, so per row and 16-pixel block it loads KB input
 * vectors (KB kernel columns) and up to KH output-gradient vectors for KH KB multiply-adds, the
 * KH x KB sums in registers.  Columns past kw in the last block read the row's slack and are
 * thrown away. */
#define WG_KB 3
INLINE512 void weight_grad_rows(const vs_conv_direct *g, const float *pad, const float *gy, float *acc, const int KH)
{
    const int64_t ws = fwd_stride512(g), full = g->ow - g->ow % 16, dw = g->dw, oh = g->oh, ow = g->ow;
    const __mmask16 tail = (__mmask16)((1u << (ow - full)) - 1);
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t k0 = 0; k0 < g->kw; k0 += WG_KB) {
            const int nk = (int)min64(WG_KB, g->kw - k0);
            __m512 s[8][WG_KB];
#pragma GCC unroll 8
            for (int a = 0; a < KH; a++)
#pragma GCC unroll 4
                for (int k = 0; k < WG_KB; k++)
                    s[a][k] = k < nk ? _mm512_loadu_ps(acc + (((o * KH + a) * g->kw) + k0 + k) * 16) : _mm512_setzero_ps();
            const float *go = gy + o * oh * ow;
            for (int64_t t = 0; t < oh + KH - 1; t++) {
                const float *xr = pad + t * ws + k0 * dw;
                const int64_t alo = t - (oh - 1), ahi = t; /* output row t - a in [0, oh) */
                for (int64_t xb = 0; xb < full; xb += 16) {
                    __m512 xv[WG_KB];
#pragma GCC unroll 4
                    for (int k = 0; k < WG_KB; k++) xv[k] = _mm512_loadu_ps(xr + xb + k * dw);
#pragma GCC unroll 8
                    for (int a = 0; a < KH; a++) {
                        if (a < alo || a > ahi) continue;
                        const __m512 d = _mm512_loadu_ps(go + (t - a) * ow + xb);
#pragma GCC unroll 4
                        for (int k = 0; k < WG_KB; k++) s[a][k] = _mm512_fmadd_ps(d, xv[k], s[a][k]);
                    }
                }
                if (tail) {
                    __m512 xv[WG_KB];
#pragma GCC unroll 4
                    for (int k = 0; k < WG_KB; k++) xv[k] = _mm512_maskz_loadu_ps(tail, xr + full + k * dw);
#pragma GCC unroll 8
                    for (int a = 0; a < KH; a++) {
                        if (a < alo || a > ahi) continue;
                        const __m512 d = _mm512_maskz_loadu_ps(tail, go + (t - a) * ow + full);
#pragma GCC unroll 4
                        for (int k = 0; k < WG_KB; k++) s[a][k] = _mm512_fmadd_ps(d, xv[k], s[a][k]);
                    }
                }
            }
#pragma GCC unroll 8
            for (int a = 0; a < KH; a++)
#pragma GCC unroll 4
                for (int k = 0; k < WG_KB; k++)
                    if (k < nk) _mm512_storeu_ps(acc + (((o * KH + a) * g->kw) + k0 + k) * 16, s[a][k]);
        }
}

#define WEIGHT_GRAD_ROWS(KH)                                                                           \
    static T512 void weight_grad_rows_##KH(const vs_conv_direct *g, const float *pad, const float *gy, float *acc) \
    {                                                                                                  \
        weight_grad_rows(g, pad, gy, acc, KH);                                                         \
    }
WEIGHT_GRAD_ROWS(3)
WEIGHT_GRAD_ROWS(5)
WEIGHT_GRAD_ROWS(7)

/* One image's weight gradient: the row-sharing kernel for the kernel heights it has, else the
 * general one. */
static void weight_grad_any512(const vs_conv_direct *g, const float *pad, const float *gy, float *acc)
{
    if (g->dh == 1 && g->kh == 3) weight_grad_rows_3(g, pad, gy, acc);
    else if (g->dh == 1 && g->kh == 5) weight_grad_rows_5(g, pad, gy, acc);
    else if (g->dh == 1 && g->kh == 7) weight_grad_rows_7(g, pad, gy, acc);
    else weight_grad_image512(g, pad, gy, acc);
}

/* dw[o, c, ., .] from the lanes of acc, each summed in a fixed order. */
static T512 void weight_grad_store512(const vs_conv_direct *g, int64_t c, const float *acc, float *out)
{
    const int64_t taps = g->kh * g->kw;
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t t = 0; t < taps; t++) out[(o * g->c + c) * taps + t] = _mm512_reduce_add_ps(_mm512_loadu_ps(acc + (o * taps + t) * 16));
}
#endif

/* Images [begin, end) of the forward (j->transpose false) or the transpose: each image's input
 * planes are bordered into this thread's scratch, then convolved. */
static void images_range(void *ctx, int64_t begin, int64_t end)
{
    direct_job *j = ctx;
    const vs_conv_direct *g = j->g;
    const bool tr = j->transpose;
    const int64_t planes = tr ? g->o : g->c, h = tr ? g->oh : g->h, w = tr ? g->ow : g->w;
    const int64_t rows = tr ? tr_rows(g) : fwd_rows(g);
    const int64_t ws = j->avx512 ? (tr ? tr_stride512(g) : fwd_stride512(g)) : tr ? tr_stride(g) : fwd_stride(g);
    void *owned;
    float *pad = scratch_floats((size_t)((planes * rows + SLACK_ROWS) * ws), &owned);
    if (!pad) {
        j->failed = 1;
        return;
    }
    memset(pad + planes * rows * ws, 0, (size_t)(SLACK_ROWS * ws) * sizeof(float));
    for (int64_t n = begin; n < end; n++) {
        pad_planes(pad, j->a + n * planes * h * w, planes, h, w, rows, ws, tr ? tr_top(g) : g->ph, tr ? tr_left(g) : g->pw);
#ifdef DIRECT_AVX512
        if (j->avx512) {
            if (tr)
                transpose_image512(g, pad, j->w, j->out + n * g->c * g->h * g->w);
            else
                forward_image512(g, pad, j->w, j->bias, j->out + n * g->o * g->oh * g->ow);
            continue;
        }
#endif
        if (tr)
            transpose_image(g, pad, j->w, j->out + n * g->c * g->h * g->w);
        else
            forward_image(g, pad, j->w, j->bias, j->out + n * g->o * g->oh * g->ow);
    }
    free(owned);
}

/* ---- weight gradient: dw[o,c,ki,kj] = sum_{n,i,j} gy[n,o,i,j] xpad[n,c,i + ki dh,j + kj dw] ------
 * One task per input channel c; its sums run over images, rows and 8-pixel blocks in that order
 * into per-lane accumulators, four kernel columns at a time in registers (acc keeps them between
 * images; a row of taps is padded to a multiple of 4, the extra columns thrown away); dw = the
 * lanes added in order.  The ragged last block of a row masks its products, so pixels past the
 * row never enter a sum (not even as 0 * inf). */

static int64_t taps_row(const vs_conv_direct *g) { return (g->kw + 3) / 4 * 4; }

typedef int32_t v8i __attribute__((vector_size(32)));

/* x with the lanes that keep does not select set to +0. */
#define masked(x, keep) ((v8)((v8i)(x) & (keep)))

/* Row stride of the output gradient's copy: whole 8-float blocks, zero past the row. */
static int64_t gy_stride(const vs_conv_direct *g) { return (g->ow + 7) / 8 * 8; }

VS_VECTOR_CLONES static void weight_grad_image(const vs_conv_direct *g, const float *pad, const float *gy, v8 *acc)
{
    const int64_t ws = fwd_stride(g), gs = gy_stride(g), full = g->ow - g->ow % 8, rem = g->ow - full, kw4 = taps_row(g),
                  dw = g->dw;
    v8i keep;
    for (int l = 0; l < 8; l++) keep[l] = l < rem ? -1 : 0;
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj += 4) {
                v8 *a = acc + (o * g->kh + ki) * kw4 + kj;
                v8 a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
                for (int64_t i = 0; i < g->oh; i++) {
                    const float *gr = gy + (o * g->oh + i) * gs;
                    const float *pr = pad + (i + ki * g->dh) * ws + kj * dw;
                    for (int64_t xb = 0; xb < full; xb += 8) {
                        const v8 d = ld(gr + xb);
                        a0 += d * ld(pr + xb);
                        a1 += d * ld(pr + xb + dw);
                        a2 += d * ld(pr + xb + 2 * dw);
                        a3 += d * ld(pr + xb + 3 * dw);
                    }
                    if (rem) {
                        const v8 d = ld(gr + full);
                        a0 += masked(d * ld(pr + full), keep);
                        a1 += masked(d * ld(pr + full + dw), keep);
                        a2 += masked(d * ld(pr + full + 2 * dw), keep);
                        a3 += masked(d * ld(pr + full + 3 * dw), keep);
                    }
                }
                a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
            }
}

#ifdef DIRECT_AVX512
/* weight_grad_range with the AVX-512 kernel: the output gradient is read in place. */
static void weight_grad_range512(direct_job *j, int64_t begin, int64_t end)
{
    const vs_conv_direct *g = j->g;
    const int64_t lanes = g->o * g->kh * g->kw * 16;
    void *owned;
    float *pad = scratch_floats((size_t)(fwd_rows(g) * fwd_stride512(g)), &owned);
    float *acc = vs_aligned_alloc(64, (size_t)lanes * sizeof *acc);
    if (!pad || !acc) {
        j->failed = 1;
    } else {
        for (int64_t c = begin; c < end; c++) {
            memset(acc, 0, (size_t)lanes * sizeof *acc);
            for (int64_t n = 0; n < g->n; n++) {
                pad_planes(pad, j->a + (n * g->c + c) * g->h * g->w, 1, g->h, g->w, fwd_rows(g), fwd_stride512(g), g->ph, g->pw);
                weight_grad_any512(g, pad, j->b + n * g->o * g->oh * g->ow, acc);
            }
            weight_grad_store512(g, c, acc, j->out);
        }
    }
    free(acc);
    free(owned);
}
#endif

static void weight_grad_range(void *ctx, int64_t begin, int64_t end)
{
    direct_job *j = ctx;
    const vs_conv_direct *g = j->g;
#ifdef DIRECT_AVX512
    if (j->avx512) {
        weight_grad_range512(j, begin, end);
        return;
    }
#endif
    const int64_t taps = g->o * g->kh * taps_row(g), plane = fwd_rows(g) * fwd_stride(g), gplane = g->o * g->oh * gy_stride(g);
    void *owned;
    float *pad = scratch_floats((size_t)(plane + gplane), &owned), *gpad = pad ? pad + plane : NULL;
    v8 *acc = vs_aligned_alloc(sizeof(v8), (size_t)taps * sizeof *acc);
    if (!pad || !acc) {
        j->failed = 1;
    } else {
        for (int64_t c = begin; c < end; c++) {
            memset(acc, 0, (size_t)taps * sizeof *acc);
            for (int64_t n = 0; n < g->n; n++) {
                pad_planes(pad, j->a + (n * g->c + c) * g->h * g->w, 1, g->h, g->w, fwd_rows(g), fwd_stride(g), g->ph, g->pw);
                pad_planes(gpad, j->b + n * g->o * g->oh * g->ow, g->o * g->oh, 1, g->ow, 1, gy_stride(g), 0, 0);
                weight_grad_image(g, pad, gpad, acc);
            }
            for (int64_t o = 0; o < g->o; o++)
                for (int64_t ki = 0; ki < g->kh; ki++)
                    for (int64_t kj = 0; kj < g->kw; kj++) {
                        const int64_t k = (o * g->kh + ki) * taps_row(g) + kj;
                        float lanes[8];
                        st(lanes, acc[k]);
                        float s = 0;
                        for (int l = 0; l < 8; l++) s += lanes[l];
                        j->out[((o * g->c + c) * g->kh + ki) * g->kw + kj] = s;
                    }
        }
    }
    free(acc);
    free(owned);
}

/* ---- entry points ----------------------------------------------------------------------------- */

static bool run(direct_job *j, int64_t n, vs_range_fn fn)
{
#ifdef DIRECT_AVX512
    j->avx512 = vs_kernel_isa() == VS_ISA_AVX512;
#endif
    if (n <= 1)
        fn(j, 0, n);
    else
        vs_parallel_for(n, 1, fn, j);
    return !j->failed;
}

bool vs_conv_direct_forward(const vs_conv_direct *g, const float *x, const float *w, const float *bias, float *y)
{
    direct_job j = {.g = g, .a = x, .w = w, .bias = bias, .out = y};
    return run(&j, g->n, images_range);
}

bool vs_conv_direct_transpose(const vs_conv_direct *g, const float *y, const float *w, float *x)
{
    direct_job j = {.g = g, .a = y, .w = w, .out = x, .transpose = true};
    return run(&j, g->n, images_range);
}

bool vs_conv_direct_weight_grad(const vs_conv_direct *g, const float *x, const float *gy, float *dw)
{
    direct_job j = {.g = g, .a = x, .b = gy, .out = dw};
    return run(&j, g->c, weight_grad_range);
}
