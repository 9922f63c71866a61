/* test_synth.c - synthetic generators: reproducibility, one-hot validity, planted truth, motifs, images. */
#include "vs_check.h"
#include "vs_expect.h"
#include "versus/synth.h"

#include <math.h>
#include <stdint.h>

/* ---- helpers ----------------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* Hash of every byte of the data (X, y, graphs, truth). */
static uint64_t data_hash(const vs_dataset *d)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv(h, d->y, (size_t)d->n * sizeof *d->y);
    if (d->X) h = fnv(h, d->X, (size_t)d->n * (size_t)d->dim * sizeof *d->X);
    if (d->feature_truth) h = fnv(h, d->feature_truth, (size_t)d->dim);
    if (d->group_truth) h = fnv(h, d->group_truth, (size_t)d->n_groups * sizeof *d->group_truth);
    for (int64_t i = 0; d->graphs && i < d->n; i++) {
        const vs_graph *g = &d->graphs[i];
        size_t ne = (size_t)g->n_edges;
        h = fnv(h, &g->n_nodes, sizeof g->n_nodes);
        h = fnv(h, g->src, ne * sizeof *g->src);
        h = fnv(h, g->dst, ne * sizeof *g->dst);
        h = fnv(h, g->rev, ne * sizeof *g->rev);
        h = fnv(h, g->edge_truth, ne);
        h = fnv(h, g->x, (size_t)g->n_nodes * (size_t)d->n_node_features * sizeof *g->x);
    }
    return h;
}

static int same_bytes(const vs_dataset *a, const vs_dataset *b)
{
    if (a->n != b->n || a->dim != b->dim) return 0;
    if (memcmp(a->y, b->y, (size_t)a->n * sizeof *a->y)) return 0;
    if (a->X && memcmp(a->X, b->X, (size_t)a->n * (size_t)a->dim * sizeof *a->X)) return 0;
    for (int64_t i = 0; a->graphs && i < a->n; i++) {
        const vs_graph *g = &a->graphs[i], *h = &b->graphs[i];
        size_t ne = (size_t)g->n_edges;
        if (g->n_nodes != h->n_nodes || g->n_edges != h->n_edges) return 0;
        if (memcmp(g->src, h->src, ne * 8) || memcmp(g->dst, h->dst, ne * 8) || memcmp(g->rev, h->rev, ne * 8) ||
            memcmp(g->edge_truth, h->edge_truth, ne) ||
            memcmp(g->x, h->x, (size_t)g->n_nodes * (size_t)a->n_node_features * sizeof *g->x))
            return 0;
    }
    return 1;
}

/* Category index of group g in row i (the one-hot position). */
static int64_t cat_of(const vs_dataset *d, int64_t i, int64_t g)
{
    const float *row = d->X + i * d->dim + d->groups[g].first;
    for (int64_t c = 0; c < d->groups[g].count; c++)
        if (row[c] == 1.0f) return c;
    return -1;
}

/* Key of the categories of the groups in gs[0..ng) (mixed radix), < 6^ng. */
static int64_t cell_key(const vs_dataset *d, int64_t i, const int64_t *gs, int64_t ng)
{
    int64_t key = 0;
    for (int64_t k = 0; k < ng; k++) key = key * 6 + cat_of(d, i, gs[k]);
    return key;
}

/* Accuracy on rows [split, n) of the majority label per cell of groups gs, learnt on rows [0, split). */
static double lookup_accuracy(const vs_dataset *d, const int64_t *gs, int64_t ng, int64_t split)
{
    int64_t cells = 1;
    for (int64_t k = 0; k < ng; k++) cells *= 6;
    int64_t *cnt = calloc((size_t)cells * 2, sizeof *cnt);
    int64_t ones = 0;
    for (int64_t i = 0; i < split; i++) {
        cnt[cell_key(d, i, gs, ng) * 2 + d->y[i]]++;
        ones += d->y[i];
    }
    int64_t prior = 2 * ones >= split;
    int64_t right = 0;
    for (int64_t i = split; i < d->n; i++) {
        const int64_t *c = &cnt[cell_key(d, i, gs, ng) * 2];
        int64_t guess = c[0] == c[1] ? prior : c[1] > c[0];
        right += guess == d->y[i];
    }
    free(cnt);
    return (double)right / (double)(d->n - split);
}

