/* tu.c - TU Dortmund graph sets (DS_A.txt, DS_graph_indicator.txt, ...) into a vs_dataset of graphs.
 * Text tables are parsed from memory (so fuzzers need no files); vs_load_tu only reads the files. */
#include "versus/data_io.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- comma-separated tables of numbers ---- */

/* A parsed file: rows x cols numbers, integers in iv or reals in rv. */
typedef struct table {
    const char *name;
    int64_t rows, cols;
    int64_t *iv;
    double *rv;
} table;

static void table_free(table *t)
{
    free(t->iv);
    free(t->rv);
    t->iv = NULL;
    t->rv = NULL;
}

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static void trim(const uint8_t **s, const uint8_t **e)
{
    while (*s < *e && is_space(**s)) (*s)++;
    while (*e > *s && is_space((*e)[-1])) (*e)--;
}

static int parse_i64(const uint8_t *s, const uint8_t *e, int64_t *v)
{
    int neg = 0;
    if (s < e && (*s == '-' || *s == '+')) neg = *s++ == '-';
    if (s == e) return 0;
    uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (x > (lim - d) / 10) return 0;
        x = x * 10 + d;
    }
    *v = neg ? (x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x) : (int64_t)x;
    return 1;
}

static int parse_real(const uint8_t *s, const uint8_t *e, double *v)
{
    char buf[64];
    size_t len = (size_t)(e - s);
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    *v = strtod(buf, &end);
    return end == buf + len && isfinite(*v) && fabs(*v) <= FLT_MAX; /* stored as float */
}

static int64_t count_fields(const uint8_t *s, const uint8_t *e)
{
    int64_t k = 1;
    for (; s < e; s++) k += *s == ',';
    return k;
}

/* Parse the part into t: every non-empty line has the same number of comma-separated fields
 * (want_cols, or whatever the first line has when want_cols is 0); empty lines may only end the
 * file.  Integers when real is 0, finite reals otherwise. */
static vs_status parse_table(const vs_tu_part *pt, const char *name, int64_t want_cols, int real, table *t,
                             vs_error *err)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    const uint8_t *p = pt->data, *end = pt->data + pt->n;
    int64_t ub = 1; /* upper bound on rows */
    for (const uint8_t *q = p; q < end; q++) ub += *q == '\n';
    int64_t line = 0, blank_line = 0, rows_cap = 0;
    for (const uint8_t *ls = p, *le = p; le < end || line == 0; ls = le + 1) {
        le = memchr(ls, '\n', (size_t)(end - ls));
        if (!le) le = end;
        const uint8_t *s = ls, *e = le;
        line++;
        trim(&s, &e);
        if (s == e) {
            if (!blank_line) blank_line = line;
            if (le == end) break;
            continue;
        }
        if (blank_line)
            return vs_error_set(err, VS_ERR_FORMAT, "%s line %" PRId64 ": empty line inside the table", name, blank_line);
        int64_t k = count_fields(s, e);
        if (t->cols == 0) {
            /* rows are bounded by the lines and by the bytes a row of cols fields needs (2 cols),
             * so the table never takes more than about as many cells as the input has bytes */
            t->cols = want_cols ? want_cols : k;
            rows_cap = (int64_t)(pt->n / (size_t)(2 * t->cols)) + 1;
            if (rows_cap > ub) rows_cap = ub;
            size_t cells = (size_t)rows_cap * (size_t)t->cols; /* <= n + cols */
            t->rv = real ? malloc(cells * sizeof *t->rv) : NULL;
            t->iv = real ? NULL : malloc(cells * sizeof *t->iv);
            if (!t->rv && !t->iv) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", name);
        }
        if (k != t->cols) {
            table_free(t);
            return vs_error_set(err, VS_ERR_FORMAT, "%s line %" PRId64 ": %" PRId64 " fields, expected %" PRId64, name,
                                line, k, t->cols);
        }
        if (t->rows >= rows_cap) { /* cannot happen (see rows_cap); kept so a slip cannot overrun */
            table_free(t);
            return vs_error_set(err, VS_ERR_FORMAT, "%s line %" PRId64 ": more rows than the input can hold", name, line);
        }
        for (int64_t f = 0; f < k; f++) {
            const uint8_t *fs = s, *fe = memchr(s, ',', (size_t)(e - s));
            if (!fe) fe = e;
            s = fe < e ? fe + 1 : e;
            trim(&fs, &fe);
            size_t at = (size_t)(t->rows * t->cols + f);
            int ok = real ? parse_real(fs, fe, &t->rv[at]) : parse_i64(fs, fe, &t->iv[at]);
            if (!ok) {
                int show = fe - fs > 32 ? 32 : (int)(fe - fs);
                table_free(t);
                return vs_error_set(err, VS_ERR_FORMAT, "%s line %" PRId64 ": field %" PRId64 " \"%.*s\" is not %s", name,
                                    line, f + 1, show, (const char *)fs, real ? "a finite number in float range" : "an integer");
            }
        }
        t->rows++;
        if (le == end) break;
    }
    return VS_OK;
}

