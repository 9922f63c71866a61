/* snx_eval.c - SNX evaluation (Section IV-A/B): faithfulness (Eq. 1) and counterfactual (Eq. 2)
 * losses of top selections, conformity (Jaccard of a(M) and a(m)), violated constraints
 * (Eqs. 7-8), sensitivity curves (Fig. 7), and precision/recall against planted truth. */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_snx_eval_opts_init(vs_snx_eval_opts *o, vs_data_kind kind)
{
    (void)kind;
    memset(o, 0, sizeof *o);
    o->select = true;
    o->top_k = 10;
    o->top_frac = 0.75;
    o->truth_k = 0;
    o->violation_tol = 1e-3f;
    o->present_only = false;
}

void vs_snx_topk(const float *v, int64_t n, int64_t k, uint8_t *sel)
{
    if (k < 0) k = 0;
    if (k > n) k = n;
    memset(sel, 0, (size_t)n);
    /* k passes of a linear scan: k is small (features) or the scan is short (edges of one graph) */
    for (int64_t q = 0; q < k; q++) {
        int64_t best = -1;
        for (int64_t i = 0; i < n; i++)
            if (!sel[i] && (best < 0 || v[i] > v[best] || (isnan(v[best]) && !isnan(v[i])))) best = i;
        sel[best] = 1;
    }
}

void vs_snx_precision_recall(const float *score, const uint8_t *truth, int64_t n, int64_t k, double *precision, double *recall)
{
    int64_t nt = 0;
    for (int64_t i = 0; i < n; i++) nt += truth[i] != 0;
    *precision = *recall = NAN;
    if (nt == 0 || n == 0) return;
    if (k <= 0) k = nt;
    if (k > n) k = n;
    /* v = the k-th largest score (NaN lowest); items above v are selected, and the slots left go to
     * the items tied at v at random: each true tied item counts slots / tied (the expected hits), so
     * saturated or constant masks score the chance level, not whatever the index order gives */
    uint8_t *sel = malloc((size_t)n);
    if (!sel) return;
    vs_snx_topk(score, n, k, sel);
    float v = INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (sel[i] && !(score[i] >= v)) v = score[i];
    free(sel);
    int64_t above = 0, tied = 0, hit_above = 0, hit_tied = 0;
    for (int64_t i = 0; i < n; i++) {
        bool t = truth[i] != 0, eq = score[i] == v || (isnan(score[i]) && isnan(v));
        if (!eq && score[i] > v) above++, hit_above += t;
        else if (eq) tied++, hit_tied += t;
    }
    double hit = (double)hit_above + (tied ? (double)(k - above) * (double)hit_tied / (double)tied : 0.0);
    *precision = hit / (double)k;
    *recall = hit / (double)nt;
}

/* ---- selections ------------------------------------------------------------------------------------- */

/* Per-undirected-edge values of a directed mask: und[e] ids, out[n_und] = value of the lowest direction. */
static int64_t und_values(const vs_graph *g, const float *mask, int64_t *und, float *out)
{
    int64_t nu = snx_undirected(g, und);
    for (int64_t e = g->n_edges - 1; e >= 0; e--) out[und[e]] = mask[e];
    return nu;
}

/* Scratch big enough for one item of the data set. */
typedef struct scratch {
    int64_t *und;
    float *vals, *vals2;
    uint8_t *sel, *sel2;
} scratch;

static vs_status scratch_init(scratch *s, const vs_dataset *d, vs_error *err)
{
    int64_t m = d->kind == VS_DATA_GRAPHS ? 1 : d->dim;
    for (int64_t r = 0; d->kind == VS_DATA_GRAPHS && r < d->n; r++) m = d->graphs[r].n_edges > m ? d->graphs[r].n_edges : m;
    s->und = malloc((size_t)m * sizeof *s->und);
    s->vals = malloc((size_t)(2 * m) * sizeof *s->vals);
    s->vals2 = malloc((size_t)(2 * m) * sizeof *s->vals2);
    s->sel = malloc((size_t)(2 * m));
    s->sel2 = malloc((size_t)(2 * m));
    if (!s->und || !s->vals || !s->vals2 || !s->sel || !s->sel2) return vs_error_set(err, VS_ERR_NOMEM, "snx evaluate: out of memory");
    return VS_OK;
}

static void scratch_free(scratch *s)
{
    free(s->und);
    free(s->vals);
    free(s->vals2);
    free(s->sel);
    free(s->sel2);
}

/* S(mask) per element of row's item: top_k minor features (tabular) or top_frac of the undirected
 * edges (graphs), 1/0; the soft mask itself when !o->select.  complement: 1 - S. */