/* 1 when the category of group a is a function of the category of group b over all rows. */
static int is_function_of(const vs_dataset *d, int64_t a, int64_t b)
{
    int64_t map[6] = {-1, -1, -1, -1, -1, -1};
    for (int64_t i = 0; i < d->n; i++) {
        int64_t ca = cat_of(d, i, a), cb = cat_of(d, i, b);
        if (map[cb] < 0) map[cb] = ca;
        else if (map[cb] != ca) return 0;
    }
    return 1;
}

static vs_dataset *tabular(int64_t n, int64_t q, int64_t ns, int64_t nc, double noise, double corr, uint64_t seed)
{
    vs_synth_tabular_opts o;
    vs_synth_tabular_defaults(&o);
    o.n = n;
    o.n_features = q;
    o.n_salient = ns;
    o.n_correlated = nc;
    o.label_noise = noise;
    o.corr_strength = corr;
    o.seed = seed;
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_synth_tabular(&o, &d, &e) == VS_OK, "%s", e.msg);
    return d;
}

/* ---- tabular ----------------------------------------------------------------------------------- */

START_TEST(test_tabular_reproducible)
{
    vs_dataset *a = tabular(500, 10, 3, 2, 0.1, 0.8, 5), *b = tabular(500, 10, 3, 2, 0.1, 0.8, 5);
    vs_dataset *c = tabular(500, 10, 3, 2, 0.1, 0.8, 6);
    ck_assert(same_bytes(a, b));
    ck_assert_uint_eq(data_hash(a), data_hash(b));
    ck_assert(!same_bytes(a, c));
    ck_assert(memcmp(a->X, c->X, (size_t)a->n * (size_t)a->dim * sizeof(float)) != 0);
    for (int64_t j = 0; j < a->dim; j++) EXPECT(strcmp(a->feature_names[j], b->feature_names[j]) == 0);
    EXPECT_ALL();
    /* Pinned bytes (little-endian): any platform or code change that alters the data shows up here. */
    ck_assert_uint_eq(data_hash(a), UINT64_C(1426584127523594040));
    vs_dataset_free(a);
    vs_dataset_free(b);
    vs_dataset_free(c);
}
END_TEST

START_TEST(test_tabular_one_hot_and_truth)
{
    vs_dataset *d = tabular(800, 12, 3, 3, 0.1, 0.8, 11);
    ck_assert_int_eq(d->kind, VS_DATA_TABULAR);
    ck_assert_int_eq(d->n_groups, 12);
    ck_assert_int_eq(d->n_classes, 2);
    ck_assert_str_eq(d->class_names[1], "approve");
    ck_assert_str_eq(d->groups[0].name, "income");
    ck_assert_str_eq(d->feature_names[2], "income=high");
    int64_t col = 0, salient = 0;
    for (int64_t g = 0; g < d->n_groups; g++) {
        EXPECT(d->groups[g].first == col);
        EXPECT(d->groups[g].count >= 2 && d->groups[g].count <= 6);
        size_t len = strlen(d->groups[g].name);
        for (int64_t c = 0; c < d->groups[g].count; c++, col++) {
            EXPECT(strncmp(d->feature_names[col], d->groups[g].name, len) == 0 && d->feature_names[col][len] == '=');
            EXPECT(d->feature_truth[col] == d->group_truth[g]);
        }
        salient += d->group_truth[g];
    }
    ck_assert_int_eq(col, d->dim);
    ck_assert_int_eq(salient, 3);
    for (int64_t i = 0; i < d->n; i++) {
        EXPECT(d->y[i] == 0 || d->y[i] == 1);
        for (int64_t g = 0; g < d->n_groups; g++) {
            const float *row = d->X + i * d->dim + d->groups[g].first;
            int ones = 0;
            for (int64_t c = 0; c < d->groups[g].count; c++) {
                EXPECT(row[c] == 0.0f || row[c] == 1.0f);
                ones += row[c] == 1.0f;
            }
            EXPECT(ones == 1);
        }
    }
    EXPECT_ALL();
    vs_dataset_free(d);
}
END_TEST

