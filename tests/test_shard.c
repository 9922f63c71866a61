/* test_shard.c - shards and their ranges, per-item seeds, item payloads bit for bit, journals that
 * survive a kill (torn last record) and refuse another command, and the merge of partial results
 * with every refusal (missing, repeated or incomplete shards, other seeds or commands). */
#include "versus/shard.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_parse)
{
    vs_shard s;
    vs_error err;
    ck_assert_int_eq(vs_shard_parse("2/8", &s, &err), VS_OK);
    ck_assert(s.k == 2 && s.n == 8);
    ck_assert_int_eq(vs_shard_parse("1/1", &s, &err), VS_OK);
    const char *bad[] = {"0/3", "4/3", "a/b", "3", "1/0", "1/3x", "-1/3", "", "1/ 3", " 1/3", "1/2000000", "+1/3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(vs_shard_parse(bad[i], &s, &err) == VS_ERR_ARG, "'%s' accepted", bad[i]);
        ck_assert_ptr_nonnull(strstr(err.msg, "K/N"));
    }
}
END_TEST

START_TEST(test_ranges)
{
    for (int64_t n = 0; n <= 60; n++)
        for (int64_t N = 1; N <= 11; N++) {
            int64_t next = 0, lo = n, hi = 0;
            for (int64_t k = 1; k <= N; k++) {
                int64_t b, e;
                vs_shard_range((vs_shard){k, N}, n, &b, &e);
                ck_assert_int_eq(b, next);
                ck_assert_int_ge(e, b);
                lo = e - b < lo ? e - b : lo;
                hi = e - b > hi ? e - b : hi;
                next = e;
            }
            ck_assert_int_eq(next, n);
            ck_assert_int_le(hi - lo, 1);
        }
    int64_t b, e;
    vs_shard_range((vs_shard){3, 7}, 1000000000000ll, &b, &e);
    ck_assert_int_eq(b, 285714285714ll);
    ck_assert_int_eq(e, 428571428571ll);
}
END_TEST

START_TEST(test_seeds)
{
    ck_assert_uint_eq(vs_item_seed(1, 5), vs_item_seed(1, 5));
    ck_assert_uint_ne(vs_item_seed(1, 5), vs_item_seed(1, 6));
    ck_assert_uint_ne(vs_item_seed(1, 5), vs_item_seed(2, 5));
    ck_assert_uint_ne(vs_item_seed(0, 0), 0);
    /* neighbouring seeds and items do not give neighbouring streams */
    ck_assert_uint_ne(vs_item_seed(1, 0) ^ vs_item_seed(0, 1), 0);
}
END_TEST

START_TEST(test_payloads)
{
    vs_item_buf b = {0};
    float f[3] = {1.5f, -0.0f, NAN};
    double d[2] = {1.0 / 3.0, -INFINITY};
    int64_t i[2] = {-7, INT64_MAX};
    vs_item_put_f32(&b, f, 3);
    vs_item_put_f64(&b, d, 2);
    vs_item_put_i64(&b, i, 2);
    ck_assert_uint_eq(b.len, 12 + 16 + 16);
    ck_assert(!b.oom);
    vs_item_reader r = {b.data, b.len, 0, false};
    float f2[3];
    double d2[2];
    int64_t i2[2];
    vs_item_get_f32(&r, f2, 3);
    vs_item_get_f64(&r, d2, 2);
    vs_item_get_i64(&r, i2, 2);
    ck_assert(!r.bad);
    ck_assert(memcmp(f, f2, sizeof f) == 0 && memcmp(d, d2, sizeof d) == 0 && memcmp(i, i2, sizeof i) == 0);
    vs_item_get_f32(&r, f2, 1);
    ck_assert(r.bad);
    ck_assert(f2[0] == 0.0f);
    vs_item_buf_reset(&b);
    ck_assert_uint_eq(b.len, 0);
    vs_item_buf_clear(&b);
}
END_TEST

static char *words_a[] = {"snx", "--data", "synthetic-tabular", "--shard", "2/3", "--out", "p2", "--threads", "2"};
static char *words_b[] = {"snx", "--data", "adult", "--out", "p2"};

/* Options of a run over the journal path (argv words_a unless given). */
static vs_run_opts opts(const char *path, int64_t k, int64_t n, bool resume, uint64_t seed)
{
    vs_run_opts o = {.path = path, .verb = "bench", .argc = 9, .argv = words_a, .seed = seed, .shard = {k, n}, .sharded = n > 0,
                     .resume = resume, .unit = "pairs"};
    return o;
}

