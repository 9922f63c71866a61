/* test_pairs.c - stratified splits, SNX pairing, balanced random pairs, data set subsets. */
#include "vs_check.h"
#include "vs_expect.h"
#include "versus/pairs.h"
#include "versus/synth.h"

#include <stdint.h>

/* Labels with uneven classes: 500 of class 0, 300 of class 1, 10 of class 2, 1 of class 3, interleaved. */
#define N_LAB 811
static void uneven_labels(int64_t *y)
{
    int64_t left[4] = {500, 300, 10, 1};
    for (int64_t i = 0, c = 0; i < N_LAB; i++) {
        while (!left[c]) c = (c + 1) % 4;
        y[i] = c;
        left[c]--;
        c = (c + 1) % 4;
    }
}

static void split(const int64_t *y, int64_t n, int64_t k, double frac, uint64_t seed, int64_t **tr, int64_t *ntr,
                  int64_t **te, int64_t *nte)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error e;
    ck_assert_msg(vs_split_stratified(y, n, k, frac, &r, tr, ntr, te, nte, &e) == VS_OK, "%s", e.msg);
}

START_TEST(test_split_stratified)
{
    int64_t y[N_LAB], *tr, *te, ntr, nte;
    uneven_labels(y);
    split(y, N_LAB, 4, VS_SPLIT_TRAIN_DEFAULT, 1, &tr, &ntr, &te, &nte);
    ck_assert_int_eq(ntr + nte, N_LAB);
    int seen[N_LAB] = {0};
    int64_t per[4][2] = {{0}}, total[4] = {500, 300, 10, 1};
    for (int64_t i = 0; i < ntr; i++) {
        EXPECT(i == 0 || tr[i - 1] < tr[i]);
        seen[tr[i]]++;
        per[y[tr[i]]][0]++;
    }
    for (int64_t i = 0; i < nte; i++) {
        EXPECT(i == 0 || te[i - 1] < te[i]);
        seen[te[i]]++;
        per[y[te[i]]][1]++;
    }
    for (int64_t i = 0; i < N_LAB; i++) EXPECT(seen[i] == 1);   /* disjoint and covering */
    EXPECT_ALL();
    for (int c = 0; c < 4; c++) {
        double want = VS_SPLIT_TRAIN_DEFAULT * (double)total[c];
        ck_assert_msg(per[c][0] - want <= 1.0 && want - per[c][0] <= 1.0, "class %d: %lld train of %lld", c,
                      (long long)per[c][0], (long long)total[c]);
    }
    ck_assert_int_eq(per[0][0], 350);
    ck_assert_int_eq(per[1][0], 210);
    ck_assert_int_eq(per[2][0], 7);
    ck_assert_int_eq(per[2][1], 3);
    ck_assert_int_eq(per[3][0] + per[3][1], 1);

    /* Same seed, same split; another seed, another split. */
    int64_t *tr2, *te2, ntr2, nte2;
    split(y, N_LAB, 4, VS_SPLIT_TRAIN_DEFAULT, 1, &tr2, &ntr2, &te2, &nte2);
    ck_assert(ntr2 == ntr && memcmp(tr, tr2, (size_t)ntr * sizeof *tr) == 0);
    free(tr2);
    free(te2);
    split(y, N_LAB, 4, VS_SPLIT_TRAIN_DEFAULT, 2, &tr2, &ntr2, &te2, &nte2);
    ck_assert(ntr2 == ntr && memcmp(tr, tr2, (size_t)ntr * sizeof *tr) != 0);
    free(tr2);
    free(te2);
    free(tr);
    free(te);

    /* Tiny classes keep a row on each side. */
    int64_t y2[6] = {0, 0, 1, 1, 1, 1};
    split(y2, 6, 2, 0.1, 3, &tr, &ntr, &te, &nte);
    ck_assert_int_eq(ntr, 2);
    ck_assert(y2[tr[0]] == 0 && y2[tr[1]] == 1);
    free(tr);
    free(te);
}
END_TEST

START_TEST(test_split_errors)
{
    int64_t y[4] = {0, 1, 0, 2}, *tr = NULL, *te = NULL, ntr = -1, nte = -1;
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_error e;
    ck_assert_int_eq(vs_split_stratified(y, 4, 3, 1.0, &r, &tr, &ntr, &te, &nte, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "train_frac") != NULL);
    ck_assert_int_eq(vs_split_stratified(y, 4, 2, 0.5, &r, &tr, &ntr, &te, &nte, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "y[3] = 2") != NULL);
    ck_assert(tr == NULL && te == NULL && ntr == 0 && nte == 0);
}
END_TEST

