/* tests/vs_expect.h - cheap soft assertions for loops over many elements.
 *
 * Every ck_assert reports a checkpoint to the Check runner, which costs a pipe write; in loops over
 * thousands of pixels or edges that dominates the run time.  EXPECT only counts failures and keeps
 * the first failing expression; EXPECT_ALL() turns them into one Check failure at the end. */
#ifndef VERSUS_TESTS_VS_EXPECT_H
#define VERSUS_TESTS_VS_EXPECT_H

#include <check.h>
#include <stdio.h>

static long long vs_expect_failures;
static char vs_expect_first[256];

#define EXPECT(cond)                                                                                  \
    do {                                                                                              \
        if (!(cond) && !vs_expect_failures++)                                                         \
            snprintf(vs_expect_first, sizeof vs_expect_first, "line %d: %s", __LINE__, #cond);         \
    } while (0)

#define EXPECT_ALL()                                                                                  \
    do {                                                                                              \
        long long vs_n_ = vs_expect_failures;                                                         \
        vs_expect_failures = 0;                                                                       \
        ck_assert_msg(vs_n_ == 0, "%lld failed expectations, first at %s", vs_n_, vs_expect_first);   \
    } while (0)

#endif
