/* cmd_demo.c - `versus demo`: the main job end to end in about a minute.  Trains a Siamese MLP on
 * synthetic credit applicants and a Siamese GCN on synthetic molecules-like graphs (both with planted
 * ground truth), explains one query against two references with SNX-global and SNX, checks the
 * explanations against the planted truth, explains a classifier one-vs-one with three attribution
 * methods, and writes a report directory (index.html with the tables, SVG figures). */
#include "cli/cli.h"
#include "versus/train.h"
#include "versus/versus.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const vs_cli_opt demo_opts[] = {
    {"out", 1, "report directory (default versus-demo)"},
    {"seed", 1, "random seed (default 1)"},
    {NULL, 0, NULL},
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static int train_part(demo_part *p, int64_t epochs, float lr, uint64_t seed)
{
    vs_error err;
    vs_train_opts to;
    vs_train_opts_init(&to);
    to.epochs = epochs;
    to.seed = seed;
    to.optim.lr = lr;
    to.progress = stderr;
    vs_train_result res = {0};
    if (vs_train(p->m, p->d, &to, &res, &err) != VS_OK) return vs_fail("%s: %s", p->title, err.msg);
    p->pair_acc = vs_train_result_get(&res, "test_accuracy");
    vs_train_result_clear(&res);
    if (vs_train_split_make(p->d, NULL, seed, to.train_frac, true, &p->sp, &err) != VS_OK) return vs_fail("%s", err.msg);
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
    if (p->ref[0] < 0 || p->ref[1] < 0) return vs_fail("%s: the test portion lacks a reference of each kind", p->title);
    return 0;
}

static int explain_part(demo_part *p)
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
        return vs_fail("%s: %s", p->title, err.msg);
    return 0;
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

static void print_part(const demo_part *p, FILE *html)
{
    const vs_dataset *d = p->d;
    const char *cls = d->class_names ? d->class_names[d->y[p->q]] : "?";
    printf("\n== %s: Siamese model, test pair accuracy %.3f\n", p->title, p->pair_acc);
    printf("query: row %lld (class %s); references: row %lld (same class), row %lld (other class)\n", (long long)p->q, cls,
           (long long)p->ref[0], (long long)p->ref[1]);
    fprintf(html, "<h2>%s</h2>\n<p>Siamese model, test pair accuracy %.3f. Query row %lld (class %s); references row %lld (same class) and row %lld (other class).</p>\n",
            p->title, p->pair_acc, (long long)p->q, cls, (long long)p->ref[0], (long long)p->ref[1]);
    fprintf(html, "<table border=1 cellpadding=4><tr><th>explanation</th><th>faithfulness (Eq. 1, lower better)</th><th>counterfactual "
                  "(Eq. 2, higher better)</th><th>conformity</th><th>violated</th><th>precision vs planted truth</th><th>recall</th></tr>\n");
    const char *names[5] = {"SNX-global (query)", "SNX, same-class reference", "SNX, other-class reference", "SM, same-class reference",
                            "SM, other-class reference"};
    const vs_snx_eval *evs[5] = {&p->ev_glob[0], &p->ev_loc[0], &p->ev_loc[1], &p->ev_sm[0], &p->ev_sm[1]};
    printf("  %-28s %8s %8s %8s %8s %9s %7s\n", "explanation", "FA", "CF", "conform", "violated", "precision", "recall");
    for (int k = 0; k < 5; k++) {
        const vs_snx_eval *e = evs[k];
        printf("  %-28s %8.3f %8.3f %8.3f %8lld %9.3f %7.3f\n", names[k], e->fa, e->cf, e->conformity, (long long)e->violated,
               e->precision, e->recall);
        fprintf(html, "<tr><td>%s</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%lld</td><td>%.3f</td><td>%.3f</td></tr>\n", names[k],
                e->fa, e->cf, e->conformity, (long long)e->violated, e->precision, e->recall);
    }
    fprintf(html, "</table>\n");
}

/* The query's three most important major features under its SNX mask against the other-class reference. */
static void print_top_majors(const demo_part *p)
{
    float *imp = malloc((size_t)p->d->n_groups * sizeof *imp);
    if (!imp) return;
    major_importance(p->d, p->q, p->loc->ms + p->loc->s_off[1], imp);
    printf("  SNX vs the other-class reference, the 3 most important major features a(m):");
    for (int k = 0; k < 3; k++) {
        int64_t best = -1;
        for (int64_t g = 0; g < p->d->n_groups; g++)
            if (imp[g] >= 0 && (best < 0 || imp[g] > imp[best])) best = g;
        if (best < 0) break;
        printf(" %s%s (%.2f)", p->d->groups[best].name, p->d->group_truth && p->d->group_truth[best] ? "*" : "", imp[best]);
        imp[best] = -1;
    }
    printf("   (* planted)\n");
    free(imp);
}

