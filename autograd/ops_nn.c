/* ops_nn.c - dropout and losses, composed from the differentiable primitives so every one of them
 * has first and second derivatives without rules of its own (BCE with logits, the VAE's and the GANs'
 * loss, is one fused node whose rule composes the same ops when a graph is recorded).
 * Normalisation is in ops_norm.c. */
#include "autograd/internal.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* m[i] = keep where the uniform draw m[i] >= p, else 0. */
VS_VECTOR_CLONES VS_SELECTS static void keep_where(float *restrict m, int64_t n, float p, float keep)
{
    for (int64_t i = 0; i < n; i++) m[i] = m[i] >= p ? keep : 0.0f;
}

static vs_tensor *dropout_impl(vs_tensor *x, float p, bool training, vs_rng *r)
{
    if (!x) return NULL;
    if (!(p >= 0.0f && p < 1.0f)) return vs_op_error("dropout", "probability %g outside [0, 1)", p);
    if (!training || p == 0.0f) return vs_reshape(x, x->ndim, x->shape);
    if (!r) return vs_op_error("dropout", "training needs a random generator");
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *mask = vs_alloc("dropout", x->ndim, x->shape);
    vs_set_grad_enabled(prev);
    if (!mask) return NULL;
    const float keep = 1.0f / (1.0f - p);
    vs_rng_fill_uniformf(r, mask->data, mask->size, 0.0f, 1.0f); /* 0 + 1 u = u exactly */
    keep_where(mask->data, mask->size, p, keep);
    return vs_mul(x, mask);
}

/* Elements per chunk of the fused losses' parallel passes (each element on its own: any thread count
 * gives the same values). */
#define BCE_GRAIN 32768

/* ---- losses (each public op below builds its result in a scope of its own)  ------------------------------------------------------------------------------------------ */

static bool same_shape_or_error(const char *op, const vs_tensor *a, const vs_tensor *b)
{
    if (vs_same_shape(a, b)) return true;
    char sa[96], sb[96];
    vs_shape_str(a, sa, sizeof sa);
    vs_shape_str(b, sb, sizeof sb);
    vs_op_error(op, "prediction %s and target %s differ in shape", sa, sb);
    return false;
}

static vs_tensor *mse_loss_impl(vs_tensor *a, vs_tensor *b)
{
    if (!a || !b || !same_shape_or_error("mse_loss", a, b)) return NULL;
    vs_tensor *d = vs_sub(a, b);
    return vs_mean(vs_mul(d, d), VS_ALL_AXES, false);
}

static vs_tensor *l1_loss_impl(vs_tensor *a, vs_tensor *b)
{
    if (!a || !b || !same_shape_or_error("l1_loss", a, b)) return NULL;
    return vs_mean(vs_abs(vs_sub(a, b)), VS_ALL_AXES, false);
}

static vs_tensor *smooth_l1_loss_impl(vs_tensor *a, vs_tensor *b, float beta)
{
    if (!a || !b || !same_shape_or_error("smooth_l1_loss", a, b)) return NULL;
    if (!(beta > 0)) return vs_op_error("smooth_l1_loss", "beta must be positive");
    vs_tensor *d = vs_sub(a, b);
    vs_tensor *ad = vs_abs(d);
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *small = vs_step(vs_add_scalar(vs_neg(ad), beta)); /* |d| < beta */
    vs_set_grad_enabled(prev);
    vs_tensor *quad = vs_mul_scalar(vs_mul(d, d), 0.5f / beta);
    vs_tensor *lin = vs_add_scalar(ad, -0.5f * beta);
    return vs_mean(vs_where(small, quad, lin), VS_ALL_AXES, false);
}

/* BCE with logits is one node: mean(softplus(x) - t x) in one pass plus the mean's sum, and on a
 * backward without a graph dx = gN sigmoid(x) + (-gN) t and dt = (-gN) x in one pass (gN = g / n as
 * the mean's rule scales it), element for element the values the composed ops gave.  The forward
 * keeps softplus's e^-|x| as the node's third input when x gets a gradient, and the sigmoid is
 * formed from it (vs_vm_sigmoid_from: the same bits as vs_sigmoidf).  A backward that records a
 * graph composes the same rule from ops, so second derivatives keep working. */
typedef struct bce_params {
    float scale; /* the mean's 1/n */
} bce_params;

typedef struct bce_job {
    const float *x, *t;
    float *dx, *dt; /* dx or dt NULL: not wanted (backward); dx the loss terms (forward) */
    float *e;       /* e^-|x|: written by the forward when not NULL; read by the backward's dx */
    float gn;
    bool forward;
} bce_job;

