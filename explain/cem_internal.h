/* explain/cem_internal.h - pieces the CEM files share: the class margin, the c search and the
 * prefix evaluation of a feature order. */
#ifndef VERSUS_EXPLAIN_CEM_INTERNAL_H
#define VERSUS_EXPLAIN_CEM_INTERNAL_H

#include "versus/cem.h"

/* m [n] = f_t0 - max_{i != t0} f_i of logits [n,C], t0[n] per row (differentiable). */
vs_tensor *vs_cem_margin(vs_tensor *logits, const int64_t *t0);
/* c[b] max(m[b], -kappa) [n] for margins m [n] (differentiable in m). */
vs_tensor *vs_cem_hinge(vs_tensor *m, const float *c, float kappa);
/* argmax of each row of logits [n,C] into cls[n]. */
void vs_cem_argmax(const vs_tensor *logits, int64_t *cls);
/* Predicted classes of x [n, ...] (no graph). */
vs_status vs_cem_predict(const vs_model_fn *f, vs_tensor *x, int64_t *cls, vs_error *err);

/* The c search of the supplement over n blocks: c[b] starts at c0; after each run, c[b] /= 2 when
 * found[b] (a valid iterate in that run), else c[b] *= 10. */
void vs_cem_c_update(float *c, const bool *found, int64_t n);

/* Scores of prefixes of order (see vs_cem_prefix_scores); with stop_first the evaluation stops after
 * the chunk holding the first prefix predicting t0 (later scores are left untouched). */
vs_status vs_cem_prefixes(const vs_model_fn *f, const float *x0, int ndim, const int64_t *shape, const int32_t *segments,
                          const int32_t *order, int64_t n_order, int64_t t0, bool stop_first, float *scores, int64_t *first_ok,
                          vs_error *err);

#endif
