/* forward_boxes.c - incremental inference of a sequential on boxed copies of one input, the
 * "Krypton" idea occlusion profits from.  Copy i equals x except inside a small box, so its
 * activation after layer l equals x's own activation B_l except inside a "dirty" spatial box that
 * grows with the receptive field.  Each layer of the leading run of supported layers computes only
 * that box, for all copies of a chunk at once.  Values are kept channels last: copy i owns rows
 * off[i] .. off[i+1] of one [P, channels] matrix, its box in row-major order.
 *   conv2d      im2col of the patched input (B_l outside the copy's box, its dirty values inside,
 *               zero padding), one row (ki, kj, c) per output position - k contiguous runs of k c
 *               floats - then vs_sgemm with the weight permuted to [k, k, c, oc], over blocks of
 *               copies whose rows fit in cache;
 *   max / avg   the same patched tiles, each window reduced as ops_pool.c does (same values);
 *   pool2d
 *   pointwise   activations, dropout and batch norm in evaluation mode: the module's own forward
 *               on the values seen as a batch of P one-pixel images [P, c, 1, 1].
 * At the first other layer (flatten, linear, norms over space, residual blocks, ...) the copies are
 * materialised (B_l with each copy's box written in) and the rest of the model runs as usual - except
 * flatten + linear when the boxes are small: y_i = y_base + W (a_i - B), one product per position
 * of the boxes with the weight permuted to [h w, c, out] (sparse_linear).  The dirty box starts as
 * the part of the box where fill differs from x, and can vanish (stride > k); a copy whose box is
 * empty after the prefix takes the base pass's output without any work. */
#include "autograd/kernels.h"
#include "nn/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOXES_CHUNK 64                  /* copies per chunk at most */
#define BOXES_BUDGET ((int64_t)1 << 23) /* floats of one layer's values and columns per chunk (32 MB) */
#define GATHER_GRAIN 8                  /* copies per task of the parallel gathers */
#define CONV_BLOCK ((int64_t)1 << 16)   /* floats of im2col rows per product (256 KB, cache-sized) */

typedef enum step_kind { STEP_CONV, STEP_MAX_POOL, STEP_AVG_POOL, STEP_POINTWISE } step_kind;

/* One layer of the incremental prefix: what it computes, its window, and the [c, h, w] of its input
 * and output activations (from the base pass). */
typedef struct step {
    vs_module *m;
    step_kind kind;
    int64_t k, s, p;
    int64_t c, h, w, oc, oh, ow;
} step;

/* Where a copy's activation differs from the base: rows [y0, y0+h), columns [x0, x0+w), all channels. */
typedef struct dirty {
    int64_t y0, x0, h, w;
} dirty;

/* State of one call: the prefix, its base activations, and the plan of the current chunk. */
typedef struct boxes_run {
    vs_module *m;
    vs_tensor *x, *fill;       /* [1, c, h, w] the input and what the boxes take from */
    vs_tensor *y_base;         /* the model's output for x [1, ...] */
    int64_t nsteps;            /* layers [0, nsteps) are incremental */
    step *steps;               /* [nsteps] */
    vs_tensor **base;          /* [n_children + 1] base activations ([1, c, h, w] up to nsteps); base[0] = x */
    dirty *db;                 /* [(nsteps + 1) * BOXES_CHUNK] dirty box of copy i after layer l at l CHUNK + i */
    int64_t *off;              /* [(nsteps + 1) * (BOXES_CHUNK + 1)] the copies' first rows; off[.. + nb] = P */
    int64_t *used;             /* [nsteps + 1] scratch floats of the chunk being planned */
    int64_t *cost;             /* [nsteps + 1] the same for the copy being planned */
    dirty *d;                  /* [nsteps + 1] its dirty boxes */
    const float **hwc;         /* [nsteps] base[l] channels last [h, w, c] (window layers) */
    const float **wperm;       /* [nsteps] conv weights as [k, k, c, oc] */
    vs_module *lin;            /* the linear after a flatten that ends the prefix, when computed sparsely */
    float *wlin;               /* its weight as [h w, c, out] (the positions some box holds) */
    uint8_t *lin_used;         /* [h w] positions some copy's box holds after the prefix */
    float *layouts;            /* the storage of hwc, wperm and wlin */
    float *scratch;            /* im2col rows and tiles, grown as needed */
    size_t scratch_cap;
} boxes_run;

static dirty *boxes_at(const boxes_run *r, int64_t l) { return r->db + l * BOXES_CHUNK; }
static int64_t *offs_at(const boxes_run *r, int64_t l) { return r->off + l * (BOXES_CHUNK + 1); }

