/* versus/train.h - training classifiers and Siamese models: seeded minibatches, evaluation,
 * a progress bar, a NaN/Inf guard, atomic checkpoints and bit-identical resume.
 *
 * Tasks.  The task follows the model: a Siamese module (VS_MODULE_SIAMESE) is trained on pairs,
 * anything else is a classifier trained on rows.
 *   classifier: loss = cross_entropy(m(x), y); accuracy = mean [argmax m(x) == y].
 *   Siamese:    s = cos(enc(a), enc(b)) in [-1, 1];
 *               loss = BCE(sigmoid(scale * s), [y_a == y_b]) = mean softplus(scale s) - t scale s;
 *               a pair is predicted "same class" when sigmoid(scale s) > 0.5, i.e. s > 0;
 *               pair accuracy = mean [(s > 0) == (y_a == y_b)].  scale (default 5) stretches the
 *               cosine so the logit can reach +-5 and the loss can approach 0.
 * Inputs follow the data: tabular rows [n, p], images [n, c, h, w], graphs as node rows [nodes, F]
 * with the graph batch in the forward context (versus/gnn.h).
 *
 * Split (vs_train_split_make, the protocol of SNX Sec. IV-A, the same as `versus data export
 * --pairs`): r = vs_rng_seed(split_seed); vs_split_stratified(y, n, C, train_frac, &r) gives the
 * train and test rows; for Siamese models vs_pairs_snx(train rows, 2 same, 2 different, &r), then
 * vs_pairs_snx(test rows, 2, 2, &r) give the train and test pairs.  With a separate test set every
 * row of the data trains and the test set's rows test (pairs drawn the same way, train then test).
 * An explainer recovers the test portion of a trained model from split_seed and train_frac alone.
 *
 * Pairing for Siamese training: VS_PAIRING_SNX trains on the fixed SNX train pairs (shuffled each
 * epoch); VS_PAIRING_RANDOM draws 4 * n_train fresh balanced pairs (vs_pairs_random) every epoch.
 * Evaluation always uses the SNX pairs of each portion.
 *
 * Randomness: every draw derives from opts.seed: the split and pairs as above, and two streams
 * split off vs_rng_seed(seed ^ VS_TRAIN_STREAM): the epoch order (permutation, random pairs) and the
 * dropout masks.  Same seed, same data, same options: the same weights, bit for bit.
 *
 * Checkpoints (one file, replaced atomically: temporary file, fsync, rename) are a safetensors file
 * holding every parameter and buffer as "model.<name>", the optimiser state (versus/optim.h) as
 * "optim.<name>", and in its metadata "format": "versus-checkpoint/1" and "state": a small JSON
 * object (epochs done, step inside the epoch, the epoch-order generator as it stood when the epoch
 * began, the dropout generator, the running loss, the loss history, training seconds, and the
 * options that must not change on resume).  Resuming rebuilds the epoch's order from the saved
 * generator and skips the steps already taken, so an interrupted run that is resumed ends with
 * the same bits as an uninterrupted one.  Resuming with more epochs than the checkpoint's run
 * continues it.
 *
 * Ownership: vs_train borrows the model (updated in place; left in training mode) and the data
 * sets; everything it allocates is released before it returns.  Each step runs inside its own
 * vs_scope, so memory stays flat over a run.
 */
#ifndef VERSUS_TRAIN_H
#define VERSUS_TRAIN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/nn.h"
#include "versus/optim.h"
#include "versus/pairs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_TRAIN_STREAM 0x747261696e73ull   /* "trains": seed ^ this seeds the order/dropout streams */
#define VS_TRAIN_CHECKPOINT_FORMAT "versus-checkpoint/1"
#define VS_TRAIN_SIAMESE_SCALE 5.0f         /* default scale of the cosine in the Siamese loss */
#define VS_TRAIN_PAIRS_PER_ROW 4            /* random pairing: pairs per train row and epoch (SNX: 2 + 2) */

typedef enum vs_pairing { VS_PAIRING_SNX = 0, VS_PAIRING_RANDOM = 1 } vs_pairing;
const char *vs_pairing_name(vs_pairing p);                  /* "snx", "random" */
bool vs_pairing_from_name(const char *name, vs_pairing *p); /* false when unknown */

/* Where a run stands, handed to opts.on_step after every step and drawn by the progress bar. */
typedef struct vs_train_progress {
    int64_t epoch, epochs;        /* current epoch (1-based) of epochs */
    int64_t step, steps;          /* steps done in this epoch, of steps per epoch */
    int64_t global_step;          /* steps since the start of training (across resumes) */
    double loss;                  /* mean loss of the epoch so far */
    double seconds;               /* wall time of this session's training so far */
    double rate;                  /* steps per second in this session */
} vs_train_progress;

