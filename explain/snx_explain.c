/* snx_explain.c - SNX entry points: stage-1 global masks (Eq. 4), stage-2 local masks by every
 * method of Section IV-A (SNX, SNX-KL, SNX-UC, SNX-DES, SNX-inter, SNX-union, SNX-global, DES,
 * Pick-all, SM, GNNExplainer, PGExplainer, and random masks as the chance level), the all-in-one
 * vs_snx_explain and options (the methods' names are registry entries: snx_methods.c).
 * The optimising methods differ only in the options they hand to solve() below. */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options ------------------------------------------------------------------------------------- */

void vs_snx_opts_init(vs_snx_opts *o, vs_data_kind kind)
{
    memset(o, 0, sizeof *o);
    bool graph = kind == VS_DATA_GRAPHS;
    o->gamma_global = o->gamma_local = graph ? 0.1f : 1e-3f;
    o->lr_global = 0.1f;
    o->global_iters = graph ? 200 : 50;
    o->eps_adjacent = 0.1f;
    o->eta1 = 0.1f;
    o->eta2 = 0.5f;
    o->beta = 1.0f;
    o->pre_iters = graph ? 0 : 50;
    o->max_iters = graph ? 400 : 100;
    o->step = VS_GDA_ADAM;
    o->dual = VS_GDA_DUAL_BALL;
    o->dual_radius = 10.0f;
    o->present_only = true;
    o->init_logit = 0.0f;
    o->violation_tol = 1e-3f;
    o->batch = 64;
    o->gnn_iters = 300;
    o->gnn_lr = 0.1f;
    o->gnn_size = 0.005f;
    o->gnn_ent = 0.0f;
    o->pg_epochs = 30;
    o->pg_lr = 0.003f;
    o->pg_size = 0.05f;
    o->pg_ent = 1.0f;
    o->pg_t0 = 5.0f;
    o->pg_t1 = 2.0f;
    o->pg_hidden = 64;
    o->pg_batch = 16;
    o->des_knn = 5;
    o->des_pool = 2000;
    o->des_iters = 300;
    o->des_lr = 0.05f;
    o->des_l1 = 0.05f;
    o->seed = 1;
}

/* ---- explanation objects ------------------------------------------------------------------------- */

void vs_snx_trace_clear(vs_snx_trace *t) { vs_opt_trace_clear(t); }

void vs_snx_expl_free(vs_snx_expl *e)
{
    if (!e) return;
    free(e->s);
    free(e->t);
    free(e->s_off);
    free(e->t_off);
    free(e->ms);
    free(e->mt);
    vs_snx_trace_clear(&e->trace);
    free(e);
}

int64_t vs_snx_expl_find(const vs_snx_expl *e, int64_t row)
{
    for (int64_t k = 0; e && k < e->n; k++)
        if (e->s[k] == row) return k;
    return -1;
}

static int64_t item_size(const vs_dataset *d, int64_t row)
{
    return d->kind == VS_DATA_GRAPHS ? d->graphs[row].n_edges : d->dim;
}

vs_status snx_expl_new(vs_snx_method method, bool global, const vs_dataset *d, const int64_t *s, const int64_t *tt, int64_t n,
                       vs_snx_expl **out, vs_error *err)
{
    *out = NULL;
    vs_snx_expl *e = calloc(1, sizeof *e);
    size_t nn = (size_t)(n > 0 ? n : 1);
    if (!e) return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory");
    e->method = method;
    e->global = global;
    e->n = n;
    e->s = malloc(nn * sizeof *e->s);
    e->s_off = malloc((nn + 1) * sizeof *e->s_off);
    if (!global) {
        e->t = malloc(nn * sizeof *e->t);
        e->t_off = malloc((nn + 1) * sizeof *e->t_off);
    }
    if (!e->s || !e->s_off || (!global && (!e->t || !e->t_off))) goto nomem;
    e->s_off[0] = 0;
    if (!global) e->t_off[0] = 0;
    for (int64_t k = 0; k < n; k++) {
        e->s[k] = s[k];
        e->s_off[k + 1] = e->s_off[k] + item_size(d, s[k]);
        if (!global) {
            e->t[k] = tt[k];
            e->t_off[k + 1] = e->t_off[k] + item_size(d, tt[k]);
        }
    }
    e->ms = calloc((size_t)(e->s_off[n] ? e->s_off[n] : 1), sizeof *e->ms);
    if (!global) e->mt = calloc((size_t)(e->t_off[n] ? e->t_off[n] : 1), sizeof *e->mt);
    if (!e->ms || (!global && !e->mt)) goto nomem;
    *out = e;
    return VS_OK;
nomem:
    vs_snx_expl_free(e);
    return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for %lld masks", (long long)n);
}

