/* metrics_complexity.c - how concentrated is a map (Quantus's complexity family): the entropy of its
 * fractional contributions (Bhatt et al. 2020) and its effective complexity (Nguyen & Martinez 2020).
 * Sparseness (Chalasani et al. 2020), the Gini index of |a|, is vs_gini in metrics.c. */
#include "versus/metrics.h"

#include <math.h>

double vs_complexity(const float *a, int64_t n)
{
    double total = 0, h = 0;
    for (int64_t i = 0; i < n; i++) total += fabs(a[i]);
    if (!(total > 0)) return NAN;
    for (int64_t i = 0; i < n; i++) {
        double p = fabs(a[i]) / total;
        if (p > 0) h -= p * log(p);
    }
    return h;
}

int64_t vs_effective_complexity(const float *a, int64_t n, double eps)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += fabs(a[i]) > eps;
    return k;
}