typedef struct vs_train_opts {
    int64_t epochs;               /* passes over the training rows (pairs); default 10 */
    int64_t batch_size;           /* rows (classifier) or pairs (Siamese) per step; default 64 */
    vs_optim_opts optim;          /* default vs_adam_opts(1e-3) */
    uint64_t seed;                /* default 1 */
    double train_frac;            /* share of each class in train; default 0.7 (ignored with test) */
    const vs_dataset *test;       /* a separate test set (same kind and shape), or NULL to split */
    vs_pairing pairing;           /* Siamese; default VS_PAIRING_SNX */
    float siamese_scale;          /* Siamese; default VS_TRAIN_SIAMESE_SCALE */
    const char *checkpoint;       /* checkpoint file, or NULL for none */
    int64_t checkpoint_every;     /* also checkpoint every this many steps; 0: at epoch ends only */
    bool resume;                  /* continue from checkpoint (which must exist) */
    FILE *progress;               /* progress bar and epoch lines go here when it is a terminal; NULL: none */
    volatile sig_atomic_t *stop;  /* when *stop becomes nonzero (a SIGINT handler sets it): checkpoint, return */
    void (*on_step)(void *user, const vs_train_progress *p); /* after every step; may be NULL */
    void *user;
} vs_train_opts;

void vs_train_opts_init(vs_train_opts *o);  /* the defaults above */

typedef struct vs_train_result {
    int64_t epochs;               /* epochs completed (across resumes) */
    int64_t global_step;          /* optimiser steps taken (across resumes) */
    double final_loss;            /* mean loss of the last completed epoch (NaN before one) */
    double *loss_history;         /* [epochs] mean loss of each epoch; malloc'd, vs_train_result_clear frees */
    double train_accuracy;        /* classifier accuracy / Siamese pair accuracy on the train portion */
    double test_accuracy;         /* ... on the test portion (NaN when it is empty) */
    int64_t n_train, n_test;      /* rows (classifier) or pairs (Siamese) behind the two accuracies */
    bool siamese;                 /* pair accuracies */
    bool interrupted;             /* *stop was set: checkpoint written (when configured), accuracies NaN */
    double seconds;               /* wall time spent training (across resumes), evaluation excluded */
} vs_train_result;

void vs_train_result_clear(vs_train_result *r); /* free loss_history; NULL is fine */

/* Train m on d.  VS_OK also when interrupted (res->interrupted says so; the model then holds the
 * weights of the checkpoint).  Errors: VS_ERR_NUMERIC when the loss or a gradient stops being
 * finite ("training diverged at epoch 2/10, step 17/110: the loss is nan ..."); the model is then
 * left as it was after the last good step and no checkpoint is written over a good one.
 * VS_ERR_SHAPE / VS_ERR_ARG when the model does not fit the data, VS_ERR_IO / VS_ERR_FORMAT for
 * checkpoint files (messages name the file and the field), VS_ERR_ARG when resuming with options
 * that differ from the checkpoint's (the message names the option). */
vs_status vs_train(vs_module *m, const vs_dataset *d, const vs_train_opts *opts, vs_train_result *res, vs_error *err);

/* ---- the split (see the header comment) ------------------------------------------------------------ */
typedef struct vs_train_split {
    int64_t *train, *test;        /* row indices (ascending; into d, and into the test set when separate) */
    int64_t n_train, n_test;
    vs_pairs *train_pairs;        /* SNX pairs within each portion (with_pairs), else NULL */
    vs_pairs *test_pairs;
} vs_train_split;

/* Split d (test NULL) or take all of d and all of test.  with_pairs adds the SNX pairs. */
vs_status vs_train_split_make(const vs_dataset *d, const vs_dataset *test, uint64_t split_seed, double train_frac,
                              bool with_pairs, vs_train_split *out, vs_error *err);
void vs_train_split_clear(vs_train_split *s); /* free the arrays and pairs, zero s */

/* ---- pieces the loop is built from, public for predict, evaluate and explainers ---------------------- */

/* Model input for rows[0..n) of d: x [n, ...] (images [n,c,h,w], tabular [n,p]) owned by the current
 * scope; for graphs x is the batch's node rows [nodes, F], *g receives the batch (the caller clears
 * it) and ctx->graph points at it.  ctx's other fields are left as they are. */
vs_status vs_train_input(const vs_dataset *d, const int64_t *rows, int64_t n, vs_tensor **x, vs_graph_batch *g,
                         vs_forward_ctx *ctx, vs_error *err);
/* Classifier accuracy on rows[0..n) of d: mean [argmax m(x) == y], evaluation mode, no gradients. */
vs_status vs_train_accuracy(vs_module *m, const vs_dataset *d, const int64_t *rows, int64_t n, double *acc,
                            vs_error *err);
/* Siamese pair accuracy: mean [(cos > 0) == label] over p (pairs of rows of d). */
vs_status vs_train_pair_accuracy(vs_module *m, const vs_dataset *d, const vs_pairs *p, double *acc, vs_error *err);

/* Rows of d whose class is one of classes[0..k) (distinct), relabelled: class classes[j] becomes j,
 * class names follow.  *out is a new data set (vs_dataset_free). */
vs_status vs_dataset_select_classes(const vs_dataset *d, const int64_t *classes, int64_t k, vs_dataset **out,
                                    vs_error *err);

/* The progress bar's line: "epoch 2/10  step 57/110  loss 0.2345  61.3 steps/s  ETA 1:02:03". */
void vs_train_progress_format(const vs_train_progress *p, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
