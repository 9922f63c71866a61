/* ops_shape.c - reshape (a view), permute, concat, slice, pad, index_select and scatter_add.
 * Each pair of adjoints (slice/pad, index_select/scatter_add) is written as each other's backward. */
#include "autograd/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- reshape ------------------------------------------------------------------------------------- */

static void reshape_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    gin[0] = vs_reshape(g, n->in[0]->ndim, n->in[0]->shape);
}

vs_tensor *vs_reshape(vs_tensor *x, int ndim, const int64_t *shape)
{
    if (!x) return NULL;
    if (ndim < 0 || ndim > VS_MAX_DIMS) return vs_op_error("reshape", "%d dimensions", ndim);
    int64_t s[VS_MAX_DIMS], known;
    if (!vs_shape_count("reshape", ndim, shape, true, &known)) return NULL;
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        s[i] = shape[i];
        if (s[i] != -1) continue;
        if (infer >= 0) return vs_op_error("reshape", "more than one -1 in the shape");
        infer = i;
    }
    if (infer >= 0) {
        if (known == 0 || x->size % known != 0)
            return vs_op_error("reshape", "cannot infer -1 for %lld elements", (long long)x->size);
        s[infer] = x->size / known;
        known *= s[infer];
    }
    if (known != x->size) {
        char sx[96];
        vs_shape_str(x, sx, sizeof sx);
        return vs_op_error("reshape", "%s has %lld elements, the new shape %lld", sx, (long long)x->size, (long long)known);
    }
    return vs_record(vs_view(x, ndim, s), "reshape", reshape_backward, 1, &x, NULL, 0);
}

vs_tensor *vs_flatten(vs_tensor *x)
{
    if (!x) return NULL;
    if (x->ndim < 1) return vs_op_error("flatten", "needs at least one dimension");
    int64_t s[2] = {x->shape[0], x->shape[0] ? x->size / x->shape[0] : 0};
    if (x->shape[0] == 0 && !vs_shape_count("flatten", x->ndim - 1, x->shape + 1, false, &s[1])) return NULL;
    return vs_reshape(x, 2, s);
}

/* ---- permute --------------------------------------------------------------------------------------- */

/* What a permute node keeps: the permutation. */
typedef struct permute_params {
    int perm[VS_MAX_DIMS];
} permute_params;

static void permute_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const int *perm = VS_PARAMS(n, permute_params)->perm;
    int inv[VS_MAX_DIMS];
    for (int i = 0; i < out->ndim; i++) inv[perm[i]] = i;
    gin[0] = vs_permute(g, inv);
}

vs_tensor *vs_permute(vs_tensor *x, const int *perm)
{
    if (!x) return NULL;
    int nd = x->ndim;
    int seen[VS_MAX_DIMS] = {0};
    int64_t shape[VS_MAX_DIMS], xst[VS_MAX_DIMS], st[VS_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if (perm[i] < 0 || perm[i] >= nd || seen[perm[i]]++) return vs_op_error("permute", "not a permutation of %d axes", nd);
        shape[i] = x->shape[perm[i]];
    }
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        xst[i] = s;
        s *= x->shape[i];
    }
    for (int i = 0; i < nd; i++) st[i] = xst[perm[i]];
    vs_tensor *y = vs_alloc("permute", nd, shape);
    if (!y) return NULL;
    if (y->size > 0) {
        int64_t inner = nd ? shape[nd - 1] : 1, rows = y->size / inner, sin = nd ? st[nd - 1] : 1;
        int64_t idx[VS_MAX_DIMS] = {0}, off = 0;
        for (int64_t r = 0; r < rows; r++) {
            float *q = y->data + r * inner;
            const float *p = x->data + off;
            for (int64_t j = 0; j < inner; j++) q[j] = p[j * sin];
            for (int d = nd - 2; d >= 0; d--) {
                idx[d]++;
                off += st[d];
                if (idx[d] < shape[d]) break;
                off -= st[d] * shape[d];
                idx[d] = 0;
            }
        }
    }
    permute_params p = {{0}};
    for (int i = 0; i < nd; i++) p.perm[i] = perm[i];
    return vs_record(y, "permute", permute_backward, 1, &x, &p, sizeof p);
}

vs_tensor *vs_transpose(vs_tensor *x, int a, int b)
{
    if (!x) return NULL;
    int aa = vs_norm_axis("transpose", a, x->ndim), bb = vs_norm_axis("transpose", b, x->ndim);
    if (aa < 0 || bb < 0) return NULL;
    int perm[VS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) perm[i] = i;
    perm[aa] = bb;
    perm[bb] = aa;
    return vs_permute(x, perm);
}

/* ---- concat and slice ---------------------------------------------------------------------------- */

/* What a concat node keeps: the (normalised) axis. */
typedef struct concat_params {
    int axis;
} concat_params;

static void concat_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const int axis = VS_PARAMS(n, concat_params)->axis;
    int64_t start = 0;
    for (int k = 0; k < n->n_in; k++) {
        int64_t len = n->in[k]->shape[axis];
        if (vs_node_needs(n, k)) gin[k] = vs_slice(g, axis, start, start + len);
        start += len;
    }
}