/* The incremental form of layer m, or false when it has none. */
static bool step_of(vs_module *m, step *st)
{
    *st = (step){.m = m, .k = m->spec.kernel, .s = m->spec.stride, .p = m->spec.padding};
    const bool windows = m->kind == VS_MODULE_CONV2D || m->kind == VS_MODULE_MAX_POOL2D || m->kind == VS_MODULE_AVG_POOL2D;
    if (windows && (m->spec.dilation > 1 || m->spec.ceil_mode == 1 || m->spec.groups > 1))
        return false; /* dense taps, floor sizes, one channel group only */
    switch (m->kind) {
    case VS_MODULE_CONV2D: st->kind = STEP_CONV; return true;
    case VS_MODULE_MAX_POOL2D: st->kind = STEP_MAX_POOL; return true;
    case VS_MODULE_AVG_POOL2D: st->kind = STEP_AVG_POOL; return true;
    case VS_MODULE_RELU: case VS_MODULE_LEAKY_RELU: case VS_MODULE_ELU: case VS_MODULE_TANH:
    case VS_MODULE_SIGMOID: case VS_MODULE_SOFTPLUS: case VS_MODULE_DROPOUT: case VS_MODULE_BATCH_NORM2D:
        st->kind = STEP_POINTWISE;
        return true;
    default: return false;
    }
}

/* A module of the subtree whose output depends on the mode and which is in training mode (dropout
 * with p > 0 mixes in randomness, batch norm the batch's statistics), or NULL. */
static const vs_module *training_dependent(const vs_module *m)
{
    bool dropout = m->kind == VS_MODULE_DROPOUT && m->spec.p > 0;
    bool norm = m->kind == VS_MODULE_BATCH_NORM1D || m->kind == VS_MODULE_BATCH_NORM2D;
    if (m->training && (dropout || norm)) return m;
    for (int64_t i = 0; i < m->n_children; i++) {
        const vs_module *t = training_dependent(m->children[i]);
        if (t) return t;
    }
    return NULL;
}

static vs_status check_args(vs_module *m, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes, vs_error *err)
{
    static const char *op = "forward boxes";
    if (!m || m->kind != VS_MODULE_SEQUENTIAL)
        return vs_error_set(err, VS_ERR_ARG, "%s: the model must be a sequential, got %s", op,
                            m ? vs_module_kind_name(m->kind) : "none");
    if (!x || !fill || x->ndim != 4 || x->shape[0] != 1 || !vs_same_shape(x, fill)) {
        char a[96] = "none", b[96] = "none";
        if (x) vs_shape_str(x, a, sizeof a);
        if (fill) vs_shape_str(fill, b, sizeof b);
        return vs_error_set(err, VS_ERR_SHAPE, "%s: input %s and fill %s must both be [1, C, H, W]", op, a, b);
    }
    if (n < 0 || (n > 0 && !boxes))
        return vs_error_set(err, VS_ERR_ARG, "%s: %lld boxes given as %s", op, (long long)n, boxes ? "a list" : "NULL");
    for (int64_t i = 0; i < n; i++) {
        const int64_t *b = boxes + 6 * i;
        for (int d = 0; d < 3; d++)
            if (b[d] < 0 || b[3 + d] < 1 || b[d] > x->shape[1 + d] - b[3 + d])
                return vs_error_set(err, VS_ERR_ARG,
                                    "%s: box %lld {c0 %lld, y0 %lld, x0 %lld, channels %lld, height %lld, width %lld} "
                                    "is empty or leaves the input [%lld, %lld, %lld]",
                                    op, (long long)i, (long long)b[0], (long long)b[1], (long long)b[2], (long long)b[3],
                                    (long long)b[4], (long long)b[5], (long long)x->shape[1], (long long)x->shape[2],
                                    (long long)x->shape[3]);
    }
    for (int64_t i = 0; i < m->n_children; i++) {
        const vs_module *t = training_dependent(m->children[i]);
        if (t)
            return vs_error_set(err, VS_ERR_STATE,
                                "%s: layer %lld holds a %s in training mode, whose output depends on the batch; switch "
                                "the model to evaluation mode (vs_module_train(m, false))",
                                op, (long long)i, vs_module_kind_name(t->kind));
    }
    return VS_OK;
}

/* ---- geometry ------------------------------------------------------------------------------------- */

/* Outputs [*lo, *lo + *len) of a window layer (kernel k, stride s, padding p, n outputs) whose
 * windows [i s - p, i s - p + k) meet the inputs [a, a + len), len >= 1. */
static void window_span(int64_t a, int64_t len, int64_t k, int64_t s, int64_t p, int64_t n, int64_t *lo, int64_t *olen)
{
    int64_t first = a + p - k + 1, last = (a + len - 1 + p) / s;
    first = first <= 0 ? 0 : (first + s - 1) / s;
    if (last > n - 1) last = n - 1;
    *lo = first;
    *olen = last >= first ? last - first + 1 : 0;
}

