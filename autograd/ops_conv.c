/* ops_conv.c - conv2d, conv_transpose2d and conv2d_weight_grad (NCHW, PyTorch semantics).
 *
 * The three ops are one bilinear map seen from its three sides.  With B(x, w) = conv2d(x, w):
 *   conv_transpose2d(g, w) = B(., w)^T g   (the adjoint in x)
 *   conv2d_weight_grad(x, g) = B(x, .)^T g (the adjoint in w), i.e. <weight_grad(x, g), v> = <B(x, v), g>
 * so each op's gradients are the other two ops (see the *_backward functions), and gradients of
 * gradients stay inside the family: double backward through conv nets costs no extra rules.
 *
 * Kernels: im2col + vs_sgemm per group; col2im for the transposed direction.  All three are written
 * in terms of one geometry seen from the conv2d direction: the "image" side (conv2d input,
 * conv_transpose2d output) and the "patch" side (conv2d output, conv_transpose2d input).  The work
 * for one image is a function of the image index with its own scratch buffer, so a thread pool can
 * split the batch.  Pooling and upsampling live in ops_pool.c. */
#include "autograd/conv_avx512.h"
#include "autograd/conv_direct.h"
#include "autograd/conv_images.h"
#include "autograd/conv_phases.h"
#include "autograd/conv_winograd.h"
#include "autograd/internal.h"
#include "autograd/kernels.h"

#include <stdlib.h>
#include <string.h>

/* ---- parameters and geometry ------------------------------------------------------------------- */

/* Options with defaults applied (0 stride/dilation/groups mean 1). */
typedef struct conv_params {
    int64_t sh, sw, ph, pw, dh, dw, oph, opw, groups;
} conv_params;

typedef struct conv_geom {
    int64_t n;              /* batch */
    int64_t c, h, w;        /* image side: conv2d input, conv_transpose2d output */
    int64_t o, oh, ow;      /* patch side: conv2d output, conv_transpose2d input */
    int64_t kh, kw;
    conv_params p;
    int64_t cg, og, rows, cols; /* channels per group; im2col matrix is [rows = cg*kh*kw, cols = oh*ow] */
} conv_geom;

static bool conv_params_from(const char *op, const vs_conv_opts *o, conv_params *p)
{
    static const vs_conv_opts none = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, 0};
    if (!o) o = &none;
    for (int i = 0; i < 2; i++) {
        if (o->stride[i] < 0 || o->dilation[i] < 0 || o->padding[i] < 0 || o->output_padding[i] < 0) {
            vs_op_error(op, "negative stride, padding, dilation or output_padding (%d,%d,%d,%d in dim %d)", o->stride[i],
                        o->padding[i], o->dilation[i], o->output_padding[i], i);
            return false;
        }
    }
    if (o->groups < 0) {
        vs_op_error(op, "negative groups %d", o->groups);
        return false;
    }
    p->sh = o->stride[0] ? o->stride[0] : 1;
    p->sw = o->stride[1] ? o->stride[1] : 1;
    p->dh = o->dilation[0] ? o->dilation[0] : 1;
    p->dw = o->dilation[1] ? o->dilation[1] : 1;
    p->ph = o->padding[0];
    p->pw = o->padding[1];
    p->oph = o->output_padding[0];
    p->opw = o->output_padding[1];
    p->groups = o->groups ? o->groups : 1;
    return true;
}

static vs_conv_opts conv_opts_of(const conv_params *p)
{
    vs_conv_opts o = {{(int)p->sh, (int)p->sw}, {(int)p->ph, (int)p->pw}, {(int)p->dh, (int)p->dw},
                      {(int)p->oph, (int)p->opw}, (int)p->groups};
    return o;
}

/* What a node of the three ops keeps: the options and the kernel size. */
typedef struct conv_node_params {
    conv_params p;
    int64_t kh, kw;
} conv_node_params;

/* Record out's node with g's options and kernel size; out or NULL (see vs_record). */
static vs_tensor *conv_record(vs_tensor *out, const char *op, vs_backward_fn bw, int n_in, vs_tensor *const *in, const conv_geom *g)
{
    const conv_node_params np = {g->p, g->kh, g->kw};
    return vs_record(out, op, bw, n_in, in, &np, sizeof np);
}

static conv_params params_load(const vs_node *n) { return VS_PARAMS(n, conv_node_params)->p; }

/* conv2d output length along one dim: (in + 2 pad - dil (k - 1) - 1) / stride + 1, or -1 when the
 * kernel does not fit (or the arithmetic would overflow). */
static int64_t conv_out_len(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
    size_t span;
    if (k < 1 || !vs_size_mul((size_t)dil, (size_t)(k - 1), &span) || span > (size_t)INT64_MAX / 4) return -1;
    int64_t num = in + 2 * pad - (int64_t)span - 1;
    return num < 0 ? -1 : num / stride + 1;
}

/* conv_transpose2d output length: (in - 1) stride - 2 pad + dil (k - 1) + output_padding + 1. */
static int64_t transpose_out_len(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t opad)
{
    size_t a, b;
    if (in < 1 || k < 1 || !vs_size_mul((size_t)(in - 1), (size_t)stride, &a) || !vs_size_mul((size_t)dil, (size_t)(k - 1), &b) ||
        a > (size_t)INT64_MAX / 4 || b > (size_t)INT64_MAX / 4)
        return -1;
    return (int64_t)a - 2 * pad + (int64_t)b + opad + 1;
}

/* The output_padding that makes conv_transpose2d map a conv2d output back to an image of length in. */
static int64_t opad_for(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
    return (in + 2 * pad - dil * (k - 1) - 1) % stride;
}

static void geom_finish(conv_geom *g)
{
    g->cg = g->c / g->p.groups;
    g->og = g->o / g->p.groups;
    g->rows = g->cg * g->kh * g->kw;
    g->cols = g->oh * g->ow;
}

/* Both channel counts must split into the groups. */
static bool check_groups(const char *op, int64_t c, int64_t o, int64_t groups)
{
    if (c % groups != 0 || o % groups != 0) {
        vs_op_error(op, "%lld input and %lld output channels do not both split into %lld groups", (long long)c, (long long)o,
                    (long long)groups);
        return false;
    }
    return true;
}