/* Copy blocks: x seen as [outer, len*inner] placed at column offset `at` of y seen as [outer, ylen*inner]. */
static void copy_block(const float *src, int64_t outer, int64_t src_row, float *dst, int64_t dst_row, int64_t at)
{
    for (int64_t o = 0; o < outer; o++) memcpy(dst + o * dst_row + at, src + o * src_row, (size_t)src_row * sizeof(float));
}

vs_tensor *vs_concat(int n, vs_tensor *const *xs, int axis)
{
    if (n < 1) return vs_op_error("concat", "no tensors");
    for (int k = 0; k < n; k++)
        if (!xs[k]) return NULL;
    int a = vs_norm_axis("concat", axis, xs[0]->ndim);
    if (a < 0) return NULL;
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, xs[0]->shape, sizeof shape);
    shape[a] = 0;
    for (int k = 0; k < n; k++) {
        if (xs[k]->ndim != xs[0]->ndim) return vs_op_error("concat", "tensor %d has %d dims, tensor 0 has %d", k, xs[k]->ndim, xs[0]->ndim);
        for (int i = 0; i < xs[0]->ndim; i++)
            if (i != a && xs[k]->shape[i] != xs[0]->shape[i])
                return vs_op_error("concat", "tensor %d differs in dimension %d (%lld vs %lld)", k, i, (long long)xs[k]->shape[i],
                                   (long long)xs[0]->shape[i]);
        shape[a] += xs[k]->shape[a];
    }
    vs_tensor *y = vs_alloc("concat", xs[0]->ndim, shape);
    if (!y) return NULL;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++) outer *= shape[i];
    for (int i = a + 1; i < y->ndim; i++) inner *= shape[i];
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        copy_block(xs[k]->data, outer, xs[k]->shape[a] * inner, y->data, shape[a] * inner, at);
        at += xs[k]->shape[a] * inner;
    }
    const concat_params p = {a};
    return vs_record(y, "concat", concat_backward, n, xs, &p, sizeof p);
}

/* What a slice node keeps: the axis and the range [start, end) along it. */
typedef struct slice_params {
    int axis;
    int64_t start, end;
} slice_params;

static void slice_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const vs_tensor *x = n->in[0];
    const slice_params *p = VS_PARAMS(n, slice_params);
    int64_t pads[2 * VS_MAX_DIMS] = {0};
    pads[2 * p->axis] = p->start;
    pads[2 * p->axis + 1] = x->shape[p->axis] - p->end;
    gin[0] = vs_pad(g, pads, 0.0f);
}

vs_tensor *vs_slice(vs_tensor *x, int axis, int64_t start, int64_t end)
{
    if (!x) return NULL;
    int a = vs_norm_axis("slice", axis, x->ndim);
    if (a < 0) return NULL;
    if (start < 0 || end < start || end > x->shape[a])
        return vs_op_error("slice", "range [%lld, %lld) outside dimension %d of size %lld", (long long)start, (long long)end, a,
                           (long long)x->shape[a]);
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = end - start;
    vs_tensor *y = vs_alloc("slice", x->ndim, shape);
    if (!y) return NULL;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++) outer *= shape[i];
    for (int i = a + 1; i < x->ndim; i++) inner *= shape[i];
    for (int64_t o = 0; o < outer; o++)
        memcpy(y->data + o * shape[a] * inner, x->data + (o * x->shape[a] + start) * inner, (size_t)(shape[a] * inner) * sizeof(float));
    const slice_params p = {a, start, end};
    return vs_record(y, "slice", slice_backward, 1, &x, &p, sizeof p);
}

/* ---- pad ----------------------------------------------------------------------------------------------- */

/* What a pad node keeps: before and after padding of each dimension (vs_pad's pads). */
typedef struct pad_params {
    int64_t pads[2 * VS_MAX_DIMS];
} pad_params;

static void pad_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const int64_t *pads = VS_PARAMS(n, pad_params)->pads;
    vs_tensor *r = g;
    for (int i = 0; i < out->ndim && r; i++)
        if (pads[2 * i] || pads[2 * i + 1]) r = vs_slice(r, i, pads[2 * i], out->shape[i] - pads[2 * i + 1]);
    gin[0] = r;
}

