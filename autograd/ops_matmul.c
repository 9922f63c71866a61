/* ops_matmul.c - batched matrix products and the fused linear layer, on top of vs_sgemm. */
#include "autograd/internal.h"

#include <string.h>

/* What a matmul node keeps: which operands were transposed. */
typedef struct matmul_params {
    bool trans_a, trans_b;
} matmul_params;

static void matmul_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *a = n->in[0], *b = n->in[1];
    const bool ta = VS_PARAMS(n, matmul_params)->trans_a, tb = VS_PARAMS(n, matmul_params)->trans_b;
    /* out = op(a) op(b):  d op(a) = g op(b)^T,  d op(b) = op(a)^T g */
    if (vs_node_needs(n, 0)) {
        vs_tensor *ga = ta ? vs_matmul_t(b, tb, g, true) : vs_matmul_t(g, false, b, !tb);
        gin[0] = vs_sum_to(ga, a->ndim, a->shape);
    }
    if (vs_node_needs(n, 1)) {
        vs_tensor *gb = tb ? vs_matmul_t(g, true, a, ta) : vs_matmul_t(a, !ta, g, false);
        gin[1] = vs_sum_to(gb, b->ndim, b->shape);
    }
}

vs_tensor *vs_matmul_t(vs_tensor *a, bool trans_a, vs_tensor *b, bool trans_b)
{
    if (!a || !b) return NULL;
    if (a->ndim < 2 || b->ndim < 2) return vs_op_error("matmul", "operands need at least 2 dims (%d and %d)", a->ndim, b->ndim);
    int64_t ar = a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
    int64_t br = b->shape[b->ndim - 2], bc = b->shape[b->ndim - 1];
    int64_t M = trans_a ? ac : ar, K = trans_a ? ar : ac;
    int64_t K2 = trans_b ? bc : br, N = trans_b ? br : bc;
    if (K != K2) {
        char sa[96], sb[96];
        vs_shape_str(a, sa, sizeof sa);
        vs_shape_str(b, sb, sizeof sb);
        return vs_op_error("matmul", "inner dimensions differ: %s%s x %s%s", sa, trans_a ? "^T" : "", sb, trans_b ? "^T" : "");
    }
    /* Batch dims broadcast like elementwise ops. */
    vs_tensor ba = {0}, bb = {0};
    ba.ndim = a->ndim - 2;
    bb.ndim = b->ndim - 2;
    memcpy(ba.shape, a->shape, sizeof(int64_t) * (size_t)ba.ndim);
    memcpy(bb.shape, b->shape, sizeof(int64_t) * (size_t)bb.ndim);
    int nb;
    int64_t shape[VS_MAX_DIMS];
    if (!vs_broadcast_shape("matmul", &ba, &bb, &nb, shape)) return NULL;
    if (nb + 2 > VS_MAX_DIMS) return vs_op_error("matmul", "too many dims");
    shape[nb] = M;
    shape[nb + 1] = N;
    vs_tensor *y = vs_alloc("matmul", nb + 2, shape);
    if (!y) return NULL;
    int64_t batch = 1;
    for (int i = 0; i < nb; i++) batch *= shape[i];
    /* Offsets of each batch item in a and b (0 stride along broadcast dims). */
    int64_t sa[VS_MAX_DIMS], sb[VS_MAX_DIMS], s1 = ar * ac, s2 = br * bc;
    for (int i = nb - 1; i >= 0; i--) {
        int ia = ba.ndim - nb + i, ib = bb.ndim - nb + i;
        int64_t da = ia >= 0 ? ba.shape[ia] : 1, db = ib >= 0 ? bb.shape[ib] : 1;
        sa[i] = da == 1 ? 0 : s1;
        sb[i] = db == 1 ? 0 : s2;
        s1 *= da;
        s2 *= db;
    }
    int64_t idx[VS_MAX_DIMS] = {0}, oa = 0, ob = 0;
    for (int64_t t = 0; t < batch; t++) {
        vs_sgemm(trans_a, trans_b, M, N, K, 1.0f, a->data + oa, ac, b->data + ob, bc, 0.0f, y->data + t * M * N, N);
        for (int d = nb - 1; d >= 0; d--) {
            idx[d]++;
            oa += sa[d];
            ob += sb[d];
            if (idx[d] < shape[d]) break;
            oa -= sa[d] * shape[d];
            ob -= sb[d] * shape[d];
            idx[d] = 0;
        }
    }
    vs_tensor *in[2] = {a, b};
    const matmul_params p = {trans_a, trans_b};
    return vs_record(y, "matmul", matmul_backward, 2, in, &p, sizeof p);
}

vs_tensor *vs_matmul(vs_tensor *a, vs_tensor *b) { return vs_matmul_t(a, false, b, false); }

static void linear_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *w = n->in[1];
    /* y = x w^T + b:  dx = g w,  dw = g^T x,  db = sum_rows g */
    if (vs_node_needs(n, 0)) gin[0] = vs_matmul(g, w);
    if (vs_node_needs(n, 1)) gin[1] = vs_matmul_t(g, true, x, false);
    if (n->n_in > 2 && vs_node_needs(n, 2)) gin[2] = vs_sum(g, VS_AXIS(0), false);
}

vs_tensor *vs_linear(vs_tensor *x, vs_tensor *w, vs_tensor *b)
{
    if (!x || !w) return NULL;
    if (x->ndim != 2 || w->ndim != 2) return vs_op_error("linear", "x must be [n,in] and w [out,in] (got %d-d and %d-d)", x->ndim, w->ndim);
    int64_t n = x->shape[0], in = x->shape[1], out = w->shape[0];
    if (w->shape[1] != in)
        return vs_op_error("linear", "x has %lld features, weight expects %lld", (long long)in, (long long)w->shape[1]);
    if (b && (b->ndim != 1 || b->shape[0] != out)) return vs_op_error("linear", "bias must be [%lld]", (long long)out);
    int64_t shape[2] = {n, out};
    vs_tensor *y = vs_alloc("linear", 2, shape);
    if (!y) return NULL;
    if (b)
        vs_sgemm_bias(false, true, n, out, in, 1.0f, x->data, in, w->data, in, b->data, y->data, out);
    else
        vs_sgemm(false, true, n, out, in, 1.0f, x->data, in, w->data, in, 0.0f, y->data, out);
    vs_tensor *ins[3] = {x, w, b};
    return vs_record(y, "linear", linear_backward, b ? 3 : 2, ins, NULL, 0);
}