static int64_t salient_groups(const vs_dataset *d, int64_t *gs)
{
    int64_t ns = 0;
    for (int64_t g = 0; g < d->n_groups; g++)
        if (d->group_truth[g]) gs[ns++] = g;
    return ns;
}

START_TEST(test_tabular_rule_determines_label)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        /* Without noise the label is a function of the salient categories, and of nothing else. */
        vs_dataset *d = tabular(3000, 10, 3, 2, 0.0, 0.8, seed);
        int64_t gs[16], ns = salient_groups(d, gs);
        ck_assert_int_eq(ns, 3);
        int64_t seen[216];
        for (int k = 0; k < 216; k++) seen[k] = -1;
        int64_t ones = 0;
        for (int64_t i = 0; i < d->n; i++) {
            int64_t key = cell_key(d, i, gs, ns);
            if (seen[key] < 0) seen[key] = d->y[i];
            EXPECT(seen[key] == d->y[i]);
            ones += d->y[i];
        }
        EXPECT_ALL();
        ck_assert(ones > 0.3 * d->n && ones < 0.7 * d->n);
        ck_assert_float_near(lookup_accuracy(d, gs, ns, 2000), 1.0, 1e-12);
        vs_dataset_free(d);

        /* With 20% flips the best rule on the salient features is right ~80% of the time. */
        d = tabular(6000, 10, 3, 2, 0.2, 0.8, seed);
        ns = salient_groups(d, gs);
        ck_assert_float_near(lookup_accuracy(d, gs, ns, 4000), 0.8, 0.035);
        vs_dataset_free(d);
    }
}
END_TEST

START_TEST(test_tabular_distractors)
{
    /* corr_strength 1: each correlated feature is a function of a salient one; noise features are not. */
    vs_dataset *d = tabular(2000, 12, 3, 3, 0.1, 1.0, 21);
    int64_t functional = 0;
    for (int64_t a = 0; a < d->n_groups; a++) {
        if (d->group_truth[a]) continue;
        int f = 0;
        for (int64_t b = 0; b < d->n_groups; b++) f |= d->group_truth[b] && is_function_of(d, a, b);
        functional += f;
    }
    ck_assert_int_eq(functional, 3);
    vs_dataset_free(d);

    /* Without correlated features no non-salient feature predicts the label. */
    d = tabular(6000, 10, 3, 0, 0.0, 0.8, 22);
    int64_t ones = 0;
    for (int64_t i = 4000; i < d->n; i++) ones += d->y[i];
    double base = (double)(ones > 1000 ? ones : 2000 - ones) / 2000.0;
    for (int64_t g = 0; g < d->n_groups; g++)
        if (!d->group_truth[g]) ck_assert(lookup_accuracy(d, &g, 1, 4000) < base + 0.035);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_tabular_bad_options)
{
    static vs_dataset dummy;
    vs_synth_tabular_opts o;
    vs_dataset *d = &dummy;
    vs_error e;
    vs_synth_tabular_defaults(&o);
    o.n_salient = 0;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_ERR_ARG);
    ck_assert_ptr_null(d);
    ck_assert(strstr(e.msg, "n_salient") != NULL);
    vs_synth_tabular_defaults(&o);
    o.n_features = 17;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "n_features") != NULL);
    vs_synth_tabular_defaults(&o);
    o.n_correlated = 8;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_ERR_ARG);
    vs_synth_tabular_defaults(&o);
    o.label_noise = NAN;
    ck_assert_int_eq(vs_synth_tabular(&o, &d, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "label_noise") != NULL);
}
END_TEST

/* ---- graphs ------------------------------------------------------------------------------------ */

static vs_dataset *graphs(vs_synth_background bg, vs_synth_motif motif, vs_synth_motif decoy, int64_t attach,
                          uint64_t seed)
{
    vs_synth_graph_opts o;
    vs_synth_graph_defaults(&o);
    o.n = 300;
    o.background = bg;
    o.ba_m = 1;
    o.er_p = 0.05;
    o.motif = motif;
    o.decoy = decoy;
    o.attach_edges = attach;
    o.seed = seed;
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_synth_graphs(&o, &d, &e) == VS_OK, "%s", e.msg);
    return d;
}

