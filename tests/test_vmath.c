/* test_vmath.c - autograd/vmath.h's softplus, sigmoid and tanh: their error against double precision
 * over the whole float range (every 1031st bit pattern, every float in [-2, 2] / 64, the edges of the
 * exp range and the specials), set beside libm's, and the vectorised ops and losses built on them
 * (vs_softplus, vs_sigmoid, vs_log_sigmoid, vs_tanh, vs_bce_with_logits and its gradient) giving the
 * scalar function's bits element for element (the block-wise softplus of vs_softplus_rows included). */
#include "autograd/internal.h"
#include "versus/ops.h"
#include "vs_check.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The scalar forms the vectorised ones replaced (libm's expf and log1pf). */
static float libm_softplus(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static float libm_sigmoid(float x) { return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }

static double ref_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double ref_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }

/* |got - want| in units of the last place of want rounded to float (denormals: 2^-149). */
static double ulps(float got, double want)
{
    if (isinf(want) || isinf(got)) return got == want ? 0 : INFINITY;
    const float w = (float)want;
    int e;
    frexp(fabs((double)w), &e);
    const double ulp = w == 0 || fabs((double)w) < FLT_MIN ? ldexp(1, -149) : ldexp(1, e - 24);
    return fabs((double)got - want) / ulp;
}

typedef struct err_stats {
    double ours, libm; /* worst error seen, in ulps */
    float at;          /* where ours was worst */
} err_stats;

static err_stats tanh_err; /* check_at's record for tanh */

static void check_at(float x, err_stats *sp, err_stats *sg)
{
    const double rt = tanh((double)x);
    double et = ulps(vs_tanhf(x), rt);
    if (et > tanh_err.ours) tanh_err.ours = et, tanh_err.at = x;
    et = ulps(tanhf(x), rt);
    if (et > tanh_err.libm) tanh_err.libm = et;
    const double rp = ref_softplus(x), rg = ref_sigmoid(x);
    double e = ulps(vs_softplusf(x), rp);
    if (e > sp->ours) sp->ours = e, sp->at = x;
    e = ulps(libm_softplus(x), rp);
    if (e > sp->libm) sp->libm = e;
    e = ulps(vs_sigmoidf(x), rg);
    if (e > sg->ours) sg->ours = e, sg->at = x;
    e = ulps(libm_sigmoid(x), rg);
    if (e > sg->libm) sg->libm = e;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The bound the functions are held to; libm's own error is printed beside it. */
#define MAX_ULPS 3.0

START_TEST(test_accuracy_whole_range)
{
    err_stats sp = {0, 0, 0}, sg = {0, 0, 0};
    for (uint64_t u = 0; u <= 0xffffffffu; u += 1031) {
        const float x = from_bits((uint32_t)u);
        if (!isnan(x)) check_at(x, &sp, &sg);
    }
    /* dense where both functions bend, and across the ends of exp's range (denormal results) */
    for (float x = -2.0f; x <= 2.0f; x += 1.0f / 16384) check_at(x, &sp, &sg);
    for (float x = -110.0f; x <= -80.0f; x += 1.0f / 1024) check_at(x, &sp, &sg);
    for (float x = -1e-6f; x <= 1e-6f; x += 1e-10f) check_at(x, &sp, &sg);
    printf("softplus: worst %.2f ulp (at %a), libm %.2f; sigmoid: worst %.2f ulp (at %a), libm %.2f\n", sp.ours,
           (double)sp.at, sp.libm, sg.ours, (double)sg.at, sg.libm);
    ck_assert_msg(sp.ours <= MAX_ULPS, "softplus is %.2f ulp off at %a", sp.ours, (double)sp.at);
    ck_assert_msg(sg.ours <= MAX_ULPS, "sigmoid is %.2f ulp off at %a", sg.ours, (double)sg.at);
    printf("tanh: worst %.2f ulp (at %a), libm %.2f\n", tanh_err.ours, (double)tanh_err.at, tanh_err.libm);
    ck_assert_msg(tanh_err.ours <= MAX_ULPS, "tanh is %.2f ulp off at %a", tanh_err.ours, (double)tanh_err.at);
}
END_TEST

START_TEST(test_specials)
{
    ck_assert(isnan(vs_softplusf(NAN)) && isnan(vs_sigmoidf(NAN)));
    ck_assert(isnan(vs_softplusf(-NAN)) && isnan(vs_sigmoidf(-NAN)));
    ck_assert(vs_softplusf(INFINITY) == INFINITY);
    ck_assert(vs_softplusf(-INFINITY) == 0.0f);
    ck_assert(vs_sigmoidf(INFINITY) == 1.0f);
    ck_assert(vs_sigmoidf(-INFINITY) == 0.0f);
    ck_assert(vs_sigmoidf(0.0f) == 0.5f && vs_sigmoidf(-0.0f) == 0.5f);
    ck_assert(fabsf(vs_softplusf(0.0f) - 0.69314718f) <= FLT_EPSILON);
    ck_assert(vs_softplusf(-0.0f) == vs_softplusf(0.0f));
    ck_assert(vs_softplusf(FLT_MAX) == FLT_MAX);
    ck_assert(vs_softplusf(-FLT_MAX) == 0.0f && vs_sigmoidf(-FLT_MAX) == 0.0f);
    ck_assert(vs_sigmoidf(FLT_MAX) == 1.0f);
    ck_assert(isnan(vs_tanhf(NAN)) && isnan(vs_tanhf(-NAN)));
    ck_assert(vs_tanhf(INFINITY) == 1.0f && vs_tanhf(-INFINITY) == -1.0f);
    ck_assert(vs_tanhf(FLT_MAX) == 1.0f && vs_tanhf(-FLT_MAX) == -1.0f);
    ck_assert(vs_tanhf(0.0f) == 0.0f && signbit(vs_tanhf(-0.0f)));
    ck_assert(vs_tanhf(1e-30f) == 1e-30f && vs_tanhf(-1e-40f) == -1e-40f); /* tiny and denormal: x itself */
    ck_assert(vs_softplusf(-103.0f) > 0.0f); /* e^-103 is a denormal, not flushed */
    ck_assert(vs_softplusf(-104.0f) == 0.0f);
    /* sigmoid stays in [0, 1], tanh in [-1, 1] with x's sign, softplus above max(x, 0) on the sweep */
    for (float x = -120.0f; x <= 120.0f; x += 0.37f) {
        const float s = vs_sigmoidf(x), p = vs_softplusf(x), th = vs_tanhf(x);
        ck_assert(s >= 0.0f && s <= 1.0f);
        ck_assert(th >= -1.0f && th <= 1.0f && (th >= 0) == (x >= 0));
        ck_assert(p >= (x > 0 ? x : 0.0f));
    }
}
END_TEST

/* Same float: equal bits, or both NaN. */
static void ck_same(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(want[i])) continue;
        ck_assert_msg(memcmp(&got[i], &want[i], sizeof(float)) == 0, "%s: element %lld is %a, want %a", what, (long long)i,
                      (double)got[i], (double)want[i]);
    }
}

