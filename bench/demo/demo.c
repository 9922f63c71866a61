/* bench/demo/demo.c - the demo as a library call: a Siamese MLP on synthetic credit applicants and a
 * Siamese GCN on synthetic molecule-like graphs (both with planted ground truth), one query explained
 * against two references with SNX-global and SNX (and saliency maps), scored against the truth, and
 * a classifier explained one-vs-one with three attribution methods; returned as a vs_report
 * (tables, a feature-importance bar chart, the query graph drawn with its masks, GDA traces). */
#include "bench/snx/snx_results.h"
#include "versus/arch.h"
#include "versus/experiment.h"
#include "versus/explain.h"
#include "versus/method.h"
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/snx.h"
#include "versus/synth.h"
#include "versus/train.h"
#include "versus/versus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One part of the demo: a data set, its trained Siamese model, the split, and the explanations of a
 * query against a same-class and a different-class reference. */
typedef struct demo_part {
    const char *title;
    vs_dataset *d;
    vs_module *m;
    vs_siamese_module sm;
    vs_siamese f;
    vs_train_split sp;
    double pair_acc;
    int64_t q, ref[2];          /* data rows */
    vs_snx_expl *glob, *loc;    /* global masks of q, ref[0], ref[1]; local masks of (q, ref[k]) */
    vs_snx_eval ev_loc[2], ev_glob[3], ev_sm[2];
    vs_snx_expl *sm_loc;        /* saliency-map baseline for the same pairs */
} demo_part;

static void part_free(demo_part *p)
{
    vs_snx_expl_free(p->glob);
    vs_snx_expl_free(p->loc);
    vs_snx_expl_free(p->sm_loc);
    vs_train_split_clear(&p->sp);
    vs_module_free(p->m);
    vs_dataset_free(p->d);
}

static vs_status train_part(demo_part *p, int64_t epochs, float lr, uint64_t seed, FILE *progress, vs_error *e)
{
    vs_error err;
    vs_train_opts to;
    vs_train_opts_init(&to);
    to.epochs = epochs;
    to.seed = seed;
    to.optim.lr = lr;
    to.progress = progress;
    vs_train_result res = {0};
    if (vs_train(p->m, p->d, &to, &res, &err) != VS_OK) return vs_error_set(e, err.code, "%s: %s", p->title, err.msg);
    p->pair_acc = vs_train_result_get(&res, "test_accuracy");
    vs_train_result_clear(&res);
    if (vs_train_split_make(p->d, NULL, seed, to.train_frac, true, &p->sp, &err) != VS_OK) return vs_error_set(e, err.code, "%s", err.msg);
    /* query: the first test row of the last class (graphs: a positive, which holds the planted motif);
     * references: the next test rows of the same and of another class */
    p->q = p->sp.test[0];
    for (int64_t i = 0; i < p->sp.n_test; i++)
        if (p->d->y[p->sp.test[i]] == p->d->n_classes - 1) {
            p->q = p->sp.test[i];
            break;
        }
    p->ref[0] = p->ref[1] = -1;
    for (int64_t i = 0; i < p->sp.n_test; i++) {
        int64_t r = p->sp.test[i];
        if (r == p->q) continue;
        int k = p->d->y[r] == p->d->y[p->q] ? 0 : 1;
        if (p->ref[k] < 0) p->ref[k] = r;
    }
    if (p->ref[0] < 0 || p->ref[1] < 0) return vs_error_set(e, VS_ERR_FORMAT, "%s: the test portion lacks a reference of each kind", p->title);
    return VS_OK;
}