/* ---- distinct values ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n) into a new array *out of *k values. */
static vs_status distinct(const int64_t *v, int64_t n, int64_t **out, int64_t *k, const char *name, vs_error *err)
{
    int64_t *u = malloc((size_t)(n ? n : 1) * sizeof *u);
    if (!u) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", name);
    if (n) memcpy(u, v, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, cmp_i64);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i]) u[m++] = u[i];
    *out = u;
    *k = m;
    return VS_OK;
}

/* Index of x among the sorted distinct values u[0..k) (x is known to be there). */
static int64_t index_of(const int64_t *u, int64_t k, int64_t x)
{
    const int64_t *p = bsearch(&x, u, (size_t)k, sizeof *u, cmp_i64);
    return p ? p - u : -1;
}

/* ---- graphs ---- */

typedef struct tu_edge {
    int64_t g, a, b; /* graph (0-based), local end points a <= b */
    int64_t label;   /* index of the edge label, or -1 */
    int64_t line;    /* line of A it came from */
} tu_edge;

static int cmp_edge(const void *pa, const void *pb)
{
    const tu_edge *x = pa, *y = pb;
    if (x->g != y->g) return (x->g > y->g) - (x->g < y->g);
    if (x->a != y->a) return (x->a > y->a) - (x->a < y->a);
    if (x->b != y->b) return (x->b > y->b) - (x->b < y->b);
    return (x->line > y->line) - (x->line < y->line);
}

/* Everything vs_parse_tu_mem allocates, freed in one place. */
typedef struct tu_work {
    char names[6][256];   /* file names for messages */
    table A, gi, gl, nl, na, el;
    int64_t *classes, *node_vals, *edge_vals;
    int64_t n_classes, n_node_vals, n_edge_vals;
    int64_t *local, *count; /* local id of each node; nodes (later edges) per graph */
    tu_edge *edges;
    vs_dataset *d;
} tu_work;

static void tu_work_free(tu_work *w)
{
    table_free(&w->A);
    table_free(&w->gi);
    table_free(&w->gl);
    table_free(&w->nl);
    table_free(&w->na);
    table_free(&w->el);
    free(w->classes);
    free(w->node_vals);
    free(w->edge_vals);
    free(w->local);
    free(w->count);
    free(w->edges);
    vs_dataset_free(w->d);
}