/* The passes of one chunk as flat loops over vs_softplus_rows / vs_sigmoidf, which vectorise
 * (AVX-512 or AVX2 clone, or the baseline's SSE2; no FMA, so every clone gives the same bits): the
 * forward terms softplus(x) - t x, block by block while the block is in L1, or dx and dt of the
 * backward.  The AVX-512 clone runs twice the elements per instruction, and these loops are bound
 * by how many elements' exp and log chains the out-of-order window holds: 100k terms 173 -> 118 us,
 * the backward's dx 97 -> 67 us (Zen 4). */
VS_VECTOR_CLONES512 VS_SELECTS static void bce_kernel(const float *restrict x, const float *restrict t,
                                                      float *restrict dx, float *restrict dt, float *restrict e,
                                                      float gn, bool forward, int64_t n)
{
    const float ngn = -gn;
    if (forward) {
        float block[VS_VM_BLOCK];
        for (int64_t b = 0; b < n; b += VS_VM_BLOCK) {
            const int64_t m = n - b < VS_VM_BLOCK ? n - b : VS_VM_BLOCK;
            const float *restrict xb = x + b, *restrict tb = t + b;
            float *restrict yb = dx + b;
            vs_softplus_rows_keep(xb, yb, e ? e + b : block, m);
            for (int64_t i = 0; i < m; i++) yb[i] = yb[i] - tb[i] * xb[i];
        }
        return;
    }
    if (dx) /* wanted only when x has a gradient, so the forward kept e */
        for (int64_t i = 0; i < n; i++) dx[i] = gn * vs_vm_sigmoid_from(x[i], e[i]) + ngn * t[i];
    if (dt)
        for (int64_t i = 0; i < n; i++) dt[i] = ngn * x[i];
}

static void bce_chunk(void *ctx, int64_t begin, int64_t end)
{
    const bce_job *j = ctx;
    bce_kernel(j->x + begin, j->t + begin, j->dx ? j->dx + begin : NULL, j->dt ? j->dt + begin : NULL,
               j->e ? j->e + begin : NULL, j->gn, j->forward, end - begin);
}

static void bce_run(bce_job *j, int64_t n)
{
    if (n < 2 * BCE_GRAIN)
        bce_chunk(j, 0, n);
    else
        vs_parallel_for(n, BCE_GRAIN, bce_chunk, j);
}

static void bce_with_logits_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    vs_tensor *x = n->in[0], *t = n->in[1];
    const float scale = VS_PARAMS(n, bce_params)->scale;
    if (vs_grad_enabled()) {
        int64_t ones[VS_MAX_DIMS];
        for (int d = 0; d < x->ndim; d++) ones[d] = 1;
        vs_tensor *gn = vs_mul_scalar(vs_expand(vs_reshape(g, x->ndim, ones), x->ndim, x->shape), scale), *ngn = vs_neg(gn);
        if (vs_node_needs(n, 0)) gin[0] = vs_add(vs_mul(gn, vs_sigmoid(x)), vs_mul(ngn, t));
        if (vs_node_needs(n, 1)) gin[1] = vs_mul(ngn, x);
        return;
    }
    assert(!vs_node_needs(n, 0) || n->n_in == 3); /* x has a gradient: its forward kept e^-|x| */
    bce_job j = {.x = x->data, .t = t->data, .e = n->n_in == 3 ? n->in[2]->data : NULL, .gn = g->data[0] * scale};
    if (vs_node_needs(n, 0) && !(gin[0] = vs_alloc("bce_with_logits", x->ndim, x->shape))) return;
    if (vs_node_needs(n, 1) && !(gin[1] = vs_alloc("bce_with_logits", t->ndim, t->shape))) return;
    j.dx = gin[0] ? gin[0]->data : NULL;
    j.dt = gin[1] ? gin[1]->data : NULL;
    bce_run(&j, x->size);
}

static vs_tensor *bce_with_logits_impl(vs_tensor *logits, vs_tensor *targets)
{
    if (!logits || !targets || !same_shape_or_error("bce_with_logits", logits, targets)) return NULL;
    /* a recorded node whose logits get a gradient keeps e^-|x| for the backward's sigmoid (one exp
     * per element fewer there; VAE step's BCE backward 64 -> 20 us) */
    const bool keep = vs_grad_enabled() && logits->requires_grad;
    const bool prev = vs_set_grad_enabled(false);
    vs_tensor *terms = vs_alloc("bce_with_logits", logits->ndim, logits->shape), *y = NULL;
    vs_tensor *e = keep && terms ? vs_alloc("bce_with_logits", logits->ndim, logits->shape) : NULL;
    if (terms && (e || !keep)) {
        bce_job j = {.x = logits->data, .t = targets->data, .dx = terms->data, .e = e ? e->data : NULL, .forward = true};
        bce_run(&j, logits->size);
        y = vs_mean(terms, VS_ALL_AXES, false);
    }
    vs_set_grad_enabled(prev);
    if (!y) return NULL;
    const bce_params p = {logits->size ? 1.0f / (float)logits->size : NAN};
    vs_tensor *ins[3] = {logits, targets, e};
    return vs_record(y, "bce_with_logits", bce_with_logits_backward, e ? 3 : 2, ins, &p, sizeof p);
}

