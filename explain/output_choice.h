/* explain/output_choice.h - what of a model's outputs `versus attribute` and `versus evaluate`
 * explain, loaded once for both (explain/output_score.c): per-row targets T.npy, an output mask
 * M.npy (one row [1, ...] or one per row [N, ...]), or a scalar of the output (sum, norm,
 * reconstruction).  Private to explain/. */
#ifndef VERSUS_EXPLAIN_OUTPUT_CHOICE_H
#define VERSUS_EXPLAIN_OUTPUT_CHOICE_H

#include "versus/explain.h"

typedef struct vs_output_choice {
    int64_t *targets;        /* [n] row i's target, or NULL */
    vs_tensor *mask;         /* [1 or n, ...] the output weights, or NULL */
    vs_output_score score;   /* with a mask or a scalar: the model S(x) */
    bool scored;             /* fn was replaced by vs_model_fn_scored(&score) */
} vs_output_choice;

/* Load what the paths and the name ask for (each may be NULL) for n input rows; when a scalar is
 * explained, *fn becomes it (its old value the inner model).  Contradictions (targets with a scalar,
 * a contrast with a scalar) are VS_ERR_ARG; files that do not fit name the file. */
vs_status vs_output_choice_load(const char *targets, const char *mask, const char *score, bool given_target, bool given_contrast, int64_t n,
                                vs_model_fn *fn, vs_output_choice *c, vs_error *err);
/* Before explaining row i: its mask row.  Returns row i's target from the file, else dflt. */
int64_t vs_output_choice_row(vs_output_choice *c, int64_t i, int64_t dflt);
void vs_output_choice_free(vs_output_choice *c);

#endif
