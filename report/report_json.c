/* report_json.c - a vs_report to JSON and back: the experiment's data object with a "report" member
 * holding every block (format "versus-report/1").  Reading checks every field and names it. */
#include "report/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_FORMAT "versus-report/1"

static const char *const kind_names[] = {"line", "bar", "graph", "matrix"};
static const char *const better_names[] = {"none", "lower", "higher"};

/* ---- writing -------------------------------------------------------------------------------------- */

typedef struct jw {
    bool ok;
} jw;

static vs_json *set(jw *w, vs_json *o, const char *key, vs_json *v)
{
    if (w->ok && vs_json_set(o, key, v) != VS_OK) w->ok = false;
    else if (!w->ok) vs_json_free(v);
    return o;
}

static void push(jw *w, vs_json *a, vs_json *v)
{
    if (w->ok && vs_json_push(a, v) != VS_OK) w->ok = false;
    else if (!w->ok) vs_json_free(v);
}

static vs_json *str_or_null(const char *s) { return s ? vs_json_new_string(s) : vs_json_new_null(); }

/* A float as a number, NaN and infinities as null. */
static vs_json *float_json(float v) { return isfinite(v) ? vs_json_new_number((double)v) : vs_json_new_null(); }

static vs_json *floats_json(jw *w, const float *v, size_t n)
{
    if (!v) return vs_json_new_null();
    vs_json *a = vs_json_new_array();
    for (size_t i = 0; a && i < n; i++) push(w, a, float_json(v[i]));
    return a;
}

static vs_json *cell_json(jw *w, const vs_report_cell *c)
{
    vs_json *o;
    switch (c->kind) {
    case VS_CELL_TEXT: return vs_json_new_string(c->text ? c->text : "");
    case VS_CELL_MISSING: return set(w, vs_json_new_object(), "missing", vs_json_new_int(c->note));
    case VS_CELL_PVALUE:
        o = set(w, vs_json_new_object(), "p", vs_json_new_number(c->value));
        if (c->sig) set(w, o, "sig", vs_json_new_string(c->sig == VS_SIG_BETTER ? "better" : "worse"));
        return o;
    case VS_CELL_NUMBER:
        o = set(w, vs_json_new_object(), "value", vs_json_new_number(c->value));
        if (!isnan(c->spread)) set(w, o, "spread", vs_json_new_number(c->spread));
        set(w, o, "digits", vs_json_new_int(c->digits));
        if (c->rank) set(w, o, "rank", vs_json_new_string(c->rank == VS_RANK_BEST ? "best" : "second"));
        return o;
    }
    return NULL;
}

static vs_json *table_json(jw *w, const vs_report_table *t)
{
    vs_json *o = set(w, vs_json_new_object(), "caption", str_or_null(t->caption));
    vs_json *cols = vs_json_new_array(), *rows = vs_json_new_array(), *notes = vs_json_new_array();
    for (int c = 0; cols && c < t->n_cols; c++) {
        vs_json *col = set(w, vs_json_new_object(), "header", vs_json_new_string(t->header[c]));
        push(w, cols, set(w, col, "better", vs_json_new_string(better_names[t->better[c]])));
    }
    for (int r = 0; rows && r < t->n_rows; r++) {
        vs_json *row = vs_json_new_array();
        for (int c = 0; row && c < t->n_cols; c++) push(w, row, cell_json(w, &t->cells[r * t->n_cols + c]));
        push(w, rows, row);
    }
    for (int i = 0; notes && i < t->n_notes; i++) push(w, notes, vs_json_new_string(t->notes[i]));
    set(w, o, "columns", cols);
    set(w, o, "rows", rows);
    return set(w, o, "notes", notes);
}

