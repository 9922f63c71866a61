/* test_report.c - results as data and their writers: typed cells (directions, ranks, p-values with
 * marks, footnoted dashes instead of NaN), Markdown, HTML, the JSON round trip and its errors,
 * category labels that turn instead of colliding, node-link drawings of graphs, matrices drawn as
 * heatmaps (diverging scale around 0, labels thinned, a colour bar), alike figures as small multiples,
 * and the PNGs a paragraph names embedded in the page. */
#include "versus/picture.h"
#include "versus/plot.h"
#include "versus/report.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* A report with every kind of block, cell and figure. */
static vs_report *sample(void)
{
    vs_report *r = vs_report_new();
    vs_report_heading(r, 1, "Sample %d", 1);
    vs_report_paragraph(r, "Some `code` and **bold** & <angle> text.");
    vs_report_item(r, "first");
    vs_report_item(r, "second");
    const char *head[4] = {"method", "FA", "CF", "p"};
    const vs_better better[4] = {VS_BETTER_NONE, VS_BETTER_LOWER, VS_BETTER_HIGHER, VS_BETTER_NONE};
    vs_report_table *t = vs_report_table_new(r, "A caption", 4, head, better);
    const double fa[3] = {0.5, 0.25, 0.75}, cf[3] = {NAN, 2.0, 1.0};
    const char *names[3] = {"a|b", "snx", "sm"};
    for (int i = 0; i < 3; i++) {
        int row = vs_report_table_row(t);
        vs_report_text(t, row, 0, names[i]);
        vs_report_number(t, row, 1, fa[i], 0.125, 3);
        vs_report_number(t, row, 2, cf[i], NAN, 2);
        if (i == 1) vs_report_missing(t, row, 3, "the reference");
        else vs_report_pvalue(t, row, 3, i ? 0.01 : 0.5, i ? VS_SIG_BETTER : VS_SIG_NONE);
    }
    vs_report_rank(t, 1, NULL);
    vs_report_rank(t, 2, NULL);
    vs_report_figure *l = vs_report_figure_new(r, VS_FIGURE_LINE, "curve", "A curve", "x", "y", "What to see: it rises.");
    const float x[3] = {0, 1, 2}, y[3] = {1, NAN, 3};
    vs_report_series(l, "up", 3, x, y, NULL);
    vs_report_figure *b = vs_report_figure_new(r, VS_FIGURE_BAR, "bars", "Bars", "feature", "value", "Long labels turn.");
    const char *cats[12];
    char buf[12][40];
    float v[12];
    for (int i = 0; i < 12; i++) {
        snprintf(buf[i], sizeof buf[i], "a rather long feature name %d", i);
        cats[i] = buf[i];
        v[i] = (float)i;
    }
    vs_report_series(b, "s", 12, NULL, v, NULL);
    vs_report_categories(b, 12, cats);
    vs_report_figure *g = vs_report_figure_new(r, VS_FIGURE_GRAPH, "graph", "A ring", NULL, NULL, "The motif is highlighted.");
    const int64_t src[5] = {0, 1, 2, 3, 4}, dst[5] = {1, 2, 3, 4, 0};
    const bool hot[5] = {true, true, false, false, false};
    const float w1[5] = {1, 0.5f, 0, 0, NAN}, w2[5] = {0.2f, 0.2f, 0.2f, 0.2f, 0.2f};
    vs_report_series(g, "mask 1", 5, NULL, w1, NULL);
    vs_report_series(g, "mask 2", 5, NULL, w2, NULL);
    vs_report_graph(g, 5, NULL, 5, src, dst, hot);
    vs_report_figure *m = vs_report_figure_new(r, VS_FIGURE_MATRIX, "matrix", "Interactions", "reference feature", "query feature",
                                               "Red: the pair adds to the score.");
    const char *rows[2] = {"age", "a & <b>"}, *cols[3] = {"x0", "x1", "a feature name longer than twenty-two"};
    const float mv[6] = {-2, 0, 1, NAN, 0.5f, 2};
    vs_report_matrix(m, 2, 3, rows, cols, mv);
    vs_json *data = vs_json_new_object();
    vs_json_set(data, "format", vs_json_new_string("test/1"));
    vs_json_set(data, "value", vs_json_new_number(0.5));
    vs_report_set_data(r, data);
    return r;
}

