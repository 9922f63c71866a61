/* test_tu.c - TU Dortmund graph sets: a small hand-written set (from memory and from files), each
 * kind of malformed input with the file and line it names, and MUTAG when VERSUS_DATA has it. */
#include "vs_check.h"
#include "versus/data_io.h"

#include <math.h>
#include <stdint.h>
#include <unistd.h>

/* TOY: graph 1 = triangle on global nodes 1, 2, 5 (interleaved with graph 2 on purpose; the edge
 * 1-5 is listed in one direction only), graph 2 = nodes 3, 4 with one edge listed three times,
 * graph 3 = node 6 alone. */
typedef struct toy {
    const char *A, *gi, *gl, *nl, *na, *el;
} toy;

static const toy good = {
    "1, 2\n2, 1\n2, 5\n5, 2\n1, 5\n3, 4\n4, 3\n3,4\n",
    "1\n1\n2\n2\n1\n3\n",
    "1\n-1\n1\n",
    "3\n7\n3\n5\n7\n3\n",
    "0.5, -1\n1, 2\n1.5, 3\n2, 4\n2.5, 5e-1\n3, 6\n",
    "0\n0\n1\n1\n2\n1\n1\n1\n",
};

static vs_tu_part part(const char *s, const char *name)
{
    vs_tu_part p = {(const uint8_t *)s, s ? strlen(s) : 0, name};
    return p;
}

static vs_tu_files files_of(const toy *t)
{
    vs_tu_files f;
    f.A = part(t->A, NULL);
    f.graph_indicator = part(t->gi, NULL);
    f.graph_labels = part(t->gl, NULL);
    f.node_labels = part(t->nl, NULL);
    f.node_attributes = part(t->na, NULL);
    f.edge_labels = part(t->el, NULL);
    return f;
}

/* Each undirected edge twice, (u,v) then (v,u), rev pairing them, ids in range. */
static void check_graph_invariants(const vs_graph *g)
{
    ck_assert_int_eq(g->n_edges % 2, 0);
    for (int64_t e = 0; e < g->n_edges; e++) {
        ck_assert(g->src[e] >= 0 && g->src[e] < g->n_nodes);
        ck_assert(g->dst[e] >= 0 && g->dst[e] < g->n_nodes);
        int64_t r = g->rev[e];
        ck_assert(r >= 0 && r < g->n_edges && r != e);
        ck_assert_int_eq(g->rev[r], e);
        ck_assert_int_eq(g->src[r], g->dst[e]);
        ck_assert_int_eq(g->dst[r], g->src[e]);
        if (g->edge_label) ck_assert_int_eq(g->edge_label[r], g->edge_label[e]);
    }
}

static void check_toy(const vs_dataset *d)
{
    ck_assert_int_eq(d->kind, VS_DATA_GRAPHS);
    ck_assert_str_eq(d->name, "TOY");
    ck_assert_int_eq(d->n, 3);
    ck_assert_int_eq(d->n_classes, 2);
    ck_assert_str_eq(d->class_names[0], "-1");
    ck_assert_str_eq(d->class_names[1], "1");
    ck_assert_int_eq(d->y[0], 1);
    ck_assert_int_eq(d->y[1], 0);
    ck_assert_int_eq(d->y[2], 1);
    ck_assert_int_eq(d->n_node_features, 5); /* labels {3,5,7} one-hot + 2 attributes */

    const vs_graph *g = &d->graphs[0];
    ck_assert_int_eq(g->n_nodes, 3);
    ck_assert_int_eq(g->n_edges, 6);
    static const int64_t src[6] = {0, 1, 0, 2, 1, 2}, dst[6] = {1, 0, 2, 0, 2, 1}, lab[6] = {0, 0, 2, 2, 1, 1};
    for (int e = 0; e < 6; e++) {
        ck_assert_int_eq(g->src[e], src[e]);
        ck_assert_int_eq(g->dst[e], dst[e]);
        ck_assert_int_eq(g->edge_label[e], lab[e]);
    }
    check_graph_invariants(g);
    /* node 5 is local node 2 of graph 1: label 7 -> column 2, attributes 2.5, 0.5 */
    static const float x0[15] = {1, 0, 0, 0.5f, -1, 0, 0, 1, 1, 2, 0, 0, 1, 2.5f, 0.5f};
    for (int i = 0; i < 15; i++) ck_assert_float_eq(g->x[i], x0[i]);

    g = &d->graphs[1];
    ck_assert_int_eq(g->n_nodes, 2);
    ck_assert_int_eq(g->n_edges, 2); /* three listings, one undirected edge */
    ck_assert_int_eq(g->src[0], 0);
    ck_assert_int_eq(g->dst[0], 1);
    ck_assert_int_eq(g->edge_label[0], 1);
    check_graph_invariants(g);
    static const float x1[10] = {1, 0, 0, 1.5f, 3, 0, 1, 0, 2, 4};
    for (int i = 0; i < 10; i++) ck_assert_float_eq(g->x[i], x1[i]);

    g = &d->graphs[2];
    ck_assert_int_eq(g->n_nodes, 1);
    ck_assert_int_eq(g->n_edges, 0);
    static const float x2[5] = {1, 0, 0, 3, 6};
    for (int i = 0; i < 5; i++) ck_assert_float_eq(g->x[i], x2[i]);
}