/* The dirty box after st of a copy whose input is dirty in d (empty stays empty). */
static dirty step_box(const step *st, dirty d)
{
    if (st->kind == STEP_POINTWISE) return d;
    dirty o = {0, 0, 0, 0};
    if (d.h == 0 || d.w == 0) return o;
    window_span(d.y0, d.h, st->k, st->s, st->p, st->oh, &o.y0, &o.h);
    window_span(d.x0, d.w, st->k, st->s, st->p, st->ow, &o.x0, &o.w);
    if (o.h == 0 || o.w == 0) o = (dirty){0, 0, 0, 0};
    return o;
}

/* Rows and columns of the input a window layer reads for the output box o (padding included). */
static int64_t tile_side(const step *st, int64_t n) { return (n - 1) * st->s + st->k; }

/* The dirty box at the input of a copy: the bounding box of the positions of box b where fill
 * differs from x (bitwise) in one of the box's channels - empty when the box changes nothing, as
 * when occluding background with a background baseline. */
static dirty input_box(const vs_tensor *x, const vs_tensor *fill, const int64_t *b)
{
    const int64_t H = x->shape[2], W = x->shape[3];
    int64_t y0 = INT64_MAX, y1 = -1, x0 = INT64_MAX, x1 = -1;
    for (int64_t c = b[0]; c < b[0] + b[3]; c++)
        for (int64_t y = b[1]; y < b[1] + b[4]; y++) {
            const float *u = x->data + (c * H + y) * W, *v = fill->data + (c * H + y) * W;
            for (int64_t q = b[2]; q < b[2] + b[5]; q++)
                if (memcmp(u + q, v + q, sizeof(float)) != 0) {
                    y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
                    x0 = q < x0 ? q : x0, x1 = q > x1 ? q : x1;
                }
        }
    return y1 < 0 ? (dirty){0, 0, 0, 0} : (dirty){y0, x0, y1 - y0 + 1, x1 - x0 + 1};
}

/* Dirty boxes and column offsets of the copies from i0 on, as many as fit BOXES_CHUNK and (beyond
 * the first) BOXES_BUDGET floats of values and columns at every layer.  Returns the copy count. */
static int64_t plan_chunk(boxes_run *r, const int64_t *boxes, int64_t i0, int64_t n)
{
    int64_t nb = 0, L = r->nsteps;
    memset(r->used, 0, (size_t)(L + 1) * sizeof *r->used);
    for (int64_t l = 0; l <= L; l++) offs_at(r, l)[0] = 0;
    const vs_tensor *last = r->base[L];
    const int64_t whole = last->shape[1] * last->shape[2] * last->shape[3]; /* a materialised copy */
    while (nb < BOXES_CHUNK && i0 + nb < n) {
        dirty *d = r->d;
        int64_t *cost = r->cost;
        bool fits = true;
        d[0] = input_box(r->x, r->fill, boxes + 6 * (i0 + nb));
        for (int64_t l = 0; l <= L; l++) {
            if (l < L) d[l + 1] = step_box(&r->steps[l], d[l]);
            if (l == L) {
                cost[l] = d[l].h ? whole : 0;
            } else {
                const step *st = &r->steps[l];
                int64_t pin = d[l].h * d[l].w, pout = d[l + 1].h * d[l + 1].w;
                cost[l] = st->c * pin + st->oc * pout + (st->kind == STEP_CONV ? st->c * st->k * st->k * pout : 0);
            }
            fits = fits && r->used[l] + cost[l] <= BOXES_BUDGET;
        }
        if (nb > 0 && !fits) break;
        for (int64_t l = 0; l <= L; l++) {
            r->used[l] += cost[l];
            boxes_at(r, l)[nb] = d[l];
            offs_at(r, l)[nb + 1] = offs_at(r, l)[nb] + d[l].h * d[l].w;
        }
        nb++;
    }
    return nb;
}

/* r->scratch of at least `floats` floats (contents not kept). */
static bool scratch_reserve(boxes_run *r, int64_t floats)
{
    if ((size_t)floats <= r->scratch_cap) return true;
    free(r->scratch);
    r->scratch = malloc((size_t)floats * sizeof *r->scratch);
    r->scratch_cap = r->scratch ? (size_t)floats : 0;
    return r->scratch != NULL;
}

/* ---- values of the chunk's dirty boxes --------------------------------------------------------------- */

/* Dirty values at the input [P, C, 1, 1]: x inside each copy's box, channels [c0, c0 + channels)
 * taken from fill. */