static bool check_4d(const char *op, const vs_tensor *t, const char *what, const char *layout)
{
    if (t->ndim != 4) {
        vs_op_error(op, "%s must be %s, got %d dims", what, layout, t->ndim);
        return false;
    }
    return true;
}

static bool check_bias(const char *op, const vs_tensor *b, int64_t o)
{
    if (b && (b->ndim != 1 || b->shape[0] != o)) {
        char s[96];
        vs_shape_str(b, s, sizeof s);
        vs_op_error(op, "bias must be [%lld], got %s", (long long)o, s);
        return false;
    }
    return true;
}

static bool check_out(const char *op, int64_t oh, int64_t ow, const conv_geom *g)
{
    if (oh < 1 || ow < 1) {
        vs_op_error(op, "output would be empty (%lld x %lld): input %lld x %lld, kernel %lld x %lld, stride %lld,%lld, padding "
                        "%lld,%lld, dilation %lld,%lld",
                    (long long)oh, (long long)ow, (long long)g->h, (long long)g->w, (long long)g->kh, (long long)g->kw,
                    (long long)g->p.sh, (long long)g->p.sw, (long long)g->p.ph, (long long)g->p.pw, (long long)g->p.dh,
                    (long long)g->p.dw);
        return false;
    }
    return true;
}

/* A 1x1 kernel with stride 1 and no padding: the image already is its im2col matrix. */
static bool cols_are_image(const conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->p.sh == 1 && g->p.sw == 1 && g->p.ph == 0 && g->p.pw == 0;
}

/* ---- im2col / col2im ------------------------------------------------------------------------------
 * Both go through "phase planes": the group's image, zero-padded, with its columns dealt into sw
 * phases, plane[(c*sw + q)*hp + y][m] = padded[c][y][m*sw + q] (hp = h + 2ph rows, wq = ceil((w +
 * 2pw) / sw) columns).  Every output row of an im2col row is then ow consecutive floats of one phase
 * plane: no bounds checks, no zero fills, and copies the compiler vectorises.  The planes are small
 * (cg x the padded image) next to the im2col matrix (cg kh kw x oh ow). */

typedef struct phase_geom {
    int64_t hp, wq, plane; /* rows, columns, floats of one phase plane */
} phase_geom;

static phase_geom phases_of(const conv_geom *g)
{
    phase_geom f;
    f.hp = g->h + 2 * g->p.ph;
    f.wq = (g->w + 2 * g->p.pw + g->p.sw - 1) / g->p.sw;
    f.plane = f.hp * f.wq;
    return f;
}

/* Floats of one image's phase planes (one group). */
static int64_t phases_size(const conv_geom *g) { return g->cg * g->p.sw * phases_of(g).plane; }

/* Floats past the end of each im2col matrix and of the phase planes: im2col copies whole blocks of
 * COL_SLACK floats, so a row of ow outputs may write up to COL_SLACK - 1 floats past its end (into
 * the next row, written later, or into this slack) and read as far past the row it copies. */
#define COL_SLACK 8

/* Floats to allocate for them: im2col may read up to COL_SLACK - 1 past the end. */
#define PHASES_ALLOC(g) (phases_size(g) + COL_SLACK)

/* Deal img ([cg, h, w] of one group) into its phase planes. */
VS_VECTOR_CLONES VS_SHORT_COPIES static void phases_build(const conv_geom *g, const float *restrict img, float *restrict ph)
{
    const phase_geom f = phases_of(g);
    const int64_t sw = g->p.sw;
    for (int64_t q = 0; q < sw; q++) {
        const int64_t x0 = q - g->p.pw; /* image column of m = 0 */
        int64_t lo, hi;
        vs_conv_reach(f.wq, sw, x0, g->w, &lo, &hi);
        for (int64_t c = 0; c < g->cg; c++)
            for (int64_t y = 0; y < f.hp; y++) {
                float *restrict d = ph + ((c * sw + q) * f.hp + y) * f.wq;
                const int64_t yy = y - g->p.ph;
                if (yy < 0 || yy >= g->h)
                    vs_conv_strided_row(d, img, 0, 1, 0, 0, f.wq);
                else if (sw == 1)
                    vs_conv_strided_row(d, img + (c * g->h + yy) * g->w, x0, 1, lo, hi, f.wq);
                else if (sw == 2)
                    vs_conv_strided_row(d, img + (c * g->h + yy) * g->w, x0, 2, lo, hi, f.wq);
                else
                    vs_conv_strided_row(d, img + (c * g->h + yy) * g->w, x0, sw, lo, hi, f.wq);
            }
    }
    memset(ph + phases_size(g), 0, COL_SLACK * sizeof(float)); /* read by im2col's overshoot */
}

/* img[c, y, x] += the phase planes' entries at the same place (padding dropped): the adjoint of
 * phases_build. */
VS_VECTOR_CLONES static void phases_fold(const conv_geom *g, const float *restrict ph, float *restrict img)
{
    const phase_geom f = phases_of(g);
    const int64_t sw = g->p.sw;
    for (int64_t q = 0; q < sw; q++) {
        const int64_t x0 = q - g->p.pw; /* image column of m = 0 */
        int64_t lo, hi;
        vs_conv_reach(f.wq, sw, x0, g->w, &lo, &hi);
        for (int64_t c = 0; c < g->cg; c++)
            for (int64_t y = g->p.ph; y < g->p.ph + g->h; y++) {
                const float *restrict s = ph + ((c * sw + q) * f.hp + y) * f.wq;
                float *restrict d = img + (c * g->h + y - g->p.ph) * g->w;
                for (int64_t m = lo; m < hi; m++) d[x0 + m * sw] += s[m];
            }
    }
}

/* Where row (c, ki, kj) of the im2col matrix reads, output row i: ow consecutive floats from
 * phase plane (c, q) at row i*sh + ki*dh, column m0 + j. */
static const float *phase_src(const conv_geom *g, const phase_geom *f, const float *ph, int64_t c, int64_t ki, int64_t kj)
{
    const int64_t sw = g->p.sw, q = (kj * g->p.dw) % sw, m0 = (kj * g->p.dw) / sw;
    return ph + ((c * sw + q) * f->hp + ki * g->p.dh) * f->wq + m0;
}