static void select_mask(const vs_dataset *d, int64_t row, const float *mask, const vs_snx_eval_opts *o, bool complement,
                        scratch *s, float *out)
{
    int64_t n = d->kind == VS_DATA_GRAPHS ? d->graphs[row].n_edges : d->dim;
    if (!o->select) {
        for (int64_t i = 0; i < n; i++) out[i] = complement ? 1.0f - mask[i] : mask[i];
        return;
    }
    if (d->kind == VS_DATA_TABULAR) {
        vs_snx_topk(mask, n, o->top_k, s->sel);
        for (int64_t i = 0; i < n; i++) out[i] = (float)(complement ? !s->sel[i] : s->sel[i]);
        return;
    }
    const vs_graph *g = &d->graphs[row];
    int64_t nu = und_values(g, mask, s->und, s->vals);
    vs_snx_topk(s->vals, nu, (int64_t)llround(o->top_frac * (double)nu), s->sel);
    for (int64_t e = 0; e < n; e++) out[e] = (float)(complement ? !s->sel[s->und[e]] : s->sel[s->und[e]]);
}

/* The mask as selections see it: with o->present_only on tabular data, mask (x) 1[x_rs or x_rt] in
 * buf (rs = rt for a global mask), else mask itself. */
static const float *present_view(const vs_dataset *d, const vs_snx_eval_opts *o, int64_t rs, int64_t rt, const float *mask, float *buf)
{
    if (!o->present_only || d->kind != VS_DATA_TABULAR) return mask;
    const float *xs = d->X + rs * d->dim, *xt = d->X + rt * d->dim;
    for (int64_t j = 0; j < d->dim; j++) buf[j] = xs[j] != 0 || xt[j] != 0 ? mask[j] : 0.0f;
    return buf;
}

/* |A ∩ B| / |A ∪ B| of two selections (1 when both are empty). */
static double jaccard(const uint8_t *a, const uint8_t *b, int64_t n)
{
    int64_t in = 0, un = 0;
    for (int64_t i = 0; i < n; i++) {
        in += a[i] && b[i];
        un += a[i] || b[i];
    }
    return un ? (double)in / (double)un : 1.0;
}

/* Major features touched by the top_k minor features of a tabular mask. */
static void major_selection(const vs_dataset *d, const float *mask, int64_t k, uint8_t *colsel, uint8_t *maj)
{
    vs_snx_topk(mask, d->dim, k, colsel);
    for (int64_t i = 0; i < d->n_groups; i++) {
        maj[i] = 0;
        for (int64_t j = d->groups[i].first; j < d->groups[i].first + d->groups[i].count; j++) maj[i] |= colsel[j];
    }
}

/* Conformity and violations of local masks against the global masks of rows s (and t). */
static vs_status conform(const vs_dataset *d, const vs_snx_expl *e, int64_t k, const vs_snx_expl *g, const int64_t *gmap,
                         const vs_snx_eval_opts *o, scratch *s, vs_snx_eval *out)
{
    if (d->kind == VS_DATA_TABULAR) {
        int64_t q = d->n_groups, p = d->dim;
        const float *m = e->ms + e->s_off[k], *M = g->ms + g->s_off[gmap[e->s[k]]];
        uint8_t *ma = s->sel2, *mb = s->sel2 + q;
        major_selection(d, present_view(d, o, e->s[k], e->s[k], M, s->vals), o->top_k, s->sel, ma);
        major_selection(d, present_view(d, o, e->s[k], e->t[k], m, s->vals2), o->top_k, s->sel, mb);
        out->conformity = jaccard(ma, mb, q);
        float *both = malloc((size_t)(2 * p) * sizeof *both), *a = malloc((size_t)(2 * q) * sizeof *a);
        if (!both || !a) {
            free(both);
            free(a);
            return VS_ERR_NOMEM;
        }
        memcpy(both, m, (size_t)p * sizeof *both);
        memcpy(both + p, M, (size_t)p * sizeof *both);
        vs_status st = snx_group_values(both, 2, p, d->groups, q, a);
        out->violated = 0;
        out->n_constraints = q;
        for (int64_t i = 0; i < q && st == VS_OK; i++) out->violated += a[i] - a[q + i] > o->violation_tol;
        free(both);
        free(a);
        return st;
    }
    double J = 0;
    out->violated = 0;
    out->n_constraints = 0;
    for (int side = 0; side < 2; side++) {
        int64_t row = side ? e->t[k] : e->s[k];
        const vs_graph *gr = &d->graphs[row];
        const float *m = side ? e->mt + e->t_off[k] : e->ms + e->s_off[k], *M = g->ms + g->s_off[gmap[row]];
        int64_t nu = und_values(gr, M, s->und, s->vals);
        und_values(gr, m, s->und, s->vals2);
        int64_t kk = (int64_t)llround(o->top_frac * (double)nu);
        vs_snx_topk(s->vals, nu, kk, s->sel);
        vs_snx_topk(s->vals2, nu, kk, s->sel2);
        J += jaccard(s->sel, s->sel2, nu);
        for (int64_t i = 0; i < nu; i++) out->violated += s->vals2[i] - s->vals[i] > o->violation_tol;
        out->n_constraints += nu;
    }
    out->conformity = J / 2;
    return VS_OK;
}