static vs_status explain_part(demo_part *p, vs_error *e)
{
    vs_error err;
    vs_snx_opts o;
    vs_snx_opts_init(&o, p->d->kind);
    o.trace = true;
    if (p->d->kind == VS_DATA_TABULAR) o.gamma_global = o.gamma_local = 0.01f;
    p->sm = (vs_siamese_module){p->m, p->d->n_node_features};
    p->f = vs_siamese_from_module(&p->sm);
    int64_t rows[3] = {p->q, p->ref[0], p->ref[1]};
    int64_t idx[4] = {p->q, p->ref[0], p->q, p->ref[1]};
    int64_t lab[2] = {1, 0};
    vs_pairs pairs = {2, idx, lab};
    vs_snx_eval_opts eo;
    vs_snx_eval_opts_init(&eo, p->d->kind);
    if (p->d->kind == VS_DATA_TABULAR) eo.top_k = 5;
    if (vs_snx_global(&p->f, p->d, rows, 3, VS_SNX_GLOBAL, NULL, &o, &p->glob, &err) != VS_OK ||
        vs_snx_local(&p->f, p->d, &pairs, VS_SNX_GDA, p->glob, NULL, &o, &p->loc, &err) != VS_OK ||
        vs_snx_local(&p->f, p->d, &pairs, VS_SNX_SM, NULL, NULL, &o, &p->sm_loc, &err) != VS_OK ||
        vs_snx_evaluate(&p->f, p->d, p->loc, p->glob, &eo, p->ev_loc, &err) != VS_OK ||
        vs_snx_evaluate(&p->f, p->d, p->sm_loc, p->glob, &eo, p->ev_sm, &err) != VS_OK ||
        vs_snx_evaluate(&p->f, p->d, p->glob, NULL, &eo, p->ev_glob, &err) != VS_OK)
        return vs_error_set(e, err.code, "%s: %s", p->title, err.msg);
    return VS_OK;
}


/* a(m) of a tabular mask over the query's present features: per major feature, 1 - prod(1 - m_j x_j). */
static void major_importance(const vs_dataset *d, int64_t row, const float *m, float *out)
{
    for (int64_t g = 0; g < d->n_groups; g++) {
        double keep = 1;
        for (int64_t j = d->groups[g].first; j < d->groups[g].first + d->groups[g].count; j++)
            keep *= 1.0 - (double)m[j] * d->X[row * d->dim + j];
        out[g] = (float)(1.0 - keep);
    }
}

/* The mask of part p's query: k = 0 its SNX-global mask, k = 1, 2 its SNX mask against reference k-1. */
static const float *query_mask(const demo_part *p, int k)
{
    return k == 0 ? p->glob->ms + p->glob->s_off[vs_snx_expl_find(p->glob, p->q)] : p->loc->ms + p->loc->s_off[k - 1];
}

static const char *const mask_names[3] = {"SNX-global", "SNX vs same class", "SNX vs other class"};

/* The scores table of one part. */
static void part_table(const demo_part *p, vs_report *r)
{
    const vs_dataset *d = p->d;
    const char *cls = d->class_names ? d->class_names[d->y[p->q]] : "?";
    vs_report_heading(r, 2, "%s", p->title);
    vs_report_paragraph(r, "Siamese model, test pair accuracy %.3f.  Query row %lld (class %s); references row %lld (same class) and "
                           "row %lld (other class).",
                        p->pair_acc, (long long)p->q, cls, (long long)p->ref[0], (long long)p->ref[1]);
    const char *head[7] = {"explanation", "faithfulness (Eq. 1)", "counterfactual (Eq. 2)", "conformity", "violated constraints",
                           "precision vs planted truth", "recall"};
    const vs_better better[7] = {VS_BETTER_NONE, VS_BETTER_LOWER, VS_BETTER_HIGHER, VS_BETTER_HIGHER, VS_BETTER_LOWER,
                                 VS_BETTER_HIGHER, VS_BETTER_HIGHER};
    vs_report_table *t = vs_report_table_new(r, NULL, 7, head, better);
    const char *names[5] = {"SNX-global (query)", "SNX, same-class reference", "SNX, other-class reference", "SM, same-class reference",
                            "SM, other-class reference"};
    const vs_snx_eval *evs[5] = {&p->ev_glob[0], &p->ev_loc[0], &p->ev_loc[1], &p->ev_sm[0], &p->ev_sm[1]};
    for (int k = 0; t && k < 5; k++) {
        const vs_snx_eval *e = evs[k];
        int row = vs_report_table_row(t);
        if (row < 0) return;
        vs_report_text(t, row, 0, names[k]);
        vs_report_number(t, row, 1, e->fa, NAN, 3);
        vs_report_number(t, row, 2, e->cf, NAN, 3);
        if (k == 0) vs_report_missing(t, row, 3, "a global mask is the reference of conformity");
        else vs_report_number(t, row, 3, e->conformity, NAN, 3);
        if (e->violated < 0) vs_report_missing(t, row, 4, "no constraints: a global mask bounds the local ones");
        else vs_report_number(t, row, 4, (double)e->violated, NAN, 0);
        vs_report_number(t, row, 5, e->precision, NAN, 3);
        vs_report_number(t, row, 6, e->recall, NAN, 3);
    }
}