static vs_json *figure_json(jw *w, const vs_report_figure *f)
{
    vs_json *o = set(w, vs_json_new_object(), "kind", vs_json_new_string(kind_names[f->kind]));
    set(w, o, "name", vs_json_new_string(f->name));
    set(w, o, "title", str_or_null(f->title));
    set(w, o, "xlabel", str_or_null(f->xlabel));
    set(w, o, "ylabel", str_or_null(f->ylabel));
    set(w, o, "caption", str_or_null(f->caption));
    set(w, o, "log_y", vs_json_new_bool(f->log_y));
    vs_json *series = vs_json_new_array();
    for (size_t k = 0; series && k < f->n_series; k++) {
        const vs_figure_series *s = &f->series[k];
        vs_json *so = set(w, vs_json_new_object(), "name", vs_json_new_string(s->name));
        set(w, so, "x", floats_json(w, s->x, s->n));
        set(w, so, "y", floats_json(w, s->y, s->n));
        push(w, series, set(w, so, "err", floats_json(w, s->err, s->n)));
    }
    set(w, o, "series", series);
    if (f->n_categories) {
        vs_json *cat = vs_json_new_array();
        for (size_t k = 0; cat && k < f->n_categories; k++) push(w, cat, vs_json_new_string(f->categories[k]));
        set(w, o, "categories", cat);
    }
    if (f->kind == VS_FIGURE_GRAPH) {
        vs_json *g = set(w, vs_json_new_object(), "nodes", vs_json_new_int(f->n_nodes));
        vs_json *edges = vs_json_new_array(), *hot = f->hot_edge ? vs_json_new_array() : vs_json_new_null();
        vs_json *labels = f->node_labels ? vs_json_new_array() : vs_json_new_null();
        for (int64_t e = 0; edges && e < f->n_edges; e++) {
            vs_json *pair = vs_json_new_array();
            push(w, pair, vs_json_new_int(f->src[e]));
            push(w, pair, vs_json_new_int(f->dst[e]));
            push(w, edges, pair);
            if (f->hot_edge) push(w, hot, vs_json_new_bool(f->hot_edge[e]));
        }
        for (int64_t i = 0; f->node_labels && i < f->n_nodes; i++) push(w, labels, vs_json_new_string(f->node_labels[i]));
        set(w, g, "labels", labels);
        set(w, g, "edges", edges);
        set(w, o, "graph", set(w, g, "hot", hot));
    }
    return o;
}

static vs_json *block_json(jw *w, const vs_report_block *b)
{
    vs_json *o = vs_json_new_object();
    switch (b->kind) {
    case VS_BLOCK_HEADING:
        set(w, o, "heading", vs_json_new_string(b->text));
        return set(w, o, "level", vs_json_new_int(b->level));
    case VS_BLOCK_PARAGRAPH: return set(w, o, "paragraph", vs_json_new_string(b->text));
    case VS_BLOCK_ITEM: return set(w, o, "item", vs_json_new_string(b->text));
    case VS_BLOCK_TABLE: return set(w, o, "table", table_json(w, b->table));
    case VS_BLOCK_FIGURE: return set(w, o, "figure", figure_json(w, b->figure));
    }
    return o;
}

/* A deep copy of a JSON value (for the data object); NULL when out of memory. */
static vs_json *json_copy(const vs_json *v)
{
    jw w = {true};
    vs_json *c = NULL;
    switch (v->type) {
    case VS_JSON_NULL: return vs_json_new_null();
    case VS_JSON_BOOL: return vs_json_new_bool(v->boolean);
    case VS_JSON_NUMBER: return v->is_int ? vs_json_new_int(v->integer) : vs_json_new_number(v->number);
    case VS_JSON_STRING: return vs_json_new_stringn(v->string, v->length);
    case VS_JSON_ARRAY:
        c = vs_json_new_array();
        for (size_t i = 0; c && i < v->n; i++) push(&w, c, json_copy(v->items[i]));
        break;
    case VS_JSON_OBJECT:
        c = vs_json_new_object();
        for (size_t i = 0; c && i < v->n; i++) set(&w, c, v->members[i].key, json_copy(v->members[i].value));
        break;
    }
    if (!w.ok) {
        vs_json_free(c);
        return NULL;
    }
    return c;
}