int64_t *snx_row_map(const vs_snx_expl *e, int64_t n_rows, vs_error *err)
{
    int64_t *map = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof *map);
    if (!map) {
        vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory");
        return NULL;
    }
    for (int64_t r = 0; r < n_rows; r++) map[r] = -1;
    for (int64_t k = 0; e && k < e->n; k++)
        if (e->s[k] >= 0 && e->s[k] < n_rows) map[e->s[k]] = k;
    return map;
}

vs_status snx_check(const vs_siamese *f, const vs_dataset *d, const int64_t *rows, int64_t n_rows, const char *who, vs_error *err)
{
    if (!f || !d) return vs_error_set(err, VS_ERR_ARG, "%s: a model and a data set are required", who);
    if (d->kind == VS_DATA_TABULAR) {
        if (!f->embed) return vs_error_set(err, VS_ERR_ARG, "%s: tabular data needs the model's embed()", who);
        if (!d->X || d->dim < 1 || !d->groups || d->n_groups < 1)
            return vs_error_set(err, VS_ERR_ARG, "%s: tabular data set '%s' needs rows and feature groups", who,
                                d->name ? d->name : "?");
    } else if (d->kind == VS_DATA_GRAPHS) {
        if (!f->embed_graph) return vs_error_set(err, VS_ERR_ARG, "%s: graph data needs the model's embed_graph()", who);
        if (!d->graphs) return vs_error_set(err, VS_ERR_ARG, "%s: graph data set without graphs", who);
    } else {
        return vs_error_set(err, VS_ERR_ARG, "%s: SNX explains tabular or graph data, not images", who);
    }
    for (int64_t k = 0; rows && k < n_rows; k++)
        if (rows[k] < 0 || rows[k] >= d->n)
            return vs_error_set(err, VS_ERR_ARG, "%s: row %lld (item %lld) outside the data set's %lld rows", who,
                                (long long)rows[k], (long long)k, (long long)d->n);
    return VS_OK;
}

vs_status snx_check_global(const vs_snx_expl *g, const vs_dataset *d, const int64_t *map, const int64_t *rows, int64_t n,
                           const char *who, vs_error *err)
{
    if (!g || !g->global) return vs_error_set(err, VS_ERR_ARG, "%s: global masks (a global explanation) are required", who);
    for (int64_t k = 0; k < n; k++) {
        int64_t i = map[rows[k]];
        if (i < 0) return vs_error_set(err, VS_ERR_ARG, "%s: no global mask for row %lld", who, (long long)rows[k]);
        if (g->s_off[i + 1] - g->s_off[i] != item_size(d, rows[k]))
            return vs_error_set(err, VS_ERR_ARG, "%s: the global mask of row %lld has %lld values, the row %lld", who,
                                (long long)rows[k], (long long)(g->s_off[i + 1] - g->s_off[i]), (long long)item_size(d, rows[k]));
    }
    return VS_OK;
}

/* ---- the mask optimiser, configured per method ---------------------------------------------------- */

typedef enum combine { COMBINE_QUERY, COMBINE_MIN, COMBINE_MAX } combine;

typedef struct solve_cfg {
    snx_layout layout;
    float gamma, size, ent, beta;
    bool hard;                  /* GNNExplainer: loss against the predicted class (snx_obj.hard) */
    snx_constraint con;
    bool random_init;           /* GNNExplainer: logits ~ N(1, std) */
    bool adam_only;             /* GNNExplainer: plain Adam over the masks (vs_adam_minimize) */
    vs_gda_opts gda;
    const vs_snx_expl *global;  /* stage-1 masks (targets of BOUND and KL) */
    const int64_t *gmap;        /* row -> item of global */
    const int64_t *partner;     /* GNNExplainer: item k's row is masked against partner[k] held unmasked (global layout) */
    combine comb;
} solve_cfg;

