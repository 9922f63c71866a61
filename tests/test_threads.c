/* test_threads.c - the worker pool: vs_parallel_for covers each index exactly once with chunk
 * boundaries fixed by (n, grain), per-chunk reductions are bit-identical for any thread count,
 * nested and concurrent calls, thread-count settings, shutdown and per-thread scratch. */
#include "vs_check.h"
#include "autograd/kernels.h"
#include "versus/rng.h"
#include "versus/threads.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct cover {
    int64_t n, grain;
    atomic_int *hits;       /* per index */
    atomic_int bad_chunks;  /* chunks whose boundaries were not [c*grain, min(n, (c+1)*grain)) */
    atomic_int calls;
} cover;

static void cover_fn(void *ctx, int64_t begin, int64_t end)
{
    cover *c = ctx;
    atomic_fetch_add(&c->calls, 1);
    const int64_t want_end = c->n - begin > c->grain ? begin + c->grain : c->n;
    if (begin % c->grain != 0 || end != want_end) atomic_fetch_add(&c->bad_chunks, 1);
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
}

START_TEST(test_covers_each_index_once)
{
    const int64_t ns[] = {1, 2, 3, 7, 64, 100, 1000, 4097};
    const int64_t grains[] = {1, 2, 3, 16, 100, 5000};
    for (int threads = 1; threads <= 4; threads++) {
        vs_set_threads(threads);
        ck_assert_int_eq(vs_get_threads(), threads);
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (size_t b = 0; b < sizeof grains / sizeof grains[0]; b++) {
                cover c = {.n = ns[a], .grain = grains[b]};
                c.hits = calloc((size_t)c.n, sizeof *c.hits);
                ck_assert(c.hits != NULL);
                vs_parallel_for(c.n, c.grain, cover_fn, &c);
                for (int64_t i = 0; i < c.n; i++)
                    ck_assert_msg(atomic_load(&c.hits[i]) == 1, "threads %d n %ld grain %ld: index %ld hit %d times",
                                  threads, (long)c.n, (long)c.grain, (long)i, atomic_load(&c.hits[i]));
                ck_assert_int_eq(atomic_load(&c.bad_chunks), 0);
                ck_assert_int_eq(atomic_load(&c.calls), (int)((c.n + c.grain - 1) / c.grain));
                free(c.hits);
            }
    }
    vs_set_threads(0);
}
END_TEST

/* Back-to-back jobs of changing size: a worker still leaving one job must never claim a chunk
 * of the next (each index once, and every call returns). */
typedef struct tally {
    atomic_long sum;
} tally;

static void tally_fn(void *ctx, int64_t begin, int64_t end)
{
    tally *t = ctx;
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&t->sum, (long)i + 1);
}

START_TEST(test_back_to_back_jobs)
{
    vs_set_threads(2);
    for (int rep = 0; rep < 20000; rep++) {
        const int64_t n = 1 + rep % 13;
        tally t = {0};
        vs_parallel_for(n, 1, tally_fn, &t);
        ck_assert_int_eq(atomic_load(&t.sum), (long)(n * (n + 1) / 2));
    }
    vs_set_threads(0);
}
END_TEST

START_TEST(test_empty_and_bad_grain)
{
    vs_set_threads(2);
    cover c = {.n = 0, .grain = 1};
    vs_parallel_for(0, 1, cover_fn, &c);
    vs_parallel_for(-5, 1, cover_fn, &c);
    ck_assert_int_eq(atomic_load(&c.calls), 0);
    /* grain <= 0 behaves as 1 */
    c.n = 10;
    c.grain = 1;
    c.hits = calloc(10, sizeof *c.hits);
    ck_assert(c.hits != NULL);
    vs_parallel_for(10, 0, cover_fn, &c);
    ck_assert_int_eq(atomic_load(&c.calls), 10);
    for (int i = 0; i < 10; i++) ck_assert_int_eq(atomic_load(&c.hits[i]), 1);
    free(c.hits);
    vs_set_threads(0);
}
END_TEST

/* Sum of floats with one partial per chunk, combined in chunk order. */
typedef struct reduce {
    const float *x;
    int64_t grain;
    float *partial;
} reduce;