vs_status vs_report_to_json(const vs_report *r, vs_json **out, vs_error *err)
{
    if (!r || !out) return vs_error_set(err, VS_ERR_ARG, "report: no report or output");
    *out = NULL;
    if (r->oom) return vs_error_set(err, VS_ERR_NOMEM, "report: out of memory while it was built");
    jw w = {true};
    vs_json *doc = r->data && r->data->type == VS_JSON_OBJECT ? json_copy(r->data) : vs_json_new_object();
    vs_json *rep = set(&w, vs_json_new_object(), "format", vs_json_new_string(REPORT_FORMAT));
    vs_json *blocks = vs_json_new_array();
    for (size_t i = 0; blocks && i < r->n_blocks; i++) push(&w, blocks, block_json(&w, &r->blocks[i]));
    set(&w, rep, "blocks", blocks);
    if (!doc) w.ok = false;
    if (doc) set(&w, doc, "report", rep);
    else vs_json_free(rep);
    if (!w.ok) {
        vs_json_free(doc);
        return vs_error_set(err, VS_ERR_NOMEM, "report: out of memory writing JSON");
    }
    *out = doc;
    return VS_OK;
}

/* ---- reading -------------------------------------------------------------------------------------- */

typedef struct jr {
    const char *name;
    vs_error *err;
    vs_status st;
} jr;

/* Record the first error: "NAME:LINE:COL: report.FIELD: expected WHAT". */
static void bad(jr *rd, const vs_json *at, const char *field, const char *what)
{
    if (rd->st != VS_OK) return;
    char where[64] = "";
    if (at && at->line > 0) snprintf(where, sizeof where, ":%d:%d", (int)at->line, (int)at->col);
    rd->st = vs_error_set(rd->err, VS_ERR_FORMAT, "%s%s: report %s: expected %s", rd->name, where, field, what);
}

static const vs_json *member(jr *rd, const vs_json *o, const char *key, vs_json_type t, bool required, const char *field)
{
    const vs_json *v = vs_json_get(o, key);
    if (!v || (!required && v->type == VS_JSON_NULL)) {
        if (required) bad(rd, o, field, key);
        return NULL;
    }
    if (v->type != t) {
        char what[96];
        snprintf(what, sizeof what, "\"%s\" to be %s", key, vs_json_type_name(t));
        bad(rd, v, field, what);
        return NULL;
    }
    return v;
}

static const char *string_member(jr *rd, const vs_json *o, const char *key, bool required, const char *field)
{
    const vs_json *v = member(rd, o, key, VS_JSON_STRING, required, field);
    return v ? v->string : NULL;
}

/* An array of numbers or nulls (NaN) of length n into a new array, or NULL (absent or null). */
static float *read_floats(jr *rd, const vs_json *o, const char *key, size_t *n, bool required, const char *field)
{
    const vs_json *a = member(rd, o, key, VS_JSON_ARRAY, required, field);
    if (!a) return NULL;
    if (*n == (size_t)-1) *n = a->n;
    if (a->n != *n) {
        bad(rd, a, field, "arrays of one length");
        return NULL;
    }
    float *v = malloc((a->n ? a->n : 1) * sizeof *v);
    if (!v) {
        rd->st = vs_error_set(rd->err, VS_ERR_NOMEM, "%s: out of memory", rd->name);
        return NULL;
    }
    for (size_t i = 0; i < a->n; i++) {
        const vs_json *x = a->items[i];
        if (x->type == VS_JSON_NULL) v[i] = NAN;
        else if (x->type == VS_JSON_NUMBER) v[i] = (float)x->number;
        else bad(rd, x, field, "numbers or null");
    }
    return v;
}