/* Edge list well-formed: ids in range, no loops, sorted without duplicates, rev pairs, one-hot x. */
static void check_graph_structure(const vs_graph *g, int64_t nf)
{
    EXPECT(g->n_edges % 2 == 0);
    for (int64_t e = 0; e < g->n_edges; e++) {
        EXPECT(g->src[e] >= 0 && g->src[e] < g->n_nodes && g->dst[e] >= 0 && g->dst[e] < g->n_nodes);
        EXPECT(g->src[e] != g->dst[e]);
        if (e > 0) EXPECT(g->src[e - 1] < g->src[e] || (g->src[e - 1] == g->src[e] && g->dst[e - 1] < g->dst[e]));
        int64_t r = g->rev[e];
        EXPECT(r >= 0 && r < g->n_edges && r != e);
        EXPECT(g->rev[r] == e);
        EXPECT(g->src[r] == g->dst[e]);
        EXPECT(g->dst[r] == g->src[e]);
        EXPECT(g->edge_truth[r] == g->edge_truth[e]);
    }
    for (int64_t a = 0; a < g->n_nodes; a++) {
        float s = 0;
        for (int64_t f = 0; f < nf; f++) {
            EXPECT(g->x[a * nf + f] == 0.0f || g->x[a * nf + f] == 1.0f);
            s += g->x[a * nf + f];
        }
        EXPECT(s == 1.0f);
    }
}

/* Nodes reached from node 0 (optionally over truth edges only, from the first truth edge). */
static int64_t reach(const vs_graph *g, int truth_only, int64_t start)
{
    uint8_t *seen = calloc((size_t)g->n_nodes, 1);
    int64_t *stack = malloc((size_t)g->n_nodes * sizeof *stack), top = 0, count = 1;
    seen[start] = 1;
    stack[top++] = start;
    while (top) {
        int64_t a = stack[--top];
        for (int64_t e = 0; e < g->n_edges; e++)
            if (g->src[e] == a && (!truth_only || g->edge_truth[e]) && !seen[g->dst[e]]) {
                seen[g->dst[e]] = 1;
                stack[top++] = g->dst[e];
                count++;
            }
    }
    free(seen);
    free(stack);
    return count;
}

/* Sorted degrees of the truth subgraph into deg[], returns its node count. */
static int64_t truth_degrees(const vs_graph *g, int64_t *deg)
{
    int64_t *d = calloc((size_t)g->n_nodes, sizeof *d), k = 0;
    for (int64_t e = 0; e < g->n_edges; e++) d[g->src[e]] += g->edge_truth[e];
    for (int64_t a = 0; a < g->n_nodes; a++)
        if (d[a]) deg[k++] = d[a];
    for (int64_t i = 1; i < k; i++)
        for (int64_t j = i; j > 0 && deg[j - 1] > deg[j]; j--) {
            int64_t t = deg[j];
            deg[j] = deg[j - 1];
            deg[j - 1] = t;
        }
    free(d);
    return k;
}

START_TEST(test_graphs_reproducible)
{
    vs_dataset *a = graphs(VS_BG_BARABASI_ALBERT, VS_MOTIF_HOUSE, VS_MOTIF_NONE, 1, 3);
    vs_dataset *b = graphs(VS_BG_BARABASI_ALBERT, VS_MOTIF_HOUSE, VS_MOTIF_NONE, 1, 3);
    vs_dataset *c = graphs(VS_BG_BARABASI_ALBERT, VS_MOTIF_HOUSE, VS_MOTIF_NONE, 1, 4);
    ck_assert(same_bytes(a, b));
    ck_assert(!same_bytes(a, c));
    ck_assert_uint_eq(data_hash(a), UINT64_C(1366145033530500599));
    vs_dataset_free(a);
    vs_dataset_free(b);
    vs_dataset_free(c);
    a = graphs(VS_BG_ERDOS_RENYI, VS_MOTIF_NITRO_RING, VS_MOTIF_CYCLE6, 2, 3);
    b = graphs(VS_BG_ERDOS_RENYI, VS_MOTIF_NITRO_RING, VS_MOTIF_CYCLE6, 2, 3);
    ck_assert(same_bytes(a, b));
    ck_assert_uint_eq(data_hash(a), UINT64_C(13592475016473032522));
    vs_dataset_free(a);
    vs_dataset_free(b);
}
END_TEST

