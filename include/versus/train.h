/* versus/train.h - the training loop: seeded minibatches, several optimisers with learning-rate
 * schedules and clipping, evaluation, a progress bar showing every loss term, a NaN/Inf guard,
 * sample grids, atomic checkpoints and bit-identical resume.
 *
 * Tasks.  What a step does is the task's (versus/task.h): the task follows the model (composite
 * "task" key, else siamese for a Siamese module, else classifier).  The two classic ones:
 *   classifier: loss = cross_entropy(m(x), y); accuracy = mean [argmax m(x) == y].
 *   Siamese:    s = cos(enc(a), enc(b)) in [-1, 1];
 *               loss = BCE(sigmoid(scale * s), [y_a == y_b]) = mean softplus(scale s) - t scale s;
 *               a pair is predicted "same class" when sigmoid(scale s) > 0.5, i.e. s > 0;
 *               pair accuracy = mean [(s > 0) == (y_a == y_b)].  scale (default 5) stretches the
 *               cosine so the logit can reach +-5 and the loss can approach 0.
 * vae and gan are described in versus/task.h.
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
 * Pairing for Siamese training: VS_PAIRING_FIXED trains on the split's fixed train pairs (the
 * protocol above, shuffled each epoch); VS_PAIRING_RANDOM draws 4 * n_train fresh balanced pairs
 * (vs_pairs_random) every epoch.  Evaluation always uses the fixed pairs of each portion.
 *
 * Randomness: every draw derives from opts.seed: the split and pairs as above, and streams split
 * off vs_rng_seed(seed ^ VS_TRAIN_STREAM) in this order: the epoch order (permutation, random
 * pairs), the forward stream (dropout masks, reparameterisation noise), then the task's own streams
 * (a GAN's noise).  Same seed, same data, same options: the same weights, bit for bit.
 *
 * Optimisers.  The task names its optimisers ("model", or "generator" and "critic"); each gets
 * opts.optim, opts.schedule and opts.clip_norm unless opts.per_optim has an entry of that name.
 *
 * Checkpoints (one file, replaced atomically: temporary file, fsync, rename) are a safetensors file
 * holding every parameter and buffer of the root model as "model.<name>", each optimiser's state
 * (versus/optim.h) as "optim.<optimiser>.<name>", and in its metadata "format":
 * "versus-checkpoint/2" and "state": a small JSON object (epochs done, step inside the epoch, every
 * random stream (the epoch-order one as it stood when the epoch began), the loss terms' running
 * sums and history, training seconds, and the options that must not change on resume: task and
 * task options, every optimiser's settings, seed, batch size, ...).  Resuming rebuilds the epoch's
 * items and order from the saved generator and skips the steps already taken, so a run killed at
 * any point (SIGKILL included: the file on disk is always a whole checkpoint) and resumed ends with
 * the same bits as an uninterrupted one.  Resuming with more epochs continues the run.
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
#include "versus/task.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_TRAIN_STREAM 0x747261696e73ull   /* "trains": seed ^ this seeds the order/dropout streams */
#define VS_TRAIN_CHECKPOINT_FORMAT "versus-checkpoint/2"
#define VS_TRAIN_SIAMESE_SCALE 5.0f         /* default scale of the cosine in the Siamese loss */
#define VS_TRAIN_PAIRS_PER_ROW 4            /* random pairing: pairs per train row and epoch (fixed: 2 + 2) */

typedef enum vs_pairing { VS_PAIRING_FIXED = 0, VS_PAIRING_RANDOM = 1 } vs_pairing;
const char *vs_pairing_name(vs_pairing p);                  /* "fixed", "random" */
bool vs_pairing_from_name(const char *name, vs_pairing *p); /* false when unknown; "snx" is an alias of fixed */

/* Per-optimiser settings: applied to the task's optimiser `name` (NULL or "": every optimiser
 * without an entry of its own).  The learning rate follows schedule (its base_lr is optim.lr; a
 * cosine schedule with t_max 0 spans the run's epochs), set at the start of every epoch. */
typedef struct vs_train_optim {
    char name[32];
    vs_optim_opts optim;
    vs_lr_schedule schedule;      /* default VS_LR_CONSTANT */
    float clip_norm;              /* > 0: scale the gradients of these parameters to this norm at most */
} vs_train_optim;

/* Where a run stands, handed to opts.on_step after every step and drawn by the progress bar. */
typedef struct vs_train_progress {
    int64_t epoch, epochs;        /* current epoch (1-based) of epochs */
    int64_t step, steps;          /* steps done in this epoch, of steps per epoch */
    int64_t global_step;          /* steps since the start of training (across resumes) */
    double loss;                  /* mean of the first loss term over the epoch so far */
    int n_terms;                  /* the task's loss terms and their means over the epoch so far */
    const char *const *terms;
    double term[VS_TASK_MAX_TERMS];
    float lr[VS_TASK_MAX_OPTIMS]; /* each optimiser's learning rate in this epoch (task->optims order) */
    double seconds;               /* wall time of this session's training so far */
    double rate;                  /* steps per second over the last 64 steps of this session, its first step
                                     (which carries the warm-up) left out; 0 until two steps are done */
} vs_train_progress;