/* Target A [n_aux]: tabular a(M) with M = Ms, min(Ms, Mt) or max(Ms, Mt); graphs [Ms; Mt] per edge. */
static vs_status set_target(snx_obj *ob, const solve_cfg *c, vs_error *err)
{
    const snx_task *t = ob->task;
    const vs_snx_expl *g = c->global;
    ob->target = malloc((size_t)(ob->n_aux ? ob->n_aux : 1) * sizeof *ob->target);
    if (!ob->target) return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for targets");
    if (t->graph) {
        for (int64_t side = 0; side < 2 * t->B; side++)
            snx_task_side_vars(t, side, g->ms + g->s_off[c->gmap[t->side_item[side]]], ob->target);
        return VS_OK;
    }
    int64_t p = t->p, B = t->B;
    float *M = malloc((size_t)(B * p) * sizeof *M);
    if (!M) return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for targets");
    for (int64_t b = 0; b < B; b++) {
        const float *ms = g->ms + g->s_off[c->gmap[t->side_item[2 * b]]];
        const float *mt = g->ms + g->s_off[c->gmap[t->side_item[2 * b + 1]]];
        for (int64_t j = 0; j < p; j++)
            M[b * p + j] = c->comb == COMBINE_QUERY ? ms[j] : c->comb == COMBINE_MIN ? fminf(ms[j], mt[j]) : fmaxf(ms[j], mt[j]);
    }
    vs_status st = snx_group_values(M, B, p, t->d->groups, t->d->n_groups, ob->target);
    free(M);
    return st == VS_OK ? VS_OK : vs_error_set(err, st, "snx: %s", vs_last_error()->msg);
}

/* Copy a chunk's trace rows [c0, c0 + B) into the explanation's trace. */
static vs_status merge_trace(vs_snx_trace *all, int64_t n, int64_t c0, const vs_snx_trace *part, vs_error *err)
{
    if (!part->n_iters) return VS_OK;
    int64_t T = part->n_iters;
    if (!all->objective) {
        size_t sz;
        if (!vs_size_mul((size_t)n, (size_t)T, &sz)) return vs_error_set(err, VS_ERR_NOMEM, "snx: traces overflow");
        all->n_blocks = n;
        all->n_iters = T;
        all->objective = calloc(sz, sizeof(float));
        all->grad_primal = calloc(sz, sizeof(float));
        all->grad_dual = calloc(sz, sizeof(float));
        all->violated = calloc(sz, sizeof(float));
        if (!all->objective || !all->grad_primal || !all->grad_dual || !all->violated)
            return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for traces");
    }
    size_t off = (size_t)(c0 * T), sz = (size_t)(part->n_blocks * T) * sizeof(float);
    memcpy(all->objective + off, part->objective, sz);
    memcpy(all->grad_primal + off, part->grad_primal, sz);
    memcpy(all->grad_dual + off, part->grad_dual, sz);
    memcpy(all->violated + off, part->violated, sz);
    return VS_OK;
}

