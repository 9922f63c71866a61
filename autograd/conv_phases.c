/* conv_phases.c - strided convolutions whose kernel the stride divides, run as stride-1 convolutions
 * over the input's phases stacked as channels (see conv_phases.h for the map).  Winograd reads and
 * writes the phases in place (conv_winograd.c's strided entries); for the direct engine the stacked
 * input (padding folded in) and weights are built here, it does the products, and the results are
 * dealt back (the input gradient folded from the phases, the weight gradient scattered back to its
 * taps). */
#include "autograd/conv_phases.h"

#include "autograd/conv_avx512.h"
#include "autograd/conv_winograd.h"
#include "autograd/internal.h"
#include "autograd/kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- engines ------------------------------------------------------------------------------------- */

/* Whether the engine takes the stacked conv, and its stride-1 kernels for the stacked copies (Winograd
 * has none: it reads the phases in place, see in_place). */
typedef struct s1_engine {
    bool (*fits)(const vs_conv_fast *g);
    bool (*forward)(const vs_conv_fast *g, const float *x, const float *w, const float *bias, bool accumulate, float *y);
    bool (*weight_grad_fits)(const vs_conv_fast *g);
    bool (*weight_grad)(const vs_conv_fast *g, const float *x, const float *gy, float *dw);
} s1_engine;

/* Winograd by default (it declines what it does not beat: see vs_conv_winograd_fits).  Measured at
 * 1 thread, CPU time: the GANMEX 64x32x14x14 -> 64 k6 s2 conv took 2.7 / 2.5 / 3.0 ms (forward / input
 * gradient / weight gradient) as Winograd F(4x4, 3x3) over stacked copies of the 128 phase channels
 * against 3.5 / 3.7 / 3.8 ms strided (wino8 a929aed); read in place its forward took 2.38 against
 * 2.61 ms (wgan9).  k4 s2's 2x2 phase kernels run F(4x4, 2x2): WGAN-GP's 16x64x14x14 -> 128 took
 * 1.56 / 1.52 / 1.43 ms in place against 1.63 / 1.69 / 1.77 strided, 2.04 / 1.86 / 2.37 through
 * stacked copies (zero-padded to 3x3 they had run 1.3-2.0x slower than strided).  The direct engine
 * on the stacked copies is 4-8% slower than strided (the stacking is about 0.3 ms). */
static atomic_int engine_now = VS_PHASES_WINOGRAD;

vs_phases_engine vs_conv_phases_engine(vs_phases_engine e) { return (vs_phases_engine)atomic_exchange(&engine_now, (int)e); }

static const s1_engine direct = {vs_conv_avx512_fits, vs_conv_avx512_forward, vs_conv_avx512_weight_grad_fits,
                                 vs_conv_avx512_weight_grad};
static const s1_engine winograd = {vs_conv_winograd_fits, NULL, vs_conv_winograd_weight_grad_fits, NULL};

/* The engine in use, or NULL when the phases are off. */
static const s1_engine *engine(void)
{
    switch ((vs_phases_engine)atomic_load(&engine_now)) {
    case VS_PHASES_WINOGRAD: return &winograd;
    case VS_PHASES_DIRECT: return &direct;
    default: return NULL;
    }
}

/* Whether Winograd runs the phases, reading and writing them in place (conv_winograd.c). */
static bool in_place(void) { return engine() == &winograd; }

/* ---- geometry ------------------------------------------------------------------------------------ */

/* One dim of the stacking.  Stacked row I (of every phase q) is input row I s + q - p; the conv
 * reads rows [0, out + r - 1).  Rows before `first` are input padding in every phase, and so are
 * rows from `end` on: only [first, end) are stored (the engine's padding stands for the rest), and
 * only they receive a transpose's output.  The stored rows run on to `stop` >= end, so that the
 * rows the conv reads past them (out + r - 1 - stop) are not more than the padding `first` before
 * them: the engines pad both sides alike. */
typedef struct phase_dim {
    int64_t first, end, stop;
} phase_dim;