START_TEST(test_graphs_motifs_planted)
{
    static const struct {
        vs_synth_motif m;
        int64_t nodes, deg[9];
    } want[] = {
        {VS_MOTIF_CYCLE5, 5, {2, 2, 2, 2, 2}},
        {VS_MOTIF_CYCLE6, 6, {2, 2, 2, 2, 2, 2}},
        {VS_MOTIF_HOUSE, 5, {2, 2, 2, 3, 3}},
        {VS_MOTIF_NITRO_RING, 9, {1, 1, 2, 2, 2, 2, 2, 3, 3}},
    };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
        for (int bg = 0; bg < 2; bg++) {
            vs_dataset *d = graphs((vs_synth_background)bg, want[w].m, VS_MOTIF_NONE, 1 + (int64_t)(w % 2), 7 + w);
            ck_assert_int_eq(d->n_node_features, VS_SYNTH_N_ATOMS);
            int64_t pos = 0, early = 0;
            for (int64_t i = 0; i < d->n; i++) {
                const vs_graph *g = &d->graphs[i];
                check_graph_structure(g, d->n_node_features);
                EXPECT(reach(g, 0, 0) == g->n_nodes);   /* connected */
                EXPECT(g->n_nodes >= 10 + want[w].nodes && g->n_nodes <= 30 + want[w].nodes);
                int64_t deg[64], k = truth_degrees(g, deg), first = -1, min_id = g->n_nodes;
                if (!d->y[i]) {
                    EXPECT(k == 0);
                    continue;
                }
                pos++;
                EXPECT(k == want[w].nodes);
                for (int64_t j = 0; j < k; j++) EXPECT(deg[j] == want[w].deg[j]);
                for (int64_t e = 0; e < g->n_edges; e++)
                    if (g->edge_truth[e]) {
                        first = g->src[e];
                        if (g->src[e] < min_id) min_id = g->src[e];
                    }
                EXPECT(first >= 0 && reach(g, 1, first) == want[w].nodes);   /* the motif is one piece */
                early += min_id < g->n_nodes / 2;
                if (want[w].m == VS_MOTIF_NITRO_RING) {
                    int64_t types[VS_SYNTH_N_ATOMS] = {0};
                    for (int64_t a = 0; a < g->n_nodes; a++) {
                        int on = 0;
                        for (int64_t e = 0; e < g->n_edges; e++) on |= g->src[e] == a && g->edge_truth[e];
                        for (int t = 0; on && t < VS_SYNTH_N_ATOMS; t++) types[t] += g->x[a * VS_SYNTH_N_ATOMS + t] == 1.0f;
                    }
                    EXPECT(types[VS_ATOM_C] == 5 && types[VS_ATOM_N] == 2 && types[VS_ATOM_O] == 2);
                }
            }
            EXPECT_ALL();
            ck_assert(pos > 110 && pos < 190);
            ck_assert_int_gt(early, pos / 4);   /* node ids shuffled: the motif is not parked at the end */
            vs_dataset_free(d);
        }
}
END_TEST