/* Optimise the masks of the items of e (rows or pairs) in chunks of o->batch problems. */
static vs_status solve(const vs_siamese *f, const vs_dataset *d, const solve_cfg *c, const vs_snx_opts *o, vs_snx_expl *e,
                       vs_error *err)
{
    int64_t n = e->n, chunk = o->batch > 0 ? o->batch : 64;
    vs_status st = VS_OK;
    vs_scope_begin();
    for (int64_t c0 = 0; c0 < n && st == VS_OK; c0 += chunk) {
        int64_t B = n - c0 < chunk ? n - c0 : chunk;
        snx_task t;
        snx_obj ob;
        st = c->partner ? snx_task_init(&t, f, d, c->partner + c0, e->s + c0, B, c->layout, true, err)
                        : snx_task_init(&t, f, d, e->s + c0, e->global ? NULL : e->t + c0, B, c->layout, true, err);
        if (st != VS_OK) break;
        st = snx_obj_init(&ob, &t, err);
        if (st != VS_OK) {
            snx_task_free(&t);
            break;
        }
        ob.gamma = c->gamma;
        ob.size = c->size;
        ob.ent = c->ent;
        ob.beta = c->beta;
        ob.hard = c->hard;
        if (st == VS_OK && o->present_only && !t.graph) st = snx_obj_present(&ob, err);
        if (st == VS_OK && c->global) st = set_target(&ob, c, err);
        if (st == VS_OK && c->con == SNX_CON_BOUND && ob.target) {
            ob.con = SNX_CON_BOUND;
            /* aux entries are grouped by block in order */
            int64_t k = 0;
            for (int64_t b = 0; b < B; b++) {
                ob.con_off[b] = k;
                while (k < ob.n_aux && ob.aux_block[k] == b) k++;
            }
            ob.con_off[B] = k;
        } else if (st == VS_OK && c->con == SNX_CON_ADJACENT) {
            st = snx_obj_adjacent(&ob, o->eps_adjacent, err);
        }
        float *theta = st == VS_OK ? malloc((size_t)(t.n_vars ? t.n_vars : 1) * sizeof *theta) : NULL;
        if (st == VS_OK && !theta) st = vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for masks");
        if (st == VS_OK) {
            for (int64_t b = 0; b < B; b++) {
                int64_t v0 = t.var_off[b], v1 = t.var_off[b + 1];
                vs_rng r;
                vs_rng_seed(&r, o->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(o->first_item + c0 + b + 1)));
                /* GNNExplainer: N(1, gain(relu) sqrt(2 / (2 N))), N the nodes of the graph(s) */
                double nodes = 0;
                for (int k = 0; k < 2 && t.graph; k++) nodes += (double)d->graphs[t.side_item[2 * b + k]].n_nodes;
                double sd = sqrt(2.0) * sqrt(2.0 / (2.0 * (nodes > 0 ? nodes : (double)(v1 - v0 > 0 ? v1 - v0 : 1))));
                for (int64_t v = v0; v < v1; v++)
                    theta[v] = c->random_init ? (float)(1.0 + sd * vs_rng_normal(&r)) : o->init_logit;
            }
            vs_gda_problem pb = {.n_vars = t.n_vars, .n_blocks = B, .var_off = t.var_off,
                                 .con_off = ob.con != SNX_CON_NONE ? ob.con_off : NULL,
                                 .objective = snx_obj_value,
                                 .constraints = ob.con != SNX_CON_NONE ? snx_obj_constraints : NULL, .ctx = &ob};
            vs_snx_trace tr = {0};
            st = c->adam_only ? vs_adam_minimize(&pb, c->gda.iters, c->gda.eta1, theta, o->trace ? &tr : NULL, err)
                              : vs_gda_minimize(&pb, &c->gda, theta, o->trace ? &tr : NULL, err);
            if (st == VS_OK && o->trace) st = merge_trace(&e->trace, n, c0, &tr, err);
            vs_snx_trace_clear(&tr);
        }
        if (st == VS_OK) {
            for (int64_t v = 0; v < t.n_vars; v++) theta[v] = (ob.present ? ob.present[v] : 1.0f) / (1.0f + expf(-theta[v]));
            for (int64_t b = 0; b < B; b++) {
                int64_t k = c0 + b;
                if (e->global) {
                    snx_task_side_mask(&t, 2 * b + 1, theta, e->ms + e->s_off[k]);
                } else {
                    snx_task_side_mask(&t, 2 * b, theta, e->ms + e->s_off[k]);
                    snx_task_side_mask(&t, 2 * b + 1, theta, e->mt + e->t_off[k]);
                }
            }
        }
        free(theta);
        snx_obj_free(&ob);
        snx_task_free(&t);
    }
    vs_scope_end();
    return st;
}

/* GNNExplainer on a pair: each graph's edge mask is fitted with the other graph held unmasked
 * (c's global layout with a partner), as GNNExplainer explains one instance; masking both at once
 * lets a cut in one graph be made up for by a cut in the other.  The trace is the query side's. */
static vs_status gnnexplainer(const vs_siamese *f, const vs_dataset *d, solve_cfg *c, const vs_snx_opts *o, const int64_t *s,
                              const int64_t *t, vs_snx_expl *e, vs_error *err)
{
    int64_t n = e->n;
    vs_snx_expl *side[2] = {NULL, NULL};
    c->layout = SNX_LAYOUT_GLOBAL;
    vs_status st = VS_OK;
    for (int k = 0; k < 2 && st == VS_OK; k++) {
        c->partner = k == 0 ? t : s;
        st = snx_expl_new(e->method, true, d, k == 0 ? s : t, NULL, n, &side[k], err);
        if (st == VS_OK) st = solve(f, d, c, o, side[k], err);
    }
    if (st == VS_OK) {
        memcpy(e->ms, side[0]->ms, (size_t)e->s_off[n] * sizeof *e->ms);
        memcpy(e->mt, side[1]->ms, (size_t)e->t_off[n] * sizeof *e->mt);
        vs_snx_trace tr = e->trace;
        e->trace = side[0]->trace;
        side[0]->trace = tr;
    }
    vs_snx_expl_free(side[0]);
    vs_snx_expl_free(side[1]);
    return st;
}

/* ---- saliency maps (SM) ----------------------------------------------------------------------------- */

/* l_SN = BCE(y, (1 + cos) / 2); the map is |d l_SN / d input| scaled to max 1 per pair. */
static void normalise(float *a, int64_t n, float *b, int64_t nb)
{
    float mx = 0;
    for (int64_t i = 0; i < n; i++) mx = fmaxf(mx, a[i]);
    for (int64_t i = 0; i < nb; i++) mx = fmaxf(mx, b[i]);
    if (mx > 0) {
        for (int64_t i = 0; i < n; i++) a[i] /= mx;
        for (int64_t i = 0; i < nb; i++) b[i] /= mx;
    }
}

