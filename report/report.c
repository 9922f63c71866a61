/* report.c - building a vs_report: blocks, tables with typed cells, figures as data; freeing it.
 * The writers live in report_markdown.c, report_html.c, report_json.c and report_files.c. */
#include "versus/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(vs_report *r, void *p, size_t n, size_t *cap, size_t size)
{
    if (r->oom) return NULL;
    if (n < *cap) return p;
    size_t c = *cap ? 2 * *cap : 8;
    void *q = realloc(p, c * size);
    if (!q) {
        r->oom = true;
        return NULL;
    }
    *cap = c;
    return q;
}

static char *dup(vs_report *r, const char *s)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) r->oom = true;
    return d;
}

static char *vformat(vs_report *r, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) {
        r->oom = true;
        return NULL;
    }
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* A new block at the end; NULL when out of memory. */
static vs_report_block *add_block(vs_report *r, vs_block_kind kind)
{
    vs_report_block *b = grow(r, r->blocks, r->n_blocks, &r->cap_blocks, sizeof *b);
    if (!b) return NULL;
    r->blocks = b;
    b = &r->blocks[r->n_blocks++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

vs_report *vs_report_new(void) { return calloc(1, sizeof(vs_report)); }

static void table_free(vs_report_table *t)
{
    if (!t) return;
    free(t->caption);
    for (int c = 0; c < t->n_cols; c++) free(t->header ? t->header[c] : NULL);
    free(t->header);
    free(t->better);
    for (int i = 0; i < t->n_rows * t->n_cols; i++) free(t->cells[i].text);
    free(t->cells);
    for (int i = 0; i < t->n_notes; i++) free(t->notes[i]);
    free(t->notes);
    free(t);
}

static void figure_free(vs_report_figure *f)
{
    if (!f) return;
    free(f->name), free(f->title), free(f->xlabel), free(f->ylabel), free(f->caption);
    for (size_t k = 0; k < f->n_series; k++) {
        free(f->series[k].name), free(f->series[k].x), free(f->series[k].y), free(f->series[k].err);
    }
    free(f->series);
    for (size_t k = 0; k < f->n_categories; k++) free(f->categories[k]);
    free(f->categories);
    for (int64_t i = 0; f->node_labels && i < f->n_nodes; i++) free(f->node_labels[i]);
    free(f->node_labels), free(f->src), free(f->dst), free(f->hot_edge);
    free(f);
}

void vs_report_free(vs_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_blocks; i++) {
        free(r->blocks[i].text);
        table_free(r->blocks[i].table);
        figure_free(r->blocks[i].figure);
    }
    free(r->blocks);
    vs_json_free(r->data);
    free(r);
}

void vs_report_set_data(vs_report *r, vs_json *obj)
{
    if (!obj) r->oom = true;
    vs_json_free(r->data);
    r->data = obj;
}

static void text_block(vs_report *r, vs_block_kind kind, int level, const char *fmt, va_list ap)
{
    char *s = vformat(r, fmt, ap);
    vs_report_block *b = s ? add_block(r, kind) : NULL;
    if (!b) {
        free(s);
        return;
    }
    b->level = level < 1 ? 1 : level > 3 ? 3 : level;
    b->text = s;
}

void vs_report_heading(vs_report *r, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_block(r, VS_BLOCK_HEADING, level, fmt, ap);
    va_end(ap);
}

void vs_report_paragraph(vs_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_block(r, VS_BLOCK_PARAGRAPH, 1, fmt, ap);
    va_end(ap);
}

void vs_report_item(vs_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_block(r, VS_BLOCK_ITEM, 1, fmt, ap);
    va_end(ap);
}

/* ---- tables --------------------------------------------------------------------------------------- */

vs_report_table *vs_report_table_new(vs_report *r, const char *caption, int n_cols, const char *const *header,
                                     const vs_better *better)
{
    if (n_cols < 1 || !header) {
        r->oom = true; /* a programming error; the writers refuse the report */
        return NULL;
    }
    vs_report_table *t = calloc(1, sizeof *t);
    vs_report_block *b = t ? add_block(r, VS_BLOCK_TABLE) : NULL;
    if (!b) {
        free(t);
        r->oom = true;
        return NULL;
    }
    b->table = t;
    t->owner = r;
    t->caption = dup(r, caption);
    t->header = calloc((size_t)n_cols, sizeof *t->header);
    t->better = calloc((size_t)n_cols, sizeof *t->better);
    if (!t->header || !t->better) {
        r->oom = true;
        return t;
    }
    t->n_cols = n_cols;
    for (int c = 0; c < n_cols; c++) {
        t->header[c] = dup(r, header[c]);
        t->better[c] = better ? better[c] : VS_BETTER_NONE;
    }
    return t;
}

int vs_report_table_row(vs_report_table *t)
{
    if (!t || t->owner->oom) return -1;
    if (t->n_rows == t->cap_rows) {
        int cap = t->cap_rows ? 2 * t->cap_rows : 8;
        vs_report_cell *c = realloc(t->cells, (size_t)cap * (size_t)t->n_cols * sizeof *c);
        if (!c) {
            t->owner->oom = true;
            return -1;
        }
        t->cells = c;
        t->cap_rows = cap;
    }
    for (int c = 0; c < t->n_cols; c++) {
        vs_report_cell *cell = &t->cells[t->n_rows * t->n_cols + c];
        memset(cell, 0, sizeof *cell);
        cell->note = -1;
        cell->spread = NAN;
    }
    return t->n_rows++;
}

static vs_report_cell *cell_at(vs_report_table *t, int row, int col)
{
    if (!t || row < 0 || row >= t->n_rows || col < 0 || col >= t->n_cols) {
        if (t) t->owner->oom = true; /* a programming error; the writers refuse the report */
        return NULL;
    }
    vs_report_cell *c = &t->cells[row * t->n_cols + col];
    free(c->text);
    memset(c, 0, sizeof *c);
    c->note = -1;
    c->spread = NAN;
    return c;
}

const vs_report_cell *vs_report_cell_at(const vs_report_table *t, int row, int col)
{
    if (!t || row < 0 || row >= t->n_rows || col < 0 || col >= t->n_cols) return NULL;
    return &t->cells[row * t->n_cols + col];
}

void vs_report_text(vs_report_table *t, int row, int col, const char *text)
{
    vs_report_cell *c = cell_at(t, row, col);
    if (!c) return;
    c->kind = VS_CELL_TEXT;
    c->text = dup(t->owner, text ? text : "");
}

void vs_report_missing(vs_report_table *t, int row, int col, const char *why)
{
    vs_report_cell *c = cell_at(t, row, col);
    if (!c) return;
    c->kind = VS_CELL_MISSING;
    why = why ? why : "not defined";
    for (int i = 0; i < t->n_notes; i++)
        if (strcmp(t->notes[i], why) == 0) {
            c->note = i;
            return;
        }
    char **n = realloc(t->notes, (size_t)(t->n_notes + 1) * sizeof *n);
    char *s = dup(t->owner, why);
    if (!n || !s) {
        if (n) t->notes = n;
        free(s);
        t->owner->oom = true;
        return;
    }
    t->notes = n;
    t->notes[t->n_notes] = s;
    c->note = t->n_notes++;
}

void vs_report_number(vs_report_table *t, int row, int col, double value, double spread, int digits)
{
    if (!isfinite(value)) {
        vs_report_missing(t, row, col, "not defined");
        return;
    }
    vs_report_cell *c = cell_at(t, row, col);
    if (!c) return;
    c->kind = VS_CELL_NUMBER;
    c->value = value;
    c->spread = isfinite(spread) ? spread : NAN;
    c->digits = digits < -9 ? -9 : digits > 9 ? 9 : digits;
}

void vs_report_pvalue(vs_report_table *t, int row, int col, double p, vs_cell_sig sig)
{
    if (!isfinite(p)) {
        vs_report_missing(t, row, col, "no test");
        return;
    }
    vs_report_cell *c = cell_at(t, row, col);
    if (!c) return;
    c->kind = VS_CELL_PVALUE;
    c->value = p;
    c->sig = sig;
}

void vs_report_rank(vs_report_table *t, int col, const bool *skip)
{
    if (!t || col < 0 || col >= t->n_cols || t->better[col] == VS_BETTER_NONE) return;
    double sign = t->better[col] == VS_BETTER_HIGHER ? 1 : -1;
    int best = -1, second = -1;
    for (int i = 0; i < t->n_rows; i++) {
        const vs_report_cell *c = &t->cells[i * t->n_cols + col];
        if ((skip && skip[i]) || c->kind != VS_CELL_NUMBER) continue;
        double v = sign * c->value;
        if (best < 0 || v > sign * t->cells[best * t->n_cols + col].value) {
            second = best;
            best = i;
        } else if (second < 0 || v > sign * t->cells[second * t->n_cols + col].value) {
            second = i;
        }
    }
    if (best >= 0) t->cells[best * t->n_cols + col].rank = VS_RANK_BEST;
    if (second >= 0) t->cells[second * t->n_cols + col].rank = VS_RANK_SECOND;
}

/* ---- figures -------------------------------------------------------------------------------------- */

vs_report_figure *vs_report_figure_new(vs_report *r, vs_figure_kind kind, const char *name, const char *title,
                                       const char *xlabel, const char *ylabel, const char *caption)
{
    vs_report_figure *f = calloc(1, sizeof *f);
    vs_report_block *b = f ? add_block(r, VS_BLOCK_FIGURE) : NULL;
    if (!b) {
        free(f);
        r->oom = true;
        return NULL;
    }
    b->figure = f;
    f->owner = r;
    f->kind = kind;
    f->name = dup(r, name ? name : "figure");
    f->title = dup(r, title);
    f->xlabel = dup(r, xlabel);
    f->ylabel = dup(r, ylabel);
    f->caption = dup(r, caption);
    return f;
}

static float *copy_floats(vs_report *r, const float *v, size_t n)
{
    if (!v) return NULL;
    float *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) r->oom = true;
    else if (n) memcpy(c, v, n * sizeof *c);
    return c;
}