static vs_tensor *input_values(const boxes_run *r, const vs_tensor *x, const vs_tensor *fill, const int64_t *boxes, int64_t nb)
{
    const int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3], P = offs_at(r, 0)[nb];
    vs_tensor *v = vs_tensor_new(VS_SHAPE(P, C, 1, 1));
    if (!v) return NULL;
    for (int64_t i = 0; i < nb; i++) {
        const int64_t *b = boxes + 6 * i;
        const dirty d = boxes_at(r, 0)[i];
        float *dst = v->data + offs_at(r, 0)[i] * C;
        for (int64_t y = 0; y < d.h; y++)
            for (int64_t q = 0; q < d.w; q++)
                for (int64_t c = 0; c < C; c++) {
                    const vs_tensor *src = c >= b[0] && c < b[0] + b[3] ? fill : x;
                    dst[(y * d.w + q) * C + c] = src->data[(c * H + d.y0 + y) * W + d.x0 + q];
                }
    }
    return v;
}

/* A parallel gather over the copies of a chunk through one window layer. */
typedef struct gather_job {
    const step *st;
    const float *base;       /* B_l channels last [h, w, c] */
    const float *vals;       /* dirty values [pin, c] */
    const dirty *din, *dout; /* [nb] */
    const int64_t *oin, *oout;
    float *dst;              /* conv: im2col rows [pout, k k c] from copy `first` on; pools: values [pout, c] */
    float *tiles;            /* one tile of tile_floats per task */
    int64_t first;           /* the loop's copies are first + [0, n) */
    int64_t tile_floats;
} gather_job;

/* tile [th, tw, c] = the patched input of one copy over rows [ty, ty + th), columns [tx, tx + tw):
 * pad outside the image, the copy's dirty values vals [d.h d.w, c] inside its box d, the base
 * elsewhere.  Channels last, a tile row is one or two copies of contiguous memory. */
static void patch_tile(const gather_job *j, dirty d, const float *vals, int64_t ty, int64_t tx, int64_t th, int64_t tw,
                       float pad, float *tile)
{
    const step *st = j->st;
    const int64_t C = st->c, lo = tx < 0 ? -tx : 0, hi = tx + tw > st->w ? st->w - tx : tw; /* columns inside the image */
    for (int64_t r = 0; r < th; r++) {
        const int64_t y = ty + r;
        float *dst = tile + r * tw * C;
        if (y < 0 || y >= st->h || hi <= lo) {
            for (int64_t q = 0; q < tw * C; q++) dst[q] = pad;
            continue;
        }
        for (int64_t q = 0; q < lo * C; q++) dst[q] = pad;
        memcpy(dst + lo * C, j->base + (y * st->w + tx + lo) * C, (size_t)((hi - lo) * C) * sizeof(float));
        for (int64_t q = hi * C; q < tw * C; q++) dst[q] = pad;
        if (y < d.y0 || y >= d.y0 + d.h) continue;
        /* columns of the dirty box inside the tile */
        const int64_t a = d.x0 > tx ? d.x0 : tx, e = d.x0 + d.w < tx + tw ? d.x0 + d.w : tx + tw;
        if (e > a)
            memcpy(dst + (a - tx) * C, vals + ((y - d.y0) * d.w + a - d.x0) * C, (size_t)((e - a) * C) * sizeof(float));
    }
}

/* Does v replace the running maximum m?  ops_pool.c's rule: the first maximum wins, NaN propagates. */
static inline bool max_takes(float v, float m) { return m == m && !(v <= m); }

/* Window (oy, ox) of a tile [th, tw, c] reduced per channel like vs_max_pool2d / vs_avg_pool2d, into
 * out[c].  Padding is -inf (max; never wins, every window holds a real element) or 0 (avg; adding +0
 * to the double sum changes nothing, so it equals the clipped sum, and the divisor is k^2). */
static void pool_window(const step *st, const float *tile, int64_t tw, int64_t oy, int64_t ox, float *out)
{
    const int64_t C = st->c;
    const float *w0 = tile + (oy * st->s * tw + ox * st->s) * C;
    for (int64_t c = 0; c < C; c++) {
        if (st->kind == STEP_MAX_POOL) {
            float m = w0[c];
            for (int64_t a = 0; a < st->k; a++)
                for (int64_t b = 0; b < st->k; b++)
                    if (max_takes(w0[(a * tw + b) * C + c], m)) m = w0[(a * tw + b) * C + c];
            out[c] = m;
        } else {
            double sum = 0;
            for (int64_t a = 0; a < st->k; a++)
                for (int64_t b = 0; b < st->k; b++) sum += w0[(a * tw + b) * C + c];
            out[c] = (float)(sum * (1.0 / (double)(st->k * st->k)));
        }
    }
}