/* Precision/recall of item k against the planted truth. */
static void truth_scores(const vs_dataset *d, const vs_snx_expl *e, int64_t k, const vs_snx_eval_opts *o, scratch *s,
                         vs_snx_eval *out)
{
    out->precision = out->recall = NAN;
    if (d->kind == VS_DATA_TABULAR) {
        if (!d->group_truth) return;
        int64_t p = d->dim, q = d->n_groups;
        const float *m = e->ms + e->s_off[k], *x = d->X + e->s[k] * p;
        float *a = malloc((size_t)q * sizeof *a), *mx = malloc((size_t)p * sizeof *mx);
        if (a && mx) {
            /* majors ranked by a(m (x) x_s): the importance of the values the query has */
            for (int64_t j = 0; j < p; j++) mx[j] = m[j] * x[j];
            if (snx_group_values(mx, 1, p, d->groups, q, a) == VS_OK) {
                for (int64_t i = 0; i < q; i++) s->sel[i] = d->group_truth[i] != 0;
                vs_snx_precision_recall(a, s->sel, q, o->truth_k, &out->precision, &out->recall);
            }
        }
        free(a);
        free(mx);
        return;
    }
    /* undirected edges of the query graph (and of the reference for local masks), concatenated */
    int64_t tot = 0, n_sides = e->global ? 1 : 2;
    for (int side = 0; side < n_sides; side++) {
        const vs_graph *g = &d->graphs[side ? e->t[k] : e->s[k]];
        if (!g->edge_truth) return;
        tot += g->n_edges;
    }
    float *v = malloc((size_t)(tot ? tot : 1) * sizeof *v);
    uint8_t *tr = malloc((size_t)(tot ? tot : 1));
    int64_t n = 0;
    if (v && tr)
        for (int side = 0; side < n_sides; side++) {
            const vs_graph *g = &d->graphs[side ? e->t[k] : e->s[k]];
            const float *m = side ? e->mt + e->t_off[k] : e->ms + e->s_off[k];
            int64_t nu = und_values(g, m, s->und, v + n);
            for (int64_t ed = g->n_edges - 1; ed >= 0; ed--) tr[n + s->und[ed]] = g->edge_truth[ed] != 0;
            n += nu;
        }
    if (v && tr) vs_snx_precision_recall(v, tr, n, o->truth_k, &out->precision, &out->recall);
    free(v);
    free(tr);
}

/* FA and CF of items [c0, c0 + B) in one batch of predictions each. */
static vs_status fa_cf(const vs_siamese *f, const vs_dataset *d, const vs_snx_expl *e, int64_t c0, int64_t B,
                       const vs_snx_eval_opts *o, scratch *s, vs_snx_eval *out, vs_error *err)
{
    snx_task t;
    vs_status st = snx_task_init(&t, f, d, e->s + c0, e->global ? NULL : e->t + c0, B,
                                 e->global ? SNX_LAYOUT_GLOBAL : SNX_LAYOUT_SEPARATE, false, err);
    if (st != VS_OK) return st;
    float *vars = malloc((size_t)(t.n_vars ? t.n_vars : 1) * sizeof *vars);
    int64_t mx = 0;
    for (int64_t side = 0; side < 2 * B; side++) mx = snx_side_elems(&t, side) > mx ? snx_side_elems(&t, side) : mx;
    float *el = malloc((size_t)(mx ? mx : 1) * sizeof *el);
    if (!vars || !el) st = vs_error_set(err, VS_ERR_NOMEM, "snx evaluate: out of memory");
    for (int cf = 0; cf < 2 && st == VS_OK; cf++) {
        for (int64_t b = 0; b < B; b++) {
            int64_t k = c0 + b;
            for (int side = e->global ? 1 : 0; side < 2; side++) {
                /* global: the masked copy of x is side 1 and its mask is ms */
                bool ref = side == 1 && !e->global;
                const float *mask = present_view(d, o, e->s[k], e->global ? e->s[k] : e->t[k],
                                                 ref ? e->mt + e->t_off[k] : e->ms + e->s_off[k], s->vals2);
                select_mask(d, t.side_item[2 * b + side], mask, o, cf == 1, s, el);
                snx_task_side_vars(&t, 2 * b + side, el, vars);
            }
        }
        vs_scope_begin();
        bool grad = vs_set_grad_enabled(false);
        vs_tensor *l = vs_snx_faithfulness_loss(vs_tensor_from(VS_SHAPE(B), t.p0), snx_task_predict(&t, vs_tensor_from(VS_SHAPE(t.n_vars), vars)));
        if (!l)
            st = vs_error_set(err, VS_ERR_SHAPE, "snx evaluate: %s", vs_last_error()->msg);
        else
            for (int64_t b = 0; b < B; b++) *(cf ? &out[c0 + b].cf : &out[c0 + b].fa) = l->data[b];
        vs_set_grad_enabled(grad);
        vs_scope_end();
    }
    free(vars);
    free(el);
    snx_task_free(&t);
    return st;
}