static char *markdown(const vs_report *r)
{
    char *s = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&s, &n);
    vs_error e;
    ck_assert_int_eq(vs_report_markdown(r, f, &e), VS_OK);
    fclose(f);
    return s;
}

START_TEST(test_cells)
{
    vs_report *r = sample();
    const vs_report_table *t = r->blocks[4].table;
    ck_assert_int_eq(t->n_rows, 3);
    /* NaN is never a number: it becomes a footnoted dash */
    ck_assert_int_eq(vs_report_cell_at(t, 0, 2)->kind, VS_CELL_MISSING);
    ck_assert_int_eq(t->n_notes, 2);
    /* FA lower is better: row 1 best, row 0 runner-up; CF higher: row 1 best, row 2 second */
    ck_assert_int_eq(vs_report_cell_at(t, 1, 1)->rank, VS_RANK_BEST);
    ck_assert_int_eq(vs_report_cell_at(t, 0, 1)->rank, VS_RANK_SECOND);
    ck_assert_int_eq(vs_report_cell_at(t, 2, 1)->rank, VS_RANK_NONE);
    ck_assert_int_eq(vs_report_cell_at(t, 1, 2)->rank, VS_RANK_BEST);
    ck_assert_int_eq(vs_report_cell_at(t, 2, 2)->rank, VS_RANK_SECOND);
    ck_assert_ptr_null(vs_report_cell_at(t, 3, 0));
    vs_report_free(r);
}
END_TEST

START_TEST(test_markdown)
{
    vs_report *r = sample();
    char *md = markdown(r);
    ck_assert_ptr_nonnull(strstr(md, "# Sample 1\n"));
    ck_assert_ptr_nonnull(strstr(md, "- first\n- second\n"));
    ck_assert_ptr_nonnull(strstr(md, "| method | FA ↓ | CF ↑ | p |"));
    ck_assert_ptr_nonnull(strstr(md, "| a\\|b | 0.500 (0.125) * | –¹ | 0.5 |"));
    ck_assert_ptr_nonnull(strstr(md, "| snx | **0.250 (0.125)** | **2.00** | –² |"));
    ck_assert_ptr_nonnull(strstr(md, "| sm | 0.750 (0.125) | 1.00 * | 0.01 ◦ |"));
    ck_assert_ptr_nonnull(strstr(md, "– ²: the reference"));
    ck_assert_ptr_nonnull(strstr(md, "![A curve](curve.svg)"));
    ck_assert_ptr_null(strstr(md, "nan"));
    free(md);
    vs_report_free(r);
}
END_TEST

START_TEST(test_html)
{
    vs_report *r = sample();
    char *html;
    size_t n;
    vs_error e;
    ck_assert_int_eq(vs_report_html(r, &html, &n, &e), VS_OK);
    ck_assert_uint_eq(strlen(html), n);
    ck_assert_ptr_nonnull(strstr(html, "<title>Sample 1</title>"));
    ck_assert_ptr_nonnull(strstr(html, "<style>"));
    ck_assert_ptr_nonnull(strstr(html, "Some <code>code</code> and <strong>bold</strong> &amp; &lt;angle&gt; text."));
    ck_assert_ptr_nonnull(strstr(html, "<ul>\n<li>first</li>\n<li>second</li>\n</ul>"));
    ck_assert_ptr_nonnull(strstr(html, "<th title=\"lower is better\">FA<span class=\"dir\">↓</span></th>"));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"num best\""));
    ck_assert_ptr_nonnull(strstr(html, "<td class=\"na\" title=\"the reference\">–<sup>²</sup></td>"));
    ck_assert_ptr_nonnull(strstr(html, "class=\"sig better\""));
    /* four figures inlined as SVG (no XML declaration inside HTML), numbered, captioned */
    ck_assert_int_eq(count(html, "<svg xmlns"), 4);
    ck_assert_int_eq(count(html, "<?xml"), 0);
    ck_assert_ptr_nonnull(strstr(html, "<figcaption><b>Figure 3.</b> The motif is highlighted.</figcaption>"));
    /* self-contained: nothing fetched, no script */
    ck_assert_int_eq(count(html, "<script"), 0);
    ck_assert_int_eq(count(html, "src="), 0);
    ck_assert_int_eq(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
    ck_assert_ptr_null(strstr(html, "nan"));
    free(html);
    vs_report_free(r);
}
END_TEST