static void gather_copies(void *ctx, int64_t begin, int64_t end)
{
    const gather_job *j = ctx;
    const step *st = j->st;
    const int64_t C = st->c, k = st->k, s = st->s;
    float *tile = j->tiles + (begin / GATHER_GRAIN) * j->tile_floats;
    const float pad = st->kind == STEP_MAX_POOL ? -INFINITY : 0.0f;
    for (int64_t i = j->first + begin; i < j->first + end; i++) {
        const dirty o = j->dout[i];
        if (o.h == 0) continue;
        const int64_t th = tile_side(st, o.h), tw = tile_side(st, o.w);
        patch_tile(j, j->din[i], j->vals + j->oin[i] * C, o.y0 * s - st->p, o.x0 * s - st->p, th, tw, pad, tile);
        for (int64_t oy = 0; oy < o.h; oy++)
            for (int64_t ox = 0; ox < o.w; ox++) {
                const int64_t q = j->oout[i] + oy * o.w + ox;
                if (st->kind != STEP_CONV) {
                    pool_window(st, tile, tw, oy, ox, j->dst + q * C);
                    continue;
                }
                /* im2col row of output (oy, ox): (ki, kj, c) at (ki k + kj) c; each ki is one run */
                float *dst = j->dst + (q - j->oout[j->first]) * k * k * C;
                for (int64_t ki = 0; ki < k; ki++)
                    memcpy(dst + ki * k * C, tile + ((oy * s + ki) * tw + ox * s) * C, (size_t)(k * C) * sizeof(float));
            }
    }
}

/* Values after the window layer l (conv or pool) of the chunk's nb copies: [pout, oc, 1, 1].  A conv
 * runs over blocks of copies whose im2col rows fit CONV_BLOCK floats, so that the rows are still in
 * cache when the product reads them. */
static vs_tensor *window_step(boxes_run *r, int64_t l, const vs_tensor *vals, int64_t nb)
{
    const step *st = &r->steps[l];
    gather_job j = {.st = st, .base = r->hwc[l], .vals = vals->data, .din = boxes_at(r, l), .dout = boxes_at(r, l + 1),
                    .oin = offs_at(r, l), .oout = offs_at(r, l + 1)};
    const int64_t pout = j.oout[nb];
    vs_tensor *out = vs_tensor_new(VS_SHAPE(pout, st->oc, 1, 1));
    if (!out || pout == 0) return out;
    const bool conv = st->kind == STEP_CONV;
    const int64_t kkc = st->k * st->k * st->c;
    int64_t block = conv ? CONV_BLOCK : 0;
    for (int64_t i = 0; i < nb; i++) {
        const dirty o = j.dout[i];
        int64_t t = o.h ? tile_side(st, o.h) * tile_side(st, o.w) * st->c : 0;
        if (t > j.tile_floats) j.tile_floats = t;
        if (conv && o.h * o.w * kkc > block) block = o.h * o.w * kkc;
    }
    const int64_t tasks = (nb + GATHER_GRAIN - 1) / GATHER_GRAIN;
    if (!scratch_reserve(r, block + tasks * j.tile_floats)) {
        vs_set_last_error(VS_ERR_NOMEM, "out of memory for %lld floats of columns", (long long)(block + tasks * j.tile_floats));
        return NULL;
    }
    j.tiles = r->scratch + block;
    j.dst = conv ? r->scratch : out->data;
    if (!conv) {
        vs_parallel_for(nb, GATHER_GRAIN, gather_copies, &j);
        return out;
    }
    /* out [pout, oc] = rows [pout, k k c] W' + bias, W' = the weight as [k, k, c, oc], block by block */
    const vs_tensor *bias = vs_module_param(st->m, "bias");
    if (bias)
        for (int64_t q = 0; q < pout; q++) memcpy(out->data + q * st->oc, bias->data, (size_t)st->oc * sizeof(float));
    for (int64_t g0 = 0, g1; g0 < nb; g0 = g1) {
        for (g1 = g0 + 1; g1 < nb && (j.oout[g1 + 1] - j.oout[g0]) * kkc <= block;) g1++;
        j.first = g0;
        vs_parallel_for(g1 - g0, GATHER_GRAIN, gather_copies, &j);
        const int64_t q0 = j.oout[g0];
        vs_sgemm(false, false, j.oout[g1] - q0, st->oc, kkc, 1.0f, r->scratch, kkc, r->wperm[l], st->oc, bias ? 1.0f : 0.0f,
                 out->data + q0 * st->oc, st->oc);
    }
    return out;
}

/* The chunk's activations after the prefix for the `live` copies whose dirty box is not empty, as a
 * batch [live, c, h, w]: the base with each copy's dirty values written into its box. */