static vs_tensor *sn_loss(vs_tensor *es, vs_tensor *et, const float *y, int64_t B)
{
    vs_tensor *p = vs_mul_scalar(vs_add_scalar(vs_cosine_similarity(es, et, 1, 1e-8f), 1.0f), 0.5f);
    return vs_sum(vs_snx_faithfulness_loss(vs_tensor_from(VS_SHAPE(B), y), p), VS_ALL_AXES, false);
}

static vs_status saliency(const vs_siamese *f, const vs_dataset *d, const vs_pairs *pairs, bool present, vs_snx_expl *e,
                          vs_error *err)
{
    vs_status st = VS_OK;
    int64_t n = e->n;
    if (!pairs->label) return vs_error_set(err, VS_ERR_ARG, "snx sm: the pairs carry no labels");
    if (d->kind == VS_DATA_TABULAR) {
        int64_t p = d->dim, chunk = 256;
        for (int64_t c0 = 0; c0 < n && st == VS_OK; c0 += chunk) {
            int64_t B = n - c0 < chunk ? n - c0 : chunk;
            vs_scope_begin();
            vs_tensor *xs = vs_tensor_new(VS_SHAPE(B, p)), *xt = vs_tensor_new(VS_SHAPE(B, p));
            float *y = malloc((size_t)B * sizeof *y);
            vs_tensor *g = NULL, *loss = NULL;
            if (xs && xt && y) {
                for (int64_t b = 0; b < B; b++) {
                    memcpy(xs->data + b * p, d->X + e->s[c0 + b] * p, (size_t)p * sizeof(float));
                    memcpy(xt->data + b * p, d->X + e->t[c0 + b] * p, (size_t)p * sizeof(float));
                    y[b] = (float)(pairs->label[c0 + b] != 0);
                }
                vs_set_requires_grad(xs, true);
                vs_tensor *E = f->embed(f->ctx, vs_concat(2, (vs_tensor *[]){xs, xt}, 0));
                loss = sn_loss(vs_slice(E, 0, 0, B), vs_slice(E, 0, B, 2 * B), y, B);
            }
            if (!loss || vs_grad(1, &loss, NULL, 1, &xs, &g, false) != VS_OK)
                st = vs_error_set(err, VS_ERR_SHAPE, "snx sm: %s", y ? vs_last_error()->msg : "out of memory");
            else
                for (int64_t b = 0; b < B; b++) {
                    float *ms = e->ms + e->s_off[c0 + b], *mt = e->mt + e->t_off[c0 + b];
                    const float *x0 = d->X + e->s[c0 + b] * p, *x1 = d->X + e->t[c0 + b] * p;
                    for (int64_t j = 0; j < p; j++) ms[j] = !present || x0[j] != 0 || x1[j] != 0 ? fabsf(g->data[b * p + j]) : 0.0f;
                    normalise(ms, p, NULL, 0);
                    memcpy(mt, ms, (size_t)p * sizeof *mt);
                }
            free(y);
            vs_scope_end();
        }
        return st;
    }
    for (int64_t k = 0; k < n && st == VS_OK; k++) {
        const vs_graph *gs = &d->graphs[e->s[k]], *gt = &d->graphs[e->t[k]];
        float y = (float)(pairs->label[k] != 0);
        vs_scope_begin();
        vs_tensor *w[2] = {vs_tensor_full(VS_SHAPE(gs->n_edges), 1.0f), vs_tensor_full(VS_SHAPE(gt->n_edges), 1.0f)};
        vs_tensor *g[2] = {NULL, NULL};
        vs_set_requires_grad(w[0], true);
        vs_set_requires_grad(w[1], true);
        vs_tensor *loss = sn_loss(f->embed_graph(f->ctx, gs, gs->n_edges ? w[0] : NULL),
                                  f->embed_graph(f->ctx, gt, gt->n_edges ? w[1] : NULL), &y, 1);
        if (!loss || vs_grad(1, &loss, NULL, 2, w, g, false) != VS_OK) {
            st = vs_error_set(err, VS_ERR_SHAPE, "snx sm: %s", vs_last_error()->msg);
        } else {
            const vs_graph *gg[2] = {gs, gt};
            float *out[2] = {e->ms + e->s_off[k], e->mt + e->t_off[k]};
            for (int s = 0; s < 2; s++)
                for (int64_t i = 0; i < gg[s]->n_edges; i++) {
                    int64_t r = gg[s]->rev ? gg[s]->rev[i] : i;
                    out[s][i] = 0.5f * (fabsf(g[s]->data[i]) + fabsf(g[s]->data[r]));
                }
            normalise(out[0], gs->n_edges, out[1], gt->n_edges);
        }
        vs_scope_end();
    }
    return st;
}