static void reduce_fn(void *ctx, int64_t begin, int64_t end)
{
    reduce *r = ctx;
    float s = 0;
    for (int64_t i = begin; i < end; i++) s += r->x[i];
    r->partial[begin / r->grain] = s;
}

static float chunked_sum(const float *x, int64_t n, int64_t grain)
{
    const int64_t nchunks = (n + grain - 1) / grain;
    reduce r = {.x = x, .grain = grain, .partial = calloc((size_t)nchunks, sizeof(float))};
    ck_assert(r.partial != NULL);
    vs_parallel_for(n, grain, reduce_fn, &r);
    float s = 0;
    for (int64_t c = 0; c < nchunks; c++) s += r.partial[c];
    free(r.partial);
    return s;
}

START_TEST(test_reduction_bit_identical)
{
    const int64_t n = 100003;
    float *x = malloc(sizeof(float) * (size_t)n);
    ck_assert(x != NULL);
    vs_rng rng;
    vs_rng_seed(&rng, 3);
    /* Mixed magnitudes make float addition order visible in the last bits. */
    for (int64_t i = 0; i < n; i++) x[i] = (float)((vs_rng_uniform(&rng) - 0.5) * pow(10.0, (double)(i % 7)));
    const int64_t grains[] = {1, 97, 1000, 4096};
    for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
        vs_set_threads(1);
        const float s1 = chunked_sum(x, n, grains[g]);
        for (int threads = 2; threads <= 4; threads++) {
            vs_set_threads(threads);
            for (int rep = 0; rep < 3; rep++) {
                const float sn = chunked_sum(x, n, grains[g]);
                ck_assert_msg(memcmp(&s1, &sn, sizeof s1) == 0, "grain %ld threads %d: %.9g vs %.9g", (long)grains[g],
                              threads, s1, sn);
            }
        }
    }
    free(x);
    vs_set_threads(0);
}
END_TEST

/* A loop inside a chunk runs serially on that thread and still covers its range. */
typedef struct nested {
    atomic_int total;
    atomic_int inner_bad;
} nested;

static void inner_fn(void *ctx, int64_t begin, int64_t end)
{
    nested *nc = ctx;
    atomic_fetch_add(&nc->total, (int)(end - begin));
}

typedef struct inner_ctx {
    nested *nc;
    pthread_t owner;
    atomic_int other_thread;
} inner_ctx;

static void inner_fn_thread(void *ctx, int64_t begin, int64_t end)
{
    inner_ctx *ic = ctx;
    if (!pthread_equal(pthread_self(), ic->owner)) atomic_fetch_add(&ic->other_thread, 1);
    inner_fn(ic->nc, begin, end);
}

static void outer_fn(void *ctx, int64_t begin, int64_t end)
{
    nested *nc = ctx;
    for (int64_t i = begin; i < end; i++) {
        inner_ctx ic = {.nc = nc, .owner = pthread_self()};
        vs_parallel_for(100, 7, inner_fn_thread, &ic);
        if (atomic_load(&ic.other_thread) != 0) atomic_fetch_add(&nc->inner_bad, 1);
    }
}

START_TEST(test_nested_runs_serially)
{
    vs_set_threads(3);
    nested nc = {0};
    vs_parallel_for(20, 1, outer_fn, &nc);
    ck_assert_int_eq(atomic_load(&nc.total), 20 * 100);
    ck_assert_int_eq(atomic_load(&nc.inner_bad), 0);
    vs_set_threads(0);
}
END_TEST

/* Two user threads calling at once: one gets the pool, the other runs serially; both correct. */
static void *concurrent_caller(void *arg)
{
    atomic_int *ok = arg;
    for (int rep = 0; rep < 50; rep++) {
        cover c = {.n = 1000, .grain = 10};
        c.hits = calloc(1000, sizeof *c.hits);
        if (!c.hits) return NULL;
        vs_parallel_for(c.n, c.grain, cover_fn, &c);
        int good = atomic_load(&c.bad_chunks) == 0;
        for (int i = 0; i < 1000; i++) good &= atomic_load(&c.hits[i]) == 1;
        free(c.hits);
        if (good) atomic_fetch_add(ok, 1);
    }
    return NULL;
}