START_TEST(test_graphs_cycle_rank)
{
    /* BA with m = 1 is a tree, so edges - nodes + 1 counts the planted cycles exactly:
     * house 2 (positives), 5-cycle decoy 1 (negatives); with 2 attachment edges one more. */
    for (int64_t attach = 1; attach <= 2; attach++) {
        vs_dataset *d = graphs(VS_BG_BARABASI_ALBERT, VS_MOTIF_HOUSE, VS_MOTIF_CYCLE5, attach, 30 + (uint64_t)attach);
        double nodes[2] = {0, 0}, count[2] = {0, 0};
        for (int64_t i = 0; i < d->n; i++) {
            const vs_graph *g = &d->graphs[i];
            int64_t rank = g->n_edges / 2 - g->n_nodes + 1;
            EXPECT(rank == (d->y[i] ? 2 : 1) + (attach - 1));
            nodes[d->y[i]] += (double)g->n_nodes;
            count[d->y[i]]++;
        }
        EXPECT_ALL();
        /* Same node-count distribution in both classes (uniform over 21 sizes: sd ~6). */
        ck_assert_float_near(nodes[0] / count[0], nodes[1] / count[1], 2.5);
        vs_dataset_free(d);
    }
}
END_TEST

START_TEST(test_graphs_bad_options)
{
    vs_synth_graph_opts o;
    vs_dataset *d = NULL;
    vs_error e;
    vs_synth_graph_defaults(&o);
    o.motif = VS_MOTIF_NONE;
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "motif") != NULL);
    vs_synth_graph_defaults(&o);
    o.decoy = o.motif;
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_ERR_ARG);
    vs_synth_graph_defaults(&o);
    o.ba_m = 15;   /* smallest background: 10 + 5 house nodes = 15 nodes, so m <= 14 */
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_ERR_ARG);
    ck_assert(strstr(e.msg, "ba_m") != NULL);
    vs_synth_graph_defaults(&o);
    o.max_nodes = 5;
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_ERR_ARG);
    vs_synth_graph_defaults(&o);
    o.attach_edges = 3;
    ck_assert_int_eq(vs_synth_graphs(&o, &d, &e), VS_ERR_ARG);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(vs_synth_motif_nodes(VS_MOTIF_NITRO_RING), 9);
    ck_assert_int_eq(vs_synth_motif_edges(VS_MOTIF_HOUSE), 6);
}
END_TEST

/* ---- images ------------------------------------------------------------------------------------ */

static vs_dataset *shapes(int64_t n, int64_t size, uint64_t seed)
{
    vs_synth_shapes_opts o;
    vs_synth_shapes_defaults(&o);
    o.n = n;
    o.size = size;
    o.seed = seed;
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_synth_shapes(&o, &d, &e) == VS_OK, "%s", e.msg);
    return d;
}

/* 1 when image img [s, s] holds an a x a block of pixels >= 0.7 with its corner in [r0, r1) x [c0, c1). */
static int has_square(const float *img, int64_t s, int64_t a, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = c0; c < c1; c++) {
            int full = 1;
            for (int64_t i = 0; full && i < a; i++)
                for (int64_t j = 0; full && j < a; j++) full = img[(r + i) * s + c + j] >= 0.7f;
            if (full) return 1;
        }
    return 0;
}

START_TEST(test_shapes_region_decides)
{
    const int64_t sizes[2] = {16, 28};
    for (int k = 0; k < 2; k++) {
        int64_t s = sizes[k], h = s / 2, a = s / 4;
        vs_dataset *d = shapes(600, s, 40 + (uint64_t)k);
        ck_assert(d->ndim == 3 && d->shape[0] == 1 && d->shape[1] == s && d->dim == s * s);
        int64_t truth = 0;
        for (int64_t p = 0; p < d->dim; p++) {
            EXPECT(d->feature_truth[p] == (p / s < h && p % s < h));
            truth += d->feature_truth[p];
        }
        ck_assert_int_eq(truth, h * h);
        int64_t pos = 0, right_other = 0;
        for (int64_t i = 0; i < d->n; i++) {
            const float *img = d->X + i * d->dim;
            for (int64_t p = 0; p < d->dim; p++) EXPECT(img[p] >= 0.0f && img[p] < 1.0f);
            /* The rule "a full square inside R" is exactly the label. */
            EXPECT(has_square(img, s, a, 0, h - a + 1, 0, h - a + 1) == d->y[i]);
            /* The same rule on the bottom-right quadrant knows nothing of the label. */
            right_other += has_square(img, s, a, h, s - a + 1, h, s - a + 1) == d->y[i];
            pos += d->y[i];
        }
        EXPECT_ALL();
        ck_assert(pos > 240 && pos < 360);
        ck_assert(right_other > 230 && right_other < 370);
        vs_dataset_free(d);
    }
    vs_dataset *a = shapes(50, 16, 9), *b = shapes(50, 16, 9), *c = shapes(50, 16, 10);
    ck_assert(same_bytes(a, b));
    ck_assert(!same_bytes(a, c));
    ck_assert_uint_eq(data_hash(a), UINT64_C(747475265357511709));
    vs_dataset_free(a);
    vs_dataset_free(b);
    vs_dataset_free(c);
}
END_TEST