/* ---- chance level ----------------------------------------------------------------------------------- */

/* Mask values U(0, 1), item k drawn from seed ^ k: tabular one mask (x) 1[x_s or x_t] with
 * present_only (global: 1[x]), shared by both sides; graphs one value per undirected edge of each graph. */
static void random_masks(const vs_dataset *d, const vs_snx_opts *o, vs_snx_expl *e)
{
    for (int64_t k = 0; k < e->n; k++) {
        vs_rng r;
        vs_rng_seed(&r, o->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(o->first_item + k + 1)));
        if (d->kind == VS_DATA_TABULAR) {
            const float *xs = d->X + e->s[k] * d->dim, *xt = d->X + (e->global ? e->s[k] : e->t[k]) * d->dim;
            float *ms = e->ms + e->s_off[k];
            for (int64_t j = 0; j < d->dim; j++) {
                float u = vs_rng_uniformf(&r);
                ms[j] = !o->present_only || xs[j] != 0 || xt[j] != 0 ? u : 0.0f;
            }
            if (!e->global) memcpy(e->mt + e->t_off[k], ms, (size_t)d->dim * sizeof *ms);
            continue;
        }
        for (int side = 0; side < (e->global ? 1 : 2); side++) {
            const vs_graph *g = &d->graphs[side ? e->t[k] : e->s[k]];
            float *m = side ? e->mt + e->t_off[k] : e->ms + e->s_off[k];
            for (int64_t i = 0; i < g->n_edges; i++) {
                int64_t rv = g->rev ? g->rev[i] : i;
                m[i] = rv >= 0 && rv < i ? m[rv] : vs_rng_uniformf(&r);
            }
        }
    }
}

/* ---- entry points ------------------------------------------------------------------------------------ */

vs_status vs_snx_global(const vs_siamese *f, const vs_dataset *d, const int64_t *rows, int64_t n_rows, vs_snx_method method,
                        const vs_snx_des *des, const vs_snx_opts *o, vs_snx_expl **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "snx global: out is NULL");
    *out = NULL;
    vs_status st = snx_check(f, d, rows, n_rows, "snx global", err);
    if (st != VS_OK) return st;
    if (!o) return vs_error_set(err, VS_ERR_ARG, "snx global: options are required");
    if (method != VS_SNX_GLOBAL && method != VS_SNX_DES && method != VS_SNX_PICK_ALL && method != VS_SNX_RANDOM)
        return vs_error_set(err, VS_ERR_ARG, "snx global: %s gives no global masks (use snx_global, des, pick_all or random)",
                            vs_snx_method_name(method) ? vs_snx_method_name(method) : "?");
    if (method == VS_SNX_DES && (d->kind != VS_DATA_TABULAR || !des || des->p != d->dim))
        return vs_error_set(err, VS_ERR_ARG, "snx global: DES needs tabular data and a DES selector fitted on it");
    int64_t n = rows ? n_rows : d->n, *all = NULL;
    if (n < 1) return vs_error_set(err, VS_ERR_ARG, "snx global: no rows to explain");
    if (!rows) {
        all = malloc((size_t)n * sizeof *all);
        if (!all) return vs_error_set(err, VS_ERR_NOMEM, "snx global: out of memory");
        for (int64_t k = 0; k < n; k++) all[k] = k;
        rows = all;
    }
    vs_snx_expl *e = NULL;
    st = snx_expl_new(method, true, d, rows, NULL, n, &e, err);
    free(all);
    if (st != VS_OK) return st;
    if (method == VS_SNX_PICK_ALL) {
        for (int64_t i = 0; i < e->s_off[n]; i++) e->ms[i] = 1.0f;
    } else if (method == VS_SNX_RANDOM) {
        random_masks(d, o, e);
    } else if (method == VS_SNX_DES) {
        for (int64_t k = 0; k < n; k++)
            for (int64_t j = 0; j < d->dim; j++)
                e->ms[e->s_off[k] + j] = !o->present_only || d->X[e->s[k] * d->dim + j] != 0 ? des->gate[j] : 0.0f;
    } else {
        bool graph = d->kind == VS_DATA_GRAPHS;
        solve_cfg c = {.layout = SNX_LAYOUT_GLOBAL, .gamma = o->gamma_global, .con = graph ? SNX_CON_ADJACENT : SNX_CON_NONE};
        vs_gda_opts_init(&c.gda);
        c.gda.pre_iters = 0;
        c.gda.iters = o->global_iters;
        c.gda.eta1 = o->lr_global;
        c.gda.eta2 = o->eta2;
        c.gda.step = o->step;
        c.gda.dual = graph ? o->dual : VS_GDA_DUAL_NONE;
        c.gda.radius = o->dual_radius;
        c.gda.violation_tol = o->violation_tol;
        st = solve(f, d, &c, o, e, err);
    }
    if (st != VS_OK) {
        vs_snx_expl_free(e);
        return st;
    }
    *out = e;
    return VS_OK;
}