vs_tensor *vs_pad(vs_tensor *x, const int64_t *pads, float value)
{
    if (!x) return NULL;
    if (x->ndim > VS_MAX_DIMS) return vs_op_error("pad", "too many dims");
    int64_t shape[VS_MAX_DIMS], yst[VS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) return vs_op_error("pad", "negative padding in dimension %d", i);
        shape[i] = x->shape[i] + pads[2 * i] + pads[2 * i + 1];
    }
    vs_tensor *y = vs_alloc("pad", x->ndim, shape);
    if (!y) return NULL;
    for (int64_t i = 0; i < y->size; i++) y->data[i] = value;
    int nd = x->ndim;
    if (x->size > 0) {
        int64_t ys = 1;
        for (int i = nd - 1; i >= 0; i--) {
            yst[i] = ys;
            ys *= shape[i];
        }
        int64_t base = 0;
        for (int i = 0; i < nd; i++) base += pads[2 * i] * yst[i];
        int64_t inner = nd ? x->shape[nd - 1] : 1, rows = x->size / inner, idx[VS_MAX_DIMS] = {0}, off = base;
        for (int64_t r = 0; r < rows; r++) {
            memcpy(y->data + off, x->data + r * inner, (size_t)inner * sizeof(float));
            for (int d = nd - 2; d >= 0; d--) {
                idx[d]++;
                off += yst[d];
                if (idx[d] < x->shape[d]) break;
                off -= yst[d] * x->shape[d];
                idx[d] = 0;
            }
        }
    }
    pad_params p = {{0}};
    for (int i = 0; i < 2 * nd; i++) p.pads[i] = pads[i];
    return vs_record(y, "pad", pad_backward, 1, &x, &p, sizeof p);
}

/* ---- index_select and scatter_add ------------------------------------------------------------------ */

/* What an index_select / scatter_add node keeps: the axis; the indices go to its extra data. */
typedef struct index_params {
    int axis;
} index_params;

typedef struct index_data {
    int64_t n;
    int64_t idx[];
} index_data;

static index_data *index_copy(const int64_t *idx, int64_t n)
{
    index_data *d = vs_malloc(sizeof *d + (size_t)(n ? n : 1) * sizeof(int64_t));
    if (!d) return NULL;
    d->n = n;
    if (n) memcpy(d->idx, idx, (size_t)n * sizeof(int64_t));
    return d;
}

/* Record out's node with the axis and a copy of the n indices; out or NULL (see vs_record). */
static vs_tensor *index_record(vs_tensor *out, const char *op, vs_backward_fn bw, vs_tensor *x, int axis, const int64_t *idx,
                               int64_t n)
{
    const index_params p = {axis};
    out = vs_record(out, op, bw, 1, &x, &p, sizeof p);
    if (!out || !out->node) return out;
    index_data *d = index_copy(idx, n);
    if (!d) {
        vs_tensor_free(out);
        return vs_op_nomem(op, "the indices");
    }
    vs_node_adopt(out, d);
    return out;
}

static void index_select_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const index_data *d = n->extra;
    const int axis = VS_PARAMS(n, index_params)->axis;
    gin[0] = vs_scatter_add(g, axis, d->idx, n->in[0]->shape[axis]);
}

static void scatter_add_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    const index_data *d = n->extra;
    gin[0] = vs_index_select(g, VS_PARAMS(n, index_params)->axis, d->idx, d->n);
}

vs_tensor *vs_index_select(vs_tensor *x, int axis, const int64_t *idx, int64_t n)
{
    if (!x) return NULL;
    int a = vs_norm_axis("index_select", axis, x->ndim);
    if (a < 0) return NULL;
    for (int64_t j = 0; j < n; j++)
        if (idx[j] < 0 || idx[j] >= x->shape[a])
            return vs_op_error("index_select", "index %lld at position %lld outside [0, %lld)", (long long)idx[j], (long long)j,
                               (long long)x->shape[a]);
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = n;
    vs_tensor *y = vs_alloc("index_select", x->ndim, shape);
    if (!y) return NULL;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++) outer *= shape[i];
    for (int i = a + 1; i < x->ndim; i++) inner *= shape[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n; j++)
            memcpy(y->data + (o * n + j) * inner, x->data + (o * x->shape[a] + idx[j]) * inner, (size_t)inner * sizeof(float));
    return index_record(y, "index_select", index_select_backward, x, a, idx, n);
}

vs_tensor *vs_scatter_add(vs_tensor *x, int axis, const int64_t *idx, int64_t dim_size)
{
    if (!x) return NULL;
    int a = vs_norm_axis("scatter_add", axis, x->ndim);
    if (a < 0) return NULL;
    if (dim_size < 0) return vs_op_error("scatter_add", "negative output size");
    int64_t n = x->shape[a];
    for (int64_t j = 0; j < n; j++)
        if (idx[j] < 0 || idx[j] >= dim_size)
            return vs_op_error("scatter_add", "index %lld at position %lld outside [0, %lld)", (long long)idx[j], (long long)j,
                               (long long)dim_size);
    int64_t shape[VS_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = dim_size;
    vs_tensor *y = vs_alloc("scatter_add", x->ndim, shape);
    if (!y) return NULL;
    memset(y->data, 0, (size_t)y->size * sizeof(float));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++) outer *= shape[i];
    for (int i = a + 1; i < x->ndim; i++) inner *= shape[i];
    /* Sequential in j: the sum order is fixed, so results are reproducible. */
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n; j++) {
            float *q = y->data + (o * dim_size + idx[j]) * inner;
            const float *p = x->data + (o * n + j) * inner;
            for (int64_t k = 0; k < inner; k++) q[k] += p[k];
        }
    return index_record(y, "scatter_add", scatter_add_backward, x, a, idx, n);
}
