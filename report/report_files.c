/* report_files.c - a report's figures as SVG (through versus/plot.h), and a report directory:
 * results.json, table.md, index.html and one SVG per figure, each written atomically; rebuilding the
 * page from results.json. */
#include "datasets/io/write_atomic.h"
#include "report/internal.h"
#include "versus/plot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static vs_status plot_svg(const vs_report_figure *f, char **out, size_t *len, vs_error *err)
{
    vs_plot *p = vs_plot_new(f->kind == VS_FIGURE_BAR ? VS_PLOT_BAR : VS_PLOT_LINE, f->title, f->xlabel, f->ylabel);
    if (!p) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", f->name);
    vs_status st = VS_OK;
    for (size_t k = 0; k < f->n_series && st == VS_OK; k++) {
        const vs_figure_series *s = &f->series[k];
        st = vs_plot_add_series(p, s->name, s->n, s->x, s->y, s->err, err);
    }
    if (st == VS_OK && f->n_categories) st = vs_plot_set_categories(p, f->n_categories, (const char *const *)f->categories, err);
    vs_plot_set_log_y(p, f->log_y);
    if (st == VS_OK) st = vs_plot_svg(p, out, len, err);
    vs_plot_free(p);
    return st;
}

static vs_status graph_svg(const vs_report_figure *f, char **out, size_t *len, vs_error *err)
{
    int n = (int)f->n_series;
    const char **names = malloc((size_t)(n ? n : 1) * sizeof *names);
    const float **w = malloc((size_t)(n ? n : 1) * sizeof *w);
    vs_status st = names && w ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", f->name);
    for (int k = 0; st == VS_OK && k < n; k++) {
        if (f->series[k].n != (size_t)f->n_edges)
            st = vs_error_set(err, VS_ERR_ARG, "%s: series %d has %zu weights for %lld edges", f->name, k, f->series[k].n, (long long)f->n_edges);
        names[k] = f->series[k].name;
        w[k] = f->series[k].y;
    }
    vs_graph_drawing g = {f->title, f->n_nodes, f->n_edges, f->src, f->dst, (const char *const *)f->node_labels, f->hot_edge, n, names, w};
    if (st == VS_OK) st = vs_graph_svg(&g, out, len, err);
    free(names);
    free(w);
    return st;
}

vs_status vs_report_figure_svg(const vs_report_figure *f, char **out, size_t *len, vs_error *err)
{
    if (!f || !out) return vs_error_set(err, VS_ERR_ARG, "report: no figure or output");
    if (f->kind == VS_FIGURE_MATRIX) return vs_report_matrix_svg(f, out, len, err);
    return f->kind == VS_FIGURE_GRAPH ? graph_svg(f, out, len, err) : plot_svg(f, out, len, err);
}

vs_status vs_report_make_dirs(const char *dir, vs_error *err)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return vs_error_set(err, VS_ERR_ARG, "%s: path too long", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) return vs_error_set(err, VS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
            *s = '/';
        }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) return vs_error_set(err, VS_ERR_IO, "%s: cannot create directory: %s", p, strerror(errno));
    return VS_OK;
}

static vs_status write_text(const char *dir, const char *name, const char *text, size_t n, vs_error *err)
{
    char path[4400];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return vs_error_set(err, VS_ERR_ARG, "%s: path too long", dir);
    return vs_write_file_atomic(path, text, n, err);
}

static vs_status write_html(const vs_report *r, const char *dir, vs_error *err)
{
    char *html;
    size_t n;
    vs_status st = vs_report_html_in(r, dir, &html, &n, err);
    if (st == VS_OK) {
        st = write_text(dir, "index.html", html, n, err);
        free(html);
    }
    return st;
}

vs_status vs_report_write_dir(const vs_report *r, const char *dir, vs_error *err)
{
    if (!r || !dir) return vs_error_set(err, VS_ERR_ARG, "report: no report or directory");
    vs_status st = vs_report_make_dirs(dir, err);
    vs_json *doc = NULL;
    if (st == VS_OK) st = vs_report_to_json(r, &doc, err);
    if (st == VS_OK) {
        char path[4400];
        snprintf(path, sizeof path, "%s/results.json", dir);
        st = vs_json_write_file(path, doc, err);
    }
    vs_json_free(doc);
    for (size_t i = 0; st == VS_OK && i < r->n_blocks; i++) {
        const vs_report_figure *f = r->blocks[i].figure;
        if (!f) continue;
        char *svg, name[300];
        size_t n;
        snprintf(name, sizeof name, "%s.svg", f->name);
        st = vs_report_figure_svg(f, &svg, &n, err);
        if (st == VS_OK) {
            st = write_text(dir, name, svg, n, err);
            free(svg);
        }
    }
    if (st == VS_OK) {
        char *md = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&md, &n);
        if (!f) st = vs_error_set(err, VS_ERR_NOMEM, "%s/table.md: out of memory", dir);
        if (st == VS_OK) st = vs_report_markdown(r, f, err);
        if (f && fclose(f) != 0 && st == VS_OK) st = vs_error_set(err, VS_ERR_NOMEM, "%s/table.md: out of memory", dir);
        if (st == VS_OK) st = write_text(dir, "table.md", md, n, err);
        free(md);
    }
    if (st == VS_OK) st = write_html(r, dir, err);
    return st;
}

vs_status vs_report_rebuild_html(const char *dir, vs_error *err)
{
    char path[4400];
    if (!dir || snprintf(path, sizeof path, "%s/results.json", dir) >= (int)sizeof path)
        return vs_error_set(err, VS_ERR_ARG, "report: no directory or path too long");
    vs_json *doc = NULL;
    vs_report *r = NULL;
    vs_status st = vs_json_parse_file(path, NULL, &doc, err);
    if (st == VS_OK) st = vs_report_from_json(doc, path, &r, err);
    if (st == VS_OK) st = write_html(r, dir, err);
    vs_report_free(r);
    vs_json_free(doc);
    return st;
}