vs_status vs_snx_local(const vs_siamese *f, const vs_dataset *d, const vs_pairs *pairs, vs_snx_method method,
                       const vs_snx_expl *global, const vs_snx_pg *pg, const vs_snx_opts *o, vs_snx_expl **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "snx local: out is NULL");
    *out = NULL;
    if (!pairs || !pairs->idx || pairs->n < 1 || !o) return vs_error_set(err, VS_ERR_ARG, "snx local: pairs and options are required");
    vs_status st = snx_check(f, d, pairs->idx, 2 * pairs->n, "snx local", err);
    if (st != VS_OK) return st;
    if ((int)method < 0 || method >= VS_SNX_METHOD_COUNT) return vs_error_set(err, VS_ERR_ARG, "snx local: unknown method %d", (int)method);
    bool graph = d->kind == VS_DATA_GRAPHS;
    const char *name = vs_snx_method_name(method);
    if (graph && (method == VS_SNX_DES || method == VS_SNX_DES_GDA || method == VS_SNX_INTER || method == VS_SNX_UNION))
        return vs_error_set(err, VS_ERR_ARG, "snx local: %s is defined for tabular data only", name);
    if (!graph && (method == VS_SNX_GNNEXPLAINER || method == VS_SNX_PGEXPLAINER))
        return vs_error_set(err, VS_ERR_ARG, "snx local: %s is defined for graph data only", name);
    if (method == VS_SNX_PGEXPLAINER && !pg) return vs_error_set(err, VS_ERR_ARG, "snx local: pgexplainer needs a trained generator");

    int64_t n = pairs->n, *s = malloc((size_t)n * sizeof *s), *t = malloc((size_t)n * sizeof *t), *gmap = NULL;
    vs_snx_expl *e = NULL;
    if (!s || !t) {
        st = vs_error_set(err, VS_ERR_NOMEM, "snx local: out of memory");
        goto out;
    }
    for (int64_t k = 0; k < n; k++) {
        s[k] = pairs->idx[2 * k];
        t[k] = pairs->idx[2 * k + 1];
    }
    if (vs_snx_method_global(method) >= 0) {
        gmap = snx_row_map(global, d->n, err);
        if (!gmap) {
            st = VS_ERR_NOMEM;
            goto out;
        }
        st = snx_check_global(global, d, gmap, s, n, name, err);
        if (st == VS_OK && (graph || method == VS_SNX_INTER || method == VS_SNX_UNION)) st = snx_check_global(global, d, gmap, t, n, name, err);
        if (st != VS_OK) goto out;
    }
    st = snx_expl_new(method, false, d, s, t, n, &e, err);
    if (st != VS_OK) goto out;

    switch (method) {
    case VS_SNX_PICK_ALL:
        for (int64_t i = 0; i < e->s_off[n]; i++) e->ms[i] = 1.0f;
        for (int64_t i = 0; i < e->t_off[n]; i++) e->mt[i] = 1.0f;
        break;
    case VS_SNX_DES:
    case VS_SNX_GLOBAL:
        /* the query's global mask (tabular: for both sides); graphs: each graph's own */
        for (int64_t k = 0; k < n; k++) {
            const float *Ms = global->ms + global->s_off[gmap[s[k]]];
            memcpy(e->ms + e->s_off[k], Ms, (size_t)(e->s_off[k + 1] - e->s_off[k]) * sizeof(float));
            const float *Mt = graph ? global->ms + global->s_off[gmap[t[k]]] : Ms;
            memcpy(e->mt + e->t_off[k], Mt, (size_t)(e->t_off[k + 1] - e->t_off[k]) * sizeof(float));
        }
        break;
    case VS_SNX_SM: st = saliency(f, d, pairs, o->present_only, e, err); break;
    case VS_SNX_RANDOM: random_masks(d, o, e); break;
    case VS_SNX_PGEXPLAINER: st = snx_pg_masks(pg, f, d, e, err); break;
    default: {
        solve_cfg c = {.layout = graph ? SNX_LAYOUT_SEPARATE : SNX_LAYOUT_SHARED, .gamma = o->gamma_local, .con = SNX_CON_NONE,
                       .global = vs_snx_method_global(method) >= 0 ? global : NULL, .gmap = gmap, .comb = COMBINE_QUERY};
        vs_gda_opts_init(&c.gda);
        c.gda.pre_iters = o->pre_iters;
        c.gda.iters = o->max_iters;
        c.gda.eta1 = o->eta1;
        c.gda.eta2 = o->eta2;
        c.gda.step = o->step;
        c.gda.dual = o->dual;
        c.gda.radius = o->dual_radius;
        c.gda.violation_tol = o->violation_tol;
        if (method == VS_SNX_INTER) c.comb = COMBINE_MIN;
        if (method == VS_SNX_UNION) c.comb = COMBINE_MAX;
        if (method == VS_SNX_UC) c.gda.dual = VS_GDA_DUAL_NONE;
        if (method == VS_SNX_KL) {
            /* Eq. 9: the bounds only enter as beta KL; they are still evaluated for the trace */
            c.beta = o->beta;
            c.con = SNX_CON_BOUND;
            c.gda.dual = VS_GDA_DUAL_NONE;
        }
        if (method == VS_SNX_GDA || method == VS_SNX_DES_GDA || method == VS_SNX_INTER || method == VS_SNX_UNION) c.con = SNX_CON_BOUND;
        if (method == VS_SNX_GNNEXPLAINER) {
            c.gamma = 0;
            c.hard = true;
            c.size = o->gnn_size;
            c.ent = o->gnn_ent;
            c.random_init = true;
            c.adam_only = true;
            c.gda.iters = o->gnn_iters;
            c.gda.eta1 = o->gnn_lr;
            st = gnnexplainer(f, d, &c, o, s, t, e, err);
            break;
        }
        st = solve(f, d, &c, o, e, err);
    }
    }