void vs_conv_phases_span(int64_t len, int64_t r, int64_t s, int64_t pad, int64_t out, int64_t *first, int64_t *end)
{
    const int64_t rows = out + r - 1;
    *first = rows, *end = 0;
    for (int64_t q = 0; q < s; q++) {
        int64_t lo, hi;
        vs_conv_reach(rows, s, q - pad, len, &lo, &hi);
        if (lo == hi) continue;
        *first = lo < *first ? lo : *first;
        *end = hi > *end ? hi : *end;
    }
    if (*end <= *first) *first = *end = 0; /* no input at all (padding only): stack one empty range */
}

static phase_dim phase_dim_of(int64_t len, int64_t r, int64_t s, int64_t pad, int64_t out)
{
    const int64_t rows = out + r - 1;
    phase_dim d;
    vs_conv_phases_span(len, r, s, pad, out, &d.first, &d.end);
    d.stop = rows - d.first > d.end ? rows - d.first : d.end;
    return d;
}

/* g's stacked stride-1 conv and how the phases are stored. */
typedef struct phases {
    vs_conv_fast s1;    /* [n, c sh sw, rows.stop - rows.first, ...] -> [n, o, oh, ow], rh x rw taps, padding
                         * rows.first, cols.first */
    vs_conv_fast t;     /* its transpose's rows [first, end): gy -> [n, c sh sw, end - first, ...] */
    phase_dim rows, cols;
    int64_t rh, rw;     /* taps per phase */
    int64_t img, wsize; /* floats of one stacked image (the larger of input and transpose), of the weights */
} phases;

/* Whether Winograd takes g's kernel padded with zero taps up to a multiple of the stride: a 5x5 of
 * stride 2 as 6x6, F(4x4, 3x3) over the four phases (9 multiply-adds per output and channel pair
 * against 25, where the tiles and the phases' 16-channel blocks are used), a 7x7 as 8x8, F(3x3, 4x4)
 * (16 against 49: 16x16x28x28 -> 48 p3 1.32 / 1.51 / 1.45x, 16x32x27x27 -> 64 1.57 / 1.65 / 1.41x,
 * 8x64x30x30 -> 32 1.55 / 1.29 / 1.46x; 10 x 10 outputs on tiles of 3, 69%: not taken).  Measured at 1 thread (cpu
 * clock) against the strided kernels, forward / input gradient / weight gradient: 16x32x28x28 -> 64 p0
 * (12 x 12 outputs: 3 x 3 tiles) 1.87 / 1.19 / 1.71x, -> 32 1.57 / 1.11 / 1.47x, 8x32x30x30 -> 96 p2 (15 x
 * 15: 88% used) 1.59 / 1.48 / 1.53x, 32x16x24x24 -> 32 1.23 / 1.46 / 1.15x, 16x48x25x25 -> 32 1.39 / 0.97
 * / 1.21x; left out: 16 or 24 output channels (16x32x28x28 -> 16 0.99 / 0.89 / 1.11x, 8x48x25x25 -> 24
 * 1.11 / 0.92 / 1.64x), tiles or channel blocks used below 0.8 (7 x 7 outputs, 77%: 32x64x14x14 -> 64
 * 1.06 / 1.20 / 1.08x; 8 channels, 50%: 64x8x16x16 -> 64 0.80 / 1.12 / 0.67x; 24 of 32 and 69%:
 * 32x24x20x20 -> 48 0.72 / 1.47 / 0.77x). */