/* Every property of SNX pairs of a portion: grouping, partner classes, distinctness, membership. */
static void check_snx(const vs_pairs *p, const int64_t *y, int64_t n, const int64_t *portion, int64_t np,
                      int64_t n_same, int64_t n_diff)
{
    const int64_t per = n_same + n_diff;
    ck_assert_int_eq(p->n, np * per);
    uint8_t *in = calloc((size_t)n, 1);
    for (int64_t i = 0; i < np; i++) in[portion ? portion[i] : i] = 1;
    for (int64_t i = 0; i < np; i++) {
        int64_t s = portion ? portion[i] : i;
        for (int64_t j = 0; j < per; j++) {
            int64_t k = i * per + j, t = p->idx[2 * k + 1];
            EXPECT(p->idx[2 * k] == s);
            EXPECT(t >= 0 && t < n && in[t] && t != s);
            EXPECT(p->label[k] == (y[s] == y[t]));
            EXPECT(p->label[k] == (j < n_same));
            for (int64_t q = 0; q < j; q++) EXPECT(p->idx[2 * (i * per + q) + 1] != t);
        }
    }
    EXPECT_ALL();
    free(in);
}

START_TEST(test_pairs_snx_protocol)
{
    int64_t y[N_LAB], *tr, *te, ntr, nte;
    uneven_labels(y);
    /* Merge the one-row class 3 into class 1 so every class can give 2 same-class partners. */
    for (int64_t i = 0; i < N_LAB; i++)
        if (y[i] == 3) y[i] = 1;
    split(y, N_LAB, 3, VS_SPLIT_TRAIN_DEFAULT, 5, &tr, &ntr, &te, &nte);
    vs_rng r;
    vs_rng_seed(&r, 9);
    vs_pairs *ptr = NULL, *pte = NULL;
    vs_error e;
    ck_assert_msg(vs_pairs_snx(y, N_LAB, 3, tr, ntr, VS_SNX_PAIRS_SAME, VS_SNX_PAIRS_DIFF, &r, &ptr, &e) == VS_OK, "%s",
                  e.msg);
    ck_assert_msg(vs_pairs_snx(y, N_LAB, 3, te, nte, 2, 2, &r, &pte, &e) == VS_OK, "%s", e.msg);
    check_snx(ptr, y, N_LAB, tr, ntr, 2, 2);
    check_snx(pte, y, N_LAB, te, nte, 2, 2);
    /* Class 2 has 3 rows in test: its same-class partners are forced to be the other two. */
    int64_t in_test2 = 0;
    for (int64_t i = 0; i < nte; i++) in_test2 += y[te[i]] == 2;
    ck_assert_int_eq(in_test2, 3);
    for (int64_t i = 0; i < nte; i++)
        if (y[te[i]] == 2)
            for (int64_t j = 0; j < 2; j++) ck_assert_int_eq(y[pte->idx[2 * (4 * i + j) + 1]], 2);
    /* Partners are spread: most training rows serve as somebody's partner. */
    int64_t *hits = calloc(N_LAB, sizeof *hits), unused = 0;
    for (int64_t k = 0; k < ptr->n; k++) hits[ptr->idx[2 * k + 1]]++;
    for (int64_t i = 0; i < ntr; i++) unused += hits[tr[i]] == 0;
    ck_assert_int_lt(unused, ntr / 20);   /* Poisson(4): e^-4 ~ 2% */
    free(hits);
    /* Reproducible from the generator state. */
    vs_pairs *again = NULL;
    vs_rng_seed(&r, 9);
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 3, tr, ntr, 2, 2, &r, &again, &e), VS_OK);
    ck_assert(memcmp(again->idx, ptr->idx, (size_t)ptr->n * 2 * sizeof *ptr->idx) == 0);
    vs_pairs_free(again);
    vs_pairs_free(ptr);
    vs_pairs_free(pte);
    free(tr);
    free(te);
}
END_TEST