/* col[(c*kh + ki)*kw + kj, i*ow + j] = img[c, i*sh - ph + ki*dh, j*sw - pw + kj*dw] (0 outside),
 * read from the group's phase planes; col rows are ld floats apart (several images share a row,
 * each image's segment written in full before the next, so the overshoot of one is overwritten).
 * The copies run in blocks of COL_SLACK floats: rows of 7 or 14 outputs become one or two vector
 * moves instead of a vector loop that never runs and a scalar tail. */
VS_VECTOR_CLONES VS_SHORT_COPIES static void im2col(const conv_geom *g, const float *restrict ph, float *restrict col, int64_t ld)
{
    const phase_geom f = phases_of(g);
    const int64_t ow = g->ow, step = g->p.sh * f.wq;
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++) {
                float *restrict row = col + ((c * g->kh + ki) * g->kw + kj) * ld;
                const float *restrict src = phase_src(g, &f, ph, c, ki, kj);
                for (int64_t i = 0; i < g->oh; i++)
                    for (int64_t j = 0; j < ow; j += COL_SLACK)
                        for (int64_t t = 0; t < COL_SLACK; t++) row[i * ow + j + t] = src[i * step + j + t];
            }
}

/* The adjoint of im2col: the phase planes (zeroed first) receive every col entry im2col would
 * have read from them. */
VS_VECTOR_CLONES VS_SHORT_COPIES static void col2im(const conv_geom *g, const float *restrict col, int64_t ld, float *restrict ph)
{
    const phase_geom f = phases_of(g);
    const int64_t ow = g->ow, step = g->p.sh * f.wq;
    memset(ph, 0, (size_t)phases_size(g) * sizeof(float));
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++) {
                const float *restrict row = col + ((c * g->kh + ki) * g->kw + kj) * ld;
                float *restrict dst = (float *)phase_src(g, &f, ph, c, ki, kj);
                for (int64_t i = 0; i < g->oh; i++)
                    for (int64_t j = 0; j < ow; j++) dst[i * step + j] += row[i * ow + j];
            }
}

/* ---- chunks of images ------------------------------------------------------------------------------
 * The batch is cut into chunks of a few images whose im2col matrices sit side by side in one
 * [rows, nb*cols] matrix, so each chunk is one matrix product per group: the weights are packed
 * once per chunk rather than once per image, and the weight gradient's product has a long inner
 * dimension instead of one image's few output pixels.  The patch side (conv2d output) is gathered
 * into (or scattered from) the same [og, nb*cols] layout. */

/* Columns a chunk aims at: its im2col matrix then stays in L2 for typical layers (1152 rows x 128
 * columns is 576 KiB) while the product is still wide enough.  Depends on the geometry only. */
#define CONV_CHUNK_COLS 128
#define CONV_CHUNK_MAX 64

static int64_t conv_grain(const conv_geom *g)
{
    int64_t k = g->cols > 0 ? CONV_CHUNK_COLS / g->cols : CONV_CHUNK_MAX;
    return k < 1 ? 1 : k > CONV_CHUNK_MAX ? CONV_CHUNK_MAX : k;
}

typedef enum conv_kind { CONV_FORWARD, CONV_TRANSPOSE, CONV_WEIGHT_GRAD } conv_kind;

typedef struct conv_batch {
    const char *op;
    const conv_geom *g;
    conv_kind kind;
    const float *a, *b;  /* forward: image, weight; transpose: patch, weight; weight grad: image, patch */
    float *out;          /* forward/transpose: the output tensor; weight grad: the lanes' partial sums */
    const float *bias;   /* forward: the bias, or NULL */
    vs_tensor *fill;     /* transpose: the output, filled with fill_b (or zeros) before a kernel adds to it */
    const vs_tensor *fill_b;
    int64_t wsize;       /* weight grad: elements of one partial */
    int64_t grain;       /* images per chunk */
    int64_t chunks;      /* chunks of the batch */
    int64_t lanes;       /* weight grad: partial sums (see weight_grad_lanes) */
    volatile int failed; /* a chunk could not get its scratch memory */
} conv_batch;

/* A chunk's scratch matrices (see scratch_get). */
typedef struct conv_scratch {
    float *col, *patch, *phases;
    void *owned; /* non-NULL when too large to keep: freed at the chunk's end */
} conv_scratch;

/* Per-thread scratch for a chunk of nb images: the [rows, nb*cols + COL_SLACK] im2col matrix, the
 * [og, nb*cols] patch matrix and one image's phase planes, each 64-byte aligned. */
static bool scratch_get(const conv_geom *g, int64_t nb, conv_scratch *s)
{
    size_t ncol, ncols, npatch, nph = (size_t)PHASES_ALLOC(g), bytes;
    s->owned = NULL;
    if (!vs_size_mul((size_t)nb, (size_t)g->cols, &ncols) || !vs_size_mul((size_t)g->rows, ncols + COL_SLACK, &ncol) ||
        !vs_size_mul((size_t)g->og, ncols, &npatch) || ncol > SIZE_MAX / sizeof(float) / 4 ||
        npatch > SIZE_MAX / sizeof(float) / 4 || nph > SIZE_MAX / sizeof(float) / 4)
        return false;
    ncol = (ncol + 15) & ~(size_t)15;
    npatch = (npatch + 15) & ~(size_t)15;
    bytes = (ncol + npatch + nph) * sizeof(float);
    float *base = vs_scratch_or_own(VS_SCRATCH_CONV, bytes, &s->owned);
    if (!base) return false;
    s->col = base;
    s->patch = base + ncol;
    s->phases = base + ncol + npatch;
    return true;
}

/* dst[o, i*cols + p] = src[(b + i), o, p] over one group's og channels: the patch side of images
 * b..b+nb-1 side by side (src points at the group's first channel of image 0). */
static void gather_patch(const conv_geom *g, const float *src, int64_t b, int64_t nb, float *dst)
{
    int64_t ld = nb * g->cols;
    for (int64_t i = 0; i < nb; i++)
        for (int64_t o = 0; o < g->og; o++)
            memcpy(dst + o * ld + i * g->cols, src + ((b + i) * g->o + o) * g->cols, (size_t)g->cols * sizeof(float));
}