static vs_tensor *materialise(const boxes_run *r, const vs_tensor *vals, int64_t nb, int64_t live)
{
    const vs_tensor *base = r->base[r->nsteps];
    const int64_t C = base->shape[1], H = base->shape[2], W = base->shape[3];
    vs_tensor *a = vs_tensor_new(VS_SHAPE(live, C, H, W));
    if (!a) return NULL;
    for (int64_t i = 0, k = 0; i < nb; i++) {
        const dirty d = boxes_at(r, r->nsteps)[i];
        if (d.h == 0) continue;
        float *img = a->data + k++ * C * H * W;
        const float *v = vals->data + offs_at(r, r->nsteps)[i] * C;
        memcpy(img, base->data, (size_t)(C * H * W) * sizeof(float));
        for (int64_t y = 0; y < d.h; y++)
            for (int64_t q = 0; q < d.w; q++)
                for (int64_t c = 0; c < C; c++) img[(c * H + d.y0 + y) * W + d.x0 + q] = v[(y * d.w + q) * C + c];
    }
    return a;
}

/* flatten + linear of the `live` copies whose dirty box is not empty, without materialising them:
 * y_i = y_base + W (a_i - B) where a_i - B is zero outside the copy's box.  Grouped by position p of
 * the box, every copy containing p adds (a_i - B)[p, :] [c] times the weight block W_p [c, out]
 * (one product per position; the sums run in position order, the same for any thread count). */
static vs_tensor *sparse_linear(boxes_run *r, const vs_tensor *vals, int64_t nb, int64_t live)
{
    const int64_t L = r->nsteps, C = r->base[L]->shape[1], W = r->base[L]->shape[3], HW = r->base[L]->shape[2] * W;
    const int64_t out_n = r->lin->spec.out;
    const dirty *d = boxes_at(r, L);
    const int64_t *off = offs_at(r, L), P = off[nb];
    vs_tensor *y = vs_tensor_new(VS_SHAPE(live, out_n));
    if (!y) return NULL;
    for (int64_t k = 0; k < live; k++) memcpy(y->data + k * out_n, r->base[L + 2]->data, (size_t)out_n * sizeof(float));
    /* order[] = (row of the value, live index of the copy) pairs sorted by position: counting sort */
    int64_t *count = calloc((size_t)HW + 1, sizeof *count), *order = malloc((size_t)(2 * P) * sizeof *order);
    if (!count || !order || !scratch_reserve(r, P * (C + out_n))) {
        free(count);
        free(order);
        vs_set_last_error(VS_ERR_NOMEM, "out of memory for the sparse linear layer");
        return NULL;
    }
    for (int64_t i = 0; i < nb; i++)
        for (int64_t yy = 0; yy < d[i].h; yy++)
            for (int64_t xx = 0; xx < d[i].w; xx++) count[(d[i].y0 + yy) * W + d[i].x0 + xx + 1]++;
    for (int64_t p = 0; p < HW; p++) count[p + 1] += count[p];
    for (int64_t i = 0, k = 0; i < nb; i++) {
        for (int64_t yy = 0; yy < d[i].h; yy++)
            for (int64_t xx = 0; xx < d[i].w; xx++) {
                int64_t *e = order + 2 * count[(d[i].y0 + yy) * W + d[i].x0 + xx]++;
                e[0] = off[i] + yy * d[i].w + xx;
                e[1] = k;
            }
        k += d[i].h > 0;
    }
    /* count[p] is now the end of position p's entries */
    float *delta = r->scratch, *t = r->scratch + P * C;
    const float *base = r->hwc[L];
    for (int64_t p = 0, e0 = 0; p < HW; e0 = count[p++]) {
        const int64_t n = count[p] - e0;
        if (n == 0) continue;
        for (int64_t e = 0; e < n; e++) {
            const float *v = vals->data + order[2 * (e0 + e)] * C;
            for (int64_t c = 0; c < C; c++) delta[e * C + c] = v[c] - base[p * C + c];
        }
        vs_sgemm(false, false, n, out_n, C, 1.0f, delta, C, r->wlin + p * C * out_n, out_n, 0.0f, t, out_n);
        for (int64_t e = 0; e < n; e++) {
            float *dst = y->data + order[2 * (e0 + e) + 1] * out_n;
            for (int64_t o = 0; o < out_n; o++) dst[o] += t[e * out_n + o];
        }
    }
    free(count);
    free(order);
    return y;
}

/* Outputs of the chunk of nb planned copies (boxes: theirs) into rows out[nb, row].  Values are
 * channels last, [P, c, 1, 1] - a batch of P one-pixel images - so a pointwise layer is the
 * module's own forward.  Copies whose dirty box is empty after the prefix output the base's row;
 * the others are materialised and go through the rest of the model as one batch. */
