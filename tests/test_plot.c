/* test_plot.c - nice ticks, and SVG line/bar plots: well-formed XML, escaping, the expected
 * elements and coordinates, NaN gaps, error bars, log axes, atomic files, whole-number axes where x
 * counts something, and node-link drawings whose panels show masks that differ only a little. */
#include "vs_check.h"
#include "versus/plot.h"

#include <math.h>
#include <unistd.h>

/* A tiny XML checker: tags balance and nest, attribute values are quoted, entities are known,
 * no raw '<' or '>' in text.  Returns NULL when well-formed, else a description. */
static const char *xml_check(const char *s)
{
    static char why[160];
    const char *stack[64];
    size_t depth = 0, lens[64];
    int root_seen = 0;
    for (const char *p = s; *p;) {
        if (*p == '&') {
            static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int i = 0; i < 5; i++) ok |= strncmp(p, ents[i], strlen(ents[i])) == 0;
            if (!ok) return snprintf(why, sizeof why, "bad entity at %.10s", p), why;
            p++;
            continue;
        }
        if (*p == '>') return "stray '>'";
        if (*p != '<') {
            p++;
            continue;
        }
        if (strncmp(p, "<?", 2) == 0) {
            const char *e = strstr(p, "?>");
            if (!e || p != s) return "bad processing instruction";
            p = e + 2;
            continue;
        }
        if (strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p, "-->");
            if (!e) return "unterminated comment";
            p = e + 3;
            continue;
        }
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:");
        if (n == 0) return "tag without a name";
        const char *q = name + n;
        /* attributes: name="value" pairs, values without '<' */
        while (*q && *q != '>' && *q != '/') {
            if (*q == ' ' || *q == '\n') {
                q++;
                continue;
            }
            size_t an = strspn(q, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:");
            if (an == 0 || q[an] != '=' || q[an + 1] != '"') return snprintf(why, sizeof why, "bad attribute at %.20s", q), why;
            const char *v = q + an + 2, *ve = strchr(v, '"');
            if (!ve) return "unterminated attribute";
            for (const char *c = v; c < ve; c++)
                if (*c == '<') return "'<' in an attribute";
            q = ve + 1;
        }
        int self = *q == '/';
        if (self) q++;
        if (*q != '>') return "unterminated tag";
        if (closing) {
            if (depth == 0 || lens[depth - 1] != n || strncmp(stack[depth - 1], name, n) != 0)
                return snprintf(why, sizeof why, "mismatched </%.*s>", (int)n, name), why;
            depth--;
        } else if (!self) {
            if (depth == 0 && root_seen) return "second root element";
            if (depth == 64) return "too deep";
            root_seen = 1;
            stack[depth] = name;
            lens[depth++] = n;
        }
        p = q + 1;
    }
    return depth == 0 && root_seen ? NULL : "unclosed elements";
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++) n++;
    return n;
}

static double mantissa(double step)
{
    return step / pow(10, floor(log10(step) + 1e-9));
}

START_TEST(test_xml_checker_rejects)
{
    ck_assert_ptr_null(xml_check("<a x=\"1\"><b/>t &amp; u</a>"));
    ck_assert_ptr_nonnull(xml_check("<a><b></a></b>"));
    ck_assert_ptr_nonnull(xml_check("<a>x & y</a>"));
    ck_assert_ptr_nonnull(xml_check("<a>"));
    ck_assert_ptr_nonnull(xml_check("<a x=1></a>"));
    ck_assert_ptr_nonnull(xml_check("<a>1 > 0</a>"));
}
END_TEST

START_TEST(test_nice_ticks)
{
    static const double ranges[][2] = {{0, 1},       {0, 0.37},     {-3.2, 17.9},  {1e-5, 3e-5}, {123456, 987654},
                                       {-0.03, 1.03}, {-1e9, 1e9},   {0.1, 0.1000001}, {-7, -2},  {2.5, 2.5}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        double lo = ranges[i][0], hi = ranges[i][1];
        vs_axis_ticks t = vs_nice_ticks(lo, hi, 5);
        double m = mantissa(t.step);
        ck_assert_msg(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9, "step %g for [%g,%g]", t.step, lo, hi);
        ck_assert(t.lo <= lo + 1e-6 * t.step && t.hi >= hi - 1e-6 * t.step);
        ck_assert(t.hi > t.lo);
        ck_assert_double_eq_tol(t.lo / t.step, round(t.lo / t.step), 1e-6);
        ck_assert_double_eq_tol(t.hi / t.step, round(t.hi / t.step), 1e-6);
        ck_assert_int_eq(t.n, (int)lround((t.hi - t.lo) / t.step) + 1);
        ck_assert_msg(t.n - 1 >= 3 && t.n - 1 <= 10, "%d intervals for [%g,%g]", t.n - 1, lo, hi);
    }
    vs_axis_ticks t = vs_nice_ticks(0, 1, 5);
    ck_assert(t.lo == 0 && t.hi == 1 && fabs(t.step - 0.2) < 1e-12 && t.n == 6);
    t = vs_nice_ticks(-3.2, 17.9, 5);
    ck_assert(t.lo == -5 && t.hi == 20 && t.step == 5 && t.n == 6);
    t = vs_nice_ticks(-0.03, 1.03, 5);
    ck_assert(fabs(t.lo + 0.2) < 1e-12 && fabs(t.hi - 1.2) < 1e-12 && fabs(t.step - 0.2) < 1e-12);
    t = vs_nice_ticks(NAN, 3, 5);
    ck_assert(t.lo == 0 && t.hi == 1);
}
END_TEST

