/* snx_objective.c - the SNX mask objective and constraints (Eqs. 3-10) over a task's variables:
 * faithfulness, L1 of a(m), GNNExplainer's size and entropy terms, the KL penalty of SNX-KL, the
 * upper bounds a(m) <= a(M) (Eqs. 7-8) and the adjacency constraints of Eq. 10.  Also the building
 * blocks a(M), Bernoulli KL and the faithfulness loss. */
#include "explain/snx_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- building blocks --------------------------------------------------------------------------- */

vs_tensor *snx_group_from_log(vs_tensor *l, int axis, const int64_t *idx, int64_t q)
{
    /* 1 - prod_j (1 - m_j) = 1 - exp(sum_j ln(1 - m_j)) */
    return vs_add_scalar(vs_neg(vs_exp(vs_scatter_add(l, axis, idx, q))), 1.0f);
}

/* Column -> group index for groups covering [0, p); NULL when they do not. */
static int64_t *group_index(const vs_feature_group *groups, int64_t q, int64_t p)
{
    int64_t *idx = malloc((size_t)(p > 0 ? p : 1) * sizeof *idx);
    if (!idx) return NULL;
    for (int64_t j = 0; j < p; j++) idx[j] = -1;
    for (int64_t i = 0; i < q; i++)
        for (int64_t j = groups[i].first; j < groups[i].first + groups[i].count; j++)
            if (j >= 0 && j < p) idx[j] = i;
    for (int64_t j = 0; j < p; j++)
        if (idx[j] < 0) {
            free(idx);
            return NULL;
        }
    return idx;
}

vs_tensor *vs_snx_group_importance(vs_tensor *m, const vs_feature_group *groups, int64_t q)
{
    if (!m || !groups || q < 1 || m->ndim < 1) {
        vs_set_last_error(VS_ERR_ARG, "snx_group_importance: need a mask and at least one group");
        return NULL;
    }
    int64_t p = m->shape[m->ndim - 1];
    int64_t *idx = group_index(groups, q, p);
    if (!idx) {
        vs_set_last_error(VS_ERR_ARG, "snx_group_importance: the %lld groups do not cover the %lld columns", (long long)q,
                          (long long)p);
        return NULL;
    }
    vs_tensor *l = vs_log(vs_clamp(vs_add_scalar(vs_neg(m), 1.0f), 1e-7f, 1.0f));
    vs_tensor *a = snx_group_from_log(l, m->ndim - 1, idx, q);
    free(idx);
    return a;
}

vs_status snx_group_values(const float *M, int64_t n, int64_t p, const vs_feature_group *groups, int64_t q, float *out)
{
    vs_scope_begin();
    bool grad = vs_set_grad_enabled(false);
    vs_tensor *a = vs_snx_group_importance(vs_tensor_from(VS_SHAPE(n, p), M), groups, q);
    if (a) memcpy(out, a->data, (size_t)(n * q) * sizeof *out);
    vs_set_grad_enabled(grad);
    vs_scope_end();
    return a ? VS_OK : vs_last_error()->code;
}

vs_tensor *vs_snx_bernoulli_kl(vs_tensor *n, vs_tensor *N)
{
    const float lo = SNX_PROB_EPS, hi = 1.0f - SNX_PROB_EPS;
    vs_tensor *a = vs_clamp(n, lo, hi), *b = vs_clamp(N, lo, hi);
    vs_tensor *a1 = vs_add_scalar(vs_neg(a), 1.0f), *b1 = vs_add_scalar(vs_neg(b), 1.0f);
    return vs_add(vs_mul(a, vs_log(vs_div(a, b))), vs_mul(a1, vs_log(vs_div(a1, b1))));
}

vs_tensor *vs_snx_faithfulness_loss(vs_tensor *p, vs_tensor *p_masked)
{
    vs_tensor *q = vs_clamp(p_masked, SNX_PROB_EPS, 1.0f - SNX_PROB_EPS);
    vs_tensor *l1 = vs_mul(p, vs_log(q));
    vs_tensor *l0 = vs_mul(vs_add_scalar(vs_neg(p), 1.0f), vs_log(vs_add_scalar(vs_neg(q), 1.0f)));
    return vs_neg(vs_add(l1, l0));
}

/* ---- objective ------------------------------------------------------------------------------------- */

void snx_obj_free(snx_obj *o)
{
    free(o->aux_of_var);
    free(o->aux_block);
    free(o->var_block);
    free(o->ent_w);
    free(o->target);
    free(o->present);
    free(o->pj);
    free(o->pk);
    free(o->con_off);
    memset(o, 0, sizeof *o);
}