out:
    free(s);
    free(t);
    free(gmap);
    if (st != VS_OK) {
        vs_snx_expl_free(e);
        return st;
    }
    *out = e;
    return VS_OK;
}

vs_status vs_snx_explain(const vs_siamese *f, const vs_dataset *d, const int64_t *train_rows, int64_t n_train,
                         const vs_pairs *train_pairs, const vs_pairs *test_pairs, vs_snx_method method, const vs_snx_opts *o,
                         vs_snx_expl **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "snx explain: out is NULL");
    *out = NULL;
    if (!test_pairs || test_pairs->n < 1 || !d || !o) return vs_error_set(err, VS_ERR_ARG, "snx explain: data, options and test pairs are required");
    vs_snx_des *des = NULL;
    vs_snx_pg *pg = NULL;
    vs_snx_expl *global = NULL;
    vs_status st = VS_OK;
    int need = vs_snx_method_global(method);
    if (need == VS_SNX_DES) st = vs_snx_des_fit(d, train_rows, n_train, o, &des, err);
    if (st == VS_OK && method == VS_SNX_PGEXPLAINER) st = vs_snx_pg_train(f, d, train_pairs, o, &pg, err);
    if (st == VS_OK && need >= 0) {
        /* global masks of the distinct rows of the test pairs */
        uint8_t *seen = calloc((size_t)(d->n > 0 ? d->n : 1), 1);
        int64_t *rows = malloc((size_t)(2 * test_pairs->n) * sizeof *rows), nr = 0;
        if (!seen || !rows) {
            st = vs_error_set(err, VS_ERR_NOMEM, "snx explain: out of memory");
        } else {
            for (int64_t k = 0; k < 2 * test_pairs->n; k++) {
                int64_t r = test_pairs->idx[k];
                if (r >= 0 && r < d->n && !seen[r]) {
                    seen[r] = 1;
                    rows[nr++] = r;
                }
            }
            st = vs_snx_global(f, d, rows, nr, (vs_snx_method)need, des, o, &global, err);
        }
        free(seen);
        free(rows);
    }
    if (st == VS_OK) st = vs_snx_local(f, d, test_pairs, method, global, pg, o, out, err);
    vs_snx_des_free(des);
    vs_snx_pg_free(pg);
    vs_snx_expl_free(global);
    return st;
}