START_TEST(test_line_plot)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, "AOPC <MNIST & \"co\">", "fraction removed", "score drop");
    float x[5] = {0, 0.25f, 0.5f, 0.75f, 1}, y1[5] = {0, 0.5f, 0.75f, 0.9f, 1}, y2[5] = {0, 0.2f, NAN, 0.6f, 0.8f};
    float err[5] = {0.05f, 0.05f, 0.05f, 0.05f, 0.05f};
    vs_error e;
    ck_assert_int_eq(vs_plot_add_series(p, "IG", 5, x, y1, NULL, &e), VS_OK);
    ck_assert_int_eq(vs_plot_add_series(p, "random\x01", 5, x, y2, err, &e), VS_OK);
    char *svg;
    size_t len;
    ck_assert_int_eq(vs_plot_svg(p, &svg, &len, &e), VS_OK);
    ck_assert_uint_eq(len, strlen(svg));
    const char *why = xml_check(svg);
    ck_assert_msg(why == NULL, "%s", why);
    ck_assert(strncmp(svg, "<?xml", 5) == 0);
    ck_assert(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert(strstr(svg, ">AOPC &lt;MNIST &amp; &quot;co&quot;&gt;</text>"));
    ck_assert(strstr(svg, ">fraction removed</text>"));
    ck_assert(strstr(svg, ">score drop</text>"));
    ck_assert(strstr(svg, ">IG</text>"));
    ck_assert(strstr(svg, ">random?</text>")); /* control character replaced */
    /* two colours, each a path in the plot and a line in the legend */
    ck_assert_int_eq(count(svg, "stroke=\"#0072B2\""), 2);
    ck_assert_int_ge(count(svg, "stroke=\"#D55E00\""), 2);
    /* markers: 5 + 4 (the NaN point is skipped); the NaN splits series 2 into two pieces */
    ck_assert_int_eq(count(svg, "<circle"), 9);
    const char *path2 = strstr(strstr(svg, "<g class=\"series\">") + 1, "<g class=\"series\">");
    ck_assert_ptr_nonnull(path2);
    const char *d = strstr(path2, " d=\""), *dend = strchr(d + 4, '"');
    int moves = 0;
    for (const char *c = d + 4; c < dend; c++) moves += *c == 'M';
    ck_assert_int_eq(moves, 2);
    /* y from -0.2 to 1.0 (the error bar reaches -0.05); x from 0 to 1: ticks and coordinates */
    ck_assert(strstr(svg, ">-0.2</text>") && strstr(svg, ">1.0</text>") && strstr(svg, ">0.6</text>"));
    ck_assert(strstr(svg, ">0.0</text>") && !strstr(svg, ">-0.0</text>") && !strstr(svg, ">1.2</text>"));
    /* frame: x 80..620, y 40..345; (0, 0) is at y = 345 - (0.2/1.2)*305, (1, 1) at the top right */
    char want[64];
    snprintf(want, sizeof want, "<circle cx=\"80.00\" cy=\"%.2f\"", 345 - (0.2 / 1.2) * 305);
    ck_assert_msg(strstr(svg, want), "%s", want);
    ck_assert(strstr(svg, "<circle cx=\"620.00\" cy=\"40.00\""));
    /* error bars: one path with three subpaths per finite point of series 2 */
    ck_assert_int_eq(count(path2, "V"), 4);
    free(svg);
    vs_plot_free(p);
}
END_TEST