struct vs_train_opts {
    int64_t epochs;               /* passes over the training rows (pairs); default 10 */
    int64_t batch_size;           /* rows (classifier) or pairs (Siamese) per step; default 64 */
    vs_optim_opts optim;          /* every optimiser's; default vs_adam_opts(1e-3) */
    vs_lr_schedule schedule;      /* every optimiser's; default constant */
    float clip_norm;              /* every optimiser's gradient-norm clip; 0: none */
    const vs_train_optim *per_optim; /* [n_per_optim] overrides by optimiser name (vs_train_parse_optims) */
    int n_per_optim;
    const char *task_opts;        /* the task's options "name=value,..." (values, or choice names); NULL: defaults */
    uint64_t seed;                /* default 1 */
    double train_frac;            /* share of each class in train; default 0.7 (ignored with test) */
    const vs_dataset *test;       /* a separate test set (same kind and shape), or NULL to split */
    vs_pairing pairing;           /* Siamese; default VS_PAIRING_FIXED */
    float siamese_scale;          /* Siamese; default VS_TRAIN_SIAMESE_SCALE */
    const char *checkpoint;       /* checkpoint file, or NULL for none */
    int64_t checkpoint_every;     /* also checkpoint every this many steps; 0: at epoch ends only */
    bool resume;                  /* continue from checkpoint (which must exist) */
    const char *sample_dir;       /* generative tasks: write sample grids here (created when missing) */
    int64_t sample_every;         /* ... every this many steps (and after the last); 0: none */
    int64_t eval_every;           /* > 0: the task's evaluation every this many epochs, its test_* metrics in the
                                     epoch line (deterministic tasks only: classifier, siamese); 0: at the end only */
    FILE *progress;               /* epoch lines, and progress: a bar on a terminal, else a line every
                                     VERSUS_PROGRESS_SECONDS (default 30); NULL: none */
    volatile sig_atomic_t *stop;  /* when *stop becomes nonzero (a SIGINT handler sets it): checkpoint, return */
    void (*on_step)(void *user, const vs_train_progress *p); /* after every step; may be NULL */
    void *user;
};

void vs_train_opts_init(vs_train_opts *o);  /* the defaults above */

/* Overrides per optimiser from "NAME:key=value,...;NAME:..." (keys lr, beta1, beta2, eps,
 * weight_decay, momentum, clip), each starting from base's optimiser, schedule and clip: out[0..*n)
 * (at most max).  VS_ERR_ARG naming the key or the value otherwise. */
vs_status vs_train_parse_optims(const char *spec, const vs_train_opts *base, vs_train_optim *out, int max, int *n,
                                vs_error *err);

#define VS_TRAIN_MAX_METRICS 24
typedef struct vs_train_metric {
    char name[32];
    double value;
} vs_train_metric;

struct vs_train_result {
    const char *task;             /* the task's name (static) */
    int64_t epochs;               /* epochs completed (across resumes) */
    int64_t global_step;          /* steps taken (across resumes) */
    double final_loss;            /* mean first loss term of the last completed epoch (NaN before one) */
    int n_terms;                  /* the task's loss terms */
    const char *const *terms;
    double *loss_history;         /* [epochs * n_terms]: mean of each term per epoch (NaN when never
                                     computed); malloc'd, vs_train_result_clear frees */
    int n_metrics;                /* the task's evaluation, by name (vs_train_result_get) */
    vs_train_metric metrics[VS_TRAIN_MAX_METRICS];
    int64_t n_train, n_test;      /* rows (or pairs) behind the train and test metrics */
    bool interrupted;             /* *stop was set: checkpoint written (when configured), no metrics */
    double seconds;               /* wall time spent training (across resumes), evaluation excluded */
};

void vs_train_result_clear(vs_train_result *r); /* free loss_history; NULL is fine */
/* Metric `name` (classifier and Siamese: train_accuracy, test_accuracy; vae: test_elbo, ...), or NaN. */
double vs_train_result_get(const vs_train_result *r, const char *name);
/* Set metric name (replacing an earlier value).  VS_ERR_ARG when the table is full or the name too long. */
vs_status vs_train_result_put(vs_train_result *r, const char *name, double value);

/* Train m on d with the task of m (vs_task_for_model).  VS_OK also when interrupted
 * (res->interrupted says so; the model then holds the weights of the checkpoint).  Errors:
 * VS_ERR_NUMERIC when a loss or a gradient stops being finite ("training diverged at epoch 2/10,
 * step 17/110: the loss is nan ..."); the model is then left as it was after the last good step
 * and no checkpoint is written over a good one.  VS_ERR_SHAPE / VS_ERR_ARG when the model does not
 * fit the data or the task options are wrong, VS_ERR_IO / VS_ERR_FORMAT for checkpoint files
 * (messages name the file and the field), VS_ERR_ARG when resuming with options that differ from
 * the checkpoint's (the message names the option). */
vs_status vs_train(vs_module *m, const vs_dataset *d, const vs_train_opts *opts, vs_train_result *res, vs_error *err);

/* ---- the split (see the header comment) ------------------------------------------------------------ */
struct vs_train_split {
    int64_t *train, *test;        /* row indices (ascending; into d, and into the test set when separate) */
    int64_t n_train, n_test;
    vs_pairs *train_pairs;        /* SNX pairs within each portion (with_pairs), else NULL */
    vs_pairs *test_pairs;
};

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

/* The progress bar's line: "epoch 2/10 [###.....] step 57/110  loss 0.2345  61.3 steps/s  ETA 1:02:03", every
 * loss term computed so far in the epoch ("d_loss -1.203  g_loss 0.8  gp 0.1"). */
void vs_train_progress_format(const vs_train_progress *p, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