START_TEST(test_pairs_snx_errors)
{
    int64_t y[N_LAB];
    uneven_labels(y);
    vs_rng r;
    vs_rng_seed(&r, 1);
    vs_pairs *p = NULL;
    vs_error e;
    /* Class 3 has a single row: no same-class partner. */
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 4, NULL, 0, 2, 2, &r, &p, &e), VS_ERR_ARG);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(e.msg, "class 3 has 1 rows") != NULL, "%s", e.msg);
    /* Only class 0 in the portion: no different-class partner. */
    int64_t portion[5];
    for (int64_t i = 0, k = 0; k < 5; i++)
        if (y[i] == 0) portion[k++] = i;
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 4, portion, 5, 2, 2, &r, &p, &e), VS_ERR_ARG);
    ck_assert_msg(strstr(e.msg, "other classes") != NULL, "%s", e.msg);
    /* ...but same-class-only pairs are fine there. */
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 4, portion, 5, 4, 0, &r, &p, &e), VS_OK);
    check_snx(p, y, N_LAB, portion, 5, 4, 0);
    vs_pairs_free(p);
    int64_t bad[2] = {0, N_LAB};
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 4, bad, 2, 1, 0, &r, &p, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "portion[1]") != NULL);
    int64_t twice[3] = {0, 4, 0};
    ck_assert_int_eq(vs_pairs_snx(y, N_LAB, 4, twice, 3, 1, 0, &r, &p, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "twice") != NULL);
}
END_TEST

