/* task_classifier.c - the classifier task: rows, loss = cross_entropy(m(x), y), metrics train and
 * test accuracy (mean [argmax m(x) == y]). */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <stdlib.h>

static vs_status classifier_init(vs_task_run *r, vs_error *err)
{
    r->state = malloc((size_t)r->opts->batch_size * sizeof(int64_t));
    return r->state ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
}

static void classifier_clear(vs_task_run *r)
{
    free(r->state);
    r->state = NULL;
}

static vs_status classifier_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    int64_t *labels = r->state;
    vs_graph_batch g = {0};
    vs_tensor *y = vs_train_logits(r->model, r->data, rows, n, r->forward, &g, err);
    vs_status st = y ? VS_OK : err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
    for (int64_t k = 0; y && k < n; k++) labels[k] = r->data->y[rows[k]];
    if (st == VS_OK) {
        vs_tensor *l = vs_cross_entropy(y, labels);
        if (l) terms[0] = vs_item(l);
        st = vs_task_update(r, "model", l, err);
    }
    vs_graph_batch_clear(&g);
    return st;
}

static vs_status classifier_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    const vs_train_split *s = r->split;
    double train, test;
    res->n_train = s->n_train, res->n_test = s->n_test;
    vs_status st = vs_train_accuracy(r->model, r->data, s->train, s->n_train, &train, err);
    if (st == VS_OK) st = vs_train_accuracy(r->model, r->test, s->test, s->n_test, &test, err);
    return st == VS_OK ? vs_train_put_accuracies(res, train, test) : st;
}

const vs_task vs_task_classifier = {
    .name = "classifier",
    .help = "classifier: loss = cross_entropy(m(x), y); reports train and test accuracy.",
    .optims = vs_task_one_model,
    .terms = vs_task_one_loss,
    .init = classifier_init,
    .clear = classifier_clear,
    .step = classifier_step,
    .evaluate = classifier_evaluate,
};
