/* test_tabular.c - one-hot encoding of CSV tables: exact columns and names on a hand-made file,
 * quantile bins, options and their errors, group coverage, the JSON description, and the presets
 * against the shared files (row and class counts from their SOURCE.md). */
#include "vs_check.h"
#include "versus/describe.h"
#include "versus/tabular.h"

#include <unistd.h>

/* age: 12 distinct numbers -> bins; color: strings with two missing (? and empty) -> categorical
 * with "color=?"; size: 3 distinct numbers -> categorical, sorted numerically. */
static const char small_csv[] = "age,color,size,label\n"
                                "21,red,1,no\n"
                                "22,blue,2,yes\n"
                                "23,?,10,no\n"
                                "24,green,1,yes\n"
                                "25,red,2,no\n"
                                "26,red,10,yes\n"
                                "27,blue,1,no\n"
                                "28,green,2,no\n"
                                "29,red,10,yes\n"
                                "30,,1,no\n"
                                "31,blue,2,yes\n"
                                "32,red,10,no\n";

static vs_csv_table *small_table(void)
{
    vs_csv_table *t = NULL;
    vs_error err;
    ck_assert_int_eq(vs_csv_parse_mem(small_csv, sizeof small_csv - 1, "t.csv", NULL, &t, &err), VS_OK);
    return t;
}

static vs_dataset *encode_ok(const vs_csv_table *t, const vs_csv_opts *o)
{
    vs_dataset *d = NULL;
    vs_error err;
    vs_error_clear(&err);
    vs_status st = vs_tabular_encode(t, o, "small", &d, &err);
    ck_assert_msg(st == VS_OK, "encode failed: %s", err.msg);
    return d;
}

/* Groups cover the columns in order, every row has exactly one 1 per group, X is 0/1, y in range.
 * (Check's assertions are slow in inner loops, so the loops only count what is wrong.) */
static void check_groups(const vs_dataset *d)
{
    ck_assert_int_eq(d->kind, VS_DATA_TABULAR);
    ck_assert_int_eq(d->ndim, 1);
    ck_assert_int_eq(d->shape[0], d->dim);
    int64_t next = 0;
    for (int64_t g = 0; g < d->n_groups; g++) {
        ck_assert_int_eq(d->groups[g].first, next);
        ck_assert_int_ge(d->groups[g].count, 1);
        next += d->groups[g].count;
    }
    ck_assert_int_eq(next, d->dim);
    int64_t bad_value = 0, bad_group = 0, bad_label = 0;
    for (int64_t i = 0; i < d->n; i++) {
        const float *x = d->X + i * d->dim;
        for (int64_t g = 0; g < d->n_groups; g++) {
            int ones = 0;
            for (int64_t j = d->groups[g].first; j < d->groups[g].first + d->groups[g].count; j++) {
                bad_value += x[j] != 0.0f && x[j] != 1.0f;
                ones += x[j] == 1.0f;
            }
            bad_group += ones != 1;
        }
        bad_label += d->y[i] < 0 || d->y[i] >= d->n_classes;
    }
    ck_assert_int_eq(bad_value, 0);
    ck_assert_int_eq(bad_group, 0);
    ck_assert_int_eq(bad_label, 0);
}

static void check_names(const vs_dataset *d, const char *const *want, int64_t n)
{
    ck_assert_int_eq(d->dim, n);
    for (int64_t j = 0; j < n; j++) ck_assert_str_eq(d->feature_names[j], want[j]);
}

static long find_feature(const vs_dataset *d, const char *name)
{
    for (int64_t j = 0; j < d->dim; j++)
        if (strcmp(d->feature_names[j], name) == 0) return (long)j;
    return -1;
}

static long find_group(const vs_dataset *d, const char *name)
{
    for (int64_t g = 0; g < d->n_groups; g++)
        if (strcmp(d->groups[g].name, name) == 0) return (long)g;
    return -1;
}

static int64_t column_sum(const vs_dataset *d, long j)
{
    int64_t s = 0;
    for (int64_t i = 0; i < d->n; i++) s += d->X[i * d->dim + j] != 0.0f;
    return s;
}