/* Figures: tabular major-feature importances (global vs the two local masks) or the query graph with
 * its edge masks, and the GDA convergence traces (Figs. 5 and 6 of the paper). */
static void part_figures(const demo_part *p, const char *stem, vs_report *r)
{
    const vs_dataset *d = p->d;
    char name[64];
    snprintf(name, sizeof name, "%s_masks", stem);
    if (d->kind == VS_DATA_TABULAR) {
        vs_report_figure *f = vs_report_figure_new(
            r, VS_FIGURE_BAR, name, "Query: importance of each major feature a(m)", "major feature", "importance a(m)",
            "How much each major feature of the query matters under its SNX-global mask and its two local SNX masks (a(m) = 1 - "
            "prod(1 - m x) over the feature's one-hot columns).  The planted salient features (names ending in *) should stand out; "
            "the local masks stay below the global one, which bounds them.");
        float *v = malloc((size_t)d->n_groups * sizeof *v);
        char **labels = calloc((size_t)d->n_groups, sizeof *labels);
        for (int64_t g = 0; labels && g < d->n_groups; g++)
            if ((labels[g] = malloc(strlen(d->groups[g].name) + 2)))
                sprintf(labels[g], "%s%s", d->groups[g].name, d->group_truth && d->group_truth[g] ? "*" : "");
        for (int k = 0; f && v && k < 3; k++) {
            major_importance(d, p->q, query_mask(p, k), v);
            vs_report_series(f, mask_names[k], (size_t)d->n_groups, NULL, v, NULL);
        }
        bool ok = labels != NULL;
        for (int64_t g = 0; ok && g < d->n_groups; g++) ok = labels[g] != NULL;
        if (f && ok) vs_report_categories(f, (size_t)d->n_groups, (const char *const *)labels);
        else if (f) f->owner->oom = true;
        for (int64_t g = 0; labels && g < d->n_groups; g++) free(labels[g]);
        free(labels);
        free(v);
    } else {
        const vs_graph *g = &d->graphs[p->q];
        vs_report_figure *f = vs_report_figure_new(
            r, VS_FIGURE_GRAPH, name, "Query graph: edge masks", NULL, NULL,
            "The query graph drawn three times, with its SNX-global mask and its SNX masks against the same-class and the "
            "other-class reference: thicker, darker edges weigh more (mean of both directions).  The vermillion halo marks the "
            "planted nitro-ring motif, which a faithful explanation should weigh highest.");
        const float *masks[3] = {query_mask(p, 0), query_mask(p, 1), query_mask(p, 2)};
        if (f && vs_snx_graph_figure(f, g, 3, masks, mask_names) != VS_OK) f->owner->oom = true;
    }

    /* GDA traces of the two local problems */
    const vs_snx_trace *t = &p->loc->trace;
    if (t->n_iters <= 0) return;
    snprintf(name, sizeof name, "%s_gda", stem);
    vs_report_figure *g1 = vs_report_figure_new(
        r, VS_FIGURE_LINE, name, "GDA convergence (Fig. 5)", "iteration", "gradient norm",
        "Gradient norms of SNX's two local problems per iteration of gradient descent-ascent (Fig. 5): |dL/dm| should fall "
        "towards 0 as the masks settle; |dL/dlambda| is the constraint function over every bound, so it settles at their slack.");
    snprintf(name, sizeof name, "%s_violated", stem);
    vs_report_figure *g2 = vs_report_figure_new(
        r, VS_FIGURE_LINE, name, "Violated constraints (Fig. 6)", "iteration", "fraction violated",
        "Fraction of the constraints a(m) <= a(M) broken by each local mask per iteration (Fig. 6): the ascent on the multipliers "
        "should bring it to 0.");
    float *xs = malloc((size_t)t->n_iters * sizeof *xs);
    for (int64_t i = 0; xs && i < t->n_iters; i++) xs[i] = (float)i;
    const char *who[2] = {"same class", "other class"};
    for (int64_t b = 0; xs && b < t->n_blocks && b < 2; b++) {
        char s[64];
        snprintf(s, sizeof s, "|dL/dm|, %s", who[b]);
        vs_report_series(g1, s, (size_t)t->n_iters, xs, t->grad_primal + b * t->n_iters, NULL);
        snprintf(s, sizeof s, "|dL/dlambda|, %s", who[b]);
        vs_report_series(g1, s, (size_t)t->n_iters, xs, t->grad_dual + b * t->n_iters, NULL);
        vs_report_series(g2, who[b], (size_t)t->n_iters, xs, t->violated + b * t->n_iters, NULL);
    }
    if (!xs) r->oom = true;
    free(xs);
}

