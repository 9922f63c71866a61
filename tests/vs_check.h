/* tests/vs_check.h - shared helpers for the Check suites: data paths, timeouts, a main(). */
#ifndef VERSUS_TESTS_VS_CHECK_H
#define VERSUS_TESTS_VS_CHECK_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Directory holding the shared real data sets (VERSUS_DATA), or NULL when absent. */
static inline const char *vs_test_data_dir(void)
{
    const char *d = getenv("VERSUS_DATA");
    return d && *d ? d : NULL;
}

/* Path of a file under VERSUS_DATA written to buf; returns buf, or NULL (and prints why the test is
 * skipped) when the file is not there. */
static inline const char *vs_test_data_path(char *buf, size_t n, const char *rel)
{
    const char *d = vs_test_data_dir();
    if (d) {
        snprintf(buf, n, "%s/%s", d, rel);
        FILE *f = fopen(buf, "rb");
        if (f) {
            fclose(f);
            return buf;
        }
    }
    printf("SKIP: %s not found (set VERSUS_DATA to the shared datasets directory)\n", rel);
    return NULL;
}

/* Scratch directory for files a test writes. */
static inline const char *vs_test_tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && *d ? d : "/tmp";
}

/* A test case with a timeout in seconds (CK_TIMEOUT_MULTIPLIER scales it for slow builds). */
static inline TCase *vs_tcase(Suite *s, const char *name, double timeout)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

#define ck_assert_float_near(a, b, tol) ck_assert_double_eq_tol((double)(a), (double)(b), (double)(tol))

/* main() running one suite; exit status 0 only when every test passed. */
#define VS_TEST_MAIN(make_suite)                                      \
    int main(void)                                                    \
    {                                                                 \
        SRunner *sr = srunner_create(make_suite());                   \
        srunner_run_all(sr, CK_NORMAL);                               \
        int failed = srunner_ntests_failed(sr);                       \
        srunner_free(sr);                                             \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;             \
    }

#endif