static bool chunk_forward(boxes_run *r, const int64_t *boxes, int64_t nb, float *out)
{
    vs_tensor *v = input_values(r, r->x, r->fill, boxes, nb);
    for (int64_t l = 0; v && l < r->nsteps; l++) {
        const step *st = &r->steps[l];
        if (st->kind != STEP_POINTWISE)
            v = window_step(r, l, v, nb);
        else if (offs_at(r, l)[nb] > 0)
            v = vs_module_forward(st->m, v, NULL);
    }
    if (!v) return false;
    const dirty *d = boxes_at(r, r->nsteps);
    const int64_t row = r->y_base->size;
    int64_t live = 0;
    for (int64_t i = 0; i < nb; i++) live += d[i].h > 0;
    vs_tensor *y = !live ? NULL : r->lin ? sparse_linear(r, v, nb, live) : materialise(r, v, nb, live);
    if (live && y) y = vs_sequential_forward_range(r->m, y, NULL, r->nsteps + (r->lin ? 2 : 0), r->m->n_children, NULL);
    if (live && !y) return false;
    if (live && (y->shape[0] != live || y->size != live * row)) {
        char a[96], b[96];
        vs_shape_str(y, a, sizeof a);
        vs_shape_str(r->y_base, b, sizeof b);
        vs_set_last_error(VS_ERR_SHAPE, "%lld copies gave outputs %s, one input %s: the model mixes rows", (long long)live, a,
                          b);
        return false;
    }
    for (int64_t i = 0, k = 0; i < nb; i++)
        memcpy(out + i * row, d[i].h ? y->data + k++ * row : r->y_base->data, (size_t)row * sizeof(float));
    return true;
}

/* Channels-last copies of the base activations feeding window layers, and the conv weights as
 * [k, k, c, oc]: rows in the im2col rows' (ki, kj, c) order. */
static bool prepare_layouts(boxes_run *r)
{
    size_t total = 0;
    for (int64_t l = 0; l < r->nsteps; l++) {
        const step *st = &r->steps[l];
        if (st->kind == STEP_POINTWISE) continue;
        total += (size_t)(st->c * st->h * st->w);
        if (st->kind == STEP_CONV) total += (size_t)(st->oc * st->k * st->k * st->c);
    }
    if (r->lin) total += (size_t)(r->base[r->nsteps]->size + r->lin->params[0]->size);
    r->layouts = malloc((total ? total : 1) * sizeof(float));
    if (!r->layouts) return false;
    float *p = r->layouts;
    for (int64_t l = 0; l < r->nsteps; l++) {
        const step *st = &r->steps[l];
        if (st->kind == STEP_POINTWISE) continue;
        const int64_t C = st->c, HW = st->h * st->w, kk = st->k * st->k;
        const float *b = r->base[l]->data;
        r->hwc[l] = p;
        for (int64_t c = 0; c < C; c++)
            for (int64_t q = 0; q < HW; q++) p[q * C + c] = b[c * HW + q];
        p += C * HW;
        if (st->kind != STEP_CONV) continue;
        const float *w = st->m->params[0]->data;
        r->wperm[l] = p;
        /* row (t, c) gathers column c kk + t of every output's weights: the oc source lines stay in
         * cache while t runs */
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < kk; t++) {
                const float *src = w + c * kk + t;
                float *dst = p + (t * C + c) * st->oc;
                for (int64_t o = 0; o < st->oc; o++) dst[o] = src[o * C * kk];
            }
        p += st->oc * kk * C;
    }
    if (!r->lin) return true;
    /* the input of flatten channels last, and the linear weight [out, c h w] as [h w, c, out]: blocks
     * of 16 outputs (one cache line per written run) read row by row */
    const vs_tensor *a = r->base[r->nsteps];
    const int64_t C = a->shape[1], HW = a->shape[2] * a->shape[3], K = C * HW, out_n = r->lin->spec.out;
    r->hwc[r->nsteps] = p;
    for (int64_t c = 0; c < C; c++)
        for (int64_t q = 0; q < HW; q++) p[q * C + c] = a->data[c * HW + q];
    r->wlin = p += C * HW;
    const float *w = r->lin->params[0]->data;
    for (int64_t c = 0; c < C; c++)
        for (int64_t q = 0; q < HW; q++) {
            if (!r->lin_used[q]) continue; /* no copy's box holds position q */
            float *dst = r->wlin + (q * C + c) * out_n;
            const float *src = w + c * HW + q; /* the lines of column q stay in cache for q + 1 */
            for (int64_t o = 0; o < out_n; o++) dst[o] = src[o * K];
        }
    return true;
}

/* Whether flatten + linear right after the prefix are computed sparsely (sparse_linear): when the
 * copies' dirty boxes there cover at most half of the activation on average, so that the sparse
 * products (and the weight's permutation) cost less than the dense layer. */