/* The query's three most important major features under its SNX mask against the other-class reference. */
static void top_majors(const demo_part *p, vs_report *r)
{
    float *imp = malloc((size_t)p->d->n_groups * sizeof *imp);
    if (!imp) return;
    major_importance(p->d, p->q, query_mask(p, 2), imp);
    char buf[400];
    int k = 0;
    for (int i = 0; i < 3; i++) {
        int64_t best = -1;
        for (int64_t g = 0; g < p->d->n_groups; g++)
            if (imp[g] >= 0 && (best < 0 || imp[g] > imp[best])) best = g;
        if (best < 0) break;
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s `%s`%s (%.2f)", i ? "," : "", p->d->groups[best].name,
                      p->d->group_truth && p->d->group_truth[best] ? " (planted)" : "", imp[best]);
        imp[best] = -1;
    }
    vs_report_paragraph(r, "The query's three most important major features under SNX against the other-class reference:%s.", buf);
    free(imp);
}

/* ---- part 3: one-vs-one attributions of a classifier ---------------------------------------------- */

/* A two-layer tanh network on a planted problem: the class is decided by features 0 and 1 only. */
enum { DEMO_N = 512, DEMO_D = 8, DEMO_H = 16 };

typedef struct demo_net {
    vs_tensor *w1, *b1, *w2, *b2;
} demo_net;

static vs_tensor *demo_forward(void *ctx, vs_tensor *x)
{
    demo_net *n = ctx;
    return vs_linear(vs_tanh(vs_linear(x, n->w1, n->b1)), n->w2, n->b2);
}