START_TEST(test_toy_mem)
{
    vs_tu_files f = files_of(&good);
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_parse_tu_mem(&f, "TOY", &d, &e) == VS_OK, "%s", e.msg);
    check_toy(d);
    vs_dataset_free(d);

    /* without node labels and attributes: one constant feature; no edge labels: NULL */
    toy bare = good;
    bare.nl = bare.na = bare.el = NULL;
    f = files_of(&bare);
    ck_assert_msg(vs_parse_tu_mem(&f, "TOY", &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(d->n_node_features, 1);
    ck_assert_float_eq(d->graphs[0].x[2], 1.0f);
    ck_assert_ptr_null(d->graphs[0].edge_label);
    ck_assert_int_eq(d->graphs[0].n_edges, 6);
    vs_dataset_free(d);

    /* CRLF line ends, spaces, a final line without newline and trailing empty lines are fine */
    toy crlf = good;
    crlf.A = "1,2\r\n 2 , 5 \r\n1,\t5\r\n3, 4\r\n\r\n\n";
    crlf.el = "0\n1\n2\n1";
    f = files_of(&crlf);
    ck_assert_msg(vs_parse_tu_mem(&f, "TOY", &d, &e) == VS_OK, "%s", e.msg);
    check_toy(d);
    vs_dataset_free(d);
}
END_TEST

static void expect_bad(const toy *t, vs_status code, const char *part_msg)
{
    vs_tu_files f = files_of(t);
    vs_dataset *d = (vs_dataset *)&d;
    vs_error e;
    vs_error_clear(&e);
    ck_assert_int_eq(vs_parse_tu_mem(&f, "TOY", &d, &e), code);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(e.msg, part_msg) != NULL, "message \"%s\" lacks \"%s\"", e.msg, part_msg);
}

START_TEST(test_toy_bad)
{
    toy t = good;
    t.el = NULL;
    t.A = "1, 2\n2, 1\n2, 7\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 3: node id 7 is outside 1..6");
    t.A = "1, 2\n0, 1\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 2: node id 0 is outside 1..6");
    t.A = "1, 3\n";
    t.el = "0\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 1: edge 1, 3 joins graph 1 and graph 2");
    t = good;
    t.A = "1, 2\n2, x\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 2: field 2 \"x\" is not an integer");
    t.A = "1, 2, 3\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 1: 3 fields, expected 2");
    t.A = "1, 2\n\n2, 1\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_A.txt line 2: empty line inside the table");
    t.A = "1, 99999999999999999999\n";
    expect_bad(&t, VS_ERR_FORMAT, "is not an integer");
    t = good;
    t.el = "0\n0\n1\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_edge_labels.txt has 3 lines but TOY_A.txt has 8 (one per edge)");
    t = good;
    t.el = "0\n0\n1\n1\n2\n1\n1\n2\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_edge_labels.txt line 8: label 2 of an edge differs from label 1 on line 6");
    t = good;
    t.nl = "3\n7\n3\n5\n7\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_node_labels.txt has 5 lines but TOY_graph_indicator.txt has 6 (one per node)");
    t = good;
    t.na = "0.5, -1\n1, 2\n1.5\n2, 4\n2.5, 5e-1\n3, 6\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_node_attributes.txt line 3: 1 fields, expected 2");
    t.na = "0.5, -1\n1, 2\n1.5, nan\n2, 4\n2.5, 5e-1\n3, 6\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_node_attributes.txt line 3: field 2 \"nan\" is not a finite number");
    t.na = "0.5, -1\n1, 2\n1.5, 1e39\n2, 4\n2.5, 5e-1\n3, 6\n";
    expect_bad(&t, VS_ERR_FORMAT, "field 2 \"1e39\" is not a finite number in float range");
    t = good;
    t.gi = "1\n1\n2\n2\n1\n4\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_graph_indicator.txt line 6: graph id 4 is outside 1..3");
    t.gi = "1\n1\n2\n2\n1\n1\n";
    expect_bad(&t, VS_ERR_FORMAT, "graph 3 (TOY_graph_labels.txt line 3) has no nodes");
    t = good;
    t.gl = "1\n-1\n1.5\n";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_graph_labels.txt line 3: field 1 \"1.5\" is not an integer");
    t = good;
    t.gi = "";
    expect_bad(&t, VS_ERR_FORMAT, "TOY_graph_indicator.txt: no nodes");
    t = good;
    t.gl = NULL;
    expect_bad(&t, VS_ERR_ARG, "TOY_graph_labels.txt: required file missing");
}
END_TEST

