/* tabular.c - a parsed CSV table to a one-hot tabular vs_dataset: column selection, row filtering,
 * schema inference (numeric or categorical), quantile bins, category and class codes, feature
 * names.  Parsing is csv.c; the shared data set presets are tabular_presets.c. */
#include "versus/tabular.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One present cell of a column, for sorting: numeric key first (0 when the column is not all
 * numbers), then the string. */
typedef struct cell_item {
    const char *s;
    double v;
    size_t pos; /* index into the selected rows */
} cell_item;

static int cmp_item(const void *pa, const void *pb)
{
    const cell_item *a = pa, *b = pb;
    if (a->v < b->v) return -1;
    if (a->v > b->v) return 1;
    return strcmp(a->s, b->s);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* How one feature column is encoded: categories or bin edges, plus an optional missing column. */
typedef struct col_code {
    size_t col;
    int numeric;
    const char **cats;   /* [n_cats] borrowed from the table (categorical) */
    size_t n_cats;
    double *edges;       /* [n_edges] ascending (numeric) */
    size_t n_edges;
    int has_missing;
    int64_t *code;       /* [n_sel] minor feature index within the group */
    int64_t width;       /* number of minor features */
} col_code;

static void col_code_clear(col_code *c)
{
    free(c->cats);
    free(c->edges);
    free(c->code);
}

static int in_list(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (strcmp(*list, name) == 0) return 1;
    return 0;
}

/* Sort the present cells of column col over the selected rows and give each distinct string a code
 * in sorted order (numeric order when every value is a number); missing cells get code -1.
 * num, when not NULL, holds the already parsed values of an all-numeric column.  *cats receives the
 * distinct strings (borrowed). */
static vs_status categorize(const vs_csv_table *t, const size_t *sel, size_t n_sel, size_t col, const double *num,
                            int64_t *code, const char ***cats, size_t *n_cats, vs_error *err)
{
    cell_item *it = malloc((n_sel ? n_sel : 1) * sizeof *it);
    if (!it) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory encoding column '%s'", t->source, t->names[col]);
    size_t m = 0;
    int all_num = 1;
    for (size_t i = 0; i < n_sel; i++) {
        const char *s = t->cells[sel[i] * t->n_cols + col];
        code[i] = -1;
        if (!s) continue;
        it[m].s = s;
        it[m].pos = i;
        if (num) it[m].v = num[i];
        else if (all_num && !vs_csv_number(s, &it[m].v)) all_num = 0;
        m++;
    }
    for (size_t k = 0; k < m; k++)
        if (!all_num) it[k].v = 0;
    qsort(it, m, sizeof *it, cmp_item);
    size_t n = 0;
    for (size_t k = 0; k < m; k++) {
        if (k == 0 || strcmp(it[k].s, it[k - 1].s) != 0) n++;
        code[it[k].pos] = (int64_t)n - 1;
    }
    const char **c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        free(it);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory encoding column '%s'", t->source, t->names[col]);
    }
    for (size_t k = 0, j = 0; k < m; k++)
        if (k == 0 || strcmp(it[k].s, it[k - 1].s) != 0) c[j++] = it[k].s;
    free(it);
    *cats = c;
    *n_cats = n;
    return VS_OK;
}

/* Bin edges of the sorted values f[0..m): for j = 1..bins-1 the target is T = j m / bins values
 * below the edge; the candidates are the value at index floor(T) (with lb values below it) and the
 * next larger value (ub below it), and the one whose count is nearer T wins, so ties never split.
 * An edge with nothing below it would make an empty bin and is skipped; repeats are dropped. */
static size_t quantile_edges(const double *f, size_t m, int bins, double *edges)
{
    size_t k = 0;
    for (int j = 1; j < bins && m > 0; j++) {
        double target = (double)j * (double)m / bins;
        size_t i = (size_t)target;
        if (i >= m) i = m - 1;
        size_t lb = i, ub = i;
        while (lb > 0 && f[lb - 1] == f[i]) lb--;
        while (ub < m && f[ub] == f[i]) ub++;
        double e = f[i];
        size_t below = lb;
        if (ub < m && (double)ub - target < target - (double)lb) {
            e = f[ub];
            below = ub;
        }
        if (below == 0 || (k > 0 && e <= edges[k - 1])) continue;
        edges[k++] = e;
    }
    return k;
}

