/* task_classifier.c - the classifier task: rows, loss = cross_entropy(m(x), y), metrics train and
 * test accuracy (mean [argmax m(x) == y]).  The train accuracy is counted on the logits the last
 * epoch's steps computed anyway (training mode, weights as they were at each step, as a PyTorch loop
 * reports it), so the train rows are not run again; only when that epoch was not seen whole (a run
 * resumed inside it) are they evaluated after training. */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <stdlib.h>

/* The step's labels, and the train accuracy of the steps. */
typedef struct classifier_state {
    int64_t *labels;
    vs_step_accuracy acc;
} classifier_state;

static vs_status classifier_init(vs_task_run *r, vs_error *err)
{
    classifier_state *s = calloc(1, sizeof *s);
    if (s) s->labels = malloc((size_t)r->opts->batch_size * sizeof *s->labels);
    if (!s || !s->labels) {
        free(s);
        return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    }
    s->acc.epoch = -1;
    r->state = s;
    return VS_OK;
}

static void classifier_clear(vs_task_run *r)
{
    classifier_state *s = r->state;
    if (s) free(s->labels);
    free(s);
    r->state = NULL;
}

/* The rows of logits y [n, C] whose largest score (the first on ties) is the label. */
static int64_t count_correct(const vs_tensor *y, const int64_t *labels, int64_t n)
{
    const int64_t c = y->shape[1];
    int64_t correct = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *z = y->data + i * c;
        int64_t best = 0;
        for (int64_t k = 1; k < c; k++)
            if (z[k] > z[best]) best = k;
        correct += best == labels[i];
    }
    return correct;
}

static vs_status classifier_step(vs_task_run *r, const int64_t *rows, int64_t n, double *terms, vs_error *err)
{
    classifier_state *s = r->state;
    vs_graph_batch g = {0};
    vs_tensor *y = vs_train_logits(r->model, r->data, rows, n, r->forward, &g, err);
    vs_status st = y ? VS_OK : err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
    for (int64_t k = 0; y && k < n; k++) s->labels[k] = r->data->y[rows[k]];
    if (st == VS_OK) {
        vs_step_accuracy_add(&s->acc, r->loop, count_correct(y, s->labels, n), n);
        vs_tensor *l = vs_cross_entropy(y, s->labels);
        if (l) terms[0] = vs_item(l);
        st = vs_task_update(r, "model", l, err);
    }
    vs_graph_batch_clear(&g);
    return st;
}

static vs_status classifier_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    const vs_train_split *sp = r->split;
    const classifier_state *s = r->state;
    double train, test;
    res->n_train = sp->n_train, res->n_test = sp->n_test;
    vs_status st = VS_OK;
    if (!vs_step_accuracy_of_last_epoch(&s->acc, r->loop, sp->n_train, &train))
        st = vs_train_accuracy(r->model, r->data, sp->train, sp->n_train, &train, err);
    if (st == VS_OK) st = vs_train_accuracy(r->model, r->test, sp->test, sp->n_test, &test, err);
    return st == VS_OK ? vs_train_put_accuracies(res, train, test) : st;
}

const vs_task vs_task_classifier = {
    .name = "classifier",
    .help = "classifier: loss = cross_entropy(m(x), y); reports train accuracy (over the last epoch's steps) and test "
            "accuracy.",
    .optims = vs_task_one_model,
    .terms = vs_task_one_loss,
    .init = classifier_init,
    .clear = classifier_clear,
    .step = classifier_step,
    .evaluate = classifier_evaluate,
};
