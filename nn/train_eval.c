/* train_eval.c - forward passes of one batch with their checks (classifier scores, Siamese
 * similarities), the two accuracies (classifier accuracy and Siamese pair accuracy) and their count
 * on the steps already taken. */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "synthetic-tabular (rows [24])" */
static void describe_data(const vs_dataset *d, char *buf, size_t n)
{
    const char *name = d->name ? d->name : "the data";
    if (d->kind == VS_DATA_GRAPHS)
        snprintf(buf, n, "%s (graphs with %lld node features)", name, (long long)d->n_node_features);
    else if (d->kind == VS_DATA_IMAGES)
        snprintf(buf, n, "%s (images [%lld,%lld,%lld])", name, (long long)d->shape[0], (long long)d->shape[1],
                 (long long)d->shape[2]);
    else
        snprintf(buf, n, "%s (rows [%lld])", name, (long long)d->dim);
}

static vs_status fit_error(vs_error *err, const vs_dataset *d)
{
    char what[160];
    describe_data(d, what, sizeof what);
    const vs_error *e = vs_last_error();
    return vs_error_set(err, e->code != VS_OK ? e->code : VS_ERR_SHAPE, "the model does not fit %s: %s", what, e->msg);
}

vs_tensor *vs_train_logits(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, vs_rng *dropout,
                           vs_graph_batch *g, vs_error *err)
{
    vs_tensor *x;
    vs_forward_ctx ctx = {.rng = dropout};
    if (vs_train_input(d, rows, n, &x, g, &ctx, err) != VS_OK) return NULL;
    vs_clear_last_error();
    vs_tensor *y = vs_module_forward(m, x, &ctx);
    if (!y) {
        fit_error(err, d);
        return NULL;
    }
    if (y->ndim != 2 || y->shape[0] != n || y->shape[1] != d->n_classes) {
        char s[96], what[160];
        vs_shape_str(y, s, sizeof s);
        describe_data(d, what, sizeof what);
        vs_error_set(err, VS_ERR_SHAPE, "the model gives scores %s for %lld examples of %s, expected [%lld,%lld] (one per class)",
                     s, (long long)n, what, (long long)n, (long long)d->n_classes);
        return NULL;
    }
    return y;
}

vs_tensor *vs_train_similarity(vs_module *m, const vs_dataset *d, const vs_pairs *p, const int64_t *order, int64_t n,
                               vs_rng *dropout, vs_error *err)
{
    int64_t *ia = malloc((size_t)(n ? n : 1) * sizeof *ia), *ib = malloc((size_t)(n ? n : 1) * sizeof *ib);
    if (!ia || !ib) {
        free(ia);
        free(ib);
        vs_error_set(err, VS_ERR_NOMEM, "siamese batch: out of memory");
        return NULL;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t j = order ? order[k] : k;
        ia[k] = p->idx[2 * j];
        ib[k] = p->idx[2 * j + 1];
    }
    vs_graph_batch ga = {0}, gb = {0};
    vs_forward_ctx ca = {.rng = dropout}, cb = {.rng = dropout};
    vs_tensor *xa, *xb, *s = NULL;
    if (vs_train_input(d, ia, n, &xa, &ga, &ca, err) == VS_OK && vs_train_input(d, ib, n, &xb, &gb, &cb, err) == VS_OK) {
        vs_clear_last_error();
        s = vs_siamese_forward(m, xa, &ca, xb, &cb);
        if (!s) fit_error(err, d);
    }
    /* the graph ops copied the index arrays they need for backward */
    vs_graph_batch_clear(&ga);
    vs_graph_batch_clear(&gb);
    free(ia);
    free(ib);
    return s;
}

void vs_step_accuracy_add(vs_step_accuracy *a, const vs_trainer *t, int64_t correct, int64_t n)
{
    if (a->epoch != t->epoch) a->epoch = t->epoch, a->seen = a->correct = 0;
    a->seen += n;
    a->correct += correct;
}

bool vs_step_accuracy_of_last_epoch(const vs_step_accuracy *a, const vs_trainer *t, int64_t n_items, double *acc)
{
    if (a->epoch < 0 || a->epoch != t->epoch - 1 || a->seen != n_items || n_items < 1) return false;
    *acc = (double)a->correct / (double)a->seen;
    return true;
}

/* Run f with m in evaluation mode and gradients off, then restore both. */
typedef struct eval_guard {
    bool training, grad;
} eval_guard;

static eval_guard eval_begin(vs_module *m)
{
    eval_guard g = {m->training, vs_set_grad_enabled(false)};
    vs_module_train(m, false);
    return g;
}

static void eval_end(vs_module *m, eval_guard g)
{
    vs_module_train(m, g.training);
    vs_set_grad_enabled(g.grad);
}

