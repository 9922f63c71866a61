/* nn/svae_internal.h - what the svae and m2 tasks share (nn/task_svae.c defines it): a labelled batch,
 * the evaluation (test accuracy of f(x), reconstruction term R and KL with the true label) and the
 * invariance sample grid. */
#ifndef VERSUS_NN_SVAE_INTERNAL_H
#define VERSUS_NN_SVAE_INTERNAL_H

#include "nn/train_internal.h"
#include "versus/svae.h"

/* x [n, ...], *labels (n of them, held by the task's state until the next batch) and their one-hot
 * y [n, C] for rows[0..n) of d; the tensors belong to the current scope. */
vs_status vs_svae_batch(vs_task_run *r, const vs_dataset *d, const int64_t *rows, int64_t n, vs_tensor **x, vs_tensor **y,
                        const int64_t **labels, vs_error *err);
/* init / clear of both tasks: the model's layout is checked and r->state holds the label buffer. */
vs_status vs_svae_task_init(vs_task_run *r, vs_error *err);
void vs_svae_task_clear(vs_task_run *r);
/* test_accuracy (argmax class_logits of x alone), test_R = mean log p(x|z) with z ~ q(z|x,y) for the
 * true y (one draw, seeded from the run's seed), test_kl = mean KL(q(z|x,y) || N(0,1)). */
vs_status vs_svae_task_evaluate(vs_task_run *r, vs_train_result *res, vs_error *err);
/* Rows of test images: the image, its reconstruction from the means, then decodes with z2 ~ N(0,1)
 * and z1 kept (the invariance grid). */
vs_status vs_svae_task_sample(vs_task_run *r, vs_rng *rng, vs_tensor **out, int *rows, int *cols, vs_error *err);

#endif
