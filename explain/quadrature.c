/* quadrature.c - Riemann and Gauss-Legendre rules on [0, 1] for integrated gradients. */
#include "versus/explain.h"

#include <math.h>

/* Gauss-Legendre nodes on [-1, 1] by Newton iteration on P_n (Golub-Welsch is not needed for n <= 1000). */
static void gauss_legendre(int n, double *x, double *w)
{
    for (int i = 0; i < (n + 1) / 2; i++) {
        double z = cos(3.14159265358979323846 * (i + 0.75) / (n + 0.5)), pp = 0;
        for (int it = 0; it < 100; it++) {
            double p1 = 1, p2 = 0;
            for (int k = 1; k <= n; k++) {
                double p3 = p2;
                p2 = p1;
                p1 = ((2.0 * k - 1) * z * p2 - (k - 1.0) * p3) / k;
            }
            pp = n * (z * p1 - p2) / (z * z - 1);
            double z1 = z;
            z = z1 - p1 / pp;
            if (fabs(z - z1) < 1e-15) break;
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = w[n - 1 - i] = 2 / ((1 - z * z) * pp * pp);
    }
}

vs_status vs_quadrature(vs_ig_rule rule, int n, double *nodes, double *weights)
{
    if (n < 1) return VS_ERR_ARG;
    if (rule == VS_IG_TRAPEZOID && n < 2) return VS_ERR_ARG;
    if (rule == VS_IG_GAUSS_LEGENDRE && n > VS_GAUSS_LEGENDRE_MAX) return VS_ERR_ARG;
    switch (rule) {
    case VS_IG_GAUSS_LEGENDRE:
        gauss_legendre(n, nodes, weights);
        for (int i = 0; i < n; i++) {
            nodes[i] = 0.5 * (nodes[i] + 1);
            weights[i] *= 0.5;
        }
        break;
    case VS_IG_LEFT:
    case VS_IG_RIGHT:
    case VS_IG_MIDDLE:
        for (int i = 0; i < n; i++) {
            double off = rule == VS_IG_LEFT ? 0 : rule == VS_IG_RIGHT ? 1 : 0.5;
            nodes[i] = (i + off) / n;
            weights[i] = 1.0 / n;
        }
        break;
    case VS_IG_TRAPEZOID:
        for (int i = 0; i < n; i++) {
            nodes[i] = (double)i / (n - 1);
            weights[i] = (i == 0 || i == n - 1 ? 0.5 : 1.0) / (n - 1);
        }
        break;
    default:
        return VS_ERR_ARG;
    }
    return VS_OK;
}