/* Figures: tabular major-feature importances (global vs the two local masks) or graph edge masks,
 * and the GDA convergence traces (Figs. 5 and 6 of the paper). */
static int figures(const demo_part *p, const char *dir, const char *stem, FILE *html)
{
    vs_error err;
    char path[4096];
    const vs_dataset *d = p->d;
    int rc = 0;
    vs_plot *bar = vs_plot_new(VS_PLOT_BAR, d->kind == VS_DATA_TABULAR ? "Query: importance of each major feature a(m)"
                                                                       : "Query graph: mask of each edge",
                               d->kind == VS_DATA_TABULAR ? "major feature" : "edge", "mask");
    if (!bar) return vs_fail("out of memory");
    if (d->kind == VS_DATA_TABULAR) {
        float *v = malloc((size_t)d->n_groups * sizeof *v), *xs = malloc((size_t)d->n_groups * sizeof *xs);
        const char **labels = malloc((size_t)d->n_groups * sizeof *labels);
        for (int64_t g = 0; v && xs && labels && g < d->n_groups; g++) {
            xs[g] = (float)g;
            labels[g] = d->groups[g].name;
        }
        const char *series[3] = {"SNX-global", "SNX vs same class", "SNX vs other class"};
        for (int k = 0; k < 3 && v && xs && labels && rc == 0; k++) {
            const float *m = k == 0 ? p->glob->ms + p->glob->s_off[vs_snx_expl_find(p->glob, p->q)] : p->loc->ms + p->loc->s_off[k - 1];
            major_importance(d, p->q, m, v);
            if (vs_plot_add_series(bar, series[k], (size_t)d->n_groups, xs, v, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
        if (rc == 0 && labels && vs_plot_set_categories(bar, (size_t)d->n_groups, labels, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        free(v);
        free(xs);
        free(labels);
    } else {
        const vs_graph *g = &d->graphs[p->q];
        int64_t n = 0;
        for (int64_t e = 0; e < g->n_edges; e++) n += g->src[e] < g->dst[e];
        float *v = malloc((size_t)(n + 1) * sizeof *v), *xs = malloc((size_t)(n + 1) * sizeof *xs);
        char **labels = calloc((size_t)(n + 1), sizeof *labels);
        const char *series[3] = {"SNX-global", "SNX vs same class", "SNX vs other class"};
        for (int k = 0; k < 3 && v && xs && labels && rc == 0; k++) {
            const float *m = k == 0 ? p->glob->ms + p->glob->s_off[vs_snx_expl_find(p->glob, p->q)] : p->loc->ms + p->loc->s_off[k - 1];
            int64_t i = 0;
            for (int64_t e = 0; e < g->n_edges; e++)
                if (g->src[e] < g->dst[e]) {
                    v[i] = m[e];
                    xs[i] = (float)i;
                    if (k == 0 && (labels[i] = malloc(64)))
                        snprintf(labels[i], 64, "%lld-%lld%s", (long long)g->src[e], (long long)g->dst[e],
                                 g->edge_truth && g->edge_truth[e] ? "*" : "");
                    i++;
                }
            if (vs_plot_add_series(bar, series[k], (size_t)n, xs, v, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
        if (rc == 0 && labels && vs_plot_set_categories(bar, (size_t)n, (const char *const *)labels, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        for (int64_t i = 0; labels && i < n; i++) free(labels[i]);
        free(labels);
        free(v);
        free(xs);
    }
    snprintf(path, sizeof path, "%s/%s_masks.svg", dir, stem);
    if (rc == 0 && vs_plot_write_svg(bar, path, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_plot_free(bar);
    if (rc == 0)
        fprintf(html, "<p><img src=\"%s_masks.svg\"> %s</p>\n", stem,
                d->kind == VS_DATA_GRAPHS ? "Edges marked * belong to the planted motif." : "");

    /* GDA traces of the two local problems */
    const vs_snx_trace *t = &p->loc->trace;
    if (rc == 0 && t->n_iters > 0) {
        vs_plot *g1 = vs_plot_new(VS_PLOT_LINE, "GDA convergence (Fig. 5)", "iteration", "gradient norm");
        vs_plot *g2 = vs_plot_new(VS_PLOT_LINE, "Violated constraints (Fig. 6)", "iteration", "fraction violated");
        float *xs = malloc((size_t)t->n_iters * sizeof *xs);
        if (!g1 || !g2 || !xs) rc = vs_fail("out of memory");
        for (int64_t i = 0; rc == 0 && i < t->n_iters; i++) xs[i] = (float)i;
        const char *who[2] = {"same class", "other class"};
        for (int64_t b = 0; b < t->n_blocks && b < 2 && rc == 0; b++) {
            char name[64];
            snprintf(name, sizeof name, "|dL/dm|, %s", who[b]);
            if (vs_plot_add_series(g1, name, (size_t)t->n_iters, xs, t->grad_primal + b * t->n_iters, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
            snprintf(name, sizeof name, "|dL/dlambda|, %s", who[b]);
            if (rc == 0 && vs_plot_add_series(g1, name, (size_t)t->n_iters, xs, t->grad_dual + b * t->n_iters, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
            if (rc == 0 && vs_plot_add_series(g2, who[b], (size_t)t->n_iters, xs, t->violated + b * t->n_iters, NULL, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        }
        snprintf(path, sizeof path, "%s/%s_gda.svg", dir, stem);
        if (rc == 0 && vs_plot_write_svg(g1, path, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        snprintf(path, sizeof path, "%s/%s_violated.svg", dir, stem);
        if (rc == 0 && vs_plot_write_svg(g2, path, &err) != VS_OK) rc = vs_fail("%s", err.msg);
        if (rc == 0) fprintf(html, "<p><img src=\"%s_gda.svg\"> <img src=\"%s_violated.svg\"></p>\n", stem, stem);
        vs_plot_free(g1);
        vs_plot_free(g2);
        free(xs);
    }
    return rc;
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

static int one_vs_one(uint64_t seed, FILE *html)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_tensor *x = vs_tensor_randn(VS_SHAPE(DEMO_N, DEMO_D), &r, 0, 1);
    int64_t y[DEMO_N];
    for (int i = 0; i < DEMO_N; i++) y[i] = x->data[i * DEMO_D] + x->data[i * DEMO_D + 1] > 0;
    demo_net net = {vs_tensor_randn(VS_SHAPE(DEMO_H, DEMO_D), &r, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(DEMO_H)),
                    vs_tensor_randn(VS_SHAPE(2, DEMO_H), &r, 0, 0.4f), vs_tensor_zeros(VS_SHAPE(2))};
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
    printf("\n== one-vs-one attributions: why class 1 and not class 0?  (label = [x0 + x1 > 0], 8 features)\n");
    fprintf(html, "<h2>One-vs-one attributions of a classifier</h2>\n<p>A two-layer network learns label = [x0 + x1 &gt; 0] from 8 "
                  "features; why class 1 and not class 0 for x = [1.2 0.9 -1.5 0.3 2.0 -0.7 0.1 1.1]?</p>\n"
                  "<table border=1 cellpadding=4><tr><th>method</th><th>attributions x0..x7</th><th>share on x0, x1</th><th>completeness gap</th><th>model evaluations</th></tr>\n");
    const vs_attr_method methods[] = {VS_ATTR_INTEGRATED_GRADIENTS, VS_ATTR_DEEPLIFT, VS_ATTR_KERNEL_SHAP};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        vs_attr_opts o;
        vs_attr_opts_init(&o, methods[k]);
        o.target = 1;
        o.contrast = 0;
        o.samples = 254; /* Kernel SHAP: every coalition of 8 features */
        vs_tensor *attr;
        vs_attr_report rep;
        vs_error err;
        if (vs_attribute(&m, q, &o, &attr, &rep, &err) != VS_OK) {
            rc = vs_fail("%s", err.msg);
            break;
        }
        double on = 0, all = 0;
        printf("  %-22s", vs_attr_method_name(methods[k]));
        fprintf(html, "<tr><td>%s</td><td>", vs_attr_method_name(methods[k]));
        for (int i = 0; i < DEMO_D; i++) {
            printf(" %+6.2f", attr->data[i]);
            fprintf(html, "%+.2f ", attr->data[i]);
            on += fabs(attr->data[i]) * (i < 2);
            all += fabs(attr->data[i]);
        }
        printf("   share on x0,x1 %3.0f%%  completeness gap %.1e  (%lld evaluations)\n", 100 * on / all, rep.delta,
               (long long)rep.evaluations);
        fprintf(html, "</td><td>%.0f%%</td><td>%.1e</td><td>%lld</td></tr>\n", 100 * on / all, rep.delta, (long long)rep.evaluations);
        vs_tensor_free(attr);
    }
    fprintf(html, "</table>\n");
    for (int i = 0; i < 4; i++) vs_tensor_free(params[i]);
    vs_tensor_free(q);
    vs_tensor_free(x);
    return rc;
}

static int run_demo(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("demo", demo_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos) return vs_usage_error("demo", "unexpected argument '%s'", a.pos[0]);
    int64_t seed;
    if ((rc = vs_args_int(&a, "seed", 1, 0, INT64_MAX, &seed))) return rc;
    const char *dir = vs_args_get(&a, "out") ? vs_args_get(&a, "out") : "versus-demo";
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return vs_fail("%s: cannot create directory: %s", dir, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *html = fopen(path, "w");
    if (!html) return vs_fail("%s: cannot write: %s", path, strerror(errno));
    double t0 = now();
    fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>versus demo</title></head><body>\n"
                  "<h1>versus demo</h1>\n<p>versus %s, seed %lld. Siamese networks explained with SNX (two-stage masks: a global "
                  "invariant of the query, then local masks per reference constrained by it), against planted ground truth.</p>\n",
                  vs_version(), (long long)seed);
    printf("versus demo: Siamese networks on data with planted ground truth, explained with SNX\n");

    vs_error err;
    demo_part parts[2] = {{.title = "Credit applicants (synthetic tabular, 3 planted major features)"},
                          {.title = "Molecule-like graphs (synthetic, planted nitro-ring motif)"}};
    vs_rng r;
    vs_rng_seed(&r, (uint64_t)seed);
    vs_synth_tabular_opts to;
    vs_synth_tabular_defaults(&to);
    to.n = 1000;
    to.label_noise = 0.05;
    to.seed = (uint64_t)seed;
    vs_synth_graph_opts go;
    vs_synth_graph_defaults(&go);
    go.n = 300;
    go.min_nodes = 8;
    go.max_nodes = 14;
    go.motif = VS_MOTIF_NITRO_RING;
    go.seed = (uint64_t)seed;
    if (vs_synth_tabular(&to, &parts[0].d, &err) != VS_OK || vs_synth_graphs(&go, &parts[1].d, &err) != VS_OK) {
        rc = vs_fail("%s", err.msg);
        goto done;
    }
    parts[0].m = vs_arch_siamese_mlp(parts[0].d->dim, 32, 16, &r, &err);
    if (parts[0].m) parts[1].m = vs_arch_siamese_gnn(VS_MODULE_GCN_CONV, parts[1].d->n_node_features, 32, 3, 16, &r, &err);
    if (!parts[0].m || !parts[1].m) {
        rc = vs_fail("%s", err.msg);
        goto done;
    }
    static const char *stems[2] = {"tabular", "graph"};
    for (int k = 0; k < 2 && rc == 0; k++) {
        rc = train_part(&parts[k], k == 0 ? 30 : 60, 1e-2f, (uint64_t)seed);
        if (rc == 0) rc = explain_part(&parts[k]);
        if (rc == 0) {
            print_part(&parts[k], html);
            if (parts[k].d->kind == VS_DATA_TABULAR) print_top_majors(&parts[k]);
            rc = figures(&parts[k], dir, stems[k], html);
        }
    }
    if (rc == 0) rc = one_vs_one((uint64_t)seed, html);
    if (rc == 0) {
        fprintf(html, "<p>Finished in %.1f s.</p></body></html>\n", now() - t0);
        printf("\nreport: %s/index.html (%.1f s)\n", dir, now() - t0);
    }
done:
    if (fclose(html) != 0 && rc == 0) rc = vs_fail("%s: write failed", path);
    part_free(&parts[0]);
    part_free(&parts[1]);
    return rc;
}

const vs_verb vs_verb_demo = {
    "demo",
    "train Siamese models on planted data, explain them with SNX, write a report",
    "usage: versus demo [--out DIR] [--seed S]\n\n"
    "Trains a Siamese MLP on synthetic credit applicants and a Siamese GCN on synthetic graphs with a\n"
    "planted motif, explains one query against a same-class and an other-class reference with SNX-global\n"
    "(the query's invariant) and SNX (local masks constrained by it), compares with saliency maps, scores\n"
    "every explanation (faithfulness, counterfactual, conformity, violated constraints, precision and\n"
    "recall against the planted truth), explains a classifier one-vs-one with integrated gradients,\n"
    "DeepLIFT and Kernel SHAP, and writes DIR/index.html (default versus-demo) with the tables and SVG\n"
    "figures (masks, GDA convergence, violated constraints).",
    demo_opts,
    run_demo,
    NULL,
};
