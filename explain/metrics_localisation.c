/* metrics_localisation.c - does a map point at the ground truth?  Quantus's localisation family
 * against a mask s (s[i] != 0: inside): pointing game, relevance mass and rank accuracy, top-k
 * intersection and the ROC AUC.  Maps are taken as they are (signed), as Quantus's defaults do; every
 * function returns NAN for an empty mask. */
#include "versus/metrics.h"

#include <math.h>
#include <stdlib.h>

static int64_t mask_size(const uint8_t *s, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += s[i] != 0;
    return k;
}

double vs_pointing_game(const float *a, const uint8_t *s, int64_t n)
{
    if (n < 1 || mask_size(s, n) == 0) return NAN;
    float best = a[0];
    for (int64_t i = 1; i < n; i++) best = a[i] > best ? a[i] : best;
    for (int64_t i = 0; i < n; i++)
        if (a[i] == best && s[i]) return 1; /* any maximum inside is a hit (Quantus) */
    return 0;
}

double vs_relevance_mass(const float *a, const uint8_t *s, int64_t n)
{
    if (mask_size(s, n) == 0) return NAN;
    double in = 0, all = 0;
    for (int64_t i = 0; i < n; i++) {
        all += a[i];
        if (s[i]) in += a[i];
    }
    return in / all;
}

typedef struct ranked {
    float v;
    int64_t i;
} ranked;

/* Decreasing value, ties by increasing index (a stable, reproducible order). */
static int ranked_desc(const void *p, const void *q)
{
    const ranked *a = p, *b = q;
    if (a->v != b->v) return a->v < b->v ? 1 : -1;
    return (a->i > b->i) - (a->i < b->i);
}

double vs_top_k_intersection(const float *a, const uint8_t *s, int64_t n, int64_t k)
{
    if (mask_size(s, n) == 0 || k < 1) return NAN;
    k = k < n ? k : n;
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r) return NAN;
    for (int64_t i = 0; i < n; i++) r[i] = (ranked){a[i], i};
    qsort(r, (size_t)n, sizeof *r, ranked_desc);
    int64_t hits = 0;
    for (int64_t t = 0; t < k; t++) hits += s[r[t].i] != 0;
    free(r);
    return (double)hits / (double)k;
}

double vs_relevance_rank(const float *a, const uint8_t *s, int64_t n) { return vs_top_k_intersection(a, s, n, mask_size(s, n)); }

double vs_localisation_auc(const float *a, const uint8_t *s, int64_t n)
{
    int64_t pos = mask_size(s, n), neg = n - pos;
    if (pos == 0) return NAN;
    if (neg == 0) return NAN;
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r) return NAN;
    for (int64_t i = 0; i < n; i++) r[i] = (ranked){a[i], i};
    qsort(r, (size_t)n, sizeof *r, ranked_desc);
    /* Mann-Whitney: the probability that an inside element outscores an outside one, ties half */
    double wins = 0;
    int64_t neg_below = neg;
    for (int64_t t = 0; t < n;) {
        int64_t u = t, p = 0, q = 0;
        while (u < n && r[u].v == r[t].v) {
            if (s[r[u].i]) p++; else q++;
            u++;
        }
        neg_below -= q;
        wins += (double)p * ((double)neg_below + 0.5 * (double)q);
        t = u;
    }
    free(r);
    return wins / ((double)pos * (double)neg);
}