/* The inverse of gather_patch, adding bias[o] when bias is not NULL (the group's og biases). */
VS_VECTOR_CLONES static void scatter_patch(const conv_geom *g, const float *src, int64_t b, int64_t nb, const float *bias,
                                           float *dst)
{
    int64_t ld = nb * g->cols;
    for (int64_t i = 0; i < nb; i++)
        for (int64_t o = 0; o < g->og; o++) {
            const float *restrict s = src + o * ld + i * g->cols;
            float *restrict d = dst + ((b + i) * g->o + o) * g->cols;
            const float v = bias ? bias[o] : 0.0f;
            for (int64_t k = 0; k < g->cols; k++) d[k] = s[k] + v;
        }
}

/* The group's im2col matrix of images b..b+nb-1 into s->col (rows *ld floats apart), or the image
 * itself when one 1x1 image is its own. */
static const float *chunk_cols(const conv_geom *g, const float *img, int64_t gi, int64_t b, int64_t nb, const conv_scratch *s,
                               int64_t *ld)
{
    const float *first = img + (b * g->c + gi * g->cg) * g->h * g->w;
    if (nb == 1 && cols_are_image(g)) {
        *ld = g->cols;
        return first;
    }
    *ld = nb * g->cols + COL_SLACK;
    for (int64_t i = 0; i < nb; i++) {
        phases_build(g, first + i * g->c * g->h * g->w, s->phases);
        im2col(g, s->phases, s->col + i * g->cols, *ld);
    }
    return s->col;
}

/* Plane k of dst (plane floats each, k < n) = v[k]. */
static void fill_planes(float *dst, const float *v, int64_t n, int64_t plane)
{
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = 0; i < plane; i++) dst[k * plane + i] = v[k];
}

/* patch[b..e) = W im2col(img[b..e)) + bias per group (bias may be NULL). */
static void conv2d_chunk(const conv_geom *g, const float *img, const float *w, const float *bias, float *patch, int64_t b,
                         int64_t nb, const conv_scratch *s)
{
    int64_t n = nb * g->cols;
    for (int64_t gi = 0; gi < g->p.groups; gi++) {
        int64_t ld;
        const float *col = chunk_cols(g, img, gi, b, nb, s, &ld);
        const float *wg = w + gi * g->og * g->rows, *bg = bias ? bias + gi * g->og : NULL;
        float *dst = patch + gi * g->og * g->cols;
        if (nb == 1) {
            /* One image: the product writes its output in place, onto the bias. */
            float *out = dst + b * g->o * g->cols;
            if (bg) fill_planes(out, bg, g->og, g->cols);
            vs_sgemm(false, false, g->og, g->cols, g->rows, 1.0f, wg, g->rows, col, ld, bg ? 1.0f : 0.0f, out, g->cols);
        } else {
            vs_sgemm(false, false, g->og, n, g->rows, 1.0f, wg, g->rows, col, ld, 0.0f, s->patch, n);
            scatter_patch(g, s->patch, b, nb, bg, dst);
        }
    }
}

/* img[b..e) += col2im(W^T patch[b..e)) per group: the adjoint of conv2d_chunk in its image. */
static void transpose_chunk(const conv_geom *g, const float *patch, const float *w, float *img, int64_t b, int64_t nb,
                            const conv_scratch *s)
{
    int64_t n = nb * g->cols;
    for (int64_t gi = 0; gi < g->p.groups; gi++) {
        float *dst = img + (b * g->c + gi * g->cg) * g->h * g->w;
        const float *wg = w + gi * g->og * g->rows;
        const float *src = patch + (b * g->o + gi * g->og) * g->cols;
        if (nb > 1) {
            gather_patch(g, patch + gi * g->og * g->cols, b, nb, s->patch);
            src = s->patch;
        }
        if (nb == 1 && cols_are_image(g)) {
            vs_sgemm(true, false, g->rows, g->cols, g->og, 1.0f, wg, g->rows, src, g->cols, 1.0f, dst, g->cols);
            continue;
        }
        vs_sgemm(true, false, g->rows, n, g->og, 1.0f, wg, g->rows, src, n, 0.0f, s->col, n);
        for (int64_t i = 0; i < nb; i++) {
            col2im(g, s->col + i * g->cols, n, s->phases);
            phases_fold(g, s->phases, dst + i * g->c * g->h * g->w);
        }
    }
}

/* dw = patch[b..e) im2col(img[b..e))^T per group (dw += ... when accumulate): the chunk's share of
 * the weight gradient. */
static void weight_grad_chunk(const conv_geom *g, const float *img, const float *patch, float *dw, int64_t b, int64_t nb,
                              const conv_scratch *s, bool accumulate)
{
    int64_t n = nb * g->cols;
    for (int64_t gi = 0; gi < g->p.groups; gi++) {
        int64_t ld;
        const float *col = chunk_cols(g, img, gi, b, nb, s, &ld);
        const float *src = patch + (b * g->o + gi * g->og) * g->cols;
        if (nb > 1) {
            gather_patch(g, patch + gi * g->og * g->cols, b, nb, s->patch);
            src = s->patch;
        }
        vs_sgemm(false, true, g->og, g->rows, n, 1.0f, src, n, col, ld, accumulate ? 1.0f : 0.0f, dw + gi * g->og * g->rows,
                 g->rows);
    }
}

/* ---- the batch loop, split over the thread pool --------------------------------------------------- */

static void conv_chunk(void *ctx, int64_t begin, int64_t end)
{
    conv_batch *j = ctx;
    conv_scratch s;
    if (!scratch_get(j->g, end - begin, &s)) {
        j->failed = 1;
        return;
    }
    if (j->kind == CONV_FORWARD)
        conv2d_chunk(j->g, j->a, j->b, j->bias, j->out, begin, end - begin, &s);
    else
        transpose_chunk(j->g, j->a, j->b, j->out, begin, end - begin, &s);
    free(s.owned);
}

