/* train_data.c - what training reads from a data set: model inputs for a list of rows, the seeded
 * train/test split with its fixed pairs (versus/pairs.h's protocol), and class subsets. */
#include "versus/gnn.h"
#include "versus/ops.h"
#include "versus/train.h"

#include <stdlib.h>
#include <string.h>

const char *vs_pairing_name(vs_pairing p) { return p == VS_PAIRING_RANDOM ? "random" : "fixed"; }

/* "snx" is the fixed pairs' name before they were named for what they are (the protocol is SNX's). */
bool vs_pairing_from_name(const char *name, vs_pairing *p)
{
    if (strcmp(name, "fixed") == 0 || strcmp(name, "snx") == 0) *p = VS_PAIRING_FIXED;
    else if (strcmp(name, "random") == 0) *p = VS_PAIRING_RANDOM;
    else return false;
    return true;
}

vs_status vs_train_input(const vs_dataset *d, const int64_t *rows, int64_t n, vs_tensor **x, vs_graph_batch *g,
                         vs_forward_ctx *ctx, vs_error *err)
{
    *x = NULL;
    for (int64_t i = 0; i < n; i++)
        if (rows[i] < 0 || rows[i] >= d->n)
            return vs_error_set(err, VS_ERR_ARG, "%s: row %lld outside [0, %lld)", d->name ? d->name : "data",
                                (long long)rows[i], (long long)d->n);
    if (d->kind == VS_DATA_GRAPHS) {
        vs_status st = vs_graph_batch_init(g, d->graphs, rows, n, d->n_node_features, err);
        if (st != VS_OK) return st;
        ctx->graph = g;
        *x = vs_graph_batch_features(g);
    } else {
        int64_t shape[4] = {n, d->shape[0], d->shape[1], d->shape[2]};
        vs_tensor *t = vs_tensor_new(1 + d->ndim, shape);
        if (t)
            for (int64_t i = 0; i < n; i++)
                memcpy(t->data + i * d->dim, d->X + rows[i] * d->dim, (size_t)d->dim * sizeof *t->data);
        *x = t;
    }
    return *x ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "training input: out of memory for %lld rows", (long long)n);
}

/* ---- split ------------------------------------------------------------------------------------------- */

static int64_t *all_rows(int64_t n)
{
    int64_t *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    for (int64_t i = 0; r && i < n; i++) r[i] = i;
    return r;
}

vs_status vs_train_split_make(const vs_dataset *d, const vs_dataset *test, uint64_t split_seed, double train_frac,
                              bool with_pairs, vs_train_split *out, vs_error *err)
{
    memset(out, 0, sizeof *out);
    vs_rng r;
    vs_rng_seed(&r, split_seed);
    vs_status st = VS_OK;
    if (test) {
        out->train = all_rows(d->n), out->n_train = d->n;
        out->test = all_rows(test->n), out->n_test = test->n;
        if (!out->train || !out->test) st = vs_error_set(err, VS_ERR_NOMEM, "split: out of memory");
    } else {
        st = vs_split_stratified(d->y, d->n, d->n_classes, train_frac, &r, &out->train, &out->n_train, &out->test,
                                 &out->n_test, err);
    }
    const vs_dataset *td = test ? test : d;
    if (st == VS_OK && with_pairs) {
        st = vs_pairs_snx(d->y, d->n, d->n_classes, out->train, out->n_train, VS_SNX_PAIRS_SAME, VS_SNX_PAIRS_DIFF,
                          &r, &out->train_pairs, err);
        if (st == VS_OK && out->n_test > 0)
            st = vs_pairs_snx(td->y, td->n, td->n_classes, out->test, out->n_test, VS_SNX_PAIRS_SAME,
                              VS_SNX_PAIRS_DIFF, &r, &out->test_pairs, err);
    }
    if (st != VS_OK) vs_train_split_clear(out);
    return st;
}

void vs_train_split_clear(vs_train_split *s)
{
    free(s->train);
    free(s->test);
    vs_pairs_free(s->train_pairs);
    vs_pairs_free(s->test_pairs);
    memset(s, 0, sizeof *s);
}

/* ---- class subsets ---------------------------------------------------------------------------------- */

static vs_status relabel(vs_dataset *o, const vs_dataset *d, const int64_t *classes, int64_t k, vs_error *err)
{
    char **names = d->class_names ? calloc((size_t)k, sizeof *names) : NULL;
    if (d->class_names && !names) return vs_error_set(err, VS_ERR_NOMEM, "class subset: out of memory");
    for (int64_t j = 0; names && j < k; j++)
        if (!(names[j] = strdup(d->class_names[classes[j]] ? d->class_names[classes[j]] : ""))) {
            for (int64_t i = 0; i < j; i++) free(names[i]);
            free(names);
            return vs_error_set(err, VS_ERR_NOMEM, "class subset: out of memory");
        }
    for (int64_t i = 0; i < o->n; i++)
        for (int64_t j = 0; j < k; j++)
            if (o->y[i] == classes[j]) {
                o->y[i] = j;
                break;
            }
    if (o->class_names)
        for (int64_t c = 0; c < o->n_classes; c++) free(o->class_names[c]);
    free(o->class_names);
    o->class_names = names;
    o->n_classes = k;
    return VS_OK;
}

vs_status vs_dataset_select_classes(const vs_dataset *d, const int64_t *classes, int64_t k, vs_dataset **out,
                                    vs_error *err)
{
    *out = NULL;
    if (k < 1) return vs_error_set(err, VS_ERR_ARG, "class subset: no classes given");
    for (int64_t j = 0; j < k; j++) {
        if (classes[j] < 0 || classes[j] >= d->n_classes)
            return vs_error_set(err, VS_ERR_ARG, "class subset: class %lld is not one of the %lld classes of %s",
                                (long long)classes[j], (long long)d->n_classes, d->name ? d->name : "the data");
        for (int64_t i = 0; i < j; i++)
            if (classes[i] == classes[j])
                return vs_error_set(err, VS_ERR_ARG, "class subset: class %lld is listed twice", (long long)classes[j]);
    }
    bool *keep = calloc((size_t)d->n_classes, sizeof *keep);
    int64_t *rows = malloc((size_t)(d->n ? d->n : 1) * sizeof *rows), n = 0;
    vs_status st = VS_OK;
    if (!keep || !rows) {
        st = vs_error_set(err, VS_ERR_NOMEM, "class subset: out of memory");
    } else {
        for (int64_t j = 0; j < k; j++) keep[classes[j]] = true;
        for (int64_t i = 0; i < d->n; i++)
            if (keep[d->y[i]]) rows[n++] = i;
        st = vs_dataset_subset(d, rows, n, out, err);
        if (st == VS_OK && (st = relabel(*out, d, classes, k, err)) != VS_OK) {
            vs_dataset_free(*out);
            *out = NULL;
        }
    }
    free(keep);
    free(rows);
    return st;
}