START_TEST(test_pairs_random_balanced)
{
    int64_t y[N_LAB];
    uneven_labels(y);
    vs_rng r;
    vs_rng_seed(&r, 4);
    vs_pairs *p = NULL;
    vs_error e;
    ck_assert_msg(vs_pairs_random(y, N_LAB, 4, NULL, 0, 2001, &r, &p, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(p->n, 2001);
    int64_t positives = 0;
    for (int64_t k = 0; k < p->n; k++) {
        int64_t s = p->idx[2 * k], t = p->idx[2 * k + 1];
        EXPECT(s >= 0 && s < N_LAB && t >= 0 && t < N_LAB && s != t);
        EXPECT(p->label[k] == (y[s] == y[t]));
        EXPECT(p->label[k] == (k % 2 == 0));
        EXPECT(y[s] != 3 || !p->label[k]);   /* the one-row class can only start negatives */
        positives += p->label[k];
    }
    EXPECT_ALL();
    ck_assert_int_eq(positives, 1001);
    vs_pairs_free(p);
    /* A portion of one class cannot give negatives; of singletons, no positives. */
    int64_t one_class[3], singles[2] = {3, 1};   /* classes 0,0,0 and 3,1 */
    for (int64_t i = 0, k = 0; k < 3; i++)
        if (y[i] == 0) one_class[k++] = i;
    ck_assert(y[3] == 3 && y[1] == 1);
    ck_assert_int_eq(vs_pairs_random(y, N_LAB, 4, one_class, 3, 4, &r, &p, &e), VS_ERR_ARG);
    ck_assert_int_eq(vs_pairs_random(y, N_LAB, 4, singles, 2, 1, &r, &p, &e), VS_ERR_ARG);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(vs_pairs_random(y, N_LAB, 4, one_class, 3, 1, &r, &p, &e), VS_OK);
    ck_assert(p->n == 1 && p->label[0] == 1);
    vs_pairs_free(p);
}
END_TEST

START_TEST(test_subset_tabular)
{
    vs_synth_tabular_opts o;
    vs_synth_tabular_defaults(&o);
    o.n = 200;
    vs_dataset *d = NULL, *s = NULL;
    vs_error e;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_OK);
    int64_t idx[5] = {7, 0, 199, 7, 42};
    ck_assert_msg(vs_dataset_subset(d, idx, 5, &s, &e) == VS_OK, "%s", e.msg);
    ck_assert(s->n == 5 && s->dim == d->dim && s->n_groups == d->n_groups && s->kind == d->kind);
    ck_assert_str_eq(s->name, d->name);
    ck_assert(s->feature_names != d->feature_names && s->groups != d->groups && s->X != d->X);
    for (int64_t i = 0; i < 5; i++) {
        EXPECT(s->y[i] == d->y[idx[i]]);
        EXPECT(memcmp(s->X + i * s->dim, d->X + idx[i] * d->dim, (size_t)d->dim * sizeof(float)) == 0);
    }
    for (int64_t j = 0; j < d->dim; j++) {
        EXPECT(strcmp(s->feature_names[j], d->feature_names[j]) == 0);
        EXPECT(s->feature_truth[j] == d->feature_truth[j]);
    }
    for (int64_t g = 0; g < d->n_groups; g++) {
        EXPECT(strcmp(s->groups[g].name, d->groups[g].name) == 0);
        EXPECT(s->groups[g].first == d->groups[g].first && s->groups[g].count == d->groups[g].count);
        EXPECT(s->group_truth[g] == d->group_truth[g]);
    }
    EXPECT_ALL();
    ck_assert_str_eq(s->class_names[0], "reject");
    vs_dataset_free(d);   /* the subset owns its own copies */
    ck_assert_str_eq(s->groups[0].name, "income");
    vs_dataset_free(s);
}
END_TEST

START_TEST(test_subset_graphs)
{
    vs_synth_graph_opts o;
    vs_synth_graph_defaults(&o);
    o.n = 30;
    vs_dataset *d = NULL, *s = NULL;
    vs_error e;
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_OK);
    int64_t idx[3] = {29, 3, 3};
    ck_assert_msg(vs_dataset_subset(d, idx, 3, &s, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(s->n_node_features, d->n_node_features);
    for (int64_t i = 0; i < 3; i++) {
        const vs_graph *a = &s->graphs[i], *b = &d->graphs[idx[i]];
        size_t ne = (size_t)b->n_edges;
        ck_assert(a->n_nodes == b->n_nodes && a->n_edges == b->n_edges);
        ck_assert(a->src != b->src && a->edge_truth != b->edge_truth);
        ck_assert(memcmp(a->src, b->src, ne * 8) == 0 && memcmp(a->dst, b->dst, ne * 8) == 0);
        ck_assert(memcmp(a->rev, b->rev, ne * 8) == 0 && memcmp(a->edge_truth, b->edge_truth, ne) == 0);
        ck_assert(memcmp(a->x, b->x, (size_t)b->n_nodes * (size_t)d->n_node_features * sizeof(float)) == 0);
        ck_assert_ptr_null(a->edge_label);
        ck_assert_int_eq(s->y[i], d->y[idx[i]]);
    }
    ck_assert(s->graphs[1].src != s->graphs[2].src);   /* repeats are separate copies */
    int64_t bad = 30;
    vs_dataset *none = NULL;
    ck_assert_int_eq(vs_dataset_subset(d, &bad, 1, &none, &e), VS_ERR_ARG);
    ck_assert_ptr_null(none);
    ck_assert(strstr(e.msg, "idx[0] = 30") != NULL);
    vs_dataset_free(d);
    vs_dataset_free(s);
}
END_TEST

START_TEST(test_protocol_end_to_end)
{
    /* SNX Sec. IV: generate, split 70/30, pair each portion, index the pairs through a subset. */
    vs_synth_tabular_opts o;
    vs_synth_tabular_defaults(&o);
    o.n = 300;
    vs_dataset *d = NULL, *test = NULL;
    vs_error e;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_OK);
    vs_rng r;
    vs_rng_seed(&r, 2);
    int64_t *tr, *te, ntr, nte;
    ck_assert_int_eq(vs_split_stratified(d->y, d->n, d->n_classes, VS_SPLIT_TRAIN_DEFAULT, &r, &tr, &ntr, &te, &nte, &e),
                     VS_OK);
    ck_assert_int_eq(ntr, 210);
    ck_assert_int_eq(vs_dataset_subset(d, te, nte, &test, &e), VS_OK);
    vs_pairs *p = NULL;
    ck_assert_msg(vs_pairs_snx(test->y, test->n, test->n_classes, NULL, 0, 2, 2, &r, &p, &e) == VS_OK, "%s", e.msg);
    check_snx(p, test->y, test->n, NULL, test->n, 2, 2);
    vs_pairs_free(p);
    vs_dataset_free(test);
    vs_dataset_free(d);
    free(tr);
    free(te);
}
END_TEST

static Suite *pairs_suite(void)
{
    Suite *s = suite_create("pairs");
    TCase *tc = vs_tcase(s, "split", 30);
    tcase_add_test(tc, test_split_stratified);
    tcase_add_test(tc, test_split_errors);
    tc = vs_tcase(s, "pairs", 30);
    tcase_add_test(tc, test_pairs_snx_protocol);
    tcase_add_test(tc, test_pairs_snx_errors);
    tcase_add_test(tc, test_pairs_random_balanced);
    tc = vs_tcase(s, "subset", 30);
    tcase_add_test(tc, test_subset_tabular);
    tcase_add_test(tc, test_subset_graphs);
    tcase_add_test(tc, test_protocol_end_to_end);
    return s;
}

VS_TEST_MAIN(pairs_suite)
