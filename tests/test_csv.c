/* test_csv.c - the CSV parser: quoting, line endings, sniffing, whitespace, missing values, names,
 * and every malformed input rejected with file:line in the message. */
#include "vs_check.h"
#include "versus/tabular.h"

#include <unistd.h>

/* Parse a string with options o (NULL = defaults); the test fails if parsing fails. */
static vs_csv_table *parse_ok(const char *text, const vs_csv_opts *o)
{
    vs_csv_table *t = NULL;
    vs_error err;
    vs_error_clear(&err);
    vs_status st = vs_csv_parse_mem(text, strlen(text), "t.csv", o, &t, &err);
    ck_assert_msg(st == VS_OK, "parse failed: %s", err.msg);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Parse a string that must fail with code; returns the message (static). */
static const char *parse_fail(const char *text, size_t len, const vs_csv_opts *o, vs_status code)
{
    static vs_error err;
    vs_csv_table *t = (vs_csv_table *)&err; /* must be reset to NULL */
    vs_error_clear(&err);
    vs_status st = vs_csv_parse_mem(text, len, "t.csv", o, &t, &err);
    ck_assert_int_eq(st, code);
    ck_assert_int_eq(err.code, code);
    ck_assert_ptr_null(t);
    return err.msg;
}

#define CELL(t, r, c) vs_csv_cell((t), (r), (c))

START_TEST(test_basic)
{
    vs_csv_table *t = parse_ok("a,b,c\n1,2,3\n4,5,6\n", NULL);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_uint_eq(t->n_cols, 3);
    ck_assert_str_eq(t->names[0], "a");
    ck_assert_str_eq(t->names[2], "c");
    ck_assert_str_eq(CELL(t, 0, 0), "1");
    ck_assert_str_eq(CELL(t, 1, 2), "6");
    ck_assert_int_eq(t->line[0], 2);
    ck_assert_int_eq(t->line[1], 3);
    ck_assert_str_eq(t->file[1], "t.csv");
    ck_assert_str_eq(t->source, "t.csv");
    ck_assert_int_eq(t->delimiter, ',');
    ck_assert_int_eq(vs_csv_column(t, "b"), 1);
    ck_assert_int_eq(vs_csv_column(t, "z"), -1);
    ck_assert_ptr_null(CELL(t, 2, 0)); /* out of range */
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_quoting)
{
    const char *text = "name,note\n"
                       "\"Smith, J\",\"said \"\"hi\"\"\"\n"
                       "\"multi\nline\",x\n"
                       "\"\"\"\",\"a|b;c\"\n";
    vs_csv_table *t = parse_ok(text, NULL);
    ck_assert_uint_eq(t->n_rows, 3);
    ck_assert_str_eq(CELL(t, 0, 0), "Smith, J");
    ck_assert_str_eq(CELL(t, 0, 1), "said \"hi\"");
    ck_assert_str_eq(CELL(t, 1, 0), "multi\nline");
    ck_assert_str_eq(CELL(t, 1, 1), "x");
    ck_assert_str_eq(CELL(t, 2, 0), "\"");
    ck_assert_str_eq(CELL(t, 2, 1), "a|b;c");
    ck_assert_int_eq(t->line[0], 2);
    ck_assert_int_eq(t->line[1], 3);
    ck_assert_int_eq(t->line[2], 5); /* the embedded newline counts */
    vs_csv_table_free(t);
    /* spaces around a quoted field are not part of it; spaces inside are */
    t = parse_ok("a,b\n  \" x \"  ,y\n", NULL);
    ck_assert_str_eq(CELL(t, 0, 0), " x ");
    vs_csv_table_free(t);
    /* a quote inside an unquoted field is kept literally */
    t = parse_ok("h,w\n5'10\",x\n", NULL);
    ck_assert_str_eq(CELL(t, 0, 0), "5'10\"");
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_line_endings)
{
    vs_csv_table *t = parse_ok("a,b\r\n1,2\r\n\"x\r\ny\",4\r\n5,6", NULL);
    ck_assert_uint_eq(t->n_rows, 3);
    ck_assert_str_eq(t->names[1], "b");
    ck_assert_str_eq(CELL(t, 0, 1), "2");
    ck_assert_str_eq(CELL(t, 1, 0), "x\r\ny"); /* kept as written inside quotes */
    ck_assert_str_eq(CELL(t, 2, 1), "6");   /* no newline at the end of the input */
    ck_assert_int_eq(t->line[2], 5);
    vs_csv_table_free(t);
    /* lone CR (old Mac) endings and blank lines */
    t = parse_ok("a,b\r1,2\r\r\n   \n3,4\n\n", NULL);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_str_eq(CELL(t, 1, 0), "3");
    ck_assert_int_eq(t->line[1], 5);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_sniff)
{
    struct {
        const char *text;
        char want;
    } cases[] = {
        {"a;b;c\n1;2;3\n", ';'},
        {"a\tb\n1\t2\n", '\t'},
        {"a|b|c|d\n1|2|3|4\n", '|'},
        {"a,b\n\"x;y;z\",1\n", ','},         /* delimiters inside quotes do not count */
        {"a;b,c\n1;2,3\n4;5,6\n", ','},      /* equally frequent and consistent: the first listed */
        {"a;b;c,d\n1;2;3,4\n", ';'},         /* both consistent: the more frequent */
        {"x,y;z;w\n1;2;3\n", ';'},           /* ';' consistent (2,2), ',' not (1,0) */
        {"single\n1\n2\n", ','},             /* no candidate at all */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        vs_csv_table *t = parse_ok(cases[k].text, NULL);
        ck_assert_msg(t->delimiter == cases[k].want, "case %zu: sniffed %d, want %d", k, t->delimiter, cases[k].want);
        vs_csv_table_free(t);
    }
    /* a chosen delimiter wins over sniffing */
    vs_csv_opts o = vs_csv_opts_defaults();
    o.delimiter = ';';
    vs_csv_table *t = parse_ok("a,b;c\n1,2;3\n", &o);
    ck_assert_uint_eq(t->n_cols, 2);
    ck_assert_str_eq(t->names[0], "a,b");
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_whitespace)
{
    vs_csv_table *t = parse_ok(" a , b \n 1 ,  two words  \n", NULL);
    ck_assert_str_eq(t->names[0], "a");
    ck_assert_str_eq(t->names[1], "b");
    ck_assert_str_eq(CELL(t, 0, 0), "1");
    ck_assert_str_eq(CELL(t, 0, 1), "two words");
    vs_csv_table_free(t);
    /* Adult's ", " separator */
    t = parse_ok("39, State-gov, 77516\n50, Self-emp-not-inc, 83311\n", &(vs_csv_opts){.no_header = 1});
    ck_assert_str_eq(CELL(t, 0, 1), "State-gov");
    ck_assert_str_eq(t->names[2], "c2");
    vs_csv_table_free(t);
    /* with TAB as delimiter, a tab is a separator, not space to trim */
    vs_csv_opts o = vs_csv_opts_defaults();
    o.delimiter = '\t';
    t = parse_ok("a\tb\n x \t\n", &o);
    ck_assert_str_eq(CELL(t, 0, 0), "x");
    ck_assert_ptr_null(CELL(t, 0, 1));
    ck_assert_uint_eq(t->n_cols, 2);
    vs_csv_table_free(t);
}
END_TEST

/* UCI *.data style: runs of spaces and tabs are one separator, edge blanks separate nothing. */
START_TEST(test_whitespace_separated)
{
    vs_csv_opts o = vs_csv_opts_defaults();
    o.delimiter = VS_CSV_WHITESPACE;
    o.no_header = 1;
    vs_csv_table *t = parse_ok("  A11 6  A34\t1169 \n\nA12\t\t48 A32 \"two words\"\t\n   \n", &o);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_uint_eq(t->n_cols, 4);
    ck_assert_str_eq(CELL(t, 0, 0), "A11");
    ck_assert_str_eq(CELL(t, 0, 3), "1169");
    ck_assert_str_eq(CELL(t, 1, 1), "48");
    ck_assert_str_eq(CELL(t, 1, 3), "two words");
    ck_assert_int_eq(t->line[1], 3);
    vs_csv_table_free(t);
    ck_assert_str_eq(parse_fail("a b c\n1 2\n", 10, &o, VS_ERR_FORMAT), "t.csv:2: record has 2 fields, expected 3 as on line 1");
    /* sniffed: a consistent number of blank runs and no consistent , ; TAB | */
    const char *sniffed[] = {"A11 6 A34 1\nA12 48 A32 2\nA14 12 A34 1\n", "   1.5   2.25  3\n  10.0  -4.5  6\n",
                             "x y \"a b\"\n1 2 \"c, d\"\n"};
    for (size_t k = 0; k < sizeof sniffed / sizeof sniffed[0]; k++) {
        t = parse_ok(sniffed[k], NULL);
        ck_assert_msg(t->delimiter == VS_CSV_WHITESPACE, "case %zu: sniffed %d", k, t->delimiter);
        ck_assert_uint_eq(t->n_cols, 3 + (k == 0));
        vs_csv_table_free(t);
    }
    /* an inconsistent number of blank runs is not whitespace-separated */
    t = parse_ok("New York\nSan Luis Obispo\n", NULL);
    ck_assert_int_eq(t->delimiter, ',');
    ck_assert_uint_eq(t->n_cols, 1);
    vs_csv_table_free(t);
}
END_TEST

/* A first record with a number over a numeric column is data; names over it are a header. */
START_TEST(test_header_sniff)
{
    vs_csv_table *t = parse_ok("A11 6 1\nA12 48 2\n", NULL);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_str_eq(t->names[1], "c1");
    ck_assert_str_eq(CELL(t, 0, 0), "A11");
    ck_assert_int_eq(t->line[0], 1);
    ck_assert_int_eq(t->line[1], 2);
    vs_csv_table_free(t);
    t = parse_ok("age,job\n39,x\n50,y\n", NULL);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_str_eq(t->names[0], "age");
    vs_csv_table_free(t);
    t = parse_ok("1,?\n2,b\n", NULL); /* the missing token in the first row stays missing */
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_ptr_null(CELL(t, 0, 1));
    vs_csv_table_free(t);
    vs_csv_opts o = vs_csv_opts_defaults();
    o.no_header = -1; /* forced: a numeric first line still names the columns */
    t = parse_ok("2019,2020\n1,2\n", &o);
    ck_assert_uint_eq(t->n_rows, 1);
    ck_assert_str_eq(t->names[1], "2020");
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_missing)
{
    const char *text = "a,b,c\n?,,NA\n\"\",\"?\",x\n1,2,\n";
    vs_csv_table *t = parse_ok(text, NULL); /* defaults: "" and "?" */
    ck_assert_ptr_null(CELL(t, 0, 0));
    ck_assert_ptr_null(CELL(t, 0, 1));
    ck_assert_str_eq(CELL(t, 0, 2), "NA");
    ck_assert_ptr_null(CELL(t, 1, 0)); /* quoted empty */
    ck_assert_ptr_null(CELL(t, 1, 1)); /* quoted "?" is the token too */
    ck_assert_ptr_null(CELL(t, 2, 2)); /* trailing delimiter: empty last field */
    vs_csv_table_free(t);
    static const char *const na[] = {"NA", "N/A", NULL};
    vs_csv_opts o = vs_csv_opts_defaults();
    o.missing = na;
    t = parse_ok(text, &o);
    ck_assert_str_eq(CELL(t, 0, 0), "?");
    ck_assert_ptr_null(CELL(t, 0, 2));
    vs_csv_table_free(t);
    static const char *const none[] = {NULL};
    o.missing = none;
    t = parse_ok(text, &o);
    ck_assert_str_eq(CELL(t, 0, 0), "?");
    ck_assert_ptr_null(CELL(t, 0, 1)); /* empty is always missing */
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_names)
{
    vs_csv_table *t = parse_ok("a,a,b,a.1,,a\n1,2,3,4,5,6\n", NULL);
    ck_assert_str_eq(t->names[0], "a");
    ck_assert_str_eq(t->names[1], "a.2"); /* a.1 is taken by column 3 */
    ck_assert_str_eq(t->names[2], "b");
    ck_assert_str_eq(t->names[3], "a.1");
    ck_assert_str_eq(t->names[4], "c4");
    ck_assert_str_eq(t->names[5], "a.3");
    vs_csv_table_free(t);
    static const char *const given[] = {"x", "y", NULL};
    vs_csv_opts o = vs_csv_opts_defaults();
    o.column_names = given;
    t = parse_ok("p,q\n1,2\n", &o); /* replaces the header */
    ck_assert_str_eq(t->names[1], "y");
    ck_assert_uint_eq(t->n_rows, 1);
    vs_csv_table_free(t);
    o.no_header = 1;
    t = parse_ok("p,q\n1,2\n", &o); /* supplies names; the first line is data */
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_str_eq(CELL(t, 0, 0), "p");
    vs_csv_table_free(t);
    const char *msg = parse_fail("p,q,r\n1,2,3\n", 12, &o, VS_ERR_FORMAT);
    ck_assert_str_eq(msg, "t.csv: 2 column names given but the file has 3 columns");
}
END_TEST

START_TEST(test_skip_max_bom)
{
    vs_csv_opts o = vs_csv_opts_defaults();
    o.skip_lines = 1;
    o.max_rows = 2;
    vs_csv_table *t = parse_ok("|1x3 Cross validator\na,b\n1,2\n3,4\n5,6\n", &o);
    ck_assert_uint_eq(t->n_rows, 2);
    ck_assert_str_eq(t->names[0], "a");
    ck_assert_str_eq(CELL(t, 1, 1), "4");
    ck_assert_int_eq(t->line[0], 3);
    vs_csv_table_free(t);
    t = parse_ok("\xEF\xBB\xBFid,v\n1,2\n", NULL);
    ck_assert_str_eq(t->names[0], "id");
    vs_csv_table_free(t);
    t = parse_ok("a,b\n", NULL); /* a header alone is a table with no rows */
    ck_assert_uint_eq(t->n_rows, 0);
    ck_assert_uint_eq(t->n_cols, 2);
    vs_csv_table_free(t);
}
END_TEST

START_TEST(test_malformed)
{
#define BAD(text, msg) {text, sizeof text - 1, msg}
    static const struct {
        const char *text;
        size_t len;
        const char *msg;
    } cases[] = {
        BAD("a,b\n1,2\n3\n", "t.csv:3: record has 1 fields, expected 2 as on line 1"),
        BAD("a,b\n1,2,3\n", "t.csv:2: record has 3 fields, expected 2 as on line 1"),
        BAD("a,b\n\"x\ny\",1\n1,2,3\n", "t.csv:4: record has 3 fields, expected 2 as on line 1"),
        BAD("a,b\n1,\"abc\n2,3\n", "t.csv:2: unterminated quoted field (input ends inside it)"),
        BAD("a,b\n\"ab\"c,d\n", "t.csv:2: unexpected 'c' after a closing quote (expected the delimiter or end of line)"),
        BAD("a,b\n\"ab\"\x01\n", "t.csv:2: unexpected byte 0x01 after a closing quote (expected the delimiter or end of line)"),
        BAD("a,b\n1,x\0y\n", "t.csv:2: NUL byte in a field"),
        BAD("a,b\n1,\"x\0\"\n", "t.csv:2: NUL byte inside a quoted field"),
        BAD("", "t.csv: no records (the input is empty)"),
        BAD("\n \n\r\n", "t.csv: no records (the input is empty)"),
    };
#undef BAD
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        ck_assert_str_eq(parse_fail(cases[k].text, cases[k].len, NULL, VS_ERR_FORMAT), cases[k].msg);
    vs_csv_opts o = vs_csv_opts_defaults();
    o.delimiter = ':';
    ck_assert_str_eq(parse_fail("a:b\n", 4, &o, VS_ERR_ARG), "t.csv: delimiter 58 is not one of , ; TAB | or whitespace");
}
END_TEST

START_TEST(test_file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/vs_test_csv_%ld.csv", vs_test_tmpdir(), (long)getpid());
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("x;y\n1;2\n3;4;5\n", f);
    fclose(f);
    vs_csv_table *t = NULL;
    vs_error err;
    ck_assert_int_eq(vs_csv_parse_file(path, NULL, &t, &err), VS_ERR_FORMAT);
    char want[600];
    snprintf(want, sizeof want, "%s:3: record has 3 fields, expected 2 as on line 1", path);
    ck_assert_str_eq(err.msg, want);
    f = fopen(path, "wb");
    fputs("x;y\n1;2\n", f);
    fclose(f);
    ck_assert_int_eq(vs_csv_parse_file(path, NULL, &t, &err), VS_OK);
    ck_assert_str_eq(t->file[0], path);
    ck_assert_str_eq(CELL(t, 0, 1), "2");
    vs_csv_table_free(t);
    unlink(path);
    ck_assert_int_eq(vs_csv_parse_file(path, NULL, &t, &err), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
}
END_TEST

START_TEST(test_append)
{
    vs_csv_table *a = parse_ok("k,v\n1,x\n2,y\n", NULL), *b = NULL, *c = NULL;
    vs_error err;
    ck_assert_int_eq(vs_csv_parse_mem("k,v\n3,z\n", 8, "u.csv", NULL, &b, &err), VS_OK);
    ck_assert_int_eq(vs_csv_table_append(a, &b, &err), VS_OK);
    ck_assert_ptr_null(b);
    ck_assert_uint_eq(a->n_rows, 3);
    ck_assert_str_eq(CELL(a, 2, 1), "z");
    ck_assert_str_eq(CELL(a, 0, 1), "x");
    ck_assert_str_eq(a->file[2], "u.csv");
    ck_assert_str_eq(a->file[0], "t.csv");
    ck_assert_int_eq(a->line[2], 2);
    ck_assert_int_eq(vs_csv_parse_mem("k,w\n3,z\n", 8, "w.csv", NULL, &c, &err), VS_OK);
    ck_assert_int_eq(vs_csv_table_append(a, &c, &err), VS_ERR_FORMAT);
    ck_assert_str_eq(err.msg, "column 1 is 'v' in t.csv but 'w' in w.csv");
    ck_assert_ptr_nonnull(c);
    vs_csv_table_free(c);
    vs_csv_table_free(a);
}
END_TEST

START_TEST(test_number)
{
    double v = 0;
    ck_assert(vs_csv_number("1.5", &v) && v == 1.5);
    ck_assert(vs_csv_number("-2e3", &v) && v == -2000);
    ck_assert(vs_csv_number("007", &v) && v == 7);
    const char *bad[] = {"", " 1", "1 ", "inf", "nan", "0x10", "1e999", "-", "1.2.3", "1,5", "abc"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) ck_assert_msg(!vs_csv_number(bad[k], &v), "'%s'", bad[k]);
    ck_assert(!vs_csv_number(NULL, &v));
}
END_TEST

static Suite *csv_suite(void)
{
    Suite *s = suite_create("csv");
    TCase *tc = vs_tcase(s, "parse", 10);
    tcase_add_test(tc, test_basic);
    tcase_add_test(tc, test_quoting);
    tcase_add_test(tc, test_line_endings);
    tcase_add_test(tc, test_sniff);
    tcase_add_test(tc, test_whitespace);
    tcase_add_test(tc, test_whitespace_separated);
    tcase_add_test(tc, test_header_sniff);
    tcase_add_test(tc, test_missing);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_skip_max_bom);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_file);
    tcase_add_test(tc, test_append);
    tcase_add_test(tc, test_number);
    return s;
}

VS_TEST_MAIN(csv_suite)