static vs_status one_vs_one(uint64_t seed, vs_report *r, vs_error *err)
{
    vs_rng g;
    vs_rng_seed(&g, seed);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(DEMO_N, DEMO_D), &g, 0, 1);
    int64_t y[DEMO_N];
    for (int i = 0; i < DEMO_N; i++) y[i] = x->data[i * DEMO_D] + x->data[i * DEMO_D + 1] > 0;
    demo_net net = {vs_tensor_randn(VS_SHAPE(DEMO_H, DEMO_D), &g, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(DEMO_H)),
                    vs_tensor_randn(VS_SHAPE(2, DEMO_H), &g, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(2))};
    vs_tensor *params[4] = {net.w1, net.b1, net.w2, net.b2};
    for (int i = 0; i < 4; i++) vs_set_requires_grad(params[i], true);
    for (int step = 0; step < 300; step++) {
        vs_scope_begin();
        vs_tensor *l = vs_cross_entropy(demo_forward(&net, x), y);
        for (int i = 0; i < 4; i++) vs_zero_grad(params[i]);
        vs_backward(l, NULL, false);
        for (int i = 0; i < 4; i++)
            for (int64_t k = 0; k < params[i]->size; k++) params[i]->data[k] -= 0.5f * params[i]->grad->data[k];
        vs_scope_end();
    }
    for (int i = 0; i < 4; i++) vs_zero_grad(params[i]);
    vs_model_fn m = {.forward = demo_forward, .ctx = &net};
    vs_tensor *q = vs_tensor_from(VS_SHAPE(1, DEMO_D), (float[]){1.2f, 0.9f, -1.5f, 0.3f, 2.0f, -0.7f, 0.1f, 1.1f});
    vs_report_heading(r, 2, "One-vs-one attributions of a classifier");
    vs_report_paragraph(r, "A two-layer network learns label = [x0 + x1 > 0] from 8 features; why class 1 and not class 0 for "
                           "x = [1.2 0.9 -1.5 0.3 2.0 -0.7 0.1 1.1]?  Each method attributes S_1 - S_0 to the features: the share on "
                           "x0 and x1 should be near 100%%, and the completeness gap (sum of attributions minus the score difference "
                           "against the zero baseline) near 0.");
    const char *head[12] = {"method", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "share on x0, x1 (%)", "completeness gap",
                            "model evaluations"};
    vs_better better[12] = {0};
    better[9] = VS_BETTER_HIGHER;
    vs_report_table *t = vs_report_table_new(r, NULL, 12, head, better);
    const char *const methods[] = {"integrated_gradients", "deeplift", "kernel_shap"};
    vs_explain_request rq;
    vs_explain_request_init(&rq);
    rq.target = 1;
    rq.contrast = 0;
    vs_status st = VS_OK;
    for (int k = 0; k < 3 && st == VS_OK; k++) {
        const vs_method *meth = vs_method_find(methods[k]);
        vs_method_opts *o = vs_method_opts_parse(meth, k == 2 ? "samples=254" : NULL, err); /* Kernel SHAP: every coalition of 8 features */
        vs_tensor *attr;
        vs_attr_report rep;
        st = o ? vs_explain(&m, q, meth, o, &rq, &attr, &rep, err) : VS_ERR_NOMEM;
        vs_method_opts_free(o);
        if (st != VS_OK) break;
        double on = 0, all = 0;
        int row = vs_report_table_row(t);
        vs_report_text(t, row, 0, methods[k]);
        for (int i = 0; i < DEMO_D; i++) {
            vs_report_number(t, row, 1 + i, attr->data[i], NAN, 2);
            on += fabs(attr->data[i]) * (i < 2);
            all += fabs(attr->data[i]);
        }
        vs_report_number(t, row, 9, 100 * on / all, NAN, 0);
        vs_report_number(t, row, 10, rep.delta, NAN, -1);
        vs_report_number(t, row, 11, (double)rep.evaluations, NAN, 0);
        vs_tensor_free(attr);
    }
    for (int i = 0; i < 4; i++) vs_tensor_free(params[i]);
    vs_tensor_free(q);
    vs_tensor_free(x);
    return st;
}


