/* conv_direct.c - direct convolution for layers with at most VS_CONV_DIRECT_MAX_O output channels
 * (see conv_direct.h).  Each image's planes are copied once into a zero-bordered buffer, so the
 * inner loops are unit-stride vector loads with no bounds tests: 32 output pixels of a row are
 * four 8-float vectors summed over (c, ki, kj) in registers.  Lanes past the end of a row are
 * computed from the buffer's zero (or neighbouring) columns and never stored; the weight gradient,
 * which sums over output pixels, does the ragged end of each row one pixel at a time instead, so
 * nothing outside the convolution's own products enters a sum. */
#include "autograd/alloc.h"
#include "autograd/conv_direct.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

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

/* Images [begin, end) of the forward (j->transpose false) or the transpose: each image's input
 * planes are bordered into this thread's scratch, then convolved. */
static void images_range(void *ctx, int64_t begin, int64_t end)
{
    direct_job *j = ctx;
    const vs_conv_direct *g = j->g;
    const bool tr = j->transpose;
    const int64_t planes = tr ? g->o : g->c, h = tr ? g->oh : g->h, w = tr ? g->ow : g->w;
    const int64_t rows = tr ? tr_rows(g) : fwd_rows(g), ws = tr ? tr_stride(g) : fwd_stride(g);
    void *owned;
    float *pad = scratch_floats((size_t)(planes * rows * ws), &owned);
    if (!pad) {
        j->failed = 1;
        return;
    }
    for (int64_t n = begin; n < end; n++) {
        pad_planes(pad, j->a + n * planes * h * w, planes, h, w, rows, ws, tr ? tr_top(g) : g->ph, tr ? tr_left(g) : g->pw);
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

static void weight_grad_range(void *ctx, int64_t begin, int64_t end)
{
    direct_job *j = ctx;
    const vs_conv_direct *g = j->g;
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