/* Item i's payload: i and i/3 as floats. */
static void payload(vs_item_buf *b, int64_t i)
{
    vs_item_buf_reset(b);
    float v[2] = {(float)i, (float)i / 3.0f};
    vs_item_put_f32(b, v, 2);
    vs_item_put_i64(b, &i, 1);
}

static void check_payload(const vs_run *r, int64_t i)
{
    size_t len;
    const unsigned char *p = vs_run_get(r, i, &len);
    ck_assert_msg(p != NULL, "item %lld missing", (long long)i);
    vs_item_reader rd = {p, len, 0, false};
    float v[2];
    int64_t j;
    vs_item_get_f32(&rd, v, 2);
    vs_item_get_i64(&rd, &j, 1);
    ck_assert(!rd.bad && rd.pos == len);
    ck_assert(v[0] == (float)i && v[1] == (float)i / 3.0f && j == i);
}

START_TEST(test_journal_resume)
{
    char path[] = "test_shard_journal.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    vs_error err;
    vs_run *r = NULL;
    vs_item_buf b = {0};
    vs_run_opts o = opts(path, 0, 0, false, 9);
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK);
    ck_assert_int_eq(vs_run_begin(r), 0);
    ck_assert_int_eq(vs_run_end(r), 10);
    for (int64_t i = 0; i < 4; i++) {
        payload(&b, i);
        ck_assert_int_eq(vs_run_put(r, i, &b, &err), VS_OK);
    }
    ck_assert_int_eq(vs_run_put(r, 2, &b, &err), VS_ERR_ARG); /* twice */
    ck_assert_int_eq(vs_run_put(r, 10, &b, &err), VS_ERR_ARG); /* outside */
    ck_assert_int_eq(vs_run_missing(r), 6);
    vs_run_free(r); /* as if killed: the journal stays */
    /* a kill in the middle of an append: half a record */
    FILE *f = fopen(path, "ab");
    fwrite("VSJ1\x05\0\0\0\0\0\0\0\x40", 1, 13, f);
    fclose(f);
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK); /* no --resume: a fresh start */
    ck_assert_int_eq(vs_run_missing(r), 10);
    for (int64_t i = 0; i < 3; i++) {
        payload(&b, i);
        ck_assert_int_eq(vs_run_put(r, i, &b, &err), VS_OK);
    }
    vs_run_free(r);
    f = fopen(path, "ab");
    fwrite("VSJ1\x05\0\0\0\0\0\0\0\x40", 1, 13, f);
    fclose(f);
    o.resume = true;
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK);
    ck_assert_int_eq(vs_run_missing(r), 7);
    for (int64_t i = 0; i < 3; i++) check_payload(r, i);
    size_t len;
    ck_assert_ptr_null(vs_run_get(r, 3, &len));
    for (int64_t i = 3; i < 10; i++) {
        payload(&b, i);
        ck_assert_int_eq(vs_run_put(r, i, &b, &err), VS_OK);
    }
    vs_run_free(r);
    /* the torn bytes were cut: every record reads back */
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK);
    ck_assert_int_eq(vs_run_missing(r), 0);
    for (int64_t i = 0; i < 10; i++) check_payload(r, i);
    /* another command, seed or item count is refused, naming the journal */
    vs_run *r2 = NULL;
    vs_run_opts o2 = o;
    o2.argc = 5;
    o2.argv = words_b;
    ck_assert_int_eq(vs_run_open(&o2, 10, &r2, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "another command"));
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    o2 = opts(path, 0, 0, true, 10);
    ck_assert_int_eq(vs_run_open(&o2, 10, &r2, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "seed 9"));
    ck_assert_int_eq(vs_run_open(&o, 11, &r2, &err), VS_ERR_ARG);
    /* a whole run that has written its files removes its journal */
    ck_assert_int_eq(vs_run_finish(r, &err), VS_OK);
    ck_assert_int_ne(access(path, F_OK), 0);
    vs_run_free(r);
    /* a file that is not a journal */
    f = fopen(path, "wb");
    fputs("hello", f);
    fclose(f);
    ck_assert_int_eq(vs_run_open(&o, 10, &r2, &err), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a versus journal"));
    unlink(path);
    vs_item_buf_clear(&b);
}
END_TEST