static bool sparse_linear_pays(boxes_run *r, int64_t n, const int64_t *boxes)
{
    const vs_module *m = r->m;
    const int64_t L = r->nsteps;
    if (L + 1 >= m->n_children || m->children[L]->kind != VS_MODULE_FLATTEN || m->children[L + 1]->kind != VS_MODULE_LINEAR ||
        r->base[L]->ndim != 4)
        return false;
    const int64_t W = r->base[L]->shape[3], HW = r->base[L]->shape[2] * W;
    int64_t covered = 0;
    r->lin_used = calloc((size_t)HW, 1);
    if (!r->lin_used) return false;
    for (int64_t i = 0; i < n; i++) {
        dirty d = input_box(r->x, r->fill, boxes + 6 * i);
        for (int64_t l = 0; l < L; l++) d = step_box(&r->steps[l], d);
        covered += d.h * d.w;
        for (int64_t y = d.y0; y < d.y0 + d.h; y++) memset(r->lin_used + y * W + d.x0, 1, (size_t)d.w);
    }
    return 2 * covered <= n * HW;
}

/* Base pass and chunks; the result [n, ...] (owned by the current scope) or NULL (last error set). */
static vs_tensor *boxes_forward(boxes_run *r, int64_t n, const int64_t *boxes)
{
    vs_module *m = r->m;
    while (r->nsteps < m->n_children && step_of(m->children[r->nsteps], &(step){0})) r->nsteps++;
    const int64_t L = r->nsteps;
    r->steps = calloc((size_t)(L ? L : 1), sizeof *r->steps);
    r->base = calloc((size_t)m->n_children + 1, sizeof *r->base);
    r->db = calloc((size_t)(L + 1) * BOXES_CHUNK, sizeof *r->db);
    r->off = calloc((size_t)(L + 1) * (BOXES_CHUNK + 1), sizeof *r->off);
    r->used = calloc((size_t)L + 1, sizeof *r->used);
    r->cost = calloc((size_t)L + 1, sizeof *r->cost);
    r->d = calloc((size_t)L + 1, sizeof *r->d);
    r->hwc = calloc((size_t)L + 1, sizeof *r->hwc);
    r->wperm = calloc((size_t)L + 1, sizeof *r->wperm);
    if (!r->steps || !r->base || !r->db || !r->off || !r->used || !r->cost || !r->d || !r->hwc || !r->wperm) {
        vs_set_last_error(VS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    /* the base pass: every activation of x, and its output */
    r->base[0] = r->x;
    r->y_base = vs_sequential_forward_range(m, r->x, NULL, 0, m->n_children, r->base + 1);
    if (!r->y_base) return NULL;
    if (r->y_base->ndim < 1 || r->y_base->shape[0] != 1) {
        vs_set_last_error(VS_ERR_SHAPE, "the output of one input must have a batch dimension of 1");
        return NULL;
    }
    for (int64_t l = 0; l < L; l++) {
        step *st = &r->steps[l];
        step_of(m->children[l], st);
        const vs_tensor *a = r->base[l], *b = r->base[l + 1];
        st->c = a->shape[1], st->h = a->shape[2], st->w = a->shape[3];
        st->oc = b->shape[1], st->oh = b->shape[2], st->ow = b->shape[3];
    }
    r->lin = sparse_linear_pays(r, n, boxes) ? m->children[L + 1] : NULL;
    if (!prepare_layouts(r)) {
        vs_set_last_error(VS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, r->y_base->shape, sizeof shape);
    shape[0] = n;
    vs_tensor *out = vs_tensor_new(r->y_base->ndim, shape);
    for (int64_t i0 = 0, nb; out && i0 < n; i0 += nb) {
        nb = plan_chunk(r, boxes, i0, n);
        vs_scope_begin();
        const bool ok = chunk_forward(r, boxes + 6 * i0, nb, out->data + i0 * r->y_base->size);
        vs_scope_end();
        if (!ok) return NULL;
    }
    return out;
}

vs_tensor *vs_sequential_forward_boxes(vs_module *m, vs_tensor *x, vs_tensor *fill, int64_t n, const int64_t *boxes,
                                       vs_error *err)
{
    if (check_args(m, x, fill, n, boxes, err) != VS_OK) return NULL;
    const bool prev = vs_set_grad_enabled(false);
    boxes_run r = {.m = m, .x = x, .fill = fill};
    vs_scope_begin();
    vs_tensor *y = vs_scope_return(boxes_forward(&r, n, boxes));
    vs_set_grad_enabled(prev);
    free(r.steps);
    free(r.base);
    free(r.db);
    free(r.off);
    free(r.used);
    free(r.cost);
    free(r.d);
    free(r.hwc);
    free(r.wperm);
    free(r.layouts);
    free(r.lin_used);
    free(r.scratch);
    if (!y)
        vs_error_set(err, vs_last_error()->code ? vs_last_error()->code : VS_ERR_STATE, "forward boxes: %s",
                     vs_last_error()->msg);
    return y;
}