void vs_report_series(vs_report_figure *f, const char *name, size_t n, const float *x, const float *y, const float *err)
{
    if (!f) return;
    vs_report *r = f->owner;
    size_t cap = f->n_series; /* grown one at a time: figures hold a handful of series */
    vs_figure_series *s = r->oom || !y ? NULL : realloc(f->series, (cap + 1) * sizeof *s);
    if (!s) {
        r->oom = true;
        return;
    }
    f->series = s;
    s = &f->series[f->n_series++];
    *s = (vs_figure_series){dup(r, name ? name : ""), n, copy_floats(r, x, n), copy_floats(r, y, n), copy_floats(r, err, n)};
}

void vs_report_categories(vs_report_figure *f, size_t n, const char *const *labels)
{
    if (!f) return;
    char **c = calloc(n ? n : 1, sizeof *c);
    if (!c) {
        f->owner->oom = true;
        return;
    }
    for (size_t k = 0; k < f->n_categories; k++) free(f->categories[k]);
    free(f->categories);
    f->categories = c;
    f->n_categories = n;
    for (size_t k = 0; k < n; k++) c[k] = dup(f->owner, labels[k] ? labels[k] : "");
}

void vs_report_matrix(vs_report_figure *f, size_t rows, size_t cols, const char *const *row_labels, const char *const *col_labels,
                      const float *values)
{
    if (!f) return;
    for (size_t r = 0; r < rows; r++) vs_report_series(f, row_labels[r] ? row_labels[r] : "", cols, NULL, values + r * cols, NULL);
    vs_report_categories(f, cols, col_labels);
}

void vs_report_graph(vs_report_figure *f, int64_t n_nodes, const char *const *labels, int64_t n_edges, const int64_t *src,
                     const int64_t *dst, const bool *hot)
{
    if (!f) return;
    vs_report *r = f->owner;
    size_t ne = (size_t)(n_edges > 0 ? n_edges : 1);
    f->n_nodes = n_nodes;
    f->n_edges = n_edges;
    f->src = malloc(ne * sizeof *f->src);
    f->dst = malloc(ne * sizeof *f->dst);
    f->hot_edge = hot ? malloc(ne * sizeof *f->hot_edge) : NULL;
    f->node_labels = labels ? calloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof *f->node_labels) : NULL;
    if (!f->src || !f->dst || (hot && !f->hot_edge) || (labels && !f->node_labels)) {
        r->oom = true;
        f->n_nodes = f->n_edges = 0;
        return;
    }
    for (int64_t e = 0; e < n_edges; e++) {
        f->src[e] = src[e];
        f->dst[e] = dst[e];
        if (hot) f->hot_edge[e] = hot[e];
    }
    for (int64_t i = 0; labels && i < n_nodes; i++) f->node_labels[i] = dup(r, labels[i] ? labels[i] : "");
}