START_TEST(test_json_round_trip)
{
    vs_report *r = sample();
    vs_json *doc, *doc2;
    vs_error e;
    ck_assert_int_eq(vs_report_to_json(r, &doc, &e), VS_OK);
    char *s1, *s2;
    ck_assert_int_eq(vs_json_write(doc, 2, &s1, NULL, &e), VS_OK);
    /* the data object's keys come first, the report last */
    ck_assert_ptr_nonnull(strstr(s1, "\"format\": \"test/1\""));
    ck_assert_ptr_nonnull(strstr(s1, "\"report\": {"));
    vs_json *parsed;
    ck_assert_int_eq(vs_json_parse(s1, strlen(s1), "r.json", NULL, &parsed, &e), VS_OK);
    vs_report *back;
    ck_assert_msg(vs_report_from_json(parsed, "r.json", &back, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(vs_report_to_json(back, &doc2, &e), VS_OK);
    ck_assert_int_eq(vs_json_write(doc2, 2, &s2, NULL, &e), VS_OK);
    ck_assert_str_eq(s1, s2);
    /* and the pages agree */
    char *h1, *h2;
    ck_assert_int_eq(vs_report_html(r, &h1, NULL, &e), VS_OK);
    ck_assert_int_eq(vs_report_html(back, &h2, NULL, &e), VS_OK);
    ck_assert_str_eq(h1, h2);
    free(h1), free(h2), free(s1), free(s2);
    vs_json_free(doc), vs_json_free(doc2), vs_json_free(parsed);
    vs_report_free(back);
    vs_report_free(r);
}
END_TEST

/* from_json on text: the status, the message in e */
static vs_status read_text(const char *text, vs_error *e)
{
    vs_json *doc;
    ck_assert_int_eq(vs_json_parse(text, strlen(text), "bad.json", NULL, &doc, e), VS_OK);
    vs_report *r = NULL;
    vs_status st = vs_report_from_json(doc, "bad.json", &r, e);
    ck_assert(st == VS_OK || r == NULL);
    vs_report_free(r);
    vs_json_free(doc);
    return st;
}

START_TEST(test_json_errors)
{
    vs_error e;
    ck_assert_int_eq(read_text("{\"a\": 1}", &e), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "bad.json: no \"report\""));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"other/9\", \"blocks\": []}}", &e), VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "versus-report/1"));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"table\": {\"columns\": "
                               "[{\"header\": \"a\"}, {\"header\": \"b\"}], \"rows\": [[\"x\"]]}}]}}", &e),
                     VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "one cell per column"));
    ck_assert_ptr_nonnull(strstr(e.msg, "bad.json:1:"));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"table\": {\"columns\": "
                               "[{\"header\": \"a\"}], \"rows\": [[{\"missing\": 3}]]}}]}}", &e),
                     VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "index of a note"));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"figure\": {\"kind\": \"pie\", "
                               "\"name\": \"x\", \"series\": []}}]}}", &e),
                     VS_ERR_FORMAT);
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"figure\": {\"kind\": \"line\", "
                               "\"name\": \"../etc\", \"series\": []}}]}}", &e),
                     VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "file stem"));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"figure\": {\"kind\": \"graph\", "
                               "\"name\": \"g\", \"series\": [{\"y\": [1]}], \"graph\": {\"nodes\": 2, \"edges\": [[0, 5]]}}}]}}",
                               &e),
                     VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "node indices"));
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"heading\": 3}]}}", &e), VS_ERR_FORMAT);
}
END_TEST