START_TEST(test_concurrent_callers)
{
    vs_set_threads(2);
    atomic_int ok = 0;
    pthread_t t[3];
    for (int i = 0; i < 3; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, concurrent_caller, &ok), 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    ck_assert_int_eq(atomic_load(&ok), 150);
    vs_set_threads(0);
}
END_TEST

START_TEST(test_thread_settings_and_shutdown)
{
    vs_set_threads(0);
    const int def = vs_get_threads();
    ck_assert_int_ge(def, 1);
    const char *env = getenv("VERSUS_THREADS");
    if (env && atoi(env) > 0) ck_assert_int_eq(def, atoi(env));
    vs_set_threads(5);
    ck_assert_int_eq(vs_get_threads(), 5);
    vs_set_threads(-3);
    ck_assert_int_eq(vs_get_threads(), def);
    /* Shrinking and growing the pool, and shutting it down, keep loops working. */
    const int counts[] = {4, 2, 3, 1, 2};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        vs_set_threads(counts[k]);
        cover c = {.n = 500, .grain = 3};
        c.hits = calloc(500, sizeof *c.hits);
        ck_assert(c.hits != NULL);
        vs_parallel_for(c.n, c.grain, cover_fn, &c);
        for (int i = 0; i < 500; i++) ck_assert_int_eq(atomic_load(&c.hits[i]), 1);
        free(c.hits);
        if (k == 2) vs_threads_shutdown();
    }
    vs_threads_shutdown();
    vs_threads_shutdown();
    vs_set_threads(0);
}
END_TEST

/* Scratch: aligned, kept while big enough, separate per thread. */
static void scratch_fn(void *ctx, int64_t begin, int64_t end)
{
    uintptr_t *ptrs = ctx;
    for (int64_t i = begin; i < end; i++) {
        char *p = vs_scratch(VS_SCRATCH_GEMM_A, 1000);
        if (!p) continue;
        memset(p, (int)i, 1000); /* another thread writing the same buffer would be a data race */
        ptrs[i] = (uintptr_t)p;
    }
}

START_TEST(test_scratch)
{
    char *a = vs_scratch(VS_SCRATCH_GEMM_B, 100);
    ck_assert(a != NULL);
    ck_assert_uint_eq((uintptr_t)a % 64, 0);
    memset(a, 1, 100);
    ck_assert(vs_scratch(VS_SCRATCH_GEMM_B, 50) == a); /* still big enough: same buffer */
    char *b = vs_scratch(VS_SCRATCH_GEMM_B, 1 << 20);
    ck_assert(b != NULL);
    ck_assert_uint_eq((uintptr_t)b % 64, 0);
    memset(b, 2, 1 << 20);
    char *e = vs_scratch(VS_SCRATCH_GEMM_EDGE, 100);
    ck_assert(e != NULL && e != b);
    ck_assert(vs_scratch(VS_SCRATCH_SLOTS, 10) == NULL);

    vs_set_threads(2);
    uintptr_t ptrs[64] = {0};
    vs_parallel_for(64, 1, scratch_fn, ptrs);
    for (int i = 0; i < 64; i++) ck_assert(ptrs[i] != 0 && ptrs[i] % 64 == 0);
    vs_set_threads(0);
}
END_TEST

static Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = vs_tcase(s, "parallel_for", 60);
    tcase_add_test(tc, test_covers_each_index_once);
    tcase_add_test(tc, test_back_to_back_jobs);
    tcase_add_test(tc, test_empty_and_bad_grain);
    tcase_add_test(tc, test_reduction_bit_identical);
    tcase_add_test(tc, test_nested_runs_serially);
    tcase_add_test(tc, test_concurrent_callers);
    tcase_add_test(tc, test_thread_settings_and_shutdown);
    tc = vs_tcase(s, "scratch", 30);
    tcase_add_test(tc, test_scratch);
    return s;
}

VS_TEST_MAIN(threads_suite)