/* The weight gradient is summed in at most CONV_WGRAD_LANES partials: the chunks are dealt to the
 * lanes in contiguous runs, a lane accumulates its chunks' products in chunk order into its own
 * partial, and the partials are added in lane order.  Lanes and runs depend on the batch and the
 * geometry only, never on the thread count.  Few lanes keep the partials in cache (8 of the 64 x
 * 1152 weights of the GANMEX classifier's second conv are 2.4 MB) and the final sum short. */
#define CONV_WGRAD_LANES 8

static void weight_grad_lanes(void *ctx, int64_t begin, int64_t end)
{
    conv_batch *j = ctx;
    for (int64_t l = begin; l < end; l++) {
        const int64_t c0 = l * j->chunks / j->lanes, c1 = (l + 1) * j->chunks / j->lanes;
        for (int64_t c = c0; c < c1; c++) {
            const int64_t b = c * j->grain, nb = j->g->n - b < j->grain ? j->g->n - b : j->grain;
            conv_scratch s;
            if (!scratch_get(j->g, nb, &s)) {
                j->failed = 1;
                return;
            }
            weight_grad_chunk(j->g, j->a, j->b, j->out + l * j->wsize, b, nb, &s, c > c0);
            free(s.owned);
        }
    }
}

/* dw += the lanes' partials, added in lane order. */
VS_VECTOR_CLONES static void sum_partials(float *restrict dw, const float *restrict parts, int64_t lanes, int64_t wsize)
{
    for (int64_t c = 0; c < lanes; c++) {
        const float *restrict q = parts + c * wsize;
        for (int64_t k = 0; k < wsize; k++) dw[k] += q[k];
    }
}

/* dw = the weight gradient of the whole batch (dw arrives zeroed); one lane writes dw itself. */
static bool weight_grad_run(conv_batch *j, float *dw)
{
    j->lanes = j->chunks < CONV_WGRAD_LANES ? j->chunks : CONV_WGRAD_LANES;
    if (j->lanes <= 1) {
        j->out = dw;
        weight_grad_lanes(j, 0, j->lanes);
        return !j->failed;
    }
    /* The partials live in the calling thread's scratch: fresh pages for them every step (megabytes
     * for 128 x 128 x 3 x 3 weights) would cost more page faults than the sums themselves. */
    size_t bytes;
    void *owned = NULL;
    if (!vs_size_mul((size_t)j->lanes, (size_t)j->wsize * sizeof(float), &bytes) ||
        !(j->out = vs_scratch_or_own(VS_SCRATCH_CONV_PARTS, bytes, &owned))) {
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the partial weight gradients", j->op);
        return false;
    }
    vs_parallel_for(j->lanes, 1, weight_grad_lanes, j);
    if (!j->failed) sum_partials(dw, j->out, j->lanes, j->wsize);
    free(owned);
    return !j->failed;
}

typedef struct bias_fill {
    vs_tensor *t;
    const vs_tensor *b;
} bias_fill;

/* Images [begin, end) of fill_bias. */
static void fill_bias_images(void *ctx, int64_t begin, int64_t end)
{
    const bias_fill *f = ctx;
    const int64_t ch = f->t->shape[1], plane = f->t->shape[2] * f->t->shape[3];
    float *d = f->t->data + begin * ch * plane;
    if (!f->b) {
        memset(d, 0, (size_t)((end - begin) * ch * plane) * sizeof(float));
        return;
    }
    for (int64_t i = begin; i < end; i++, d += ch * plane) fill_planes(d, f->b->data, ch, plane);
}

/* Fill each channel plane of t [n, ch, plane] with b[ch] (or zeros without a bias), the images
 * over the pool (the kernels that add to it run on every thread). */
static void fill_bias(vs_tensor *t, const vs_tensor *b)
{
    bias_fill f = {t, b};
    vs_parallel_for(t->shape[0], 1, fill_bias_images, &f);
}

/* A transpose's output filled with its bias, for kernels that add into it. */
static void transpose_fill(conv_batch *j)
{
    if (j->kind == CONV_TRANSPOSE) fill_bias(j->fill, j->fill_b);
}

/* Run every image of the batch.  The chunk size depends on the geometry only, so results - and
 * the weight gradient's partial sums - are bit-identical for any number of threads.  A batch that
 * is one chunk runs on the calling thread, so that its matrix products can use the pool themselves. */
/* Layers with a few output channels and stride 1 (a generator's last conv) go to conv_direct.c. */
static bool conv_direct(conv_batch *j, float *dw, bool *done)
{
    const conv_geom *g = j->g;
    *done = g->p.groups == 1 && g->p.sh == 1 && g->p.sw == 1 && g->o <= VS_CONV_DIRECT_MAX_O;
    if (!*done) return true;
    transpose_fill(j);
    const vs_conv_direct d = {g->n, g->c, g->h, g->w, g->o, g->oh, g->ow, g->kh, g->kw, g->p.ph, g->p.pw, g->p.dh, g->p.dw};
    bool ok = j->kind == CONV_FORWARD     ? vs_conv_direct_forward(&d, j->a, j->b, j->bias, j->out)
              : j->kind == CONV_TRANSPOSE ? vs_conv_direct_transpose(&d, j->a, j->b, j->out)
                                          : vs_conv_direct_weight_grad(&d, j->a, j->b, dw);
    if (!ok) vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the padded planes", j->op);
    return ok;
}

/* g as the fast kernels take it (a conv2d's geometry, not flipped). */
static vs_conv_fast fast_geom(const conv_geom *g)
{
    const conv_params *p = &g->p;
    return (vs_conv_fast){g->n, g->c, g->h, g->w, g->o, g->oh, g->ow, g->kh, g->kw, p->sh, p->sw, p->ph, p->pw, p->dh, p->dw, false, 0, 0};
}

/* A stride-1 conv's transpose as the fast kernels take it, a conv2d of gy with the weights flipped and
 * padding d (k - 1) - p; false when that padding is negative. */
static bool flip_geom(const conv_geom *g, vs_conv_fast *f)
{
    const conv_params *p = &g->p;
    const int64_t ph = p->dh * (g->kh - 1) - p->ph, pw = p->dw * (g->kw - 1) - p->pw;
    if (ph < 0 || pw < 0) return false;
    *f = (vs_conv_fast){g->n, g->o, g->oh, g->ow, g->c, g->h, g->w, g->kh, g->kw, 1, 1, ph, pw, p->dh, p->dw, true, 0, 0};
    return true;
}