static void write_text(const char *dir, const char *file, const char *s)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(s, f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_toy_files)
{
    char dir[512], path[1024];
    snprintf(dir, sizeof dir, "%s/vs_tu_XXXXXX", vs_test_tmpdir());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const names[6] = {"TOY_A.txt", "TOY_graph_indicator.txt", "TOY_graph_labels.txt",
                                         "TOY_node_labels.txt", "TOY_node_attributes.txt", "TOY_edge_labels.txt"};
    const char *texts[6] = {good.A, good.gi, good.gl, good.nl, good.na, good.el};
    for (int i = 0; i < 6; i++) write_text(dir, names[i], texts[i]);
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_load_tu(dir, "TOY", &d, &e) == VS_OK, "%s", e.msg);
    check_toy(d);
    vs_dataset_free(d);
    /* messages carry the full path */
    write_text(dir, names[0], "1, 2\n2, 1\n2, 8\n5, 2\n1, 5\n3, 4\n4, 3\n3,4\n");
    ck_assert_int_eq(vs_load_tu(dir, "TOY", &d, &e), VS_ERR_FORMAT);
    snprintf(path, sizeof path, "%s/TOY_A.txt line 3: node id 8 is outside 1..6", dir);
    ck_assert_str_eq(e.msg, path);
    /* optional files may be absent; required ones may not */
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ck_assert_int_eq(remove(path), 0);
    }
    write_text(dir, names[0], good.A);
    write_text(dir, names[1], good.gi);
    ck_assert_int_eq(vs_load_tu(dir, "TOY", &d, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "TOY_graph_labels.txt: cannot open"));
    write_text(dir, names[2], good.gl);
    ck_assert_msg(vs_load_tu(dir, "TOY", &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(d->n, 3);
    ck_assert_int_eq(d->n_node_features, 1);
    vs_dataset_free(d);
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ck_assert_int_eq(remove(path), 0);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_mutag)
{
    char path[1024];
    if (!vs_test_data_path(path, sizeof path, "mutag/MUTAG_A.txt")) return;
    snprintf(path, sizeof path, "%s/mutag", vs_test_data_dir());
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_load_tu(path, "MUTAG", &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(d->n, 188);
    ck_assert_int_eq(d->n_classes, 2);
    ck_assert_str_eq(d->class_names[0], "-1");
    ck_assert_str_eq(d->class_names[1], "1");
    ck_assert_int_eq(d->n_node_features, 7);
    int64_t per_class[2] = {0, 0}, nodes = 0, edges = 0, atoms[7] = {0}, bonds[4] = {0};
    for (int64_t i = 0; i < d->n; i++) {
        const vs_graph *g = &d->graphs[i];
        per_class[d->y[i]]++;
        nodes += g->n_nodes;
        edges += g->n_edges;
        check_graph_invariants(g);
        for (int64_t v = 0; v < g->n_nodes; v++) {
            int hot = -1;
            for (int k = 0; k < 7; k++)
                if (g->x[v * 7 + k] == 1.0f) {
                    ck_assert_int_eq(hot, -1);
                    hot = k;
                }
            ck_assert_int_ge(hot, 0);
            atoms[hot]++;
        }
        for (int64_t k = 0; k < g->n_edges; k += 2) bonds[g->edge_label[k]]++;
    }
    ck_assert_int_eq(per_class[0], 63);
    ck_assert_int_eq(per_class[1], 125);
    ck_assert_int_eq(nodes, 3371);
    ck_assert_int_eq(edges, 7442); /* 3721 bonds, each stored twice */
    static const int64_t want_atoms[7] = {2395, 345, 593, 12, 1, 23, 2}; /* C N O F I Cl Br */
    for (int k = 0; k < 7; k++) ck_assert_int_eq(atoms[k], want_atoms[k]);
    static const int64_t want_bonds[4] = {2354, 1004, 362, 1}; /* aromatic single double triple */
    for (int k = 0; k < 4; k++) ck_assert_int_eq(bonds[k], want_bonds[k]);
    ck_assert_int_eq(d->graphs[0].n_nodes, 17);
    ck_assert_int_eq(d->graphs[0].n_edges, 38);
    ck_assert_int_eq(d->graphs[187].n_nodes, 16);
    ck_assert_int_eq(d->graphs[187].n_edges, 36);
    vs_dataset_free(d);
}
END_TEST

static Suite *tu_suite(void)
{
    Suite *s = suite_create("tu");
    TCase *tc = vs_tcase(s, "toy", 20);
    tcase_add_test(tc, test_toy_mem);
    tcase_add_test(tc, test_toy_bad);
    tcase_add_test(tc, test_toy_files);
    tc = vs_tcase(s, "mutag", 60);
    tcase_add_test(tc, test_mutag);
    return s;
}

VS_TEST_MAIN(tu_suite)