vs_status vs_snx_evaluate(const vs_siamese *f, const vs_dataset *d, const vs_snx_expl *e, const vs_snx_expl *global,
                          const vs_snx_eval_opts *o, vs_snx_eval *out, vs_error *err)
{
    if (!e || !o || !out || e->n < 1) return vs_error_set(err, VS_ERR_ARG, "snx evaluate: explanation, options and output are required");
    vs_status st = snx_check(f, d, e->s, e->n, "snx evaluate", err);
    if (st == VS_OK && !e->global) st = snx_check(f, d, e->t, e->n, "snx evaluate", err);
    if (st != VS_OK) return st;
    if (o->select && ((d->kind == VS_DATA_TABULAR && o->top_k < 0) || (d->kind == VS_DATA_GRAPHS && !(o->top_frac >= 0 && o->top_frac <= 1))))
        return vs_error_set(err, VS_ERR_ARG, "snx evaluate: top_k must be >= 0 and top_frac in [0, 1]");
    scratch s = {0};
    int64_t *gmap = NULL;
    st = scratch_init(&s, d, err);
    if (st == VS_OK && global && !e->global) {
        gmap = snx_row_map(global, d->n, err);
        st = gmap ? snx_check_global(global, d, gmap, e->s, e->n, "snx evaluate", err) : VS_ERR_NOMEM;
        if (st == VS_OK && d->kind == VS_DATA_GRAPHS) st = snx_check_global(global, d, gmap, e->t, e->n, "snx evaluate", err);
    }
    vs_scope_begin();
    for (int64_t c0 = 0; c0 < e->n && st == VS_OK; c0 += 64) {
        int64_t B = e->n - c0 < 64 ? e->n - c0 : 64;
        st = fa_cf(f, d, e, c0, B, o, &s, out, err);
    }
    vs_scope_end();
    for (int64_t k = 0; k < e->n && st == VS_OK; k++) {
        out[k].conformity = NAN;
        out[k].violated = -1;
        out[k].n_constraints = 0;
        if (gmap && conform(d, e, k, global, gmap, o, &s, &out[k]) != VS_OK)
            st = vs_error_set(err, VS_ERR_NOMEM, "snx evaluate: out of memory");
        truth_scores(d, e, k, o, &s, &out[k]);
    }
    free(gmap);
    scratch_free(&s);
    return st;
}

vs_status vs_snx_sensitivity(const vs_siamese *f, const vs_dataset *d, const vs_snx_expl *e, const vs_snx_eval_opts *base,
                             const double *levels, int n_levels, double *fa, double *cf, vs_error *err)
{
    if (!e || !d || !levels || n_levels < 1 || !fa || !cf) return vs_error_set(err, VS_ERR_ARG, "snx sensitivity: levels and outputs are required");
    vs_snx_eval *ev = malloc((size_t)e->n * sizeof *ev);
    double *v = malloc((size_t)e->n * sizeof *v), sd;
    if (!ev || !v) {
        free(ev);
        free(v);
        return vs_error_set(err, VS_ERR_NOMEM, "snx sensitivity: out of memory");
    }
    vs_status st = VS_OK;
    for (int i = 0; i < n_levels && st == VS_OK; i++) {
        vs_snx_eval_opts o;
        if (base)
            o = *base;
        else
            vs_snx_eval_opts_init(&o, d->kind);
        if (d->kind == VS_DATA_GRAPHS)
            o.top_frac = levels[i];
        else
            o.top_k = (int64_t)llround(levels[i]);
        st = vs_snx_evaluate(f, d, e, NULL, &o, ev, err);
        if (st != VS_OK) break;
        for (int64_t k = 0; k < e->n; k++) v[k] = ev[k].fa;
        vs_mean_std(v, e->n, &fa[i], &sd);
        for (int64_t k = 0; k < e->n; k++) v[k] = ev[k].cf;
        vs_mean_std(v, e->n, &cf[i], &sd);
    }
    free(ev);
    free(v);
    return st;
}