/* The bias the batch's output starts from: the layer's (forward) or dx's fill (transpose). */
static const float *out_bias(const conv_batch *j)
{
    return j->kind == CONV_TRANSPOSE ? (j->fill_b ? j->fill_b->data : NULL) : j->bias;
}

/* Strides that divide the kernel go to conv_phases.c when its stride-1 engine takes the conv over
 * the stacked input phases (Winograd: fewer multiply-adds than the strided kernels). */
static bool conv_phased(conv_batch *j, float *dw, bool *done)
{
    const conv_geom *g = j->g;
    const conv_params *p = &g->p;
    const vs_conv_fast f = fast_geom(g);
    bool ok = true;
    *done = false;
    if (p->groups != 1) return true;
    if (j->kind == CONV_FORWARD && (*done = vs_conv_phases_forward_fits(&f)))
        ok = vs_conv_phases_forward(&f, j->a, j->b, out_bias(j), j->out);
    else if (j->kind == CONV_TRANSPOSE && (*done = vs_conv_phases_transpose_fits(&f)))
        ok = vs_conv_phases_transpose(&f, j->a, j->b, out_bias(j), j->out);
    else if (j->kind == CONV_WEIGHT_GRAD && (*done = vs_conv_phases_weight_grad_fits(&f)))
        ok = vs_conv_phases_weight_grad(&f, j->a, j->b, dw);
    if (!ok) vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the stacked input phases", j->op);
    return ok;
}

/* The forward, the transpose (stride 1: a conv2d with the weights flipped and padding d (k - 1) - p;
 * larger strides: one such conv per output phase) and the weight gradient go to Winograd
 * (conv_winograd.c: stride 1, 2x2, 3x3 and 5x5) or else the AVX-512 kernels (conv_avx512*.c) when they
 * take the shape. */
static bool conv_fast(conv_batch *j, float *dw, bool *done)
{
    const conv_geom *g = j->g;
    const conv_params *p = &g->p;
    vs_conv_fast f;
    *done = false;
    if (p->groups != 1) return true;
    if (j->kind != CONV_TRANSPOSE) {
        f = fast_geom(g);
    } else if (p->sh != 1 || p->sw != 1) {
        f = fast_geom(g);
        if (!vs_conv_avx512_transpose_fits(&f)) return true;
        *done = true;
        /* the output phases write every place of dx once (then with the bias) or add into it */
        const bool all = vs_conv_avx512_transpose_covers(&f);
        if (!all) transpose_fill(j);
        if (vs_conv_avx512_transpose(&f, j->a, j->b, all && j->fill_b ? j->fill_b->data : NULL, !all, j->out)) return true;
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the output phases", j->op);
        return false;
    } else if (!flip_geom(g, &f)) {
        return true;
    }
    if (j->kind == CONV_WEIGHT_GRAD ? vs_conv_winograd_weight_grad_fits(&f) : vs_conv_winograd_fits(&f)) {
        *done = true;
        if (j->kind == CONV_WEIGHT_GRAD ? vs_conv_winograd_weight_grad(&f, j->a, j->b, dw)
                                        : vs_conv_winograd_forward(&f, j->a, j->b, out_bias(j), false, j->out))
            return true;
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the Winograd transforms", j->op);
        return false;
    }
    if (j->kind == CONV_WEIGHT_GRAD) {
        if (!vs_conv_avx512_weight_grad_fits(&f)) return true;
        *done = true;
        if (vs_conv_avx512_weight_grad(&f, j->a, j->b, dw)) return true;
    } else {
        if (!vs_conv_avx512_fits(&f)) return true;
        *done = true;
        if (vs_conv_avx512_forward(&f, j->a, j->b, out_bias(j), false, j->out)) return true;
    }
    vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the packed weights or the padded image", j->op);
    return false;
}

/* Forwards with few output channels (1 to 15; at stride 1, 4 or fewer went to conv_direct.c) and a
 * batch of 16 images or more go to conv_images.c, 16 images in the lanes, unless Winograd takes them; so
 * do their transposes unless the channel-blocked kernels take those (dx's channels fill their
 * lanes: 64x8x19x19 -> 96 k3 s2 transposed ran 15% slower with the images in the lanes, 64x3x30x30 ->
 * 16 k5 s2 2.7x as fast). */
static bool conv_images(conv_batch *j, bool *done)
{
    const conv_geom *g = j->g;
    const conv_params *p = &g->p;
    const vs_conv_fast f = fast_geom(g);
    *done = false;
    if (j->kind == CONV_WEIGHT_GRAD || p->groups != 1 || !vs_conv_images_fits(&f) || vs_conv_winograd_fits(&f)) return true;
    if (j->kind == CONV_TRANSPOSE) {
        vs_conv_fast flip;
        if (p->sh == 1 && p->sw == 1 ? flip_geom(g, &flip) && vs_conv_avx512_fits(&flip) : vs_conv_avx512_transpose_fits(&f)) return true;
    }
    *done = true;
    if (j->kind == CONV_FORWARD ? vs_conv_images_forward(&f, j->a, j->b, out_bias(j), j->out)
                                : vs_conv_images_transpose(&f, j->a, j->b, out_bias(j), j->out))
        return true;
    vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the images' bordered copy", j->op);
    return false;
}

static bool conv_run(conv_batch *j, float *dw)
{
    bool direct;
    bool ok = conv_direct(j, dw, &direct);
    if (direct) return ok;
    ok = conv_phased(j, dw, &direct);
    if (direct) return ok;
    ok = conv_images(j, &direct);
    if (direct) return ok;
    ok = conv_fast(j, dw, &direct);
    if (direct) return ok;
    transpose_fill(j);
    int64_t n = j->g->n;
    j->grain = conv_grain(j->g);
    j->chunks = (n + j->grain - 1) / j->grain;
    if (j->kind == CONV_WEIGHT_GRAD) {
        /* the direct kernels overwrite dw; the lanes of im2col products add into it */
        memset(dw, 0, (size_t)j->wsize * sizeof(float));
        if (!weight_grad_run(j, dw) && !j->failed) return false;
    } else if (j->chunks <= 1) {
        conv_chunk(j, 0, n);
    } else {
        vs_parallel_for(n, j->grain, conv_chunk, j);
    }
    if (j->failed) vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for the im2col buffer", j->op);
    return !j->failed;
}