/* Parse the six parts (the last three may be absent) and check that their lengths agree. */
static vs_status parse_parts(const vs_tu_files *f, const char *prefix, tu_work *w, vs_error *err)
{
    static const char *const suffix[6] = {"A.txt", "graph_indicator.txt", "graph_labels.txt",
                                          "node_labels.txt", "node_attributes.txt", "edge_labels.txt"};
    static const int64_t cols[6] = {2, 1, 1, 1, 0, 1}; /* 0: any, the same on every line */
    const vs_tu_part *parts[6] = {&f->A, &f->graph_indicator, &f->graph_labels,
                                  &f->node_labels, &f->node_attributes, &f->edge_labels};
    table *tabs[6] = {&w->A, &w->gi, &w->gl, &w->nl, &w->na, &w->el};
    for (int i = 0; i < 6; i++) {
        const vs_tu_part *pt = parts[i];
        if (pt->name)
            snprintf(w->names[i], sizeof w->names[i], "%s", pt->name);
        else
            snprintf(w->names[i], sizeof w->names[i], "%s_%s", prefix, suffix[i]);
        tabs[i]->name = w->names[i];
        if (!pt->data) {
            if (i < 3) return vs_error_set(err, VS_ERR_ARG, "%s: required file missing", w->names[i]);
            continue;
        }
        vs_status st = parse_table(pt, w->names[i], cols[i], i == 4, tabs[i], err);
        if (st) return st;
    }
    int64_t n = w->gi.rows;
    if (n == 0) return vs_error_set(err, VS_ERR_FORMAT, "%s: no nodes", w->gi.name);
    if (w->gl.rows == 0) return vs_error_set(err, VS_ERR_FORMAT, "%s: no graphs", w->gl.name);
    const table *per_node[2] = {&w->nl, &w->na};
    for (int i = 0; i < 2; i++)
        if (per_node[i]->rows != n && (i == 0 ? f->node_labels.data : f->node_attributes.data))
            return vs_error_set(err, VS_ERR_FORMAT, "%s has %" PRId64 " lines but %s has %" PRId64 " (one per node)",
                                per_node[i]->name, per_node[i]->rows, w->gi.name, n);
    if (f->edge_labels.data && w->el.rows != w->A.rows)
        return vs_error_set(err, VS_ERR_FORMAT, "%s has %" PRId64 " lines but %s has %" PRId64 " (one per edge)",
                            w->el.name, w->el.rows, w->A.name, w->A.rows);
    return VS_OK;
}

/* Graph of every node, local ids, nodes per graph; classes of the graphs. */
static vs_status assign_nodes(tu_work *w, vs_error *err)
{
    int64_t n = w->gi.rows, N = w->gl.rows;
    w->local = malloc((size_t)n * sizeof *w->local);
    w->count = calloc((size_t)N, sizeof *w->count);
    if (!w->local || !w->count) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", w->gi.name);
    for (int64_t i = 0; i < n; i++) {
        int64_t g = w->gi.iv[i];
        if (g < 1 || g > N)
            return vs_error_set(err, VS_ERR_FORMAT,
                                "%s line %" PRId64 ": graph id %" PRId64 " is outside 1..%" PRId64 " (%s has %" PRId64
                                " lines)",
                                w->gi.name, i + 1, g, N, w->gl.name, N);
        w->gi.iv[i] = g - 1;
        w->local[i] = w->count[g - 1]++;
    }
    for (int64_t g = 0; g < N; g++)
        if (w->count[g] == 0)
            return vs_error_set(err, VS_ERR_FORMAT, "graph %" PRId64 " (%s line %" PRId64 ") has no nodes in %s", g + 1,
                                w->gl.name, g + 1, w->gi.name);
    vs_status st = distinct(w->gl.iv, N, &w->classes, &w->n_classes, w->gl.name, err);
    if (!st && w->nl.iv) st = distinct(w->nl.iv, n, &w->node_vals, &w->n_node_vals, w->nl.name, err);
    if (!st && w->el.iv) st = distinct(w->el.iv, w->el.rows, &w->edge_vals, &w->n_edge_vals, w->el.name, err);
    return st;
}

