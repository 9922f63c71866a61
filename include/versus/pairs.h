/* versus/pairs.h - train/test splits, the SNX pairing protocol, random Siamese pairs, subsets.
 *
 * Labels are given as y[0..n) with classes in [0, n_classes).  A "portion" is a list of distinct row
 * indices into the data set (a split's train or test part); NULL means all rows 0..n-1 (n_portion is
 * then ignored).  Pairs always hold row indices of the data set itself, so they index
 * d->X / d->graphs directly.  Every draw comes from the vs_rng passed in.
 *
 * Ownership: index arrays and vs_pairs are new allocations the caller frees (free(),
 * vs_pairs_free()); on failure outputs are NULL / 0, err says why, nothing leaks. */
#ifndef VERSUS_PAIRS_H
#define VERSUS_PAIRS_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_SPLIT_TRAIN_DEFAULT 0.7  /* SNX Sec. IV-A: 70% train, 30% test */
#define VS_SNX_PAIRS_SAME 2         /* SNX Sec. IV-H: partners of the same class per sample */
#define VS_SNX_PAIRS_DIFF 2         /* ... and of a different class */

/* Query-reference pairs: (idx[2k], idx[2k+1]) = (s, t), label[k] = 1[y_s == y_t]. */
typedef struct vs_pairs {
    int64_t n;        /* number of pairs */
    int64_t *idx;     /* [n, 2] row indices into the data set */
    int64_t *label;   /* [n] 1 = same class, 0 = different */
} vs_pairs;

void vs_pairs_free(vs_pairs *p);   /* frees p and its arrays; NULL is fine */

/* Stratified split of rows 0..n-1: class c with n_c rows puts round(train_frac * n_c) of them, drawn
 * at random, in train (clamped to [1, n_c - 1] when n_c >= 2 so both portions see every class that
 * can be shared), the rest in test.  Both index lists come back in ascending order; together they
 * cover 0..n-1 exactly once.  train_frac in (0, 1); y[i] in [0, n_classes). */
vs_status vs_split_stratified(const int64_t *y, int64_t n, int64_t n_classes, double train_frac, vs_rng *rng,
                              int64_t **train, int64_t *n_train, int64_t **test, int64_t *n_test,
                              vs_error *err);

/* SNX pairing inside one portion: for each portion row s (in portion order) n_same partners t of
 * class y_s and n_diff partners of other classes, each set drawn uniformly without replacement from
 * the portion, t != s.  Pairs come grouped per s: same-class partners first.  n = n_portion *
 * (n_same + n_diff).  VS_ERR_ARG when a class has fewer than n_same + 1 rows in the portion, or the
 * other classes fewer than n_diff rows (the message names the class and the counts). */
vs_status vs_pairs_snx(const int64_t *y, int64_t n, int64_t n_classes, const int64_t *portion, int64_t n_portion,
                       int64_t n_same, int64_t n_diff, vs_rng *rng, vs_pairs **out, vs_error *err);

/* n_pairs random pairs for Siamese training, balanced: pair k is positive (same class) for even k,
 * negative for odd k.  s is uniform over the rows that admit the pair type (a positive needs a
 * class with >= 2 rows), t uniform over the admissible partners, t != s.  VS_ERR_ARG when a
 * required pair type is impossible in the portion. */
vs_status vs_pairs_random(const int64_t *y, int64_t n, int64_t n_classes, const int64_t *portion, int64_t n_portion,
                          int64_t n_pairs, vs_rng *rng, vs_pairs **out, vs_error *err);

/* Deep copy of rows idx[0..n_idx) of d (repeats allowed), in that order: X rows, y, graphs (all
 * arrays), and everything shared by all rows (names, shape, groups, class names, truth masks). */
vs_status vs_dataset_subset(const vs_dataset *d, const int64_t *idx, int64_t n_idx, vs_dataset **out,
                            vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