/* ---- backward rules ------------------------------------------------------------------------------ */

static const uint32_t NHW = VS_AXIS(0) | VS_AXIS(2) | VS_AXIS(3);

/* opts with the output_padding that maps conv2d's output back onto an image of x's size. */
static vs_conv_opts opts_back_to(const conv_params *p, const vs_tensor *img, int64_t kh, int64_t kw)
{
    conv_params q = *p;
    q.oph = opad_for(img->shape[2], kh, p->sh, p->ph, p->dh);
    q.opw = opad_for(img->shape[3], kw, p->sw, p->pw, p->dw);
    return conv_opts_of(&q);
}

static void conv2d_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *w = n->in[1];
    conv_params p = params_load(n);
    vs_conv_opts o = conv_opts_of(&p);
    /* y = B(x, w) + b:  dx = B(., w)^T g,  dw = B(x, .)^T g,  db = sum over n, h, w of g */
    if (vs_node_needs(n, 0)) {
        vs_conv_opts back = opts_back_to(&p, x, w->shape[2], w->shape[3]);
        gin[0] = vs_conv_transpose2d(g, w, NULL, &back);
    }
    if (vs_node_needs(n, 1)) gin[1] = vs_conv2d_weight_grad(x, g, w->shape[2], w->shape[3], &o);
    if (n->n_in > 2 && vs_node_needs(n, 2)) gin[2] = vs_sum(g, NHW, false);
}

static void conv_transpose2d_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *w = n->in[1];
    conv_params p = params_load(n);
    p.oph = p.opw = 0;
    vs_conv_opts o = conv_opts_of(&p);
    /* y = B(., w)^T x + b, so <y, g> = <x, B(g, w)>:  dx = B(g, w),  dw = B(g, .)^T x  (g is the
     * image side, x the patch side),  db = sum of g.  output_padding < stride makes B(g, w) x-sized. */
    if (vs_node_needs(n, 0)) gin[0] = vs_conv2d(g, w, NULL, &o);
    if (vs_node_needs(n, 1)) gin[1] = vs_conv2d_weight_grad(g, x, w->shape[2], w->shape[3], &o);
    if (n->n_in > 2 && vs_node_needs(n, 2)) gin[2] = vs_sum(g, NHW, false);
}

static void weight_grad_backward(vs_node *n, vs_tensor *out, vs_tensor *v, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *g = n->in[1];
    conv_params p = params_load(n);
    const int64_t kh = VS_PARAMS(n, conv_node_params)->kh, kw = VS_PARAMS(n, conv_node_params)->kw;
    /* <weight_grad(x, g), v> = <B(x, v), g>:  d/dx = B(., v)^T g,  d/dg = B(x, v) */
    if (vs_node_needs(n, 0)) {
        vs_conv_opts back = opts_back_to(&p, x, kh, kw);
        gin[0] = vs_conv_transpose2d(g, v, NULL, &back);
    }
    if (vs_node_needs(n, 1)) {
        vs_conv_opts o = conv_opts_of(&p);
        gin[1] = vs_conv2d(x, v, NULL, &o);
    }
}

/* ---- the ops ------------------------------------------------------------------------------------- */

vs_tensor *vs_conv2d(vs_tensor *x, vs_tensor *w, vs_tensor *b, const vs_conv_opts *opts)
{
    static const char *op = "conv2d";
    if (!x || !w) return NULL;
    conv_geom g = {0};
    if (!conv_params_from(op, opts, &g.p) || !check_4d(op, x, "input", "[n,c,h,w]") ||
        !check_4d(op, w, "weight", "[o,c/groups,kh,kw]"))
        return NULL;
    g.n = x->shape[0];
    g.c = x->shape[1];
    g.h = x->shape[2];
    g.w = x->shape[3];
    g.o = w->shape[0];
    g.kh = w->shape[2];
    g.kw = w->shape[3];
    if (!check_groups(op, g.c, g.o, g.p.groups)) return NULL;
    if (w->shape[1] * g.p.groups != g.c)
        return vs_op_error(op, "input has %lld channels, weight expects %lld", (long long)g.c, (long long)(w->shape[1] * g.p.groups));
    if (g.kh < 1 || g.kw < 1) return vs_op_error(op, "empty kernel %lld x %lld", (long long)g.kh, (long long)g.kw);
    if (!check_bias(op, b, g.o)) return NULL;
    g.oh = conv_out_len(g.h, g.kh, g.p.sh, g.p.ph, g.p.dh);
    g.ow = conv_out_len(g.w, g.kw, g.p.sw, g.p.pw, g.p.dw);
    if (!check_out(op, g.oh, g.ow, &g)) return NULL;
    geom_finish(&g);

    vs_tensor *y = vs_alloc(op, 4, (int64_t[]){g.n, g.o, g.oh, g.ow});
    if (!y) return NULL;
    conv_batch job = {.op = op, .g = &g, .kind = CONV_FORWARD, .a = x->data, .b = w->data, .out = y->data, .bias = b ? b->data : NULL};
    if (!conv_run(&job, NULL)) {
        vs_tensor_free(y);
        return NULL;
    }
    vs_tensor *in[3] = {x, w, b};
    return conv_record(y, op, conv2d_backward, b ? 3 : 2, in, &g);
}

/* output_padding at or above the stride (PyTorch allows it below the dilation): the transposed
 * convolution without padding, F = (in - 1) s + d (k - 1) + 1 long, cut to [p, p + h) with zeros past
 * F, plus the bias.  Composed of differentiable ops, so its derivatives of every order follow. */