/* Undirected edges with local ids, sorted and deduplicated; w->count becomes edges per graph. */
static vs_status collect_edges(tu_work *w, int64_t *n_unique, vs_error *err)
{
    int64_t n = w->gi.rows, m = w->A.rows;
    w->edges = malloc((size_t)(m ? m : 1) * sizeof *w->edges);
    if (!w->edges) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", w->A.name);
    for (int64_t l = 0; l < m; l++) {
        int64_t u = w->A.iv[2 * l], v = w->A.iv[2 * l + 1];
        for (int k = 0; k < 2; k++) {
            int64_t id = k ? v : u;
            if (id < 1 || id > n)
                return vs_error_set(err, VS_ERR_FORMAT, "%s line %" PRId64 ": node id %" PRId64 " is outside 1..%" PRId64,
                                    w->A.name, l + 1, id, n);
        }
        int64_t g = w->gi.iv[u - 1];
        if (g != w->gi.iv[v - 1])
            return vs_error_set(err, VS_ERR_FORMAT,
                                "%s line %" PRId64 ": edge %" PRId64 ", %" PRId64 " joins graph %" PRId64
                                " and graph %" PRId64,
                                w->A.name, l + 1, u, v, g + 1, w->gi.iv[v - 1] + 1);
        int64_t a = w->local[u - 1], b = w->local[v - 1];
        tu_edge *e = &w->edges[l];
        e->g = g;
        e->a = a < b ? a : b;
        e->b = a < b ? b : a;
        e->label = w->el.iv ? index_of(w->edge_vals, w->n_edge_vals, w->el.iv[l]) : -1;
        e->line = l + 1;
    }
    qsort(w->edges, (size_t)m, sizeof *w->edges, cmp_edge);
    memset(w->count, 0, (size_t)w->gl.rows * sizeof *w->count);
    int64_t k = 0;
    for (int64_t l = 0; l < m; l++) {
        tu_edge *e = &w->edges[l];
        if (k > 0) {
            tu_edge *p = &w->edges[k - 1];
            if (p->g == e->g && p->a == e->a && p->b == e->b) {
                if (p->label != e->label)
                    return vs_error_set(err, VS_ERR_FORMAT,
                                        "%s line %" PRId64 ": label %" PRId64 " of an edge differs from label %" PRId64
                                        " on line %" PRId64 " for the same undirected edge",
                                        w->el.name, e->line, w->el.iv[e->line - 1], w->el.iv[p->line - 1], p->line);
                continue;
            }
        }
        w->edges[k++] = *e;
        w->count[e->g]++;
    }
    *n_unique = k;
    return VS_OK;
}

/* Fill d->graphs from the deduplicated edges and the node tables. */
static vs_status build_graphs(tu_work *w, vs_error *err)
{
    vs_dataset *d = w->d;
    int64_t N = w->gl.rows, n = w->gi.rows, F0 = w->n_node_vals, F = F0 + w->na.cols;
    int constant = F == 0; /* no node information at all: one constant feature */
    if (constant) F = 1;
    d->n_node_features = F;
    /* one-hot node labels: the width is the number of distinct labels, checked before any graph */
    char what[160];
    snprintf(what, sizeof what, "%s: %" PRId64 " nodes x %" PRId64 " node features", w->gi.name, n, F);
    vs_status st = vs_mem_check((size_t)n, (size_t)F * sizeof(float), what, err);
    if (st != VS_OK) return st;
    d->graphs = calloc((size_t)N, sizeof *d->graphs);
    if (!d->graphs) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %" PRId64 " graphs", w->gl.name, N);
    const tu_edge *e = w->edges;
    int64_t *nodes = calloc((size_t)N, sizeof *nodes);
    if (!nodes) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) nodes[w->gi.iv[i]]++;
    for (int64_t g = 0; g < N; g++) {
        vs_graph *gr = &d->graphs[g];
        size_t cells, ne = (size_t)(2 * w->count[g]);
        gr->n_nodes = nodes[g];
        gr->n_edges = (int64_t)ne;
        if (!vs_size_mul((size_t)gr->n_nodes, (size_t)F, &cells) || cells > SIZE_MAX / sizeof(float)) {
            free(nodes);
            return vs_error_set(err, VS_ERR_NOMEM, "graph %" PRId64 ": node features overflow", g + 1);
        }
        gr->x = calloc(cells, sizeof *gr->x);
        int ok = gr->x != NULL;
        if (ne) {
            gr->src = malloc(ne * sizeof *gr->src);
            gr->dst = malloc(ne * sizeof *gr->dst);
            gr->rev = malloc(ne * sizeof *gr->rev);
            ok = ok && gr->src && gr->dst && gr->rev;
            if (w->el.iv) ok = ok && (gr->edge_label = malloc(ne * sizeof *gr->edge_label)) != NULL;
        }
        if (!ok) {
            free(nodes);
            return vs_error_set(err, VS_ERR_NOMEM, "graph %" PRId64 ": out of memory", g + 1);
        }
        for (size_t k = 0; k < ne; k += 2, e++) {
            gr->src[k] = e->a;
            gr->dst[k] = e->b;
            gr->src[k + 1] = e->b;
            gr->dst[k + 1] = e->a;
            gr->rev[k] = (int64_t)k + 1;
            gr->rev[k + 1] = (int64_t)k;
            if (gr->edge_label) gr->edge_label[k] = gr->edge_label[k + 1] = e->label;
        }
    }
    free(nodes);
    for (int64_t i = 0; i < n; i++) {
        float *x = d->graphs[w->gi.iv[i]].x + w->local[i] * F;
        if (constant) x[0] = 1.0f;
        if (w->nl.iv) x[index_of(w->node_vals, F0, w->nl.iv[i])] = 1.0f;
        for (int64_t j = 0; j < w->na.cols; j++) x[F0 + j] = (float)w->na.rv[i * w->na.cols + j];
    }
    return VS_OK;
}