START_TEST(test_colorize)
{
    vs_dataset *g = shapes(900, 16, 3);
    vs_rng r, r2;
    vs_rng_seed(&r, 77);
    vs_rng_seed(&r2, 77);
    vs_dataset *d = NULL, *d2 = NULL;
    int64_t *col = NULL;
    vs_error e;
    ck_assert_msg(vs_synth_colorize(g, &r, &d, &col, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(vs_synth_colorize(g, &r2, &d2, NULL, &e), VS_OK);
    ck_assert(same_bytes(d, d2));
    ck_assert(d->shape[0] == 3 && d->shape[1] == 16 && d->shape[2] == 16 && d->dim == 3 * 256);
    ck_assert_str_eq(d->name, "synthetic-shapes-colored");
    ck_assert_str_eq(d->class_names[1], "square");
    const int64_t hw = 256;
    int64_t counts[2][3] = {{0}};
    for (int64_t i = 0; i < d->n; i++) {
        if (col[i] < 0 || col[i] > 2) ck_abort_msg("colour %lld out of range", (long long)col[i]);
        EXPECT(d->y[i] == g->y[i]);
        counts[d->y[i]][col[i]]++;
        const float *o = d->X + i * d->dim, *in = g->X + i * hw;
        for (int64_t p = 0; p < hw; p++) {
            EXPECT(o[p] + o[hw + p] + o[2 * hw + p] == in[p]);   /* intensity kept exactly */
            EXPECT(o[col[i] * hw + p] == in[p]);
        }
    }
    EXPECT_ALL();
    for (int c = 0; c < 3; c++) {
        ck_assert_int_eq(d->feature_truth[c * hw + 0], 1);
        ck_assert_int_eq(d->feature_truth[c * hw + 255], 0);
    }
    /* Colour independent of the label: each (class, colour) cell near a third of its class. */
    for (int y = 0; y < 2; y++) {
        double ny = (double)(counts[y][0] + counts[y][1] + counts[y][2]);
        for (int c = 0; c < 3; c++) ck_assert_float_near(counts[y][c] / ny, 1.0 / 3.0, 0.075);
    }
    free(col);
    vs_dataset_free(d2);
    vs_dataset_free(d);
    /* A colour image is refused. */
    g->shape[0] = 3;
    ck_assert_int_eq(vs_synth_colorize(g, &r, &d2, &col, &e), VS_ERR_ARG);
    ck_assert_ptr_null(d2);
    ck_assert_ptr_null(col);
    g->shape[0] = 1;
    vs_dataset_free(g);
}
END_TEST

static Suite *synth_suite(void)
{
    Suite *s = suite_create("synth");
    TCase *tc = vs_tcase(s, "tabular", 60);
    tcase_add_test(tc, test_tabular_reproducible);
    tcase_add_test(tc, test_tabular_one_hot_and_truth);
    tcase_add_test(tc, test_tabular_rule_determines_label);
    tcase_add_test(tc, test_tabular_distractors);
    tcase_add_test(tc, test_tabular_bad_options);
    tc = vs_tcase(s, "graphs", 60);
    tcase_add_test(tc, test_graphs_reproducible);
    tcase_add_test(tc, test_graphs_motifs_planted);
    tcase_add_test(tc, test_graphs_cycle_rank);
    tcase_add_test(tc, test_graphs_bad_options);
    tc = vs_tcase(s, "images", 60);
    tcase_add_test(tc, test_shapes_region_decides);
    tcase_add_test(tc, test_colorize);
    return s;
}

VS_TEST_MAIN(synth_suite)