/* One-hot [n,c] constant from class indices. */
static vs_tensor *one_hot(const char *op, const vs_tensor *scores, const int64_t *labels)
{
    if (scores->ndim != 2) return vs_op_error(op, "scores must be [n,c], got %d dims", scores->ndim);
    int64_t n = scores->shape[0], c = scores->shape[1];
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= c)
            return vs_op_error(op, "label %lld of row %lld outside [0, %lld)", (long long)labels[i], (long long)i, (long long)c);
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *oh = vs_tensor_zeros(2, scores->shape);
    vs_set_grad_enabled(prev);
    if (oh)
        for (int64_t i = 0; i < n; i++) oh->data[i * c + labels[i]] = 1.0f;
    return oh;
}

/* -1 / rows, the negative mean's factor (NaN for no rows). */
static float nll_scale(const vs_tensor *scores) { return scores->shape[0] ? -1.0f / (float)scores->shape[0] : NAN; }

/* -mean_i sum_c p[i,c] logp[i,c] */
static vs_tensor *soft_nll(vs_tensor *logp, vs_tensor *p)
{
    if (!logp || !p) return NULL;
    return vs_mul_scalar(vs_sum(vs_mul(p, logp), VS_ALL_AXES, false), nll_scale(logp));
}

static vs_tensor *nll_loss_impl(vs_tensor *logp, const int64_t *labels)
{
    if (!logp) return NULL;
    return soft_nll(logp, one_hot("nll_loss", logp, labels));
}

/* Cross entropy with class labels is one node: soft_nll(log_softmax(x), one_hot) formed by those
 * ops without recording them, and on a backward without a graph, row by row, the values their rules
 * gave: d = (g (-1/n)) p, dx = d - e^logp sum_c d (each step rounded as the op that took it).  One
 * node and two passes where ten ops and their tensors took 28 us for 256 x 10 logits.  The forward's
 * one-hot p and log_softmax are the node's second and third inputs; a backward that records a graph
 * composes the ops' rules on a log_softmax of x recorded anew, so second derivatives flow. */
static void cross_entropy_backward(vs_node *n, vs_tensor *out, vs_tensor *g, vs_tensor **gin)
{
    (void)out;
    if (!vs_node_needs(n, 0)) return;
    vs_tensor *x = n->in[0], *p = n->in[1], *logp = n->in[2];
    const float inv = nll_scale(x);
    if (vs_grad_enabled()) {
        vs_tensor *d = vs_mul(vs_expand(vs_reshape(vs_mul_scalar(g, inv), 2, (int64_t[]){1, 1}), 2, x->shape), p);
        gin[0] = vs_sub(d, vs_mul(vs_exp(vs_log_softmax(x, 1)), vs_sum(d, VS_AXIS(1), true)));
        return;
    }
    if (!(gin[0] = vs_alloc("cross_entropy", x->ndim, x->shape))) return;
    const int64_t rows = x->shape[0], c = x->shape[1];
    const float gs = g->data[0] * inv;
    float *dx = gin[0]->data;
    for (int64_t i = 0; i < rows; i++) {
        float *d = dx + i * c;
        const float *pi = p->data + i * c, *li = logp->data + i * c;
        for (int64_t k = 0; k < c; k++) d[k] = gs * pi[k];
        /* p one-hot: the row holds gs and signed zeros, whose sum in any order is gs exactly when gs
         * is finite and not zero; else vs_sum's own additions decide the sign or the NaN */
        const float sd = isfinite(gs) && gs != 0 ? gs : (float)(0.0 + vs_row_sum(d, c));
        for (int64_t k = 0; k < c; k++) d[k] = d[k] - expf(li[k]) * sd;
    }
}

static vs_tensor *cross_entropy_impl(vs_tensor *logits, const int64_t *labels)
{
    if (!logits) return NULL;
    vs_tensor *oh = one_hot("cross_entropy", logits, labels);
    if (!oh) return NULL;
    const bool prev = vs_set_grad_enabled(false);
    vs_tensor *logp = vs_log_softmax(logits, 1);
    vs_tensor *y = soft_nll(logp, oh);
    vs_set_grad_enabled(prev);
    if (!y) return NULL;
    vs_tensor *ins[3] = {logits, oh, logp};
    return vs_record(y, "cross_entropy", cross_entropy_backward, 3, ins, NULL, 0);
}

static vs_tensor *cross_entropy_soft_impl(vs_tensor *logits, vs_tensor *p)
{
    if (!logits || !p || !same_shape_or_error("cross_entropy_soft", logits, p)) return NULL;
    if (logits->ndim != 2) return vs_op_error("cross_entropy_soft", "logits must be [n,c]");
    return soft_nll(vs_log_softmax(logits, 1), p);
}