/* The ops run vectorised loops (the AVX2 clone on such CPUs): element for element the scalar bits,
 * at odd sizes so the loops' tails are covered, NaN and infinities included. */
START_TEST(test_ops_match_scalar)
{
    static const int64_t sizes[] = {1, 7, 1031, 70001};
    for (int s = 0; s < 4; s++) {
        const int64_t n = sizes[s];
        vs_scope_begin();
        vs_tensor *x = vs_tensor_new(1, &n), *t = vs_tensor_new(1, &n);
        ck_assert_ptr_nonnull(x);
        ck_assert_ptr_nonnull(t);
        for (int64_t i = 0; i < n; i++) {
            x->data[i] = (float)((double)(i * 7919 % 4001) - 2000.0) / 17.0f; /* [-118, 118] */
            t->data[i] = (float)(i % 5) / 4.0f;
        }
        if (n > 10) x->data[3] = NAN, x->data[5] = INFINITY, x->data[8] = -INFINITY;
        float *want = malloc(sizeof(float) * (size_t)n);
        ck_assert_ptr_nonnull(want);
        vs_tensor *y = vs_softplus(x);
        for (int64_t i = 0; i < n; i++) want[i] = vs_softplusf(x->data[i]);
        ck_same(y->data, want, n, "softplus");
        y = vs_sigmoid(x);
        for (int64_t i = 0; i < n; i++) want[i] = vs_sigmoidf(x->data[i]);
        ck_same(y->data, want, n, "sigmoid");
        y = vs_log_sigmoid(x);
        for (int64_t i = 0; i < n; i++) want[i] = -vs_softplusf(-x->data[i]);
        ck_same(y->data, want, n, "log_sigmoid");
        y = vs_tanh(x);
        for (int64_t i = 0; i < n; i++) want[i] = vs_tanhf(x->data[i]);
        ck_same(y->data, want, n, "tanh");

        /* BCE with logits on finite logits: its gradient gN sigmoid(x) - gN t, element for element */
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(x->data[i])) x->data[i] = 1.5f;
        vs_set_requires_grad(x, true);
        vs_tensor *loss = vs_bce_with_logits(x, t);
        ck_assert_ptr_nonnull(loss);
        double sum = 0;
        for (int64_t i = 0; i < n; i++) sum += (double)(vs_softplusf(x->data[i]) - t->data[i] * x->data[i]);
        ck_assert_msg(fabs((double)loss->data[0] - sum / (double)n) <= 1e-5 * (1 + fabs(sum / (double)n)),
                      "bce %g, want %g", (double)loss->data[0], sum / (double)n);
        /* its terms (computed block by block) are the ops' softplus(x) - t x bit for bit */
        const bool prev = vs_set_grad_enabled(false);
        vs_tensor *composed = vs_mean(vs_sub(vs_softplus(x), vs_mul(t, x)), VS_ALL_AXES, false);
        vs_set_grad_enabled(prev);
        ck_assert_ptr_nonnull(composed);
        ck_same(loss->data, composed->data, 1, "bce_with_logits");
        ck_assert_int_eq(vs_backward(loss, NULL, false), VS_OK);
        const float gn = 1.0f / (float)n;
        for (int64_t i = 0; i < n; i++) want[i] = gn * vs_sigmoidf(x->data[i]) + -gn * t->data[i];
        ck_same(x->grad->data, want, n, "bce_with_logits gradient");
        free(want);
        vs_scope_end();
    }
}
END_TEST

static Suite *vmath_suite(void)
{
    Suite *s = suite_create("vmath");
    TCase *tc = vs_tcase(s, "softplus_sigmoid", 120);
    tcase_add_test(tc, test_accuracy_whole_range);
    tcase_add_test(tc, test_specials);
    tcase_add_test(tc, test_ops_match_scalar);
    return s;
}

VS_TEST_MAIN(vmath_suite)