vs_status snx_obj_init(snx_obj *o, const snx_task *t, vs_error *err)
{
    memset(o, 0, sizeof *o);
    o->task = t;
    int64_t B = t->B, nv = t->n_vars;
    o->var_block = malloc((size_t)(nv ? nv : 1) * sizeof *o->var_block);
    o->ent_w = malloc((size_t)(nv ? nv : 1) * sizeof *o->ent_w);
    o->con_off = calloc((size_t)(B + 1), sizeof *o->con_off);
    if (!o->var_block || !o->ent_w || !o->con_off) goto nomem;
    for (int64_t b = 0; b < B; b++)
        for (int64_t v = t->var_off[b]; v < t->var_off[b + 1]; v++) {
            o->var_block[v] = b;
            o->ent_w[v] = 1.0f / (float)(t->var_off[b + 1] - t->var_off[b]);
        }
    if (t->graph || t->layout == SNX_LAYOUT_SEPARATE) {
        /* a(m) = m */
        o->n_aux = nv;
        o->aux_block = malloc((size_t)(nv ? nv : 1) * sizeof *o->aux_block);
        if (!o->aux_block) goto nomem;
        memcpy(o->aux_block, o->var_block, (size_t)nv * sizeof *o->aux_block);
        return VS_OK;
    }
    /* tabular: q major features per block */
    const vs_dataset *d = t->d;
    int64_t q = d->n_groups, *gi = group_index(d->groups, q, t->p);
    if (!gi) {
        snx_obj_free(o);
        return vs_error_set(err, VS_ERR_ARG, "snx: the data set's %lld feature groups do not cover its %lld columns",
                            (long long)q, (long long)t->p);
    }
    o->n_aux = B * q;
    o->aux_of_var = malloc((size_t)(nv ? nv : 1) * sizeof *o->aux_of_var);
    o->aux_block = malloc((size_t)(B * q) * sizeof *o->aux_block);
    if (!o->aux_of_var || !o->aux_block) {
        free(gi);
        goto nomem;
    }
    for (int64_t b = 0; b < B; b++) {
        for (int64_t j = 0; j < t->p; j++) o->aux_of_var[t->var_off[b] + j] = b * q + gi[j];
        for (int64_t i = 0; i < q; i++) o->aux_block[b * q + i] = b;
    }
    free(gi);
    return VS_OK;
nomem:
    snx_obj_free(o);
    return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for the mask objective");
}

/* Eq. 10 pairs: for every node, all pairs of distinct incident (undirected) edge variables. */
vs_status snx_obj_adjacent(snx_obj *o, float eps, vs_error *err)
{
    const snx_task *t = o->task;
    int64_t cap = 0, n = 0;
    o->eps = eps;
    o->con = SNX_CON_ADJACENT;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (int64_t b = 0; b < t->B; b++) {
            o->con_off[b] = n;
            int64_t side = 2 * b + 1, mi = t->side_mi[side];
            const vs_graph *g = &t->d->graphs[t->side_item[side]];
            const int64_t *var = t->expand + t->elem_off[mi];
            /* edges are grouped by node through a counting sort on src */
            int64_t *start = calloc((size_t)(g->n_nodes + 1), sizeof *start);
            int64_t *list = malloc((size_t)(g->n_edges ? g->n_edges : 1) * sizeof *list);
            if (!start || !list) {
                free(start);
                free(list);
                return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for adjacency constraints");
            }
            for (int64_t e = 0; e < g->n_edges; e++) start[g->src[e] + 1]++;
            for (int64_t u = 0; u < g->n_nodes; u++) start[u + 1] += start[u];
            int64_t *fill = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *fill);
            if (!fill) {
                free(start);
                free(list);
                return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for adjacency constraints");
            }
            for (int64_t e = 0; e < g->n_edges; e++) list[start[g->src[e]] + fill[g->src[e]]++] = var[e];
            for (int64_t u = 0; u < g->n_nodes; u++)
                for (int64_t a = start[u]; a < start[u + 1]; a++)
                    for (int64_t c = a + 1; c < start[u + 1]; c++) {
                        if (list[a] == list[c]) continue;
                        if (pass == 1) {
                            o->pj[n] = list[a];
                            o->pk[n] = list[c];
                        }
                        n++;
                    }
            free(start);
            free(list);
            free(fill);
        }
        o->con_off[t->B] = n;
        if (pass == 0) {
            cap = n;
            o->pj = malloc((size_t)(cap ? cap : 1) * sizeof *o->pj);
            o->pk = malloc((size_t)(cap ? cap : 1) * sizeof *o->pk);
            if (!o->pj || !o->pk) return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for %lld constraints", (long long)cap);
        }
    }
    o->n_pairs = n;
    return VS_OK;
}

