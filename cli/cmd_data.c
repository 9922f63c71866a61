/* cmd_data.c - `versus data describe|export SPEC`: what a data SPEC loads, and its arrays as .npy. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const vs_cli_opt data_opts[] = {
    VS_DATA_CLI_OPTS,
    {"out", 1, "export: output directory (created if missing)"},
    {"pairs", 0, "export: also the SNX pairs (70/30 stratified split, 2 same + 2 different per row)"},
    {NULL, 0, NULL},
};

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return vs_fail("%s: cannot create directory: %s", dir, strerror(errno));
    return 0;
}

static int write_i64(const char *dir, const char *name, int ndim, const int64_t *shape, const int64_t *v)
{
    char path[4096];
    vs_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (vs_npy_write_i64(path, ndim, shape, v, &err) != VS_OK) return vs_fail("%s", err.msg);
    return 0;
}

static int write_f32(const char *dir, const char *name, int ndim, const int64_t *shape, const float *v)
{
    char path[4096];
    vs_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    vs_scope_begin();
    vs_tensor *t = vs_tensor_from(ndim, shape, v);
    int rc = !t ? vs_fail("out of memory") : vs_npy_write(path, t, &err) != VS_OK ? vs_fail("%s", err.msg) : 0;
    vs_scope_end();
    return rc;
}

/* Graphs flattened: node features [nodes, F], node -> graph, edges [E, 2] in global node ids. */
static int export_graphs(const vs_dataset *d, const char *dir)
{
    int64_t nodes = 0, edges = 0;
    for (int64_t g = 0; g < d->n; g++) {
        nodes += d->graphs[g].n_nodes;
        edges += d->graphs[g].n_edges;
    }
    int64_t F = d->n_node_features;
    float *x = malloc((size_t)(nodes * F + 1) * sizeof *x);
    int64_t *gi = malloc((size_t)(nodes + 1) * sizeof *gi), *e = malloc((size_t)(2 * edges + 1) * sizeof *e);
    int rc = !x || !gi || !e ? vs_fail("out of memory") : 0;
    for (int64_t g = 0, off = 0, eo = 0; g < d->n && rc == 0; g++) {
        const vs_graph *gr = &d->graphs[g];
        memcpy(x + off * F, gr->x, (size_t)(gr->n_nodes * F) * sizeof *x);
        for (int64_t v = 0; v < gr->n_nodes; v++) gi[off + v] = g;
        for (int64_t k = 0; k < gr->n_edges; k++, eo++) {
            e[2 * eo] = off + gr->src[k];
            e[2 * eo + 1] = off + gr->dst[k];
        }
        off += gr->n_nodes;
    }
    if (rc == 0) rc = write_f32(dir, "node_features.npy", 2, (int64_t[]){nodes, F}, x);
    if (rc == 0) rc = write_i64(dir, "node_graph.npy", 1, &nodes, gi);
    if (rc == 0) rc = write_i64(dir, "edges.npy", 2, (int64_t[]){edges, 2}, e);
    free(x);
    free(gi);
    free(e);
    return rc;
}

static int export_pairs(const vs_dataset *d, const char *dir, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    int64_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
    vs_pairs *p[2] = {NULL, NULL};
    int rc = 0;
    if (vs_split_stratified(d->y, d->n, d->n_classes, 0.7, &r, &tr, &ntr, &te, &nte, &err) != VS_OK ||
        vs_pairs_snx(d->y, d->n, d->n_classes, tr, ntr, 2, 2, &r, &p[0], &err) != VS_OK ||
        vs_pairs_snx(d->y, d->n, d->n_classes, te, nte, 2, 2, &r, &p[1], &err) != VS_OK)
        rc = vs_fail("pairs: %s", err.msg);
    if (rc == 0) {
        int64_t m = p[0]->n + p[1]->n;
        int64_t *idx = malloc((size_t)(2 * m) * sizeof *idx), *lab = malloc((size_t)m * sizeof *lab),
                *por = malloc((size_t)m * sizeof *por);
        if (!idx || !lab || !por) rc = vs_fail("out of memory");
        for (int k = 0, o = 0; k < 2 && rc == 0; k++)
            for (int64_t i = 0; i < p[k]->n; i++, o++) {
                idx[2 * o] = p[k]->idx[2 * i];
                idx[2 * o + 1] = p[k]->idx[2 * i + 1];
                lab[o] = p[k]->label[i];
                por[o] = k;
            }
        if (rc == 0) rc = write_i64(dir, "pairs.npy", 2, (int64_t[]){m, 2}, idx);
        if (rc == 0) rc = write_i64(dir, "pair_labels.npy", 1, &m, lab);
        if (rc == 0) rc = write_i64(dir, "pair_portion.npy", 1, &m, por);
        if (rc == 0) printf("pairs: %lld train, %lld test (pair_portion.npy: 0 train, 1 test)\n", (long long)p[0]->n, (long long)p[1]->n);
        free(idx);
        free(lab);
        free(por);
    }
    free(tr);
    free(te);
    vs_pairs_free(p[0]);
    vs_pairs_free(p[1]);
    return rc;
}