static void read_cell(jr *rd, vs_report_table *t, int r, int c, const vs_json *v, const char *field)
{
    if (v->type == VS_JSON_STRING) {
        vs_report_text(t, r, c, v->string);
        return;
    }
    if (v->type != VS_JSON_OBJECT) return bad(rd, v, field, "a cell: a string or an object");
    const vs_json *x;
    if ((x = vs_json_get(v, "missing"))) {
        int64_t k;
        if (vs_json_int(x, 0, t->n_notes - 1, &k, NULL) != VS_OK) return bad(rd, x, field, "\"missing\": the index of a note");
        vs_report_missing(t, r, c, t->notes[k]);
    } else if ((x = vs_json_get(v, "p"))) {
        const char *sig = string_member(rd, v, "sig", false, field);
        if (x->type != VS_JSON_NUMBER) return bad(rd, x, field, "\"p\": a number");
        if (sig && strcmp(sig, "better") && strcmp(sig, "worse")) return bad(rd, v, field, "\"sig\": \"better\" or \"worse\"");
        vs_report_pvalue(t, r, c, x->number, !sig ? VS_SIG_NONE : sig[0] == 'b' ? VS_SIG_BETTER : VS_SIG_WORSE);
    } else if ((x = vs_json_get(v, "value"))) {
        int64_t digits = 3;
        const vs_json *s = vs_json_get(v, "spread"), *d = vs_json_get(v, "digits");
        const char *rank = string_member(rd, v, "rank", false, field);
        if (x->type != VS_JSON_NUMBER || (s && s->type != VS_JSON_NUMBER)) return bad(rd, v, field, "\"value\" and \"spread\": numbers");
        if (d && vs_json_int(d, -9, 9, &digits, NULL) != VS_OK) return bad(rd, d, field, "\"digits\": an integer -9..9");
        if (rank && strcmp(rank, "best") && strcmp(rank, "second")) return bad(rd, v, field, "\"rank\": \"best\" or \"second\"");
        vs_report_number(t, r, c, x->number, s ? s->number : NAN, (int)digits);
        if (rank) t->cells[r * t->n_cols + c].rank = rank[0] == 'b' ? VS_RANK_BEST : VS_RANK_SECOND;
    } else {
        bad(rd, v, field, "a cell with \"missing\", \"p\" or \"value\"");
    }
}

static void read_table(jr *rd, vs_report *rep, const vs_json *o)
{
    const char *f = "table";
    const vs_json *cols = member(rd, o, "columns", VS_JSON_ARRAY, true, f), *rows = member(rd, o, "rows", VS_JSON_ARRAY, true, f);
    const vs_json *notes = member(rd, o, "notes", VS_JSON_ARRAY, false, f);
    const char *caption = string_member(rd, o, "caption", false, f);
    if (rd->st != VS_OK) return;
    if (cols->n < 1 || cols->n > 1000) return bad(rd, cols, f, "1 to 1000 columns");
    int n = (int)cols->n;
    const char **head = calloc((size_t)n, sizeof *head);
    vs_better *better = calloc((size_t)n, sizeof *better);
    if (!head || !better) rd->st = vs_error_set(rd->err, VS_ERR_NOMEM, "%s: out of memory", rd->name);
    for (int c = 0; rd->st == VS_OK && c < n; c++) {
        const vs_json *col = cols->items[c];
        if (col->type != VS_JSON_OBJECT) {
            bad(rd, col, f, "columns as objects");
            break;
        }
        head[c] = string_member(rd, col, "header", true, "table column");
        const char *b = string_member(rd, col, "better", false, "table column");
        for (int k = 0; b && k < 3; k++)
            if (strcmp(b, better_names[k]) == 0) better[c] = (vs_better)k, b = NULL;
        if (b) bad(rd, col, "table column", "\"better\": \"none\", \"lower\" or \"higher\"");
    }
    vs_report_table *t = rd->st == VS_OK ? vs_report_table_new(rep, caption, n, head, better) : NULL;
    free(head);
    free(better);
    if (!t) return;
    /* the notes first, in their order, so that cell indices keep their meaning */
    for (size_t i = 0; notes && i < notes->n && rd->st == VS_OK; i++) {
        if (notes->items[i]->type != VS_JSON_STRING) return bad(rd, notes->items[i], f, "notes as strings");
        int row = vs_report_table_row(t);
        if (row >= 0) vs_report_missing(t, row, 0, notes->items[i]->string);
    }
    t->n_rows = 0; /* the scratch rows only registered the notes; their cells hold no text */
    for (size_t r = 0; r < rows->n && rd->st == VS_OK; r++) {
        const vs_json *row = rows->items[r];
        if (row->type != VS_JSON_ARRAY || row->n != (size_t)n) return bad(rd, row, f, "rows with one cell per column");
        int k = vs_report_table_row(t);
        for (int c = 0; k >= 0 && c < n && rd->st == VS_OK; c++) read_cell(rd, t, k, c, row->items[c], f);
    }
}