START_TEST(test_bar_plot)
{
    vs_plot *p = vs_plot_new(VS_PLOT_BAR, "methods", NULL, "AOPC");
    const char *cats[3] = {"IG", "LIME", "A&B"};
    float m1[3] = {0.4f, -0.1f, 0.3f}, s1[3] = {0.05f, 0.02f, 0}, m2[3] = {0.2f, 0.1f, 0.25f};
    vs_error e;
    ck_assert_int_eq(vs_plot_set_categories(p, 3, cats, &e), VS_OK);
    ck_assert_int_eq(vs_plot_add_series(p, "MNIST", 3, NULL, m1, s1, &e), VS_OK);
    ck_assert_int_eq(vs_plot_add_series(p, "Fashion", 3, NULL, m2, NULL, &e), VS_OK);
    char *svg;
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    const char *why = xml_check(svg);
    ck_assert_msg(why == NULL, "%s", why);
    ck_assert(strstr(svg, ">IG</text>") && strstr(svg, ">LIME</text>") && strstr(svg, ">A&amp;B</text>"));
    ck_assert(strstr(svg, ">MNIST</text>") && strstr(svg, ">Fashion</text>"));
    /* 6 bars in the two series groups (+2 legend swatches, +1 frame, +1 background) */
    const char *g1 = strstr(svg, "<g class=\"series\" fill=\"#0072B2\">");
    const char *g2 = strstr(svg, "<g class=\"series\" fill=\"#D55E00\">");
    ck_assert(g1 && g2);
    ck_assert_int_eq(count(svg, "<rect"), 10);
    /* error bars only where std > 0: two in series 1 */
    ck_assert_int_eq(count(svg, "stroke=\"#222\" fill=\"none\"/>"), 2);
    /* the negative bar hangs below the zero line: zero is a tick and the axis reaches -0.1 */
    ck_assert(strstr(svg, ">0.0</text>") && strstr(svg, ">-0.1</text>"));
    free(svg);
    vs_plot_free(p);
}
END_TEST

START_TEST(test_log_plot)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, NULL, "iteration", "loss");
    vs_plot_set_log_y(p, 1);
    float y[6] = {100, 10, 0, -1, 0.5f, 0.02f};
    vs_error e;
    ck_assert_int_eq(vs_plot_add_series(p, NULL, 6, NULL, y, NULL, &e), VS_OK);
    char *svg;
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert_ptr_null(xml_check(svg));
    static const char *const labels[] = {">0.01</text>", ">0.1</text>", ">1</text>", ">10</text>", ">100</text>"};
    for (int i = 0; i < 5; i++) ck_assert_msg(strstr(svg, labels[i]), "%s", labels[i]);
    ck_assert(!strstr(svg, ">1000</text>"));
    ck_assert_int_eq(count(svg, "<circle"), 4); /* y = 0 and y = -1 are skipped */
    ck_assert(!strstr(svg, "class=\"legend\"")); /* no named series, no legend */
    free(svg);
    vs_plot_free(p);

    /* many decades are ticked every few decades */
    p = vs_plot_new(VS_PLOT_LINE, NULL, NULL, NULL);
    vs_plot_set_log_y(p, 1);
    float big[2] = {1e-12f, 1e12f};
    vs_plot_add_series(p, "x", 2, NULL, big, NULL, &e);
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert(strstr(svg, ">1e-12</text>") && strstr(svg, ">1e12</text>") && strstr(svg, ">1</text>"));
    ck_assert(!strstr(svg, ">1e-11</text>"));
    free(svg);
    vs_plot_free(p);
}
END_TEST

START_TEST(test_empty_and_files)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, NULL, NULL, NULL);
    char *svg;
    vs_error e;
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert_ptr_null(xml_check(svg));
    free(svg);
    float y[3] = {NAN, NAN, NAN};
    vs_plot_add_series(p, "nothing", 3, NULL, y, NULL, &e);
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert_ptr_null(xml_check(svg));

    char path[512];
    snprintf(path, sizeof path, "%s/vs_test_plot_%d.svg", vs_test_tmpdir(), (int)getpid());
    ck_assert_int_eq(vs_plot_write_svg(p, path, &e), VS_OK);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = strlen(svg);
    char *disk = malloc(n + 1);
    ck_assert_uint_eq(fread(disk, 1, n + 1, f), n);
    fclose(f);
    ck_assert_mem_eq(disk, svg, n);
    free(disk);
    free(svg);
    unlink(path);
    ck_assert_int_eq(vs_plot_write_svg(p, "/nonexistent/x.svg", &e), VS_ERR_IO);
    ck_assert_msg(strstr(e.msg, "/nonexistent/x.svg"), "%s", e.msg);
    ck_assert_int_eq(vs_plot_add_series(p, "bad", 2, NULL, NULL, NULL, &e), VS_ERR_ARG);
    vs_plot_free(p);
}
END_TEST