static bool kernel_padded(const vs_conv_fast *g)
{
    if ((g->kh != 5 && g->kh != 7) || g->kw != g->kh || g->sh != 2 || g->sw != 2 || g->o < 32) return false;
    /* 8 channels or fewer are packed two phases a block (conv_winograd.c): a 5x5's 9 x 9 outputs run F(3x3,
     * 3x3), 32x8x17x17 -> 64 p2 1.12 / 1.15 / 0.86x, 64 images 1.14 / 1.18 / 0.92x (the weight gradient
     * stays strided: vs_conv_phases_weight_grad_fits); a 7x7's stay strided: 32x8x27x27 -> 48 ran 0.95 /
     * 1.13 / 0.97x, -> 64 1.21 / 1.08 / 0.94x */
    if (g->c <= 8 && g->kh == 7) return false;
    const double blocks = (double)g->c / (double)(g->c <= 8 ? 8 : (g->c + 15) / 16 * 16);
    const int64_t m = vs_conv_winograd_tile((int)(g->kh + 1) / 2, g->oh, g->ow);
    const double used = (double)(g->oh * g->ow) / (double)((g->oh + m - 1) / m * m * ((g->ow + m - 1) / m * m));
    return used * blocks >= 0.8;
}

static bool phases_of(const vs_conv_fast *g, phases *p)
{
    if (in_place() && g->sh != g->sw) return false; /* Winograd's phases are square */
    if (g->flip || g->sh < 2 || g->sw < 2 || g->dh != 1 || g->dw != 1 || g->y0 || g->x0) return false;
    /* Winograd reads a kernel the stride does not divide as one padded with zero taps (kernel_padded) */
    if ((g->kh % g->sh || g->kw % g->sw) && !(in_place() && kernel_padded(g))) return false;
    p->rh = (g->kh + g->sh - 1) / g->sh;
    p->rw = (g->kw + g->sw - 1) / g->sw;
    p->rows = phase_dim_of(g->h, p->rh, g->sh, g->ph, g->oh);
    p->cols = phase_dim_of(g->w, p->rw, g->sw, g->pw, g->ow);
    const int64_t c = g->c * g->sh * g->sw, h = p->rows.stop - p->rows.first, w = p->cols.stop - p->cols.first;
    p->s1 = (vs_conv_fast){g->n, c, h, w, g->o, g->oh, g->ow, p->rh, p->rw, 1, 1, p->rows.first, p->cols.first, 1, 1, false, 0, 0};
    p->t = (vs_conv_fast){g->n, g->o, g->oh, g->ow, c, p->rows.end - p->rows.first, p->cols.end - p->cols.first, p->rh, p->rw, 1, 1,
                          p->rh - 1, p->rw - 1, 1, 1, true, p->rows.first, p->cols.first};
    p->img = c * h * w;
    p->wsize = g->o * c * p->rh * p->rw;
    return h > 0 && w > 0 && p->t.oh > 0 && p->t.ow > 0;
}

bool vs_conv_phases_forward_fits(const vs_conv_fast *g)
{
    const s1_engine *e = engine();
    phases p;
    return e && phases_of(g, &p) && e->fits(&p.s1);
}

bool vs_conv_phases_transpose_fits(const vs_conv_fast *g)
{
    const s1_engine *e = engine();
    phases p;
    return e && phases_of(g, &p) && e->fits(&p.t);
}

bool vs_conv_phases_weight_grad_fits(const vs_conv_fast *g)
{
    const s1_engine *e = engine();
    phases p;
    if (g->c <= 8 && (g->kh % g->sh || g->kw % g->sw)) return false; /* see kernel_padded */
    return e && phases_of(g, &p) && e->weight_grad_fits(&p.s1);
}

/* ---- stacking and unstacking --------------------------------------------------------------------- */

/* One job over the (image, channel) pairs: the stacked planes of channel c are (c,py,px). */
typedef struct stack_job {
    const vs_conv_fast *g;
    const phases *p;
    const float *src;
    float *dst;
    const float *bias; /* fold: dx's bias per channel, or NULL */
} stack_job;

/* x'[n, (c,py,px), i, j] = x[n, c, (i + rows.first) sh + py - ph, (j + cols.first) sw + px - pw], 0
 * outside x. */