/* The raw numbers of one part: rows and the scores of its five explanations. */
static vs_json *part_data(const demo_part *p)
{
    vs_json *o = vs_json_new_object(), *ex = vs_json_new_array();
    const char *names[5] = {"snx-global", "snx-same", "snx-other", "sm-same", "sm-other"};
    const vs_snx_eval *evs[5] = {&p->ev_glob[0], &p->ev_loc[0], &p->ev_loc[1], &p->ev_sm[0], &p->ev_sm[1]};
    bool ok = o && ex && vs_json_set(o, "test_pair_accuracy", vs_json_new_number(p->pair_acc)) == VS_OK &&
              vs_json_set(o, "query", vs_json_new_int(p->q)) == VS_OK && vs_json_set(o, "same_class_reference", vs_json_new_int(p->ref[0])) == VS_OK &&
              vs_json_set(o, "other_class_reference", vs_json_new_int(p->ref[1])) == VS_OK;
    for (int k = 0; ok && k < 5; k++) {
        vs_json *e = vs_json_new_object();
        const double v[6] = {evs[k]->fa, evs[k]->cf, evs[k]->conformity, (double)evs[k]->violated, evs[k]->precision, evs[k]->recall};
        const char *key[6] = {"faithfulness", "counterfactual", "conformity", "violated", "precision", "recall"};
        ok = vs_json_push(ex, e) == VS_OK && vs_json_set(e, "explanation", vs_json_new_string(names[k])) == VS_OK;
        for (int i = 0; ok && i < 6; i++) /* undefined scores (NaN, or -1 violations) are null */
            ok = vs_json_set(e, key[i], isfinite(v[i]) && !(i == 3 && v[i] < 0) ? vs_json_new_number(v[i]) : vs_json_new_null()) == VS_OK;
    }
    if (ok && vs_json_set(o, "explanations", ex) == VS_OK) return o;
    if (!ok) vs_json_free(ex);
    vs_json_free(o);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

vs_status vs_demo_experiment(uint64_t seed, FILE *progress, vs_report **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "demo: no output");
    *out = NULL;
    double t0 = now();
    vs_report *r = vs_report_new();
    vs_json *data = vs_json_new_object();
    if (!r || !data) {
        vs_report_free(r);
        vs_json_free(data);
        return vs_error_set(err, VS_ERR_NOMEM, "demo: out of memory");
    }
    vs_report_heading(r, 1, "versus demo");
    vs_report_paragraph(r, "versus %s, commit `%s`, seed %llu.  Siamese networks explained with SNX (two-stage masks: a global invariant of the "
                           "query, then local masks per reference constrained by it), checked against planted ground truth; then "
                           "a classifier explained one-vs-one.",
                        vs_version(), vs_build_commit(), (unsigned long long)seed);
    demo_part parts[2] = {{.title = "Credit applicants (synthetic tabular, 3 planted major features)"},
                          {.title = "Molecule-like graphs (synthetic, planted nitro-ring motif)"}};
    vs_rng rng;
    vs_rng_seed(&rng, seed);
    vs_synth_tabular_opts to;
    vs_synth_tabular_defaults(&to);
    to.n = 1000;
    to.label_noise = 0.05;
    to.seed = seed;
    vs_synth_graph_opts go;
    vs_synth_graph_defaults(&go);
    go.n = 300;
    go.min_nodes = 8;
    go.max_nodes = 14;
    go.motif = VS_MOTIF_NITRO_RING;
    go.seed = seed;
    vs_status st = vs_synth_tabular(&to, &parts[0].d, err);
    if (st == VS_OK) st = vs_synth_graphs(&go, &parts[1].d, err);
    if (st == VS_OK && !(parts[0].m = vs_arch_siamese_mlp(parts[0].d->dim, 32, 16, &rng, err))) st = err ? err->code : VS_ERR_NOMEM;
    if (st == VS_OK && !(parts[1].m = vs_arch_siamese_gnn(VS_MODULE_GCN_CONV, parts[1].d->n_node_features, 32, 3, 16, &rng, err)))
        st = err ? err->code : VS_ERR_NOMEM;
    static const char *const stems[2] = {"tabular", "graph"};
    for (int k = 0; k < 2 && st == VS_OK; k++) {
        st = train_part(&parts[k], k == 0 ? 30 : 60, 1e-2f, seed, progress, err);
        if (st == VS_OK) st = explain_part(&parts[k], err);
        if (st != VS_OK) break;
        part_table(&parts[k], r);
        if (parts[k].d->kind == VS_DATA_TABULAR) top_majors(&parts[k], r);
        part_figures(&parts[k], stems[k], r);
        if (vs_json_set(data, stems[k], part_data(&parts[k])) != VS_OK) r->oom = true;
    }
    if (st == VS_OK) st = one_vs_one(seed, r, err);
    if (st == VS_OK) {
        vs_report_paragraph(r, "Finished in %.1f s.", now() - t0);
        if (vs_json_set(data, "format", vs_json_new_string("versus-demo/1")) != VS_OK ||
            vs_json_set(data, "commit", vs_json_new_string(vs_build_commit())) != VS_OK ||
            vs_json_set(data, "seed", vs_json_new_int((int64_t)seed)) != VS_OK)
            r->oom = true;
        vs_report_set_data(r, data);
        data = NULL;
        if (r->oom) st = vs_error_set(err, VS_ERR_NOMEM, "demo: out of memory building the report");
    }
    vs_json_free(data);
    part_free(&parts[0]);
    part_free(&parts[1]);
    if (st != VS_OK) {
        vs_report_free(r);
        return st;
    }
    *out = r;
    return VS_OK;
}