static int export_data(const vs_dataset *d, const char *dir, bool pairs, uint64_t seed)
{
    int rc = make_dir(dir);
    if (rc) return rc;
    if (d->kind == VS_DATA_GRAPHS) {
        rc = export_graphs(d, dir);
    } else {
        int64_t shape[4] = {d->n, d->shape[0], d->shape[1], d->shape[2]};
        rc = write_f32(dir, "X.npy", 1 + d->ndim, shape, d->X);
    }
    if (rc == 0) rc = write_i64(dir, "y.npy", 1, &d->n, d->y);
    if (rc == 0 && d->feature_names) {
        char path[4096];
        snprintf(path, sizeof path, "%s/features.txt", dir);
        vs_out fo;
        vs_error err;
        if (vs_out_open(&fo, path, &err) != VS_OK) return vs_fail("%s", err.msg);
        for (int64_t i = 0; i < d->dim; i++) fprintf(fo.f, "%s\n", d->feature_names[i]);
        if (vs_out_commit(&fo, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    }
    if (rc == 0 && pairs) rc = export_pairs(d, dir, seed);
    if (rc == 0) printf("wrote %s\n", dir);
    return rc;
}

static int run_data(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("data", data_opts, argc, argv, &a);
    if (rc) return rc;
    if (a.n_pos != 2) return vs_usage_error("data", "expected 'versus data describe SPEC' or 'versus data export SPEC --out DIR'");
    const char *sub = a.pos[0], *spec = a.pos[1];
    bool is_export = strcmp(sub, "export") == 0;
    if (!is_export && strcmp(sub, "describe") != 0) return vs_usage_error("data", "unknown subcommand '%s' (describe or export)", sub);
    if (is_export && !vs_args_get(&a, "out")) return vs_usage_error("data", "export needs --out DIR");
    if (!is_export && (vs_args_has(&a, "out") || vs_args_has(&a, "pairs")))
        return vs_usage_error("data", "--out and --pairs belong to 'data export'");
    vs_data_flags f;
    if ((rc = vs_cli_data_flags(&a, &f))) return rc;
    vs_dataset *d = NULL;
    vs_error err;
    if (vs_load_spec(spec, &f, &d, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (is_export) {
        rc = export_data(d, vs_args_get(&a, "out"), vs_args_has(&a, "pairs"), f.seed);
    } else if (vs_dataset_describe_json(d, stdout) != VS_OK) {
        rc = vs_fail("%s: the loaded data set is inconsistent", spec);
    }
    vs_dataset_free(d);
    return rc;
}

const vs_verb vs_verb_data = {
    "data",
    "describe a data set, or export it as .npy arrays",
    "usage: versus data describe SPEC [flags]\n"
    "       versus data export SPEC --out DIR [--pairs] [flags]\n\n"
    "describe prints what SPEC loads as JSON: rows, classes and their counts, major and minor features\n"
    "with their descriptions (tabular), image shape, graph node/edge counts.  export writes X.npy and\n"
    "y.npy (graphs: node_features.npy, node_graph.npy, edges.npy, y.npy), features.txt for tabular data,\n"
    "and with --pairs the SNX pairs: pairs.npy [m,2], pair_labels.npy [m], pair_portion.npy [m].",
    data_opts,
    run_data,
    NULL,
};