static vs_tensor *transpose_wide_opad(vs_tensor *x, vs_tensor *w, vs_tensor *b, const conv_geom *g)
{
    conv_params q = g->p;
    q.ph = q.pw = q.oph = q.opw = 0;
    const vs_conv_opts o = conv_opts_of(&q);
    vs_scope_begin();
    vs_tensor *y = vs_conv_transpose2d(x, w, NULL, &o);
    if (y) {
        const int64_t eh = g->p.ph + g->h - y->shape[2], ew = g->p.pw + g->w - y->shape[3];
        if (eh > 0 || ew > 0) y = vs_pad(y, (int64_t[]){0, 0, 0, 0, 0, eh > 0 ? eh : 0, 0, ew > 0 ? ew : 0}, 0.0f);
        y = vs_slice(vs_slice(y, 2, g->p.ph, g->p.ph + g->h), 3, g->p.pw, g->p.pw + g->w);
        if (b) y = vs_add(y, vs_reshape(b, 4, (int64_t[]){1, b->shape[0], 1, 1}));
    }
    return vs_scope_return(y);
}

vs_tensor *vs_conv_transpose2d(vs_tensor *x, vs_tensor *w, vs_tensor *b, const vs_conv_opts *opts)
{
    static const char *op = "conv_transpose2d";
    if (!x || !w) return NULL;
    conv_geom g = {0};
    if (!conv_params_from(op, opts, &g.p) || !check_4d(op, x, "input", "[n,c,h,w]") ||
        !check_4d(op, w, "weight", "[c,o/groups,kh,kw]"))
        return NULL;
    /* x is the patch side, the output the image side. */
    g.n = x->shape[0];
    g.o = x->shape[1];
    g.oh = x->shape[2];
    g.ow = x->shape[3];
    g.c = w->shape[1] * g.p.groups;
    g.kh = w->shape[2];
    g.kw = w->shape[3];
    if (w->shape[0] != g.o)
        return vs_op_error(op, "input has %lld channels, weight expects %lld", (long long)g.o, (long long)w->shape[0]);
    if (!check_groups(op, g.o, g.c, g.p.groups)) return NULL;
    if (g.kh < 1 || g.kw < 1) return vs_op_error(op, "empty kernel %lld x %lld", (long long)g.kh, (long long)g.kw);
    if ((g.p.oph >= g.p.sh && g.p.oph >= g.p.dh) || (g.p.opw >= g.p.sw && g.p.opw >= g.p.dw))
        return vs_op_error(op, "output_padding %lld,%lld must be smaller than the stride %lld,%lld or the dilation %lld,%lld",
                           (long long)g.p.oph, (long long)g.p.opw, (long long)g.p.sh, (long long)g.p.sw, (long long)g.p.dh,
                           (long long)g.p.dw);
    if (!check_bias(op, b, g.c)) return NULL;
    g.h = transpose_out_len(g.oh, g.kh, g.p.sh, g.p.ph, g.p.dh, g.p.oph);
    g.w = transpose_out_len(g.ow, g.kw, g.p.sw, g.p.pw, g.p.dw, g.p.opw);
    if (g.h < 1 || g.w < 1)
        return vs_op_error(op, "output would be empty (%lld x %lld): input %lld x %lld, kernel %lld x %lld", (long long)g.h,
                           (long long)g.w, (long long)g.oh, (long long)g.ow, (long long)g.kh, (long long)g.kw);
    if (g.p.oph >= g.p.sh || g.p.opw >= g.p.sw) return transpose_wide_opad(x, w, b, &g);
    geom_finish(&g);

    vs_tensor *y = vs_alloc(op, 4, (int64_t[]){g.n, g.c, g.h, g.w});
    if (!y) return NULL;
    conv_batch job = {.op = op, .g = &g, .kind = CONV_TRANSPOSE, .a = x->data, .b = w->data, .out = y->data, .fill = y, .fill_b = b};
    if (!conv_run(&job, NULL)) {
        vs_tensor_free(y);
        return NULL;
    }
    vs_tensor *in[3] = {x, w, b};
    return conv_record(y, op, conv_transpose2d_backward, b ? 3 : 2, in, &g);
}

vs_tensor *vs_conv2d_weight_grad(vs_tensor *x, vs_tensor *gy, int kh, int kw, const vs_conv_opts *opts)
{
    static const char *op = "conv2d_weight_grad";
    if (!x || !gy) return NULL;
    conv_geom g = {0};
    if (!conv_params_from(op, opts, &g.p) || !check_4d(op, x, "input", "[n,c,h,w]") ||
        !check_4d(op, gy, "output gradient", "[n,o,oh,ow]"))
        return NULL;
    g.n = x->shape[0];
    g.c = x->shape[1];
    g.h = x->shape[2];
    g.w = x->shape[3];
    g.o = gy->shape[1];
    g.kh = kh;
    g.kw = kw;
    if (kh < 1 || kw < 1) return vs_op_error(op, "kernel %d x %d must be at least 1 x 1", kh, kw);
    if (gy->shape[0] != g.n)
        return vs_op_error(op, "input has batch %lld, output gradient %lld", (long long)g.n, (long long)gy->shape[0]);
    if (!check_groups(op, g.c, g.o, g.p.groups)) return NULL;
    g.oh = conv_out_len(g.h, g.kh, g.p.sh, g.p.ph, g.p.dh);
    g.ow = conv_out_len(g.w, g.kw, g.p.sw, g.p.pw, g.p.dw);
    if (!check_out(op, g.oh, g.ow, &g)) return NULL;
    if (gy->shape[2] != g.oh || gy->shape[3] != g.ow)
        return vs_op_error(op, "output gradient is %lld x %lld, the convolution gives %lld x %lld", (long long)gy->shape[2],
                           (long long)gy->shape[3], (long long)g.oh, (long long)g.ow);
    geom_finish(&g);

    vs_tensor *dw = vs_alloc(op, 4, (int64_t[]){g.o, g.cg, g.kh, g.kw});
    if (!dw) return NULL;
    conv_batch job = {.op = op, .g = &g, .kind = CONV_WEIGHT_GRAD, .a = x->data, .b = gy->data, .wsize = dw->size};
    if (!conv_run(&job, dw->data)) {
        vs_tensor_free(dw);
        return NULL;
    }
    vs_tensor *in[2] = {x, gy};
    return conv_record(dw, op, weight_grad_backward, 2, in, &g);
}