START_TEST(test_small_exact)
{
    vs_csv_table *t = small_table();
    vs_csv_opts o = vs_csv_opts_defaults();
    o.bins = 4;
    vs_dataset *d = encode_ok(t, &o);
    static const char *const names[] = {"age < 24",   "age in [24,27)", "age in [27,30)", "age >= 30",
                                        "color=blue", "color=green",    "color=red",      "color=?",
                                        "size=1",     "size=2",         "size=10"};
    check_names(d, names, 11);
    ck_assert_str_eq(d->name, "small");
    ck_assert_int_eq(d->n, 12);
    ck_assert_int_eq(d->n_groups, 3);
    ck_assert_str_eq(d->groups[0].name, "age");
    ck_assert_int_eq(d->groups[1].first, 4);
    ck_assert_int_eq(d->groups[1].count, 4);
    ck_assert_str_eq(d->groups[2].name, "size");
    ck_assert_int_eq(d->groups[2].first, 8);
    ck_assert_int_eq(d->groups[2].count, 3);
    ck_assert_int_eq(d->n_classes, 2);
    ck_assert_str_eq(d->class_names[0], "no");
    ck_assert_str_eq(d->class_names[1], "yes");
    /* the one set column of each group, row by row */
    static const int age[12] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    static const int color[12] = {6, 4, 7, 5, 6, 6, 4, 5, 6, 7, 4, 6};
    static const int size[12] = {8, 9, 10, 8, 9, 10, 8, 9, 10, 8, 9, 10};
    static const int64_t y[12] = {0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0};
    for (int i = 0; i < 12; i++) {
        for (int j = 0; j < 11; j++) {
            float want = j == age[i] || j == color[i] || j == size[i] ? 1.0f : 0.0f;
            ck_assert_msg(d->X[i * 11 + j] == want, "X[%d,%d] = %g", i, j, d->X[i * 11 + j]);
        }
        ck_assert_int_eq(d->y[i], y[i]);
    }
    check_groups(d);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_bins)
{
    vs_csv_table *t = small_table();
    vs_csv_opts o = vs_csv_opts_defaults(); /* 5 bins: 12 values, targets 2.4, 4.8, 7.2, 9.6 below */
    o.drop = (const char *const[]){"color", "size", NULL};
    vs_dataset *d = encode_ok(t, &o);
    static const char *const five[] = {"age < 23", "age in [23,26)", "age in [26,28)", "age in [28,31)", "age >= 31"};
    check_names(d, five, 5);
    static const int64_t count5[] = {2, 3, 2, 3, 2};
    for (int j = 0; j < 5; j++) ck_assert_int_eq(column_sum(d, j), count5[j]);
    vs_dataset_free(d);

    o.fit_rows = 6; /* edges from ages 21..26 only; later rows fall in the top bin */
    o.bins = 4;
    d = encode_ok(t, &o);
    static const char *const fit[] = {"age < 22", "age in [22,24)", "age in [24,25)", "age >= 25"};
    check_names(d, fit, 4);
    ck_assert_int_eq(column_sum(d, 3), 8);
    vs_dataset_free(d);

    o.fit_rows = 0;
    o.bins = 1;
    d = encode_ok(t, &o);
    static const char *const one[] = {"age=any"};
    check_names(d, one, 1);
    vs_dataset_free(d);

    /* a low threshold makes size numeric: ties at 1, 2 and 10 never split */
    o.bins = 4;
    o.drop = (const char *const[]){"color", "age", NULL};
    o.numeric_min_distinct = 2;
    d = encode_ok(t, &o);
    static const char *const sz[] = {"size < 2", "size in [2,10)", "size >= 10"};
    check_names(d, sz, 3);
    for (int j = 0; j < 3; j++) ck_assert_int_eq(column_sum(d, j), 4);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_bins_ties)
{
    /* 17 zeros and 3 larger values (like capital-gain): only one useful edge */
    char text[256] = "g,y\n";
    for (int i = 0; i < 20; i++) {
        char line[32];
        snprintf(line, sizeof line, "%d,%c\n", i < 17 ? 0 : 100 * (i - 16), i % 2 ? 'a' : 'b');
        strcat(text, line);
    }
    vs_csv_table *t = NULL;
    vs_error err;
    ck_assert_int_eq(vs_csv_parse_mem(text, strlen(text), "g.csv", NULL, &t, &err), VS_OK);
    vs_csv_opts o = vs_csv_opts_defaults();
    o.numeric_min_distinct = 2;
    vs_dataset *d = encode_ok(t, &o);
    static const char *const want[] = {"g < 100", "g >= 100"};
    check_names(d, want, 2);
    ck_assert_int_eq(column_sum(d, 0), 17);
    check_groups(d);
    vs_dataset_free(d);
    vs_csv_table_free(t);
    /* non-integer edges are printed exactly */
    const char *fl = "v,y\n0.5,a\n1.25,a\n2.75,b\n3.5,b\n";
    ck_assert_int_eq(vs_csv_parse_mem(fl, strlen(fl), "f.csv", NULL, &t, &err), VS_OK);
    o.bins = 2;
    o.numeric_min_distinct = 1;
    d = encode_ok(t, &o);
    static const char *const half[] = {"v < 2.75", "v >= 2.75"};
    check_names(d, half, 2);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_columns)
{
    vs_csv_table *t = small_table();
    vs_csv_opts o = vs_csv_opts_defaults();
    o.keep = (const char *const[]){"size", "age", NULL};
    o.categorical = (const char *const[]){"age", NULL};
    vs_dataset *d = encode_ok(t, &o);
    ck_assert_int_eq(d->n_groups, 2);
    ck_assert_str_eq(d->groups[0].name, "size");
    ck_assert_str_eq(d->groups[1].name, "age");
    ck_assert_int_eq(d->groups[1].count, 12);
    ck_assert_str_eq(d->feature_names[3], "age=21");
    ck_assert_str_eq(d->feature_names[14], "age=32");
    check_groups(d);
    vs_dataset_free(d);

    o = vs_csv_opts_defaults();
    o.label_index = 0; /* age as the label: classes sorted numerically */
    o.drop = (const char *const[]){"label", NULL};
    d = encode_ok(t, &o);
    ck_assert_int_eq(d->n_classes, 12);
    ck_assert_str_eq(d->class_names[0], "21");
    ck_assert_str_eq(d->class_names[11], "32");
    ck_assert_int_eq(d->y[5], 5);
    ck_assert_int_eq(d->n_groups, 2);
    vs_dataset_free(d);

    o = vs_csv_opts_defaults();
    o.label = "color"; /* classes blue, green, red; missing labels are dropped on request */
    o.drop_missing_rows = 1;
    d = encode_ok(t, &o);
    ck_assert_int_eq(d->n, 10);
    ck_assert_int_eq(d->n_classes, 3);
    ck_assert_str_eq(d->class_names[2], "red");
    ck_assert_str_eq(d->groups[2].name, "label");
    check_groups(d);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

static int keep_yes(const vs_csv_table *t, size_t row, void *ctx)
{
    (void)ctx;
    return strcmp(vs_csv_cell(t, row, (size_t)vs_csv_column(t, "label")), "yes") == 0;
}

START_TEST(test_missing_and_filter)
{
    vs_csv_table *t = small_table();
    vs_csv_opts o = vs_csv_opts_defaults();
    o.drop_missing_rows = 1; /* rows 3 and 10 have no color: no "color=?" column */
    vs_dataset *d = encode_ok(t, &o);
    ck_assert_int_eq(d->n, 10);
    ck_assert_int_eq(d->groups[1].count, 3);
    ck_assert_int_eq(find_feature(d, "color=?"), -1);
    check_groups(d);
    vs_dataset_free(d);

    o = vs_csv_opts_defaults();
    o.row_filter = keep_yes;
    d = encode_ok(t, &o);
    ck_assert_int_eq(d->n, 5);
    ck_assert_int_eq(d->n_classes, 1);
    ck_assert_int_eq(find_feature(d, "color=?"), -1); /* no kept row misses its color */
    check_groups(d);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

static const char *encode_fail(const char *text, const vs_csv_opts *o, vs_status code)
{
    static vs_error err;
    vs_csv_table *t = NULL;
    ck_assert_int_eq(vs_csv_parse_mem(text, strlen(text), "t.csv", o, &t, &err), VS_OK);
    vs_dataset *d = (vs_dataset *)&err;
    vs_error_clear(&err);
    ck_assert_int_eq(vs_tabular_encode(t, o, "x", &d, &err), code);
    ck_assert_ptr_null(d);
    vs_csv_table_free(t);
    return err.msg;
}

START_TEST(test_errors)
{
    vs_csv_opts o = vs_csv_opts_defaults();
    ck_assert_str_eq(encode_fail("a,y\n1,p\n2,\n", &o, VS_ERR_FORMAT), "t.csv:3: the label column 'y' is missing");
    o.label = "zzz";
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: no label column named 'zzz'");
    o = vs_csv_opts_defaults();
    o.label_index = 2;
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: label column index 2 out of range (2 columns)");
    o.label_index = -3;
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: label column index -3 out of range (2 columns)");
    o = vs_csv_opts_defaults();
    o.drop = (const char *const[]){"nope", NULL};
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: no column named 'nope' (in the drop list)");
    o.drop = (const char *const[]){"a", NULL};
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: no feature columns left besides the label");
    o = vs_csv_opts_defaults();
    o.keep = (const char *const[]){"a", "a", NULL};
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: keep list names 'a' twice");
    o.keep = (const char *const[]){"y", NULL};
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: keep list names the label column 'y'");
    o = vs_csv_opts_defaults();
    o.bins = -1;
    ck_assert_str_eq(encode_fail("a,y\n1,p\n", &o, VS_ERR_ARG), "t.csv: bins must be in [1, 1000], got -1");
    o = vs_csv_opts_defaults();
    ck_assert_str_eq(encode_fail("a,y\n", &o, VS_ERR_FORMAT), "t.csv: no rows left to encode");
    o.drop_missing_rows = 1;
    ck_assert_str_eq(encode_fail("a,y\n?,p\n", &o, VS_ERR_FORMAT), "t.csv: no rows left to encode");
}
END_TEST

START_TEST(test_load_csv)
{
    char path[512];
    snprintf(path, sizeof path, "%s/vs_small_%ld.csv", vs_test_tmpdir(), (long)getpid());
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs(small_csv, f);
    fclose(f);
    vs_dataset *d = NULL;
    vs_error err;
    vs_csv_opts o = vs_csv_opts_defaults();
    ck_assert_int_eq(vs_load_csv(path, &o, &d, &err), VS_OK);
    unlink(path);
    char want[64];
    snprintf(want, sizeof want, "vs_small_%ld", (long)getpid());
    ck_assert_str_eq(d->name, want);
    ck_assert_int_eq(d->n, 12);
    ck_assert_int_eq(d->dim, 5 + 4 + 3);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_load_csv(path, &o, &d, &err), VS_ERR_IO);
    ck_assert_ptr_null(d);
}
END_TEST

/* Everything f printed, as a malloc'ed string. */
static char *describe(const vs_dataset *d, vs_status want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(vs_dataset_describe_json(d, f), want);
    fclose(f);
    return buf;
}

START_TEST(test_describe_tabular)
{
    const char *text = "x,c\n1,a\n2,b\n3,a\n";
    vs_csv_table *t = NULL;
    vs_error err;
    ck_assert_int_eq(vs_csv_parse_mem(text, strlen(text), "tiny.csv", NULL, &t, &err), VS_OK);
    vs_dataset *d = NULL;
    ck_assert_int_eq(vs_tabular_encode(t, NULL, "tiny", &d, &err), VS_OK);
    char *s = describe(d, VS_OK);
    ck_assert_str_eq(s, "{\n"
                        "  \"name\": \"tiny\",\n"
                        "  \"kind\": \"tabular\",\n"
                        "  \"rows\": 3,\n"
                        "  \"classes\": [\n"
                        "    {\"name\": \"a\", \"count\": 2},\n"
                        "    {\"name\": \"b\", \"count\": 1}\n"
                        "  ],\n"
                        "  \"dim\": 3,\n"
                        "  \"major_features\": [\n"
                        "    {\"name\": \"x\", \"first\": 0, \"count\": 3, \"minor\": [\n"
                        "      {\"name\": \"x=1\", \"rows\": 1},\n"
                        "      {\"name\": \"x=2\", \"rows\": 1},\n"
                        "      {\"name\": \"x=3\", \"rows\": 1}\n"
                        "    ]}\n"
                        "  ],\n"
                        "  \"ground_truth\": false\n"
                        "}\n");
    free(s);
    /* strings are escaped */
    free(d->class_names[0]);
    d->class_names[0] = strdup("say \"a\"\\\n");
    s = describe(d, VS_OK);
    ck_assert_ptr_nonnull(strstr(s, "{\"name\": \"say \\\"a\\\"\\\\\\n\", \"count\": 2}"));
    free(s);
    /* an inconsistent data set prints nothing */
    d->y[1] = 7;
    s = describe(d, VS_ERR_ARG);
    ck_assert_str_eq(s, "");
    free(s);
    vs_dataset_free(d);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_describe_images_graphs)
{
    vs_dataset *d = vs_dataset_new(VS_DATA_IMAGES, "img");
    d->n = 2;
    d->n_classes = 2;
    d->y = calloc(2, sizeof *d->y);
    d->y[1] = 1;
    d->ndim = 3;
    d->shape[0] = 1;
    d->shape[1] = 2;
    d->shape[2] = 3;
    d->dim = 6;
    d->X = calloc(12, sizeof *d->X);
    char *s = describe(d, VS_OK);
    ck_assert_ptr_nonnull(strstr(s, "\"kind\": \"images\""));
    ck_assert_ptr_nonnull(strstr(s, "\"shape\": [1, 2, 3],\n  \"dim\": 6"));
    ck_assert_ptr_nonnull(strstr(s, "{\"name\": \"1\", \"count\": 1}")); /* no class names: indices */
    free(s);
    vs_dataset_free(d);

    d = vs_dataset_new(VS_DATA_GRAPHS, "g");
    d->n = 2;
    d->n_classes = 1;
    d->class_names = calloc(1, sizeof *d->class_names);
    d->class_names[0] = strdup("mol");
    d->y = calloc(2, sizeof *d->y);
    d->graphs = calloc(2, sizeof *d->graphs);
    d->graphs[0].n_nodes = 3;
    d->graphs[0].n_edges = 2;
    d->graphs[1].n_nodes = 5;
    d->graphs[1].n_edges = 4;
    d->graphs[1].edge_truth = calloc(4, 1);
    d->n_node_features = 7;
    s = describe(d, VS_OK);
    ck_assert_ptr_nonnull(strstr(s, "{\"name\": \"mol\", \"count\": 2}"));
    ck_assert_ptr_nonnull(strstr(s, "\"node_features\": 7"));
    ck_assert_ptr_nonnull(strstr(s, "\"nodes\": {\"total\": 8, \"min\": 3, \"max\": 5, \"mean\": 4}"));
    ck_assert_ptr_nonnull(strstr(s, "\"edges\": {\"total\": 3, \"min\": 1, \"max\": 2, \"mean\": 1.5}"));
    ck_assert_ptr_nonnull(strstr(s, "\"ground_truth\": true"));
    free(s);
    vs_dataset_free(d);
}
END_TEST

/* ---- presets against the shared files --------------------------------------------------------- */

typedef struct preset_case {
    const char *name, *probe; /* probe: a file that must exist under VERSUS_DATA */
    int64_t rows;
    const char *class0, *class1;
    int64_t count0, count1;
    int64_t n_groups;
    const char *rows_text; /* how the description writes the row count */
    const char *feature;   /* a minor feature and the number of rows having it */
    int64_t feature_rows;
    const char *absent; /* a column that must not be a feature */
} preset_case;

static const preset_case preset_cases[] = {
    {"adult", "adult/adult.data", 32561, "<=50K", ">50K", 24720, 7841, 12, "32,561", "workclass=?", 1836, "fnlwgt"},
    {"adult-all", "adult/adult.test", 48842, "<=50K", ">50K", 37155, 11687, 12, "48,842", "sex=Female", 16192,
     "education-num"},
    {"bank", "bank_marketing/bank-full.csv", 45211, "no", "yes", 39922, 5289, 15, "45,211", "job=unknown", 288,
     "duration"},
    {"compas", "compas/compas-scores-two-years.csv", 6172, "0", "1", 3363, 2809, 8, "6,172",
     "race=African-American", 3175, "decile_score"},
    {"credit", "credit_default_taiwan/UCI_Credit_Card.csv", 30000, "0", "1", 23364, 6636, 23, "30,000",
     "EDUCATION=0", 14, "ID"},
};

START_TEST(test_preset)
{
    const preset_case *c = &preset_cases[_i];
    char buf[1024];
    if (!vs_test_data_path(buf, sizeof buf, c->probe)) return;
    vs_dataset *d = NULL;
    vs_error err;
    vs_error_clear(&err);
    vs_status st = vs_load_preset_tabular(c->name, NULL, &d, &err);
    ck_assert_msg(st == VS_OK, "%s: %s", c->name, err.msg);
    ck_assert_str_eq(d->name, c->name);
    ck_assert_int_eq(d->n, c->rows);
    ck_assert_int_eq(d->n_classes, 2);
    ck_assert_str_eq(d->class_names[0], c->class0);
    ck_assert_str_eq(d->class_names[1], c->class1);
    int64_t n1 = 0;
    for (int64_t i = 0; i < d->n; i++) n1 += d->y[i];
    ck_assert_int_eq(d->n - n1, c->count0);
    ck_assert_int_eq(n1, c->count1);
    ck_assert_int_eq(d->n_groups, c->n_groups);
    long j = find_feature(d, c->feature);
    ck_assert_msg(j >= 0, "%s: no feature %s", c->name, c->feature);
    ck_assert_int_eq(column_sum(d, j), c->feature_rows);
    ck_assert_int_eq(find_group(d, c->absent), -1);
    check_groups(d);
    const char *desc = vs_tabular_preset_description(c->name);
    ck_assert_ptr_nonnull(desc);
    ck_assert_msg(strstr(desc, c->rows_text), "%s: description lacks %s", c->name, c->rows_text);
    char counts[64];
    snprintf(counts, sizeof counts, "%s %lld,%03lld", c->class1, (long long)(c->count1 / 1000),
             (long long)(c->count1 % 1000));
    ck_assert_msg(strstr(desc, counts), "%s: description lacks '%s'", c->name, counts);
    vs_dataset_free(d);
}
END_TEST

/* scikit-learn's CSVs: a metadata first line naming the classes; digits is gzipped without one. */
START_TEST(test_preset_sklearn)
{
    static const struct {
        const char *name, *probe, *class0;
        int64_t rows, classes, count0, groups;
    } cases[] = {{"iris", "sklearn_small/iris.csv", "setosa", 150, 3, 50, 4},
                 {"wine", "sklearn_small/wine_data.csv", "class_0", 178, 3, 59, 13},
                 {"breast-cancer", "sklearn_small/breast_cancer.csv", "malignant", 569, 2, 212, 30},
                 {"digits", "sklearn_small/digits.csv.gz", "0", 1797, 10, 178, 64}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[1024];
        if (!vs_test_data_path(buf, sizeof buf, cases[k].probe)) continue;
        vs_dataset *d = NULL;
        vs_error err;
        ck_assert_msg(vs_load_preset_tabular(cases[k].name, NULL, &d, &err) == VS_OK, "%s: %s", cases[k].name, err.msg);
        ck_assert_int_eq(d->n, cases[k].rows);
        ck_assert_int_eq(d->n_classes, cases[k].classes);
        ck_assert_int_eq(d->n_groups, cases[k].groups);
        ck_assert_str_eq(d->class_names[0], cases[k].class0);
        int64_t c0 = 0;
        for (int64_t i = 0; i < d->n; i++) c0 += d->y[i] == 0;
        ck_assert_int_eq(c0, cases[k].count0);
        check_groups(d);
        vs_dataset_free(d);
    }
}
END_TEST

START_TEST(test_preset_details)
{
    char buf[1024];
    if (!vs_test_data_path(buf, sizeof buf, "compas/compas-scores-two-years.csv")) return;
    vs_dataset *d = NULL;
    vs_error err;
    ck_assert_int_eq(vs_load_preset_tabular("compas", NULL, &d, &err), VS_OK);
    static const char *const groups[] = {"sex",           "age",       "race", "juv_fel_count", "juv_misd_count",
                                         "juv_other_count", "priors_count", "c_charge_degree"};
    for (int g = 0; g < 8; g++) ck_assert_str_eq(d->groups[g].name, groups[g]);
    ck_assert_int_eq(column_sum(d, find_feature(d, "sex=Female")), 1175);
    ck_assert_str_eq(d->feature_names[d->groups[3].first], "juv_fel_count < 1"); /* 5,964 zeros */
    ck_assert_int_eq(column_sum(d, d->groups[3].first), 5964);
    vs_dataset_free(d);
    if (!vs_test_data_path(buf, sizeof buf, "credit_default_taiwan/UCI_Credit_Card.csv")) return;
    ck_assert_int_eq(vs_load_preset_tabular("credit", NULL, &d, &err), VS_OK);
    ck_assert_int_eq(column_sum(d, find_feature(d, "SEX=1")), 11888);
    ck_assert_int_ge(find_feature(d, "PAY_0=-2"), 0);
    ck_assert_int_lt(find_feature(d, "PAY_0=-2"), find_feature(d, "PAY_0=-1")); /* numeric order */
    ck_assert_str_eq(d->groups[0].name, "LIMIT_BAL");
    ck_assert_int_eq(d->groups[0].count, 5); /* 5 bins */
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_preset_paths)
{
    char file[1100], dir[1024];
    if (!vs_test_data_path(file, sizeof file, "adult/adult.data")) return;
    snprintf(dir, sizeof dir, "%s/adult", vs_test_data_dir());
    vs_dataset *d = NULL;
    vs_error err;
    ck_assert_int_eq(vs_load_preset_tabular("adult-all", file, &d, &err), VS_OK); /* adult.test beside it */
    ck_assert_int_eq(d->n, 48842);
    vs_dataset_free(d);
    snprintf(file, sizeof file, "%s/adult.test", dir);
    ck_assert_int_eq(vs_load_preset_tabular("adult", file, &d, &err), VS_OK); /* a file: adult.test alone */
    ck_assert_int_eq(d->n, 16281);
    ck_assert_str_eq(d->class_names[1], ">50K");
    vs_dataset_free(d);
    ck_assert_int_eq(vs_load_preset_tabular("bank", dir, &d, &err), VS_ERR_IO); /* wrong folder */
    ck_assert_ptr_nonnull(strstr(err.msg, "bank-full.csv"));
}
END_TEST

START_TEST(test_preset_errors)
{
    vs_dataset *d = NULL;
    vs_error err;
    ck_assert_int_eq(vs_load_preset_tabular("iris2", NULL, &d, &err), VS_ERR_ARG);
    ck_assert_str_eq(err.msg, "unknown tabular data set 'iris2' (expected adult, adult-all, bank, compas, credit, iris, wine, "
                              "breast-cancer or digits)");
    ck_assert_ptr_null(vs_tabular_preset_description("iris2"));
    const char *const *names = vs_tabular_preset_names();
    int n = 0;
    for (; names[n]; n++) ck_assert_ptr_nonnull(vs_tabular_preset_description(names[n]));
    ck_assert_int_eq(n, 9);
    unsetenv("VERSUS_DATA");
    ck_assert_int_eq(vs_load_preset_tabular("bank", NULL, &d, &err), VS_ERR_ARG);
    ck_assert_str_eq(err.msg, "data set 'bank': no path given and VERSUS_DATA is not set");
    ck_assert_int_eq(vs_load_preset_tabular("bank", "/nonexistent-dir", &d, &err), VS_ERR_IO);
    ck_assert_str_eq(err.msg, "/nonexistent-dir/bank-full.csv: cannot open: No such file or directory");
}
END_TEST

static Suite *tabular_suite(void)
{
    Suite *s = suite_create("tabular");
    TCase *tc = vs_tcase(s, "encode", 10);
    tcase_add_test(tc, test_small_exact);
    tcase_add_test(tc, test_bins);
    tcase_add_test(tc, test_bins_ties);
    tcase_add_test(tc, test_columns);
    tcase_add_test(tc, test_missing_and_filter);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_load_csv);
    tc = vs_tcase(s, "describe", 10);
    tcase_add_test(tc, test_describe_tabular);
    tcase_add_test(tc, test_describe_images_graphs);
    tc = vs_tcase(s, "presets", 30);
    tcase_add_loop_test(tc, test_preset, 0, (int)(sizeof preset_cases / sizeof preset_cases[0]));
    tcase_add_test(tc, test_preset_details);
    tcase_add_test(tc, test_preset_sklearn);
    tcase_add_test(tc, test_preset_paths);
    tcase_add_test(tc, test_preset_errors);
    return s;
}

VS_TEST_MAIN(tabular_suite)