START_TEST(test_labels_turn)
{
    vs_report *r = sample();
    char *svg;
    vs_error e;
    ck_assert_int_eq(vs_report_figure_svg(r->blocks[6].figure, &svg, NULL, &e), VS_OK);
    /* 12 labels of 30 characters do not fit 540 pixels: they turn, are cut, and keep their text */
    ck_assert_int_eq(count(svg, "rotate(-45"), 12);
    ck_assert_int_eq(count(svg, "<title>a rather long feature name"), 12);
    ck_assert_int_eq(count(svg, "…</text>"), 12);
    free(svg);
    /* short labels stay level */
    vs_plot *p = vs_plot_new(VS_PLOT_BAR, NULL, NULL, NULL);
    const float y[3] = {1, 2, 3};
    const char *cats[3] = {"a", "b", "c"};
    ck_assert_int_eq(vs_plot_add_series(p, "s", 3, NULL, y, NULL, &e), VS_OK);
    ck_assert_int_eq(vs_plot_set_categories(p, 3, cats, &e), VS_OK);
    ck_assert_int_eq(vs_plot_svg(p, &svg, NULL, &e), VS_OK);
    ck_assert_int_eq(count(svg, "rotate(-45"), 0);
    free(svg);
    vs_plot_free(p);
    vs_report_free(r);
}
END_TEST

START_TEST(test_graph_drawing)
{
    /* a path 0-1-2-3-4-5: the layout keeps hop order along one line, in [0,1]^2, the same every time */
    const int64_t src[5] = {0, 1, 2, 3, 4}, dst[5] = {1, 2, 3, 4, 5};
    double xy[12], xy2[12];
    vs_error e;
    ck_assert_int_eq(vs_graph_layout(6, 5, src, dst, xy, &e), VS_OK);
    ck_assert_int_eq(vs_graph_layout(6, 5, src, dst, xy2, &e), VS_OK);
    ck_assert_int_eq(memcmp(xy, xy2, sizeof xy), 0);
    for (int i = 0; i < 12; i++) ck_assert(xy[i] >= -1e-9 && xy[i] <= 1 + 1e-9);
    double d01 = hypot(xy[0] - xy[2], xy[1] - xy[3]), d05 = hypot(xy[0] - xy[10], xy[1] - xy[11]);
    ck_assert_double_gt(d05, 4 * d01);
    /* bad edges are refused with a message */
    const int64_t bad[1] = {7};
    ck_assert_int_eq(vs_graph_layout(6, 1, src, bad, xy, &e), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "edge 0"));
    /* the drawing: one panel per weighting, the motif halo on hot edges, NaN weights dashed grey */
    vs_report *r = sample();
    char *svg;
    ck_assert_int_eq(vs_report_figure_svg(r->blocks[7].figure, &svg, NULL, &e), VS_OK);
    ck_assert_int_eq(count(svg, "<g class=\"panel\">"), 2);
    ck_assert_int_eq(count(svg, "stroke-width=\"12\""), 2 * 2 + 1); /* 2 hot edges x 2 panels + legend */
    ck_assert_int_eq(count(svg, "stroke=\"#999\" stroke-dasharray"), 1);
    ck_assert_int_eq(count(svg, "<circle"), 2 * 5 + 1);
    ck_assert_ptr_nonnull(strstr(svg, "planted motif"));
    ck_assert_ptr_null(strstr(svg, "nan"));
    free(svg);
    vs_report_free(r);
}
END_TEST