static vs_status set_classes(tu_work *w, vs_error *err)
{
    vs_dataset *d = w->d;
    int64_t N = w->gl.rows;
    d->n = N;
    d->y = malloc((size_t)N * sizeof *d->y);
    d->class_names = calloc((size_t)w->n_classes, sizeof *d->class_names);
    if (!d->y || !d->class_names) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", w->gl.name);
    d->n_classes = w->n_classes;
    for (int64_t k = 0; k < w->n_classes; k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64, w->classes[k]);
        if (!(d->class_names[k] = strdup(buf))) return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    }
    for (int64_t g = 0; g < N; g++) d->y[g] = index_of(w->classes, w->n_classes, w->gl.iv[g]);
    return VS_OK;
}

vs_status vs_parse_tu_mem(const vs_tu_files *files, const char *prefix, vs_dataset **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!files || !out) return vs_error_set(err, VS_ERR_ARG, "vs_parse_tu_mem: NULL argument");
    if (!prefix) prefix = "tu";
    tu_work *w = calloc(1, sizeof *w);
    if (!w) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", prefix);
    int64_t n_unique = 0;
    vs_status st = parse_parts(files, prefix, w, err);
    if (!st) st = assign_nodes(w, err);
    if (!st) st = collect_edges(w, &n_unique, err);
    if (!st && !(w->d = vs_dataset_new(VS_DATA_GRAPHS, prefix))) st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    if (!st) st = set_classes(w, err);
    if (!st) st = build_graphs(w, err);
    if (!st) {
        *out = w->d;
        w->d = NULL;
    }
    tu_work_free(w);
    free(w);
    return st;
}

vs_status vs_load_tu(const char *dir, const char *prefix, vs_dataset **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!dir || !prefix || !out) return vs_error_set(err, VS_ERR_ARG, "vs_load_tu: NULL argument");
    static const char *const suffix[6] = {"A.txt", "graph_indicator.txt", "graph_labels.txt",
                                          "node_labels.txt", "node_attributes.txt", "edge_labels.txt"};
    char paths[6][PATH_MAX];
    uint8_t *bufs[6] = {NULL};
    vs_tu_files f;
    vs_tu_part *parts[6] = {&f.A, &f.graph_indicator, &f.graph_labels, &f.node_labels, &f.node_attributes, &f.edge_labels};
    vs_status st = VS_OK;
    for (int i = 0; i < 6 && !st; i++) {
        int len = snprintf(paths[i], sizeof paths[i], "%s/%s_%s", dir, prefix, suffix[i]);
        parts[i]->name = paths[i];
        parts[i]->data = NULL;
        parts[i]->n = 0;
        if (len < 0 || (size_t)len >= sizeof paths[i]) {
            st = vs_error_set(err, VS_ERR_ARG, "vs_load_tu: path %s/%s_%s too long", dir, prefix, suffix[i]);
            break;
        }
        if (i >= 3 && access(paths[i], F_OK) != 0) continue; /* optional file absent */
        st = vs_read_file_maybe_gz(paths[i], &bufs[i], &parts[i]->n, err);
        parts[i]->data = bufs[i];
    }
    if (!st) st = vs_parse_tu_mem(&f, prefix, out, err);
    for (int i = 0; i < 6; i++) free(bufs[i]);
    return st;
}
