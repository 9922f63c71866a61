/* test_exp_pd.c - vs_exp_pd: within 2 ulps of e^x (long double reference) over the whole range, the
 * edges (0 below -708, +inf above ln(DBL_MAX), NaN), and the same bits under every instruction set. */
#include "autograd/kernels.h"
#include "versus/rng.h"
#include "vs_check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 20011 /* odd, so every loop has a tail */

/* |y - e^x| in units of the last place of e^x (long double reference). */
static double ulps(double x, double y)
{
    const long double e = expl((long double)x);
    const double ulp = nextafter((double)e, INFINITY) - (double)e;
    return (double)(fabsl((long double)y - e) / ulp);
}

static void fill(double *x, vs_rng *r, double lo, double hi)
{
    for (int i = 0; i < N; i++) x[i] = lo + (hi - lo) * vs_rng_uniform(r);
}

START_TEST(test_exp_accuracy)
{
    static double x[N], y[N];
    vs_rng r;
    vs_rng_seed(&r, 3);
    const double ranges[][2] = {{-708, 709.7}, {-30, 0}, {-1, 1}, {-1e-6, 1e-6}, {-708, -700}, {700, 709.78}};
    double worst = 0;
    for (size_t c = 0; c < sizeof ranges / sizeof ranges[0]; c++) {
        fill(x, &r, ranges[c][0], ranges[c][1]);
        vs_exp_pd(x, y, N);
        for (int i = 0; i < N; i++) {
            const double u = ulps(x[i], y[i]);
            ck_assert_msg(u <= 2.0, "e^%.17g = %.17g, %.2f ulps off", x[i], y[i], u);
            if (u > worst) worst = u;
        }
    }
    /* a real bound, not a loose one: the polynomial is accurate to about an ulp */
    ck_assert_msg(worst > 0.4 && worst <= 2.0, "worst %.3f ulps", worst);
}
END_TEST

START_TEST(test_exp_edges)
{
    double x[] = {0.0, -0.0, -708.0, -708.5, -1000, -INFINITY, 709.78, 709.8, INFINITY, NAN, 1.0, -1.0, 0x1p-60};
    const int n = sizeof x / sizeof x[0];
    double y[sizeof x / sizeof x[0]];
    vs_exp_pd(x, y, n);
    ck_assert(y[0] == 1.0 && y[1] == 1.0);
    ck_assert(y[2] > 0 && y[2] < 1e-307);
    ck_assert(y[3] == 0.0 && y[4] == 0.0 && y[5] == 0.0);
    ck_assert(isfinite(y[6]) && y[6] > 1.7e308);
    ck_assert(isinf(y[7]) && y[7] > 0 && isinf(y[8]));
    ck_assert(isnan(y[9]));
    ck_assert(ulps(1.0, y[10]) <= 1.0);
    ck_assert(ulps(-1.0, y[11]) <= 1.0);
    ck_assert(y[12] == 1.0 + 0x1p-60 || y[12] == 1.0);
}
END_TEST

/* The vector loops and the scalar one make the same roundings: equal bits for every x. */
START_TEST(test_exp_same_bits_every_isa)
{
    static double x[N], ref[N], y[N];
    vs_rng r;
    vs_rng_seed(&r, 9);
    fill(x, &r, -720, 720);
    x[5] = NAN;
    x[6] = -INFINITY;
    vs_set_kernel_isa(VS_ISA_SCALAR);
    vs_exp_pd(x, ref, N);
    const vs_isa isas[] = {VS_ISA_AVX2, VS_ISA_AVX512};
    for (size_t t = 0; t < sizeof isas / sizeof isas[0]; t++) {
        const vs_isa got = vs_set_kernel_isa(isas[t]);
        vs_exp_pd(x, y, N);
        for (int i = 0; i < N; i++)
            ck_assert_msg(memcmp(&y[i], &ref[i], sizeof y[i]) == 0, "%s: e^%.17g = %.17g, scalar %.17g",
                          vs_isa_name(got), x[i], y[i], ref[i]);
    }
    vs_set_kernel_isa(VS_ISA_AUTO);
}
END_TEST

static Suite *exp_pd_suite(void)
{
    Suite *s = suite_create("exp_pd");
    TCase *tc = vs_tcase(s, "exp_pd", 30);
    tcase_add_test(tc, test_exp_accuracy);
    tcase_add_test(tc, test_exp_edges);
    tcase_add_test(tc, test_exp_same_bits_every_isa);
    return s;
}

VS_TEST_MAIN(exp_pd_suite)