/* Shard k of n of 10 items, seed, done up to `upto` items of its range (-1: all), at path. */
static void make_part(const char *path, int64_t k, int64_t n, uint64_t seed, int64_t upto, char **argv, int argc)
{
    vs_error err;
    vs_run *r = NULL;
    vs_run_opts o = opts(path, k, n, false, seed);
    if (argv) {
        o.argv = argv;
        o.argc = argc;
    }
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK);
    ck_assert(vs_run_sharded(r));
    vs_item_buf b = {0};
    for (int64_t i = vs_run_begin(r); i < vs_run_end(r) && (upto < 0 || i - vs_run_begin(r) < upto); i++) {
        payload(&b, i);
        ck_assert_int_eq(vs_run_put(r, i, &b, &err), VS_OK);
    }
    ck_assert_int_eq(vs_run_finish(r, &err), VS_OK);
    ck_assert_int_eq(access(path, F_OK), 0); /* a part is kept */
    vs_run_free(r);
    vs_item_buf_clear(&b);
}

START_TEST(test_merge)
{
    const char *p[4] = {"test_shard_p1", "test_shard_p2", "test_shard_p3", "test_shard_p4"};
    for (int k = 0; k < 3; k++) make_part(p[k], k + 1, 3, 9, -1, NULL, 0);
    vs_run_header h;
    vs_error err;
    ck_assert_int_eq(vs_run_merge(p, 3, "final", "test_shard_final.journal", &h, &err), VS_OK);
    ck_assert_str_eq(h.verb, "bench");
    ck_assert_int_eq(h.argc, 5); /* --shard and --threads dropped */
    ck_assert_str_eq(h.argv[4], "final");
    ck_assert(h.seed == 9 && h.items == 10 && h.shard.n == 1);
    /* the whole run resumes with every item done */
    vs_run *r = NULL;
    vs_run_opts o = {.path = "test_shard_final.journal", .verb = h.verb, .argc = h.argc, .argv = h.argv, .seed = 9, .resume = true};
    ck_assert_int_eq(vs_run_open(&o, 10, &r, &err), VS_OK);
    ck_assert_int_eq(vs_run_missing(r), 0);
    for (int64_t i = 0; i < 10; i++) check_payload(r, i);
    ck_assert_int_eq(vs_run_finish(r, &err), VS_OK);
    vs_run_free(r);
    vs_run_header_clear(&h);

    /* refusals, each naming the parts */
    const char *missing[2] = {p[0], p[2]};
    ck_assert_int_eq(vs_run_merge(missing, 2, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "shards missing: 2 of 3"), "%s", err.msg);
    const char *twice[3] = {p[0], p[1], p[1]};
    ck_assert_int_eq(vs_run_merge(twice, 3, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "same shard 2/3") && strstr(err.msg, p[1]), "%s", err.msg);
    make_part(p[3], 3, 3, 9, 1, NULL, 0); /* shard 3 killed after one item */
    const char *partial[3] = {p[0], p[1], p[3]};
    ck_assert_int_eq(vs_run_merge(partial, 3, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "test_shard_p4 is incomplete: 1 of the 4 items"), "%s", err.msg);
    make_part(p[3], 3, 3, 8, -1, NULL, 0);
    ck_assert_int_eq(vs_run_merge(partial, 3, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "different seeds (9 and 8)"), "%s", err.msg);
    char *other[] = {"snx", "--data", "adult", "--shard", "3/3", "--out", "x"};
    make_part(p[3], 3, 3, 9, -1, other, 7);
    ck_assert_int_eq(vs_run_merge(partial, 3, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "different commands") && strstr(err.msg, "'synthetic-tabular' against 'adult'"), "%s", err.msg);
    make_part(p[3], 2, 4, 9, -1, NULL, 0);
    ck_assert_int_eq(vs_run_merge(partial, 3, "final", "test_shard_final.journal", &h, &err), VS_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "split different runs"), "%s", err.msg);
    const char *none[1] = {"test_shard_nowhere"};
    ck_assert_int_ne(vs_run_merge(none, 1, "final", "test_shard_final.journal", &h, &err), VS_OK);
    ck_assert_ptr_nonnull(strstr(err.msg, "test_shard_nowhere"));
    ck_assert_int_ne(access("test_shard_final.journal", F_OK), 0); /* no merge leaves a journal behind */
    for (int k = 0; k < 4; k++) unlink(p[k]);
}
END_TEST

static Suite *shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_ranges);
    tcase_add_test(tc, test_seeds);
    tcase_add_test(tc, test_payloads);
    tcase_add_test(tc, test_journal_resume);
    tcase_add_test(tc, test_merge);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shard_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