/* Bin of v: the number of edges <= v. */
static int64_t bin_of(double v, const double *edges, size_t n_edges)
{
    size_t lo = 0, hi = n_edges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (edges[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return (int64_t)lo;
}

/* Decide numeric or categorical for one column and compute its codes.  Each cell is parsed once:
 * num[i] is row i's value when the column is all numbers. */
static vs_status encode_column(const vs_csv_table *t, const vs_csv_opts *o, const size_t *sel, size_t n_sel,
                               size_t n_fit, col_code *c, vs_error *err)
{
    const char *name = t->names[c->col];
    size_t n = n_sel ? n_sel : 1;
    double *num = malloc(n * sizeof *num), *sorted = malloc(n * sizeof *sorted);
    c->code = malloc(n * sizeof *c->code);
    vs_status st = VS_OK;
    if (!num || !sorted || !c->code) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory encoding column '%s'", t->source, name);
        goto done;
    }
    int threshold = o->numeric_min_distinct ? o->numeric_min_distinct : 10;
    int bins = o->bins ? o->bins : 5;
    int all_num = 1;
    for (size_t i = 0; i < n_sel && all_num; i++) {
        const char *s = t->cells[sel[i] * t->n_cols + c->col];
        all_num = !s || vs_csv_number(s, &num[i]);
    }
    int numeric = all_num && !in_list(o->categorical, name);
    size_t m = 0; /* present values, sorted */
    if (numeric) {
        for (size_t i = 0; i < n_sel; i++)
            if (t->cells[sel[i] * t->n_cols + c->col]) sorted[m++] = num[i];
        qsort(sorted, m, sizeof *sorted, cmp_double);
        size_t distinct = 0;
        for (size_t k = 0; k < m; k++) distinct += k == 0 || sorted[k] != sorted[k - 1];
        numeric = distinct > (size_t)threshold;
    }
    if (numeric) {
        if (n_fit < n_sel) { /* bin edges come from the fit rows only */
            m = 0;
            for (size_t i = 0; i < n_fit; i++)
                if (t->cells[sel[i] * t->n_cols + c->col]) sorted[m++] = num[i];
            qsort(sorted, m, sizeof *sorted, cmp_double);
        }
        if (!(c->edges = malloc((size_t)bins * sizeof *c->edges))) {
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory encoding column '%s'", t->source, name);
            goto done;
        }
        c->numeric = 1;
        c->n_edges = quantile_edges(sorted, m, bins, c->edges);
        for (size_t i = 0; i < n_sel; i++)
            c->code[i] = t->cells[sel[i] * t->n_cols + c->col] ? bin_of(num[i], c->edges, c->n_edges) : -1;
        c->width = (int64_t)c->n_edges + 1;
    } else {
        st = categorize(t, sel, n_sel, c->col, all_num ? num : NULL, c->code, &c->cats, &c->n_cats, err);
        c->width = (int64_t)c->n_cats;
    }
    if (st == VS_OK) {
        for (size_t i = 0; i < n_sel; i++)
            if (c->code[i] < 0) {
                c->has_missing = 1;
                c->code[i] = c->width;
            }
        c->width += c->has_missing;
    }
done:
    free(num);
    free(sorted);
    return st;
}

/* Shortest %g text that reads back as exactly v, with at least as many digits as v has before the
 * decimal point so that 30 prints as "30", not "3e+01". */
static void fmt_num(char *buf, size_t n, double v)
{
    int digits = 1;
    for (double a = v < 0 ? -v : v; a >= 10 && digits < 17; a /= 10) digits++;
    for (int prec = digits; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* fmt with up to three string arguments, in a new malloc'ed string (NULL when out of memory). */
static char *fmt_str3(const char *fmt, const char *a, const char *b, const char *c)
{
    int len = snprintf(NULL, 0, fmt, a, b, c);
    char *s = len < 0 ? NULL : malloc((size_t)len + 1);
    if (s) snprintf(s, (size_t)len + 1, fmt, a, b, c);
    return s;
}

/* Name of minor feature k of column c ("age in [25,32)", "sex=Male", "workclass=?"). */
static char *minor_name(const char *col, const col_code *c, int64_t k)
{
    char lo[32], hi[32];
    if (c->has_missing && k == c->width - 1) return fmt_str3("%s=?", col, "", "");
    if (!c->numeric) return fmt_str3("%s=%s", col, c->cats[k], "");
    if (c->n_edges == 0) return fmt_str3("%s=any", col, "", "");
    if (k == 0) {
        fmt_num(hi, sizeof hi, c->edges[0]);
        return fmt_str3("%s < %s", col, hi, "");
    }
    fmt_num(lo, sizeof lo, c->edges[k - 1]);
    if ((size_t)k == c->n_edges) return fmt_str3("%s >= %s", col, lo, "");
    fmt_num(hi, sizeof hi, c->edges[k]);
    return fmt_str3("%s in [%s,%s)", col, lo, hi);
}

/* Resolve the label and the feature columns; *feat has room for n_cols entries. */
static vs_status select_columns(const vs_csv_table *t, const vs_csv_opts *o, size_t *label, size_t *feat,
                                size_t *n_feat, vs_error *err)
{
    const char *const *lists[3] = {o->keep, o->drop, o->categorical};
    static const char *const list_names[3] = {"keep", "drop", "categorical"};
    for (int l = 0; l < 3; l++)
        for (const char *const *s = lists[l]; s && *s; s++)
            if (vs_csv_column(t, *s) < 0)
                return vs_error_set(err, VS_ERR_ARG, "%s: no column named '%s' (in the %s list)", t->source, *s,
                                    list_names[l]);
    if (o->label) {
        long j = vs_csv_column(t, o->label);
        if (j < 0) return vs_error_set(err, VS_ERR_ARG, "%s: no label column named '%s'", t->source, o->label);
        if (in_list(o->drop, o->label)) return vs_error_set(err, VS_ERR_ARG, "%s: --drop names the label column '%s'", t->source, o->label);
        *label = (size_t)j;
    } else {
        long j = o->label_index < 0 ? (long)t->n_cols + o->label_index : o->label_index;
        if (j < 0 || (size_t)j >= t->n_cols)
            return vs_error_set(err, VS_ERR_ARG, "%s: label column index %ld out of range (%zu columns)", t->source,
                                o->label_index, t->n_cols);
        *label = (size_t)j;
    }
    size_t n = 0;
    if (o->keep) {
        for (const char *const *s = o->keep; *s; s++) {
            size_t j = (size_t)vs_csv_column(t, *s);
            if (j == *label)
                return vs_error_set(err, VS_ERR_ARG, "%s: keep list names the label column '%s'", t->source, *s);
            for (size_t k = 0; k < n; k++)
                if (feat[k] == j) return vs_error_set(err, VS_ERR_ARG, "%s: keep list names '%s' twice", t->source, *s);
            feat[n++] = j;
        }
    } else {
        for (size_t j = 0; j < t->n_cols; j++)
            if (j != *label && !in_list(o->drop, t->names[j])) feat[n++] = j;
    }
    if (n == 0) return vs_error_set(err, VS_ERR_ARG, "%s: no feature columns left besides the label", t->source);
    *n_feat = n;
    return VS_OK;
}

/* Rows that pass the filter and the missing-value policy. */
static vs_status select_rows(const vs_csv_table *t, const vs_csv_opts *o, size_t label, const size_t *feat,
                             size_t n_feat, size_t *sel, size_t *n_sel, size_t *n_fit, vs_error *err)
{
    size_t fit_end = o->fit_rows ? o->fit_rows : t->n_rows, n = 0, nf = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        if (o->row_filter && !o->row_filter(t, r, o->row_filter_ctx)) continue;
        const char *const *row = (const char *const *)t->cells + r * t->n_cols;
        int missing = !row[label];
        if (missing && !o->drop_missing_rows)
            return vs_error_set(err, VS_ERR_FORMAT, "%s:%lld: the label column '%s' is missing", t->file[r],
                                (long long)t->line[r], t->names[label]);
        for (size_t k = 0; k < n_feat && !missing && o->drop_missing_rows; k++) missing = !row[feat[k]];
        if (missing) continue;
        sel[n++] = r;
        nf += r < fit_end;
    }
    if (n == 0) return vs_error_set(err, VS_ERR_FORMAT, "%s: no rows left to encode", t->source);
    *n_sel = n;
    *n_fit = nf;
    return VS_OK;
}

/* Build the data set from the column codes. */
static vs_status assemble(const vs_csv_table *t, const col_code *cc, size_t n_feat, size_t n_sel, const int64_t *ycode,
                          const char *const *classes, size_t n_classes, vs_dataset *d, vs_error *err)
{
    int64_t dim = 0;
    for (size_t f = 0; f < n_feat; f++) dim += cc[f].width;
    size_t nx;
    if (!vs_size_mul(n_sel, (size_t)dim, &nx) || !vs_size_mul(nx, sizeof(float), &nx))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: %zu rows x %lld columns is too large", t->source, n_sel,
                            (long long)dim);
    char what[256];
    snprintf(what, sizeof what, "%s: %zu rows x %lld one-hot columns", t->source, n_sel, (long long)dim);
    vs_status st = vs_mem_check(nx, 1, what, err);
    if (st != VS_OK) return st;
    d->n = (int64_t)n_sel;
    d->ndim = 1;
    d->shape[0] = d->dim = dim;
    d->X = calloc(nx ? nx : 1, 1);
    d->y = malloc(n_sel * sizeof *d->y);
    d->feature_names = calloc((size_t)dim, sizeof *d->feature_names);
    d->groups = calloc(n_feat, sizeof *d->groups);
    d->class_names = calloc(n_classes ? n_classes : 1, sizeof *d->class_names);
    if (!d->X || !d->y || !d->feature_names || !d->groups || !d->class_names) goto nomem;
    d->n_groups = (int64_t)n_feat;
    d->n_classes = (int64_t)n_classes;
    for (size_t k = 0; k < n_classes; k++)
        if (!(d->class_names[k] = fmt_str3("%s", classes[k], "", ""))) goto nomem;
    int64_t first = 0;
    for (size_t f = 0; f < n_feat; f++) {
        const char *col = t->names[cc[f].col];
        d->groups[f].first = first;
        d->groups[f].count = cc[f].width;
        if (!(d->groups[f].name = fmt_str3("%s", col, "", ""))) goto nomem;
        for (int64_t k = 0; k < cc[f].width; k++)
            if (!(d->feature_names[first + k] = minor_name(col, &cc[f], k))) goto nomem;
        for (size_t i = 0; i < n_sel; i++) d->X[(size_t)i * (size_t)dim + (size_t)(first + cc[f].code[i])] = 1.0f;
        first += cc[f].width;
    }
    for (size_t i = 0; i < n_sel; i++) d->y[i] = ycode[i];
    return VS_OK;
nomem:
    return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory building the data set", t->source);
}

vs_status vs_tabular_encode(const vs_csv_table *t, const vs_csv_opts *o, const char *name, vs_dataset **out,
                            vs_error *err)
{
    vs_csv_opts def = vs_csv_opts_defaults();
    if (!o) o = &def;
    if (!t || !out) return vs_error_set(err, VS_ERR_ARG, "vs_tabular_encode: NULL argument");
    *out = NULL;
    if (o->bins < 0 || o->bins > 1000)
        return vs_error_set(err, VS_ERR_ARG, "%s: bins must be in [1, 1000], got %d", t->source, o->bins);
    if (o->numeric_min_distinct < 0)
        return vs_error_set(err, VS_ERR_ARG, "%s: numeric_min_distinct must be >= 0, got %d", t->source,
                            o->numeric_min_distinct);

    size_t label = 0, n_feat = 0, n_sel = 0, n_fit = 0, n_classes = 0;
    size_t *feat = malloc((t->n_cols ? t->n_cols : 1) * sizeof *feat);
    size_t *sel = malloc((t->n_rows ? t->n_rows : 1) * sizeof *sel);
    col_code *cc = NULL;
    int64_t *ycode = NULL;
    const char **classes = NULL;
    vs_dataset *d = NULL;
    vs_status st;
    if (!feat || !sel) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", t->source);
        goto done;
    }
    if ((st = select_columns(t, o, &label, feat, &n_feat, err)) != VS_OK) goto done;
    if ((st = select_rows(t, o, label, feat, n_feat, sel, &n_sel, &n_fit, err)) != VS_OK) goto done;
    cc = calloc(n_feat, sizeof *cc);
    ycode = malloc(n_sel * sizeof *ycode);
    if (!cc || !ycode) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", t->source);
        goto done;
    }
    for (size_t f = 0; f < n_feat; f++) {
        cc[f].col = feat[f];
        if ((st = encode_column(t, o, sel, n_sel, n_fit, &cc[f], err)) != VS_OK) goto done;
    }
    if ((st = categorize(t, sel, n_sel, label, NULL, ycode, &classes, &n_classes, err)) != VS_OK) goto done;
    if (!(d = vs_dataset_new(VS_DATA_TABULAR, name ? name : t->source))) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", t->source);
        goto done;
    }
    st = assemble(t, cc, n_feat, n_sel, ycode, classes, n_classes, d, err);
done:
    if (cc)
        for (size_t f = 0; f < n_feat; f++) col_code_clear(&cc[f]);
    free(cc);
    free(ycode);
    free(classes);
    free(feat);
    free(sel);
    if (st != VS_OK) {
        vs_dataset_free(d);
        return st;
    }
    *out = d;
    return VS_OK;
}

vs_status vs_load_csv(const char *path, const vs_csv_opts *o, vs_dataset **out, vs_error *err)
{
    if (!path || !out) return vs_error_set(err, VS_ERR_ARG, "vs_load_csv: NULL argument");
    *out = NULL;
    vs_csv_table *t;
    vs_status st = vs_csv_parse_file(path, o, &t, err);
    if (st != VS_OK) return st;
    /* The data set is named after the file: "/data/bank-full.csv" -> "bank-full". */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base) len = (size_t)(dot - base);
    char *name = malloc(len + 1);
    if (!name) {
        vs_csv_table_free(t);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(name, base, len);
    name[len] = '\0';
    st = vs_tabular_encode(t, o, name, out, err);
    free(name);
    vs_csv_table_free(t);
    return st;
}