VS_VECTOR_CLONES VS_SHORT_COPIES static void stack_range(void *ctx, int64_t begin, int64_t end)
{
    const stack_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const phases *p = j->p;
    const int64_t h1 = p->s1.h, w1 = p->s1.w, sh = g->sh, sw = g->sw;
    for (int64_t nc = begin; nc < end; nc++) {
        const float *restrict x = j->src + nc * g->h * g->w;
        float *restrict d = j->dst + nc * sh * sw * h1 * w1;
        for (int64_t py = 0; py < sh; py++)
            for (int64_t px = 0; px < sw; px++) {
                const int64_t y0 = p->rows.first * sh + py - g->ph, x0 = p->cols.first * sw + px - g->pw;
                int64_t lo, hi; /* columns j of this phase inside x */
                vs_conv_reach(w1, sw, x0, g->w, &lo, &hi);
                for (int64_t i = 0; i < h1; i++, d += w1) {
                    const int64_t y = y0 + i * sh;
                    if (y < 0 || y >= g->h) {
                        memset(d, 0, (size_t)w1 * sizeof(float));
                        continue;
                    }
                    if (sw == 2)
                        vs_conv_strided_row(d, x + y * g->w, x0, 2, lo, hi, w1);
                    else
                        vs_conv_strided_row(d, x + y * g->w, x0, sw, lo, hi, w1);
                }
            }
    }
}

/* dx[n, c, y, x] = bias[c] (or 0) + dx'[n, (c,py,px), i, j] at the place x' took it from (places no
 * tap reaches get the bias alone): the adjoint of stack_range on the transpose's rows, plus the bias. */
VS_VECTOR_CLONES static void fold_range(void *ctx, int64_t begin, int64_t end)
{
    const stack_job *j = ctx;
    const vs_conv_fast *g = j->g;
    const phases *p = j->p;
    const int64_t h1 = p->t.oh, w1 = p->t.ow, sh = g->sh, sw = g->sw;
    for (int64_t nc = begin; nc < end; nc++) {
        const float *restrict s = j->src + nc * sh * sw * h1 * w1;
        float *restrict dx = j->dst + nc * g->h * g->w;
        const float b = j->bias ? j->bias[nc % g->c] : 0.0f;
        for (int64_t k = 0; k < g->h * g->w; k++) dx[k] = b;
        for (int64_t py = 0; py < sh; py++)
            for (int64_t px = 0; px < sw; px++, s += h1 * w1) {
                const int64_t y0 = p->rows.first * sh + py - g->ph, x0 = p->cols.first * sw + px - g->pw;
                int64_t lo, hi;
                vs_conv_reach(w1, sw, x0, g->w, &lo, &hi);
                for (int64_t i = 0; i < h1; i++) {
                    const int64_t y = y0 + i * sh;
                    if (y < 0 || y >= g->h) continue;
                    float *restrict row = dx + y * g->w;
                    const float *restrict src = s + i * w1;
                    for (int64_t m = lo; m < hi; m++) row[m * sw + x0] += src[m];
                }
            }
    }
}

/* Pairs of (image, channel) per task: a few planes' worth of copying. */
static int64_t stack_grain(const vs_conv_fast *g)
{
    const int64_t per = g->h * g->w;
    return per >= 4096 ? 1 : 4096 / (per > 0 ? per : 1);
}

/* w'[o, (c,py,px), a, b] = w[o, c, a sh + py, b sw + px]. */
static void stack_weights(const vs_conv_fast *g, const phases *p, const float *w, float *ws)
{
    for (int64_t oc = 0; oc < g->o * g->c; oc++)
        for (int64_t py = 0; py < g->sh; py++)
            for (int64_t px = 0; px < g->sw; px++)
                for (int64_t a = 0; a < p->rh; a++)
                    for (int64_t b = 0; b < p->rw; b++) *ws++ = w[(oc * g->kh + a * g->sh + py) * g->kw + b * g->sw + px];
}