static vs_tensor *kl_diag_gaussian_impl(vs_tensor *mu1, vs_tensor *lv1, vs_tensor *mu2, vs_tensor *lv2)
{
    if (!mu1 || !lv1 || !same_shape_or_error("kl_diag_gaussian", mu1, lv1)) return NULL;
    if ((mu2 && !same_shape_or_error("kl_diag_gaussian", mu1, mu2)) || (lv2 && !same_shape_or_error("kl_diag_gaussian", mu1, lv2)))
        return NULL;
    if (mu1->ndim < 1) return vs_op_error("kl_diag_gaussian", "needs at least one dimension");
    /* 0.5 sum(lv2 - lv1 + (e^lv1 + (mu1 - mu2)^2) / e^lv2 - 1) */
    vs_tensor *d = mu2 ? vs_sub(mu1, mu2) : mu1;
    vs_tensor *num = vs_add(vs_exp(lv1), vs_mul(d, d));
    vs_tensor *t = lv2 ? vs_add(vs_sub(lv2, lv1), vs_div(num, vs_exp(lv2))) : vs_sub(num, lv1);
    vs_tensor *kl = vs_mul_scalar(vs_sum(vs_add_scalar(t, -1.0f), VS_AXIS(mu1->ndim - 1), false), 0.5f);
    return vs_mean(kl, VS_ALL_AXES, false);
}

static vs_tensor *cosine_similarity_impl(vs_tensor *a, vs_tensor *b, int axis, float eps)
{
    if (!a || !b) return NULL;
    int nd;
    int64_t shape[VS_MAX_DIMS];
    if (!vs_broadcast_shape("cosine_similarity", a, b, &nd, shape)) return NULL;
    int ax = vs_norm_axis("cosine_similarity", axis, nd);
    if (ax < 0) return NULL;
    uint32_t m = VS_AXIS(ax);
    if (!vs_same_shape(a, b)) {
        a = vs_expand(a, nd, shape);
        b = vs_expand(b, nd, shape);
    }
    /* <a,b> / sqrt(max(|a|^2 |b|^2, eps^2)) */
    vs_tensor *dot = vs_sum(vs_mul(a, b), m, false);
    vs_tensor *na = vs_sum(vs_mul(a, a), m, false), *nb = vs_sum(vs_mul(b, b), m, false);
    vs_tensor *den = vs_sqrt(vs_clamp(vs_mul(na, nb), eps * eps, INFINITY));
    return vs_div(dot, den);
}

vs_tensor *vs_dropout(vs_tensor *x, float p, bool training, vs_rng *r)
{
    vs_scope_begin();
    return vs_scope_return(dropout_impl(x, p, training, r));
}

vs_tensor *vs_mse_loss(vs_tensor *a, vs_tensor *b)
{
    vs_scope_begin();
    return vs_scope_return(mse_loss_impl(a, b));
}

vs_tensor *vs_l1_loss(vs_tensor *a, vs_tensor *b)
{
    vs_scope_begin();
    return vs_scope_return(l1_loss_impl(a, b));
}

vs_tensor *vs_smooth_l1_loss(vs_tensor *a, vs_tensor *b, float beta)
{
    vs_scope_begin();
    return vs_scope_return(smooth_l1_loss_impl(a, b, beta));
}

vs_tensor *vs_bce_with_logits(vs_tensor *logits, vs_tensor *targets)
{
    vs_scope_begin();
    return vs_scope_return(bce_with_logits_impl(logits, targets));
}

vs_tensor *vs_nll_loss(vs_tensor *logp, const int64_t *labels)
{
    vs_scope_begin();
    return vs_scope_return(nll_loss_impl(logp, labels));
}

vs_tensor *vs_cross_entropy(vs_tensor *logits, const int64_t *labels)
{
    vs_scope_begin();
    return vs_scope_return(cross_entropy_impl(logits, labels));
}

vs_tensor *vs_cross_entropy_soft(vs_tensor *logits, vs_tensor *p)
{
    vs_scope_begin();
    return vs_scope_return(cross_entropy_soft_impl(logits, p));
}

vs_tensor *vs_kl_diag_gaussian(vs_tensor *mu1, vs_tensor *lv1, vs_tensor *mu2, vs_tensor *lv2)
{
    vs_scope_begin();
    return vs_scope_return(kl_diag_gaussian_impl(mu1, lv1, mu2, lv2));
}

vs_tensor *vs_cosine_similarity(vs_tensor *a, vs_tensor *b, int axis, float eps)
{
    vs_scope_begin();
    return vs_scope_return(cosine_similarity_impl(a, b, axis, eps));
}