static void read_figure(jr *rd, vs_report *rep, const vs_json *o)
{
    const char *f = "figure";
    const char *kind = string_member(rd, o, "kind", true, f), *name = string_member(rd, o, "name", true, f);
    const vs_json *series = member(rd, o, "series", VS_JSON_ARRAY, true, f);
    const vs_json *cats = member(rd, o, "categories", VS_JSON_ARRAY, false, f), *logy = vs_json_get(o, "log_y");
    int k = -1;
    for (int i = 0; kind && i < 4; i++)
        if (strcmp(kind, kind_names[i]) == 0) k = i;
    if (rd->st != VS_OK) return;
    if (k < 0) return bad(rd, o, f, "\"kind\": \"line\", \"bar\", \"graph\" or \"matrix\"");
    for (const char *c = name; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *c) || name[0] == '.')
            return bad(rd, o, f, "\"name\": a file stem of letters, digits, '.', '_' and '-'");
    vs_report_figure *fig = vs_report_figure_new(rep, (vs_figure_kind)k, name, string_member(rd, o, "title", false, f),
                                                 string_member(rd, o, "xlabel", false, f), string_member(rd, o, "ylabel", false, f),
                                                 string_member(rd, o, "caption", false, f));
    if (!fig) return;
    fig->log_y = logy && logy->type == VS_JSON_BOOL && logy->boolean;
    for (size_t i = 0; i < series->n && rd->st == VS_OK; i++) {
        const vs_json *s = series->items[i];
        if (s->type != VS_JSON_OBJECT) return bad(rd, s, f, "series as objects");
        size_t n = (size_t)-1;
        float *y = read_floats(rd, s, "y", &n, true, "figure series");
        float *x = read_floats(rd, s, "x", &n, false, "figure series"), *e = read_floats(rd, s, "err", &n, false, "figure series");
        if (rd->st == VS_OK) vs_report_series(fig, string_member(rd, s, "name", false, "figure series"), n, x, y, e);
        free(x), free(y), free(e);
    }
    if (cats && rd->st == VS_OK) {
        const char **lab = malloc((cats->n ? cats->n : 1) * sizeof *lab);
        if (!lab) rd->st = vs_error_set(rd->err, VS_ERR_NOMEM, "%s: out of memory", rd->name);
        for (size_t i = 0; lab && i < cats->n; i++) {
            if (cats->items[i]->type != VS_JSON_STRING) bad(rd, cats->items[i], f, "categories as strings");
            lab[i] = cats->items[i]->type == VS_JSON_STRING ? cats->items[i]->string : "";
        }
        if (rd->st == VS_OK) vs_report_categories(fig, cats->n, lab);
        free(lab);
    }
    for (size_t i = 0; k == VS_FIGURE_MATRIX && rd->st == VS_OK && i < fig->n_series; i++)
        if (fig->series[i].n != fig->n_categories || fig->series[i].x || fig->series[i].err)
            bad(rd, series, f, "one \"y\" per category in every row of a matrix (no \"x\", no \"err\")");
    if (k != VS_FIGURE_GRAPH || rd->st != VS_OK) return;
    const vs_json *g = member(rd, o, "graph", VS_JSON_OBJECT, true, f);
    const vs_json *nodes = g ? vs_json_get(g, "nodes") : NULL;
    const vs_json *edges = g ? member(rd, g, "edges", VS_JSON_ARRAY, true, "figure graph") : NULL;
    const vs_json *hot = g ? member(rd, g, "hot", VS_JSON_ARRAY, false, "figure graph") : NULL;
    const vs_json *labels = g ? member(rd, g, "labels", VS_JSON_ARRAY, false, "figure graph") : NULL;
    int64_t nn;
    if (rd->st != VS_OK) return;
    if (!nodes || vs_json_int(nodes, 0, 5000, &nn, NULL) != VS_OK) return bad(rd, g, "figure graph", "\"nodes\": an integer 0..5000");
    if ((hot && hot->n != edges->n) || (labels && labels->n != (size_t)nn)) return bad(rd, g, "figure graph", "one \"hot\" per edge, one label per node");
    size_t ne = edges->n;
    int64_t *src = malloc((ne ? ne : 1) * sizeof *src), *dst = malloc((ne ? ne : 1) * sizeof *dst);
    bool *h = malloc((ne ? ne : 1) * sizeof *h);
    const char **lab = malloc((size_t)(nn ? nn : 1) * sizeof *lab);
    if (!src || !dst || !h || !lab) rd->st = vs_error_set(rd->err, VS_ERR_NOMEM, "%s: out of memory", rd->name);
    for (size_t e = 0; rd->st == VS_OK && e < ne; e++) {
        const vs_json *p = edges->items[e];
        if (p->type != VS_JSON_ARRAY || p->n != 2 || vs_json_int(p->items[0], 0, nn - 1, &src[e], NULL) != VS_OK ||
            vs_json_int(p->items[1], 0, nn - 1, &dst[e], NULL) != VS_OK)
            bad(rd, p, "figure graph", "edges as [source, target] node indices");
        if (hot && (hot->items[e]->type != VS_JSON_BOOL)) bad(rd, hot->items[e], "figure graph", "\"hot\" as booleans");
        h[e] = hot && hot->items[e]->type == VS_JSON_BOOL && hot->items[e]->boolean;
    }
    for (int64_t i = 0; rd->st == VS_OK && labels && i < nn; i++) {
        if (labels->items[i]->type != VS_JSON_STRING) bad(rd, labels->items[i], "figure graph", "labels as strings");
        lab[i] = labels->items[i]->type == VS_JSON_STRING ? labels->items[i]->string : "";
    }
    for (size_t i = 0; rd->st == VS_OK && i < fig->n_series; i++)
        if (fig->series[i].n != ne) bad(rd, series, f, "one weight per edge in every series of a graph");
    if (rd->st == VS_OK) vs_report_graph(fig, nn, labels ? lab : NULL, (int64_t)ne, src, dst, hot ? h : NULL);
    free(src), free(dst), free(h), free(lab);
}