vs_status snx_obj_present(snx_obj *o, vs_error *err)
{
    const snx_task *t = o->task;
    if (t->graph) return VS_OK;
    o->present = malloc((size_t)(t->n_vars ? t->n_vars : 1) * sizeof *o->present);
    if (!o->present) return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for the present features");
    const float *X = t->d->X;
    int64_t p = t->p;
    for (int64_t b = 0; b < t->B; b++) {
        const float *xs = X + t->side_item[2 * b] * p, *xt = X + t->side_item[2 * b + 1] * p;
        for (int64_t j = 0; j < p; j++) o->present[t->var_off[b] + j] = (float)(xs[j] != 0 || xt[j] != 0);
    }
    return VS_OK;
}

/* The mask m = sigmoid(theta) (x) present. */
static vs_tensor *mask_of(const snx_obj *o, vs_tensor *theta)
{
    vs_tensor *m = vs_sigmoid(theta);
    return o->present ? vs_mul(m, vs_tensor_from(VS_SHAPE(o->task->n_vars), o->present)) : m;
}

/* a(m) [n_aux] from the logits: tabular groups via ln(1 - m) = ln sigmoid(-theta) (times present:
 * ln(1 - 0) = 0 for an absent entry), graphs m itself. */
static vs_tensor *aux_of(const snx_obj *o, vs_tensor *theta, vs_tensor *m)
{
    if (!o->aux_of_var) return m;
    vs_tensor *l = vs_log_sigmoid(vs_neg(theta));
    if (o->present) l = vs_mul(l, vs_tensor_from(VS_SHAPE(o->task->n_vars), o->present));
    return snx_group_from_log(l, 0, o->aux_of_var, o->n_aux);
}

vs_tensor *snx_obj_value(void *ctx, vs_tensor *theta)
{
    const snx_obj *o = ctx;
    const snx_task *t = o->task;
    int64_t B = t->B;
    vs_tensor *m = mask_of(o, theta);
    vs_tensor *p0 = vs_tensor_from(VS_SHAPE(B), t->p0);
    if (o->hard) p0 = vs_step(vs_add_scalar(p0, -0.5f));
    vs_tensor *obj = vs_snx_faithfulness_loss(p0, snx_task_predict(t, m));
    if (o->gamma != 0 || o->beta != 0) {
        vs_tensor *a = aux_of(o, theta, m);
        if (o->gamma != 0) obj = vs_add(obj, vs_mul_scalar(vs_scatter_add(a, 0, o->aux_block, B), o->gamma));
        if (o->beta != 0 && o->target) {
            vs_tensor *A = vs_tensor_from(VS_SHAPE(o->n_aux), o->target);
            obj = vs_add(obj, vs_mul_scalar(vs_scatter_add(vs_snx_bernoulli_kl(a, A), 0, o->aux_block, B), o->beta));
        }
    }
    if (o->size != 0) obj = vs_add(obj, vs_mul_scalar(vs_scatter_add(m, 0, o->var_block, B), o->size));
    if (o->ent != 0) {
        /* H(m) = -(m ln m + (1 - m) ln(1 - m)), weighted 1/P_b so each block's term is a mean */
        vs_tensor *one_m = vs_add_scalar(vs_neg(m), 1.0f);
        vs_tensor *H = vs_neg(vs_add(vs_mul(m, vs_log_sigmoid(theta)), vs_mul(one_m, vs_log_sigmoid(vs_neg(theta)))));
        vs_tensor *w = vs_tensor_from(VS_SHAPE(t->n_vars), o->ent_w);
        obj = vs_add(obj, vs_mul_scalar(vs_scatter_add(vs_mul(H, w), 0, o->var_block, B), o->ent));
    }
    return obj;
}

vs_tensor *snx_obj_constraints(void *ctx, vs_tensor *theta)
{
    const snx_obj *o = ctx;
    vs_tensor *m = mask_of(o, theta);
    if (o->con == SNX_CON_BOUND)
        return vs_sub(aux_of(o, theta, m), vs_tensor_from(VS_SHAPE(o->n_aux), o->target));
    if (o->con == SNX_CON_ADJACENT) {
        vs_tensor *d = vs_sub(vs_index_select(m, 0, o->pj, o->n_pairs), vs_index_select(m, 0, o->pk, o->n_pairs));
        return vs_add_scalar(vs_abs(d), -o->eps);
    }
    return NULL;
}