START_TEST(test_many_series)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, "12 series", NULL, NULL);
    vs_error e;
    for (int k = 0; k < 12; k++) {
        float y[2] = {(float)k, (float)k + 1};
        char name[16];
        snprintf(name, sizeof name, "s%d", k);
        ck_assert_int_eq(vs_plot_add_series(p, name, 2, NULL, y, NULL, &e), VS_OK);
    }
    char *svg;
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert_ptr_null(xml_check(svg));
    /* 8 Okabe-Ito colours; series 9 to 12 reuse the first four, dashed (path + legend each) */
    ck_assert_int_eq(count(svg, "stroke-dasharray"), 8);
    ck_assert_int_eq(count(svg, "stroke=\"#F0E442\""), 2);
    ck_assert_int_eq(count(svg, "stroke=\"#0072B2\""), 4);
    free(svg);
    vs_plot_free(p);
}
END_TEST

/* x counting layers 0..3: ticks at whole numbers only, never "1.5" */
START_TEST(test_integer_axis)
{
    vs_plot *p = vs_plot_new(VS_PLOT_LINE, "cascade", "layers randomised", "SSIM");
    float x[4] = {0, 1, 2, 3}, y[4] = {10, 8, 6, 4}; /* whole-number y too: any "N.5" label would be an x tick */
    vs_error e;
    ck_assert_int_eq(vs_plot_add_series(p, "IG", 4, x, y, NULL, &e), VS_OK);
    char *svg;
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert(strstr(svg, ">1</text>") && strstr(svg, ">3</text>"));
    ck_assert_msg(!strstr(svg, ">1.5</text>") && !strstr(svg, ">0.5</text>") && !strstr(svg, ">2.5</text>"), "half-layer ticks");
    free(svg);
    vs_plot_free(p);
    /* fractions keep their fine ticks */
    p = vs_plot_new(VS_PLOT_LINE, NULL, NULL, NULL);
    float xf[3] = {0, 0.5f, 1};
    ck_assert_int_eq(vs_plot_add_series(p, "a", 3, xf, y, NULL, &e), VS_OK);
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert(strstr(svg, ">0.2</text>") && strstr(svg, ">0.8</text>"));
    free(svg);
    vs_plot_free(p);
}
END_TEST

/* Three masks of one graph that differ only within 0.45..0.6: each panel on its own scale, so the
 * panels' edges get different colours, and each panel says its range. */
START_TEST(test_graph_panels_differ)
{
    int64_t src[4] = {0, 1, 2, 3}, dst[4] = {1, 2, 3, 0};
    float w0[4] = {0.45f, 0.5f, 0.55f, 0.6f}, w1[4] = {0.6f, 0.55f, 0.5f, 0.45f}, w2[4] = {0.5f, 0.5f, NAN, 0.5f};
    const float *const w[3] = {w0, w1, w2};
    const char *const names[3] = {"global", "same class", "other class"};
    vs_graph_drawing g = {.title = "masks", .n_nodes = 4, .n_edges = 4, .src = src, .dst = dst, .n_panels = 3, .panel_names = names,
                          .weights = w};
    char *svg;
    size_t len;
    vs_error e;
    ck_assert_int_eq(vs_graph_svg(&g, &svg, &len, &e), VS_OK);
    const char *why = xml_check(svg);
    ck_assert_msg(why == NULL, "%s", why);
    /* the stroke of edge 0-1 in panels 1 and 2: the lowest and the highest colour of the scale */
    const char *p1 = strstr(svg, "<title>0-1: 0.450</title>"), *p2 = strstr(svg, "<title>0-1: 0.600</title>");
    ck_assert(p1 && p2);
    const char *s1 = p1, *s2 = p2;
    while (s1 > svg && strncmp(s1, "stroke=\"#", 9) != 0) s1--;
    while (s2 > svg && strncmp(s2, "stroke=\"#", 9) != 0) s2--;
    ck_assert_msg(strncmp(s1, s2, 16) != 0, "edge 0-1 has one colour in both panels: %.16s", s1);
    ck_assert(strstr(svg, ">weights 0.45 to 0.6</text>"));
    ck_assert(strstr(svg, "stroke-dasharray=\"3 3\"")); /* the NaN weight */
    free(svg);
}
END_TEST

static Suite *plot_suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = vs_tcase(s, "plot", 10);
    tcase_add_test(tc, test_xml_checker_rejects);
    tcase_add_test(tc, test_nice_ticks);
    tcase_add_test(tc, test_line_plot);
    tcase_add_test(tc, test_bar_plot);
    tcase_add_test(tc, test_log_plot);
    tcase_add_test(tc, test_empty_and_files);
    tcase_add_test(tc, test_many_series);
    tcase_add_test(tc, test_integer_axis);
    tcase_add_test(tc, test_graph_panels_differ);
    return s;
}

VS_TEST_MAIN(plot_suite)