vs_status vs_report_from_json(const vs_json *doc, const char *name, vs_report **out, vs_error *err)
{
    jr rd = {name ? name : "<memory>", err, VS_OK};
    *out = NULL;
    const vs_json *rep = doc && doc->type == VS_JSON_OBJECT ? vs_json_get(doc, "report") : NULL;
    if (!rep || rep->type != VS_JSON_OBJECT)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: no \"report\" object (was it written by versus bench or versus demo?)", rd.name);
    const char *format = string_member(&rd, rep, "format", true, "format");
    if (format && strcmp(format, REPORT_FORMAT) != 0) bad(&rd, rep, "format", "\"" REPORT_FORMAT "\"");
    const vs_json *blocks = member(&rd, rep, "blocks", VS_JSON_ARRAY, true, "blocks");
    if (rd.st != VS_OK) return rd.st;
    vs_report *r = vs_report_new();
    if (!r) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", rd.name);
    for (size_t i = 0; i < blocks->n && rd.st == VS_OK; i++) {
        const vs_json *b = blocks->items[i], *v;
        const char *s;
        if (b->type != VS_JSON_OBJECT) {
            bad(&rd, b, "blocks", "objects");
        } else if ((s = string_member(&rd, b, "heading", false, "heading"))) {
            int64_t level = 2;
            if (vs_json_opt_int(b, "level", 1, 3, 2, &level, NULL) != VS_OK) bad(&rd, b, "heading", "\"level\" 1..3");
            vs_report_heading(r, (int)level, "%s", s);
        } else if ((s = string_member(&rd, b, "paragraph", false, "paragraph"))) {
            vs_report_paragraph(r, "%s", s);
        } else if ((s = string_member(&rd, b, "item", false, "item"))) {
            vs_report_item(r, "%s", s);
        } else if ((v = member(&rd, b, "table", VS_JSON_OBJECT, false, "table"))) {
            read_table(&rd, r, v);
        } else if ((v = member(&rd, b, "figure", VS_JSON_OBJECT, false, "figure"))) {
            read_figure(&rd, r, v);
        } else if (rd.st == VS_OK) {
            bad(&rd, b, "blocks", "a heading, paragraph, item, table or figure");
        }
    }
    if (rd.st == VS_OK && r->oom) rd.st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", rd.name);
    if (rd.st == VS_OK) {
        vs_json *data = vs_json_new_object();
        jw w = {data != NULL};
        for (size_t i = 0; data && i < doc->n; i++)
            if (strcmp(doc->members[i].key, "report") != 0) set(&w, data, doc->members[i].key, json_copy(doc->members[i].value));
        if (!w.ok) rd.st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", rd.name);
        vs_report_set_data(r, data);
    }
    if (rd.st != VS_OK) {
        vs_report_free(r);
        return rd.st;
    }
    *out = r;
    return VS_OK;
}
