/* task_siamese.c - the Siamese task: pairs of rows (the fixed SNX train pairs, or fresh random
 * pairs every epoch), loss = BCE(sigmoid(scale cos(enc(a), enc(b))), [same class]), metrics the
 * pair accuracy on the SNX pairs of each portion (on the train pairs counted on the last epoch's
 * steps when they trained on the SNX pairs, as task_classifier.c does). */
#include "nn/train_internal.h"
#include "versus/ops.h"

#include <stdlib.h>

typedef struct siamese_state {
    vs_pairs *random_pairs;       /* VS_PAIRING_RANDOM: this epoch's pairs */
    const vs_pairs *pairs;        /* the pairs being trained on */
    vs_step_accuracy acc;         /* on the SNX train pairs, when those are trained on */
} siamese_state;

static vs_status siamese_init(vs_task_run *r, vs_error *err)
{
    if (r->model->kind != VS_MODULE_SIAMESE)
        return vs_error_set(err, VS_ERR_ARG, "train: the siamese task needs a Siamese model, not a %s", vs_module_kind_name(r->model->kind));
    siamese_state *s = calloc(1, sizeof *s);
    if (!s) return vs_error_set(err, VS_ERR_NOMEM, "train: out of memory");
    s->pairs = r->split->train_pairs;
    s->acc.epoch = -1;
    r->state = s;
    return VS_OK;
}

static void siamese_clear(vs_task_run *r)
{
    siamese_state *s = r->state;
    if (s) vs_pairs_free(s->random_pairs);
    free(s);
    r->state = NULL;
}

static vs_status siamese_epoch_items(vs_task_run *r, int64_t *n_items, vs_error *err)
{
    siamese_state *s = r->state;
    if (r->opts->pairing == VS_PAIRING_RANDOM) {
        vs_pairs_free(s->random_pairs);
        s->random_pairs = NULL;
        const vs_train_split *sp = r->split;
        vs_status st = vs_pairs_random(r->data->y, r->data->n, r->data->n_classes, sp->train, sp->n_train,
                                       VS_TRAIN_PAIRS_PER_ROW * sp->n_train, r->order, &s->random_pairs, err);
        if (st != VS_OK) return st;
        s->pairs = s->random_pairs;
    }
    *n_items = s->pairs->n;
    return VS_OK;
}

static vs_status siamese_step(vs_task_run *r, const int64_t *items, int64_t n, double *terms, vs_error *err)
{
    siamese_state *s = r->state;
    vs_tensor *sim = vs_train_similarity(r->model, r->data, s->pairs, items, n, r->forward, err);
    if (!sim) return err && err->code != VS_OK ? err->code : VS_ERR_SHAPE;
    vs_tensor *target = vs_tensor_new(VS_SHAPE(n));
    for (int64_t k = 0; target && k < n; k++) target->data[k] = s->pairs->label[items[k]] ? 1.0f : 0.0f;
    if (target && s->pairs == r->split->train_pairs) {
        int64_t correct = 0;
        for (int64_t k = 0; k < n; k++) correct += (sim->data[k] > 0) == (target->data[k] > 0.5f);
        vs_step_accuracy_add(&s->acc, r->loop, correct, n);
    }
    vs_tensor *l = vs_bce_with_logits(vs_mul_scalar(sim, r->opts->siamese_scale), target);
    if (l) terms[0] = vs_item(l);
    return vs_task_update(r, "model", l, err);
}

static vs_status siamese_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err)
{
    const vs_train_split *sp = r->split;
    const siamese_state *s = r->state;
    double train, test;
    res->n_train = sp->train_pairs ? sp->train_pairs->n : 0;
    res->n_test = sp->test_pairs ? sp->test_pairs->n : 0;
    vs_status st = VS_OK;
    if (!sp->train_pairs || !vs_step_accuracy_of_last_epoch(&s->acc, r->loop, sp->train_pairs->n, &train))
        st = vs_train_pair_accuracy(r->model, r->data, sp->train_pairs, &train, err);
    if (st == VS_OK) st = vs_train_pair_accuracy(r->model, r->test, sp->test_pairs, &test, err);
    return st == VS_OK ? vs_train_put_accuracies(res, train, test) : st;
}

const vs_task vs_task_siamese = {
    .name = "siamese",
    .help = "siamese: pairs of rows; loss = BCE(sigmoid(5 cos(enc(a), enc(b))), [same class]); a pair is called\n"
            "    same-class when the cosine is > 0; reports that pair accuracy on the SNX pairs (--pairs; on the\n"
            "    train pairs counted on the last epoch's steps when they trained on them).",
    .optims = vs_task_one_model,
    .terms = vs_task_one_loss,
    .pairs = true,
    .init = siamese_init,
    .clear = siamese_clear,
    .epoch_items = siamese_epoch_items,
    .step = siamese_step,
    .evaluate = siamese_evaluate,
};
