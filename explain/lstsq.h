/* explain/lstsq.h - weighted least squares for the coalition methods (Kernel SHAP, LIME), whose
 * design rows are indicator vectors of sets of features, and the Cholesky solver behind it.
 *
 * Not installed.  A design row s 1_T (s = +1 or -1) is the row 1_T with its response multiplied
 * by s, since (y - s 1_T.beta)^2 = (s y - 1_T.beta)^2: callers fold the sign into the response.
 * All matrices are row-major doubles; the caller owns every buffer.  Results are bit-identical for
 * any thread count (vs_parallel_for with fixed chunks). */
#ifndef VERSUS_EXPLAIN_LSTSQ_H
#define VERSUS_EXPLAIN_LSTSQ_H

#include "versus/error.h"

#include <stdbool.h>
#include <stdint.h>

/* Normal equations of the set design: A = sum_r w_r 1_{T_r} 1_{T_r}^T, b = sum_r w_r c_r 1_{T_r},
 * T_r = {k : in[r*cols + k] != 0}; in [rows, cols], w, c [rows]; A [cols, cols] gets its upper
 * triangle (k <= l) only, b [cols].  Equal consecutive rows are merged; a row with |T| > |U|/2
 * (U = the columns some row holds) goes through its complement C = U \ T, 1_T 1_T^T =
 * 1_U 1_U^T - 1_U 1_C^T - 1_C 1_U^T + 1_C 1_C^T, so a row costs min(|T|, |U| - |T|)^2 / 2.  Entries
 * are exact for integer weights (Kernel SHAP's sampled coalitions); otherwise each is off by at most
 * a few ulps of sum_r w_r (normwise what a dense product gives); columns outside U stay exactly 0. */
vs_status vs_sets_gram(int64_t rows, int64_t cols, const uint8_t *in, const double *w, const double *c, double *A,
                       double *b);

/* Solve A x = b for symmetric positive definite A [n, n] given by its upper triangle: blocked
 * Cholesky A = U^T U in place (U overwrites the upper triangle), then b is overwritten by x.
 * False (A half-factored) when a pivot is not positive. */
bool vs_spd_solve(int64_t n, double *A, double *b);

/* beta = argmin sum_r w_r (c_r - 1_{T_r}.beta)^2 + ridge sum_{k < n_pen} beta_k^2, with a 1e-12
 * relative jitter on the unpenalised diagonal; beta [cols].  VS_ERR_NUMERIC when singular. */
vs_status vs_lstsq_sets(int64_t rows, int64_t cols, const uint8_t *in, const double *w, const double *c, double ridge,
                        int64_t n_pen, double *beta);

/* Reference for the tests: the same solution from a dense design X [rows, cols] (any values, the
 * response y, no sign folding) by plain loops: row-by-row X^T W X and an unblocked Cholesky. */
vs_status vs_lstsq_dense_ref(int64_t rows, int64_t cols, const double *X, const double *y, const double *w,
                             double ridge, int64_t n_pen, double *beta);

#endif