vs_status vs_train_accuracy(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, double *acc,
                            vs_error *err)
{
    *acc = NAN;
    eval_guard guard = eval_begin(m);
    int64_t correct = 0;
    vs_status st = VS_OK;
    for (int64_t i0 = 0; i0 < n && st == VS_OK; i0 += VS_TRAIN_EVAL_BATCH) {
        int64_t nb = n - i0 < VS_TRAIN_EVAL_BATCH ? n - i0 : VS_TRAIN_EVAL_BATCH;
        vs_scope_begin();
        vs_graph_batch g = {0};
        vs_tensor *y = vs_train_logits(m, d, rows + i0, nb, NULL, &g, err);
        if (!y) st = err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
        for (int64_t i = 0; y && i < nb; i++) {
            const float *z = y->data + i * y->shape[1];
            int64_t best = 0;
            for (int64_t c = 1; c < y->shape[1]; c++)
                if (z[c] > z[best]) best = c;
            correct += best == d->y[rows[i0 + i]];
        }
        vs_graph_batch_clear(&g);
        vs_scope_end();
    }
    eval_end(m, guard);
    if (st == VS_OK && n > 0) *acc = (double)correct / (double)n;
    return st;
}

/* Embeddings of rows[0..n) of d in one [n, dim] tensor (current scope), evaluation forward passes. */
static vs_tensor *embed_rows(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, vs_error *err)
{
    int64_t nbatch = (n + VS_TRAIN_EVAL_BATCH - 1) / VS_TRAIN_EVAL_BATCH;
    vs_tensor **parts = calloc((size_t)(nbatch ? nbatch : 1), sizeof *parts);
    if (!parts) {
        vs_error_set(err, VS_ERR_NOMEM, "siamese evaluation: out of memory");
        return NULL;
    }
    vs_tensor *e = NULL;
    bool ok = true;
    for (int64_t b = 0; b < nbatch && ok; b++) {
        int64_t i0 = b * VS_TRAIN_EVAL_BATCH, nb = n - i0 < VS_TRAIN_EVAL_BATCH ? n - i0 : VS_TRAIN_EVAL_BATCH;
        vs_graph_batch g = {0};
        vs_forward_ctx ctx = {0};
        vs_tensor *x;
        ok = vs_train_input(d, rows + i0, nb, &x, &g, &ctx, err) == VS_OK;
        if (ok) {
            vs_clear_last_error();
            parts[b] = vs_module_forward(m, x, &ctx);
            ok = parts[b] && parts[b]->ndim == 2 && parts[b]->shape[0] == nb;
            if (!parts[b]) {
                fit_error(err, d);
            } else if (!ok) {
                char s[96];
                vs_shape_str(parts[b], s, sizeof s);
                vs_error_set(err, VS_ERR_SHAPE, "siamese: the encoder gives %s for %lld examples, expected [%lld, dim]", s,
                             (long long)nb, (long long)nb);
            }
        }
        vs_graph_batch_clear(&g);
    }
    if (ok && nbatch > 0) {
        e = vs_concat((int)nbatch, parts, 0);
        if (!e) vs_error_set(err, VS_ERR_NOMEM, "siamese evaluation: %s", vs_last_error()->msg);
    }
    free(parts);
    return e;
}

vs_status vs_train_pair_accuracy(vs_module *m, const vs_dataset *d, const vs_pairs *p, double *acc, vs_error *err)
{
    *acc = NAN;
    if (m->kind != VS_MODULE_SIAMESE)
        return vs_error_set(err, VS_ERR_ARG, "pair accuracy: the model is a %s, not a Siamese model", vs_module_kind_name(m->kind));
    if (!p || p->n == 0) return VS_OK;
    /* each row once: pos[row] = its index among the rows the pairs use */
    int64_t *pos = malloc((size_t)d->n * sizeof *pos), *rows = malloc((size_t)d->n * sizeof *rows);
    int64_t *ia = malloc((size_t)p->n * sizeof *ia), *ib = malloc((size_t)p->n * sizeof *ib), nr = 0;
    vs_status st = VS_OK;
    if (!pos || !rows || !ia || !ib) st = vs_error_set(err, VS_ERR_NOMEM, "pair accuracy: out of memory");
    for (int64_t i = 0; st == VS_OK && i < d->n; i++) pos[i] = -1;
    for (int64_t k = 0; st == VS_OK && k < 2 * p->n; k++) {
        int64_t r = p->idx[k];
        if (r < 0 || r >= d->n) {
            st = vs_error_set(err, VS_ERR_ARG, "pair accuracy: row %lld outside [0, %lld)", (long long)r, (long long)d->n);
            break;
        }
        if (pos[r] < 0) rows[nr] = r, pos[r] = nr++;
        (k % 2 ? ib : ia)[k / 2] = pos[r];
    }
    if (st == VS_OK) {
        eval_guard guard = eval_begin(m);
        vs_scope_begin();
        vs_tensor *e = embed_rows(m->children[0], d, rows, nr, err);
        vs_tensor *s = e ? vs_cosine_similarity(vs_index_select(e, 0, ia, p->n), vs_index_select(e, 0, ib, p->n), 1, 1e-8f) : NULL;
        if (e && !s) st = vs_error_set(err, VS_ERR_NOMEM, "pair accuracy: %s", vs_last_error()->msg);
        else if (!e) st = err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
        int64_t correct = 0;
        for (int64_t k = 0; s && k < p->n; k++) correct += (s->data[k] > 0) == (p->label[k] != 0);
        if (s) *acc = (double)correct / (double)p->n;
        vs_scope_end();
        eval_end(m, guard);
    }
    free(pos);
    free(rows);
    free(ia);
    free(ib);
    return st;
}