/* The inverse of stack_weights: dw[o, c, a sh + py, b sw + px] = dw'[o, (c,py,px), a, b]. */
static void unstack_weights(const vs_conv_fast *g, const phases *p, const float *ws, float *dw)
{
    for (int64_t oc = 0; oc < g->o * g->c; oc++)
        for (int64_t py = 0; py < g->sh; py++)
            for (int64_t px = 0; px < g->sw; px++)
                for (int64_t a = 0; a < p->rh; a++)
                    for (int64_t b = 0; b < p->rw; b++) dw[(oc * g->kh + a * g->sh + py) * g->kw + b * g->sw + px] = *ws++;
}

/* This thread's buffer for the stacked images (n img floats) and the stacked weights, or NULL. */
static float *stack_buffer(const phases *p, void **owned)
{
    size_t imgs;
    if (!vs_size_mul((size_t)p->s1.n, (size_t)p->img, &imgs) || imgs > SIZE_MAX / sizeof(float) / 4 ||
        (size_t)p->wsize > SIZE_MAX / sizeof(float) / 4)
        return NULL;
    imgs = (imgs + 15) & ~(size_t)15;
    return vs_scratch_or_own(VS_SCRATCH_CONV_PHASES, (imgs + (size_t)p->wsize) * sizeof(float), owned);
}

static float *weights_in(const phases *p, float *buf) { return buf + ((p->s1.n * p->img + 15) & ~(int64_t)15); }

/* ---- the three directions ------------------------------------------------------------------------ */

/* The engine and g's phases in *e and *p, and this thread's stacking buffer (its images, then its
 * weights at *ws); NULL when the engine is off or g is not a phase-stacked conv, or out of memory. */
static float *stack_begin(const vs_conv_fast *g, const s1_engine **e, phases *p, float **ws, void **owned)
{
    *owned = NULL;
    if (!(*e = engine()) || !phases_of(g, p)) return NULL;
    float *buf = stack_buffer(p, owned);
    if (buf) *ws = weights_in(p, buf);
    return buf;
}

bool vs_conv_phases_forward(const vs_conv_fast *g, const float *x, const float *w, const float *bias, float *y)
{
    if (in_place()) return vs_conv_winograd_forward(g, x, w, bias, false, y);
    const s1_engine *e;
    phases p;
    float *ws;
    void *owned;
    float *xs = stack_begin(g, &e, &p, &ws, &owned);
    if (!xs) return false;
    stack_weights(g, &p, w, ws);
    stack_job j = {g, &p, x, xs, NULL};
    vs_parallel_for(g->n * g->c, stack_grain(g), stack_range, &j);
    const bool ok = e->forward(&p.s1, xs, ws, bias, false, y);
    free(owned);
    return ok;
}

bool vs_conv_phases_transpose(const vs_conv_fast *g, const float *gy, const float *w, const float *bias, float *dx)
{
    if (in_place()) return vs_conv_winograd_transpose(g, gy, w, bias, dx);
    const s1_engine *e;
    phases p;
    float *ws;
    void *owned;
    float *dxs = stack_begin(g, &e, &p, &ws, &owned);
    if (!dxs) return false;
    stack_weights(g, &p, w, ws);
    const bool ok = e->forward(&p.t, gy, ws, NULL, false, dxs);
    if (ok) {
        stack_job j = {g, &p, dxs, dx, bias};
        vs_parallel_for(g->n * g->c, stack_grain(g), fold_range, &j);
    }
    free(owned);
    return ok;
}

bool vs_conv_phases_weight_grad(const vs_conv_fast *g, const float *x, const float *gy, float *dw)
{
    if (in_place()) return vs_conv_winograd_weight_grad(g, x, gy, dw);
    const s1_engine *e;
    phases p;
    float *dws;
    void *owned;
    float *xs = stack_begin(g, &e, &p, &dws, &owned);
    if (!xs) return false;
    stack_job j = {g, &p, x, xs, NULL};
    vs_parallel_for(g->n * g->c, stack_grain(g), stack_range, &j);
    const bool ok = e->weight_grad(&p.s1, xs, gy, dws);
    if (ok) unstack_weights(g, &p, dws, dw);
    free(owned);
    return ok;
}
