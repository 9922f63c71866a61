/* test_core.c - errors, checked size arithmetic, the random generator and its bulk fill. */
#include "vs_check.h"
#include "autograd/kernels.h"
#include "versus/versus.h"

#include <math.h>
#include <stdint.h>

START_TEST(test_error_set)
{
    vs_error e;
    vs_error_clear(&e);
    ck_assert_int_eq(e.code, VS_OK);
    ck_assert_int_eq(vs_error_set(&e, VS_ERR_FORMAT, "file %s: field %s", "a.json", "shape"), VS_ERR_FORMAT);
    ck_assert_str_eq(e.msg, "file a.json: field shape");
    ck_assert_int_eq(vs_error_set(NULL, VS_ERR_IO, "ignored"), VS_ERR_IO);
    vs_set_last_error(VS_ERR_SHAPE, "add: %d vs %d", 2, 3);
    ck_assert_int_eq(vs_last_error()->code, VS_ERR_SHAPE);
    ck_assert_str_eq(vs_last_error()->msg, "add: 2 vs 3");
    vs_clear_last_error();
    ck_assert_int_eq(vs_last_error()->code, VS_OK);
    ck_assert_str_eq(vs_status_name(VS_ERR_SHAPE), "shape error");
}
END_TEST

START_TEST(test_size_overflow)
{
    size_t r;
    ck_assert(vs_size_mul(1u << 20, 1u << 20, &r) && r == (size_t)1 << 40);
    ck_assert(!vs_size_mul(SIZE_MAX / 2, 3, &r));
    ck_assert(!vs_size_add(SIZE_MAX, 1, &r));
    ck_assert(vs_size_add(2, 3, &r) && r == 5);
}
END_TEST

START_TEST(test_rng_reproducible)
{
    vs_rng a, b;
    vs_rng_seed(&a, 42);
    vs_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) ck_assert_uint_eq(vs_rng_u64(&a), vs_rng_u64(&b));
    vs_rng_seed(&b, 43);
    ck_assert_uint_ne(vs_rng_u64(&a), vs_rng_u64(&b));
}
END_TEST

/* The bulk fill draws what a loop over vs_rng_uniformf draws, and leaves the generator where the loop does. */
START_TEST(test_rng_fill_matches_draws)
{
    vs_rng a, b;
    vs_rng_seed(&a, 9);
    vs_rng_seed(&b, 9);
    float got[1001];
    vs_rng_fill_uniformf(&a, got, 1001, -0.5f, 2.0f);
    for (int i = 0; i < 1001; i++) ck_assert_float_eq(got[i], -0.5f + 2.5f * vs_rng_uniformf(&b));
    ck_assert_uint_eq(vs_rng_u64(&a), vs_rng_u64(&b));
    vs_rng_fill_uniformf(&a, got, 0, 0.0f, 1.0f); /* nothing drawn */
    ck_assert_uint_eq(vs_rng_u64(&a), vs_rng_u64(&b));
}
END_TEST

/* The bulk normal fill gives bit for bit the floats of a vs_rng_normal loop (its polynomial log and
 * cos hand the elements near a float rounding boundary back to libm: about 30 of these 10^6 draws
 * take that path), at block edges too, and leaves the generator where the loop does. */
START_TEST(test_rng_fill_normalf_matches_draws)
{
    const int64_t sizes[] = {0, 1, 255, 256, 257, 1000003};
    float *got = malloc(sizeof *got * 1000003);
    ck_assert_ptr_nonnull(got);
    for (int k = 0; k < 6; k++) {
        vs_rng a, b;
        vs_rng_seed(&a, 11 + (uint64_t)k);
        vs_rng_seed(&b, 11 + (uint64_t)k);
        const int64_t n = sizes[k];
        vs_rng_fill_normalf(&a, got, n, k % 2 ? 0.25f : 0.0f, k % 2 ? 3.0f : 1.0f);
        for (int64_t i = 0; i < n; i++) {
            const float want = (k % 2 ? 0.25f : 0.0f) + (k % 2 ? 3.0f : 1.0f) * (float)vs_rng_normal(&b);
            ck_assert_msg(memcmp(&got[i], &want, sizeof want) == 0, "n %lld, element %lld: %a, the loop's %a", (long long)n,
                          (long long)i, (double)got[i], (double)want);
        }
        ck_assert_uint_eq(vs_rng_u64(&a), vs_rng_u64(&b));
    }
    free(got);
}
END_TEST

START_TEST(test_rng_distributions)
{
    vs_rng r;
    vs_rng_seed(&r, 7);
    const int n = 200000;
    double s = 0, s2 = 0, u = 0;
    int counts[5] = {0};
    for (int i = 0; i < n; i++) {
        double z = vs_rng_normal(&r);
        s += z;
        s2 += z * z;
        double v = vs_rng_uniform(&r);
        ck_assert(v >= 0 && v < 1);
        u += v;
        float f = vs_rng_uniformf(&r);
        ck_assert(f >= 0 && f < 1);
        counts[vs_rng_below(&r, 5)]++;
    }
    ck_assert_double_eq_tol(s / n, 0.0, 0.01);
    ck_assert_double_eq_tol(s2 / n, 1.0, 0.02);
    ck_assert_double_eq_tol(u / n, 0.5, 0.005);
    for (int k = 0; k < 5; k++) ck_assert_double_eq_tol(counts[k] / (double)n, 0.2, 0.005);
}
END_TEST

START_TEST(test_rng_shuffle_permutes)
{
    vs_rng r;
    vs_rng_seed(&r, 3);
    size_t idx[100];
    int seen[100] = {0};
    for (size_t i = 0; i < 100; i++) idx[i] = i;
    vs_rng_shuffle(&r, idx, 100);
    int moved = 0;
    for (size_t i = 0; i < 100; i++) {
        seen[idx[i]]++;
        moved += idx[i] != i;
    }
    for (int i = 0; i < 100; i++) ck_assert_int_eq(seen[i], 1);
    ck_assert_int_gt(moved, 80);
    vs_rng parent, child;
    vs_rng_seed(&parent, 9);
    child = vs_rng_split(&parent);
    ck_assert_uint_ne(vs_rng_u64(&parent), vs_rng_u64(&child));
}
END_TEST

static Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = vs_tcase(s, "errors", 10);
    tcase_add_test(tc, test_error_set);
    tcase_add_test(tc, test_size_overflow);
    tc = vs_tcase(s, "rng", 30);
    tcase_add_test(tc, test_rng_reproducible);
    tcase_add_test(tc, test_rng_fill_matches_draws);
    tcase_add_test(tc, test_rng_fill_normalf_matches_draws);
    tcase_add_test(tc, test_rng_distributions);
    tcase_add_test(tc, test_rng_shuffle_permutes);
    return s;
}

VS_TEST_MAIN(core_suite)