/* The y of every "<text class=\"CLS\"" (x for columns, which are turned) in order; their count. */
static int label_positions(const char *svg, const char *cls, const char *coord, double *pos, int max)
{
    char needle[64], key[8];
    snprintf(needle, sizeof needle, "<text class=\"%s\"", cls);
    snprintf(key, sizeof key, " %s=\"", coord);
    int n = 0;
    for (const char *p = svg; (p = strstr(p, needle)) && n < max; p += strlen(needle)) pos[n++] = atof(strstr(p, key) + strlen(key));
    return n;
}

START_TEST(test_matrix_figure)
{
    vs_report *r = sample();
    const vs_report_figure *m = r->blocks[r->n_blocks - 1].figure;
    ck_assert_int_eq(m->kind, VS_FIGURE_MATRIX);
    char *svg;
    vs_error e;
    ck_assert_msg(vs_report_figure_svg(m, &svg, NULL, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(count(svg, "<rect class=\"cell\""), 6);
    /* the scale is symmetric around 0: -2 and +2 take its ends, 0 is white, NaN grey */
    ck_assert_ptr_nonnull(strstr(svg, "fill=\"#053061\"><title>age × x0: -2</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "fill=\"#f7f7f7\"><title>age × x1: 0</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "fill=\"#67001f\"><title>a &amp; &lt;b&gt; × a feature name longer than twenty-two: 2</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "fill=\"#bdbdbd\"><title>a &amp; &lt;b&gt; × x0: not defined</title>"));
    ck_assert_int_eq(count(svg, "<text class=\"row-label\""), 2);
    ck_assert_int_eq(count(svg, "<text class=\"col-label\""), 3);
    ck_assert_ptr_nonnull(strstr(svg, "a feature name longer…<title>a feature name longer than twenty-two</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<g class=\"colorbar\""));
    ck_assert_ptr_nonnull(strstr(svg, ">-2</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">2</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">query feature</text>"));
    free(svg);
    /* the HTML page inlines it with its caption */
    char *html;
    ck_assert_int_eq(vs_report_html(r, &html, NULL, &e), VS_OK);
    ck_assert_ptr_nonnull(strstr(html, "<figure id=\"fig-matrix\">"));
    ck_assert_ptr_nonnull(strstr(html, "Red: the pair adds to the score."));
    free(html);
    vs_report_free(r);

    /* 120 x 120: cells smaller than the text, so every k-th label, none closer than 13 px */
    enum { F = 120 };
    static float big[F * F];
    static char names[F][16];
    const char *lab[F];
    for (int i = 0; i < F; i++) {
        snprintf(names[i], sizeof names[i], "feature %d", i);
        lab[i] = names[i];
        for (int j = 0; j < F; j++) big[i * F + j] = (float)(i - j);
    }
    r = vs_report_new();
    vs_report_figure *b = vs_report_figure_new(r, VS_FIGURE_MATRIX, "big", NULL, NULL, NULL, "Large.");
    vs_report_matrix(b, F, F, lab, lab, big);
    ck_assert_msg(vs_report_figure_svg(b, &svg, NULL, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(count(svg, "<rect class=\"cell\""), F * F);
    double pos[F];
    int nr = label_positions(svg, "row-label", "y", pos, F);
    ck_assert_int_gt(nr, 10);
    ck_assert_int_lt(nr, F);
    for (int i = 1; i < nr; i++) ck_assert_double_ge(pos[i] - pos[i - 1], 12.99);
    int nc = label_positions(svg, "col-label", "x", pos, F);
    ck_assert_int_eq(nc, nr);
    for (int i = 1; i < nc; i++) ck_assert_double_ge(pos[i] - pos[i - 1], 12.99);
    free(svg);
    /* a row of the wrong length is refused, by the writer and by the reader */
    b->series[3].n = F - 1;
    ck_assert_int_eq(vs_report_figure_svg(b, &svg, NULL, &e), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(e.msg, "matrix row 3"));
    b->series[3].n = F;
    vs_report_free(r);
    ck_assert_int_eq(read_text("{\"report\": {\"format\": \"versus-report/1\", \"blocks\": [{\"figure\": {\"kind\": \"matrix\", "
                               "\"name\": \"m\", \"series\": [{\"name\": \"a\", \"y\": [1, 2]}], \"categories\": [\"x\"]}}]}}",
                               &e),
                     VS_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(e.msg, "every row of a matrix"));
}
END_TEST

START_TEST(test_write_dir)
{
    vs_report *r = sample();
    vs_error e;
    char dir[] = "/tmp/test_report_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[128], path[256];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    ck_assert_msg(vs_report_write_dir(r, sub, &e) == VS_OK, "%s", e.msg);
    const char *files[7] = {"results.json", "table.md", "index.html", "curve.svg", "bars.svg", "graph.svg", "matrix.svg"};
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "%s/%s", sub, files[i]);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "%s missing", path);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/index.html", sub);
    remove(path);
    ck_assert_msg(vs_report_rebuild_html(sub, &e) == VS_OK, "%s", e.msg);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(vs_report_rebuild_html("/nonexistent/dir", &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent/dir/results.json"));
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "%s/%s", sub, files[i]);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/a/b", dir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/a", dir);
    rmdir(path);
    rmdir(dir);
    vs_report_free(r);
}
END_TEST

/* A page names `pic.png` in a paragraph and `gone.png` that is not there; five alike curves follow. */
START_TEST(test_page_pictures_and_multiples)
{
    vs_report *r = vs_report_new();
    vs_report_heading(r, 1, "pictures");
    vs_report_paragraph(r, "`pic.png`: the saliency maps; `gone.png`: never written.");
    float x[3] = {0, 1, 2}, y[3] = {1, 0.5f, 0.25f};
    for (int k = 0; k < 5; k++) {
        char name[16];
        snprintf(name, sizeof name, "curve%d", k);
        vs_report_figure *f = vs_report_figure_new(r, VS_FIGURE_LINE, name, name, "layers", "SSIM", "One of five.");
        vs_report_series(f, "IG", 3, x, y, NULL);
    }
    vs_report_paragraph(r, "after");
    vs_error e;
    char dir[] = "/tmp/test_report_XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    vs_image *im = vs_image_new(4, 3, 3);
    snprintf(path, sizeof path, "%s/pic.png", dir);
    ck_assert_int_eq(vs_png_write(im, path, &e), VS_OK);
    vs_image_free(im);
    ck_assert_msg(vs_report_write_dir(r, dir, &e) == VS_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = 0;
    fclose(f);
    ck_assert_int_eq(count(html, "<img alt=\"pic.png\" src=\"data:image/png;base64,iVBORw0KGgo"), 1);
    ck_assert_int_eq(count(html, "gone.png\" src"), 0);
    ck_assert_int_eq(count(html, "<div class=\"multiples\">"), 1);
    const char *open = strstr(html, "<div class=\"multiples\">"), *fig4 = strstr(html, "id=\"fig-curve4\""), *after = strstr(html, "<p>after");
    ck_assert(open && fig4 && after && open < fig4 && strstr(fig4, "</div>\n<p>after") != NULL);
    /* without a directory (vs_report_html) nothing is embedded */
    char *page;
    ck_assert_int_eq(vs_report_html(r, &page, NULL, &e), VS_OK);
    ck_assert_ptr_null(strstr(page, "data:image/png"));
    free(page);
    const char *files[] = {"results.json", "table.md", "index.html", "pic.png", "curve0.svg", "curve1.svg", "curve2.svg", "curve3.svg",
                           "curve4.svg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    rmdir(dir);
    vs_report_free(r);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_cells);
    tcase_add_test(tc, test_markdown);
    tcase_add_test(tc, test_html);
    tcase_add_test(tc, test_json_round_trip);
    tcase_add_test(tc, test_json_errors);
    tcase_add_test(tc, test_labels_turn);
    tcase_add_test(tc, test_graph_drawing);
    tcase_add_test(tc, test_matrix_figure);
    tcase_add_test(tc, test_write_dir);
    tcase_add_test(tc, test_page_pictures_and_multiples);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(report_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
