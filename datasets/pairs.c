/* datasets/pairs.c - stratified splits, SNX pairing (Sec. IV-H), balanced random pairs, subsets.
 *
 * Pairing works on a class index of one portion: the portion's rows grouped by class (portion
 * order kept inside a class), so "another row of class c" and "a row of another class" are both a
 * uniform integer mapped around one contiguous block. */
#include "versus/pairs.h"

#include <stdlib.h>
#include <string.h>

#include "datasets/synth_common.h"

void vs_pairs_free(vs_pairs *p)
{
    if (!p) return;
    free(p->idx);
    free(p->label);
    free(p);
}

/* ---- class index of a portion ---------------------------------------------------------------- */

typedef struct class_index {
    int64_t n;          /* rows in the portion */
    int64_t k;          /* classes */
    int64_t *row;       /* [n] portion rows grouped by class */
    int64_t *start;     /* [k + 1] class c occupies row[start[c] .. start[c + 1]) */
    int64_t *slot;      /* [n] where portion element p landed in row[] */
} class_index;

static void class_index_free(class_index *ci)
{
    free(ci->row);
    free(ci->start);
    free(ci->slot);
}

static int64_t class_size(const class_index *ci, int64_t c) { return ci->start[c + 1] - ci->start[c]; }

/* Validate labels and portion (rows in [0, n), no repeats) and group the portion by class. */
static vs_status class_index_build(class_index *ci, const char *fn, const int64_t *y, int64_t n, int64_t n_classes,
                                   const int64_t *portion, int64_t n_portion, vs_error *err)
{
    memset(ci, 0, sizeof *ci);
    if (!y || n < 0 || n_classes < 1)
        return vs_error_set(err, VS_ERR_ARG, "%s: expected labels y with n >= 0 (got %lld) and n_classes >= 1 (got %lld)",
                            fn, (long long)n, (long long)n_classes);
    if (!portion) n_portion = n;
    if (n_portion < 0) return vs_error_set(err, VS_ERR_ARG, "%s: n_portion = %lld < 0", fn, (long long)n_portion);
    ci->n = n_portion;
    ci->k = n_classes;
    uint8_t *seen = vs_data_calloc((size_t)n, 1, fn, err);
    ci->row = vs_data_calloc((size_t)n_portion, sizeof *ci->row, fn, err);
    ci->slot = vs_data_calloc((size_t)n_portion, sizeof *ci->slot, fn, err);
    ci->start = vs_data_calloc((size_t)n_classes + 1, sizeof *ci->start, fn, err);
    vs_status st = VS_ERR_NOMEM;
    if (!seen || !ci->row || !ci->slot || !ci->start) goto done;
    for (int64_t p = 0; p < n_portion; p++) {
        int64_t r = portion ? portion[p] : p;
        if (r < 0 || r >= n) {
            st = vs_error_set(err, VS_ERR_ARG, "%s: portion[%lld] = %lld, expected a row in [0, %lld)", fn, (long long)p,
                              (long long)r, (long long)n);
            goto done;
        }
        if (seen[r]) {
            st = vs_error_set(err, VS_ERR_ARG, "%s: portion[%lld] = %lld appears twice", fn, (long long)p, (long long)r);
            goto done;
        }
        seen[r] = 1;
        if (y[r] < 0 || y[r] >= n_classes) {
            st = vs_error_set(err, VS_ERR_ARG, "%s: y[%lld] = %lld, expected a class in [0, %lld)", fn, (long long)r,
                              (long long)y[r], (long long)n_classes);
            goto done;
        }
        ci->start[y[r] + 1]++;
    }
    for (int64_t c = 0; c < n_classes; c++) ci->start[c + 1] += ci->start[c];
    /* Counting sort, stable: class c fills row[start[c] ...] in portion order. */
    int64_t *fill = vs_data_calloc((size_t)n_classes, sizeof *fill, fn, err);
    if (!fill) goto done;
    for (int64_t p = 0; p < n_portion; p++) {
        int64_t r = portion ? portion[p] : p, c = y[r];
        ci->slot[p] = ci->start[c] + fill[c]++;
        ci->row[ci->slot[p]] = r;
    }
    free(fill);
    st = VS_OK;
done:
    free(seen);
    if (st != VS_OK) class_index_free(ci);
    return st;
}

/* A uniform row of class c other than the one at slot q (class c needs >= 2 rows). */
static int64_t other_same(const class_index *ci, int64_t c, int64_t q, uint64_t u)
{
    int64_t j = ci->start[c] + (int64_t)u;
    return ci->row[j >= q ? j + 1 : j];
}

/* Row number u (< n - size(c)) among the rows of classes other than c. */
static int64_t other_class(const class_index *ci, int64_t c, uint64_t u)
{
    int64_t j = (int64_t)u;
    return ci->row[j >= ci->start[c] ? j + class_size(ci, c) : j];
}

/* Floyd's sampling: k distinct integers of [0, m) into out[0..k), k <= m. */
static void sample_distinct(vs_rng *r, uint64_t m, int64_t k, uint64_t *out)
{
    for (int64_t i = 0; i < k; i++) {
        uint64_t j = m - (uint64_t)k + (uint64_t)i;
        uint64_t t = vs_rng_below(r, j + 1);
        for (int64_t q = 0; q < i; q++)
            if (out[q] == t) {
                t = j;
                break;
            }
        out[i] = t;
    }
}

static vs_status pairs_alloc(int64_t n_pairs, const char *fn, vs_pairs **out, vs_error *err)
{
    size_t twice;
    if (!vs_size_mul((size_t)n_pairs, 2, &twice))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: %lld pairs overflow", fn, (long long)n_pairs);
    vs_pairs *p = vs_data_calloc(1, sizeof *p, fn, err);
    if (!p) return VS_ERR_NOMEM;
    p->idx = vs_data_calloc(twice, sizeof *p->idx, fn, err);
    p->label = vs_data_calloc((size_t)n_pairs, sizeof *p->label, fn, err);
    if (!p->idx || !p->label) {
        vs_pairs_free(p);
        return VS_ERR_NOMEM;
    }
    p->n = n_pairs;
    *out = p;
    return VS_OK;
}

/* Pair k = (s, t) with label 1[y_s == y_t]. */
static void set_pair(vs_pairs *pr, int64_t k, int64_t s, int64_t t, const int64_t *y)
{
    pr->idx[2 * k] = s;
    pr->idx[2 * k + 1] = t;
    pr->label[k] = y[s] == y[t];
}

/* ---- splits ---------------------------------------------------------------------------------- */

vs_status vs_split_stratified(const int64_t *y, int64_t n, int64_t n_classes, double train_frac, vs_rng *rng,
                              int64_t **train, int64_t *n_train, int64_t **test, int64_t *n_test, vs_error *err)
{
    const char *fn = "split_stratified";
    *train = *test = NULL;
    *n_train = *n_test = 0;
    if (!rng) return vs_error_set(err, VS_ERR_ARG, "%s: rng is NULL", fn);
    if (!(train_frac > 0.0 && train_frac < 1.0))
        return vs_error_set(err, VS_ERR_ARG, "%s: train_frac = %g, expected (0, 1)", fn, train_frac);
    class_index ci;
    vs_status st = class_index_build(&ci, fn, y, n, n_classes, NULL, n, err);
    if (st != VS_OK) return st;
    uint8_t *in_train = vs_data_calloc((size_t)n, 1, fn, err);
    size_t *perm = vs_data_calloc((size_t)n, sizeof *perm, fn, err);
    int64_t *tr = NULL, *te = NULL;
    st = VS_ERR_NOMEM;
    if (!in_train || !perm) goto done;
    int64_t ntr = 0;
    for (int64_t c = 0; c < n_classes; c++) {
        int64_t nc = class_size(&ci, c);
        /* round(train_frac * nc) in two exactly specified steps, then keep both portions non-empty. */
        double want = train_frac * (double)nc;
        int64_t k = (int64_t)want;
        if (want - (double)k >= 0.5) k++;
        if (nc >= 2 && k < 1) k = 1;
        if (nc >= 2 && k > nc - 1) k = nc - 1;
        for (int64_t j = 0; j < nc; j++) perm[j] = (size_t)j;
        vs_rng_shuffle(rng, perm, (size_t)nc);
        for (int64_t j = 0; j < k; j++) in_train[ci.row[ci.start[c] + (int64_t)perm[j]]] = 1;
        ntr += k;
    }
    tr = vs_data_calloc((size_t)ntr, sizeof *tr, fn, err);
    te = vs_data_calloc((size_t)(n - ntr), sizeof *te, fn, err);
    if (!tr || !te) goto done;
    for (int64_t i = 0, a = 0, b = 0; i < n; i++) {
        if (in_train[i]) tr[a++] = i;
        else te[b++] = i;
    }
    *train = tr;
    *test = te;
    *n_train = ntr;
    *n_test = n - ntr;
    tr = te = NULL;
    st = VS_OK;
done:
    free(tr);
    free(te);
    free(in_train);
    free(perm);
    class_index_free(&ci);
    return st;
}

/* ---- SNX pairs ------------------------------------------------------------------------------- */

vs_status vs_pairs_snx(const int64_t *y, int64_t n, int64_t n_classes, const int64_t *portion, int64_t n_portion,
                       int64_t n_same, int64_t n_diff, vs_rng *rng, vs_pairs **out, vs_error *err)
{
    const char *fn = "pairs_snx";
    *out = NULL;
    if (!rng) return vs_error_set(err, VS_ERR_ARG, "%s: rng is NULL", fn);
    if (n_same < 0 || n_diff < 0 || n_same + n_diff < 1 || n_same > 1024 || n_diff > 1024)
        return vs_error_set(err, VS_ERR_ARG, "%s: n_same = %lld, n_diff = %lld, expected 0..1024 each, not both 0", fn,
                            (long long)n_same, (long long)n_diff);
    class_index ci;
    vs_status st = class_index_build(&ci, fn, y, n, n_classes, portion, n_portion, err);
    if (st != VS_OK) return st;
    uint64_t *pick = NULL;
    for (int64_t c = 0; c < n_classes; c++) {
        int64_t nc = class_size(&ci, c);
        if (nc == 0) continue;
        if (nc - 1 < n_same) {
            st = vs_error_set(err, VS_ERR_ARG,
                              "%s: class %lld has %lld rows in the portion, needs >= %lld (%lld same-class partners + itself)",
                              fn, (long long)c, (long long)nc, (long long)(n_same + 1), (long long)n_same);
            goto done;
        }
        if (ci.n - nc < n_diff) {
            st = vs_error_set(err, VS_ERR_ARG,
                              "%s: class %lld: only %lld rows of other classes in the portion, needs >= %lld", fn,
                              (long long)c, (long long)(ci.n - nc), (long long)n_diff);
            goto done;
        }
    }
    const int64_t per = n_same + n_diff;
    size_t total;
    if (!vs_size_mul((size_t)ci.n, (size_t)per, &total)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: pair count overflows", fn);
        goto done;
    }
    pick = vs_data_calloc((size_t)per, sizeof *pick, fn, err);
    if (!pick || (st = pairs_alloc((int64_t)total, fn, out, err)) != VS_OK) {
        st = VS_ERR_NOMEM;
        goto done;
    }
    vs_pairs *pr = *out;
    for (int64_t p = 0; p < ci.n; p++) {
        int64_t q = ci.slot[p], s = ci.row[q], c = y[s];
        sample_distinct(rng, (uint64_t)(class_size(&ci, c) - 1), n_same, pick);
        sample_distinct(rng, (uint64_t)(ci.n - class_size(&ci, c)), n_diff, pick + n_same);
        for (int64_t j = 0; j < per; j++) {
            int64_t t = j < n_same ? other_same(&ci, c, q, pick[j]) : other_class(&ci, c, pick[j]);
            set_pair(pr, p * per + j, s, t, y);
        }
    }
    st = VS_OK;
done:
    free(pick);
    class_index_free(&ci);
    return st;
}

/* ---- balanced random pairs ------------------------------------------------------------------- */

vs_status vs_pairs_random(const int64_t *y, int64_t n, int64_t n_classes, const int64_t *portion, int64_t n_portion,
                          int64_t n_pairs, vs_rng *rng, vs_pairs **out, vs_error *err)
{
    const char *fn = "pairs_random";
    *out = NULL;
    if (!rng) return vs_error_set(err, VS_ERR_ARG, "%s: rng is NULL", fn);
    if (n_pairs < 0) return vs_error_set(err, VS_ERR_ARG, "%s: n_pairs = %lld < 0", fn, (long long)n_pairs);
    class_index ci;
    vs_status st = class_index_build(&ci, fn, y, n, n_classes, portion, n_portion, err);
    if (st != VS_OK) return st;
    /* Rows that can start a positive pair: those of classes with >= 2 rows, as slots into ci.row. */
    int64_t *pos_slot = vs_data_calloc((size_t)ci.n, sizeof *pos_slot, fn, err);
    int64_t n_pos = 0, present = 0;
    if (!pos_slot) {
        st = VS_ERR_NOMEM;
        goto done;
    }
    for (int64_t c = 0; c < n_classes; c++) {
        present += class_size(&ci, c) > 0;
        if (class_size(&ci, c) >= 2)
            for (int64_t j = ci.start[c]; j < ci.start[c + 1]; j++) pos_slot[n_pos++] = j;
    }
    if (n_pairs >= 1 && n_pos == 0) {
        st = vs_error_set(err, VS_ERR_ARG, "%s: no class has 2 rows in the portion (%lld rows), positives impossible",
                          fn, (long long)ci.n);
        goto done;
    }
    if (n_pairs >= 2 && present < 2) {
        st = vs_error_set(err, VS_ERR_ARG, "%s: the portion holds %lld class(es), negatives need 2", fn,
                          (long long)present);
        goto done;
    }
    if ((st = pairs_alloc(n_pairs, fn, out, err)) != VS_OK) goto done;
    vs_pairs *pr = *out;
    for (int64_t k = 0; k < n_pairs; k++) {
        int64_t s, t;
        if (k % 2 == 0) {
            int64_t q = pos_slot[vs_rng_below(rng, (uint64_t)n_pos)];
            s = ci.row[q];
            t = other_same(&ci, y[s], q, vs_rng_below(rng, (uint64_t)(class_size(&ci, y[s]) - 1)));
        } else {
            s = ci.row[vs_rng_below(rng, (uint64_t)ci.n)];
            t = other_class(&ci, y[s], vs_rng_below(rng, (uint64_t)(ci.n - class_size(&ci, y[s]))));
        }
        set_pair(pr, k, s, t, y);
    }
    st = VS_OK;
done:
    free(pos_slot);
    class_index_free(&ci);
    return st;
}

/* ---- subsets --------------------------------------------------------------------------------- */

/* *dst = copy of count elements of size bytes at src (NULL stays NULL); 0 on allocation failure. */
static int copy_array(void *dst, const void *src, size_t count, size_t size, vs_error *err)
{
    void **d = dst;
    *d = NULL;
    if (!src) return 1;
    if (!(*d = vs_data_calloc(count, size, "dataset_subset", err))) return 0;
    memcpy(*d, src, count * size);   /* count * size was checked by vs_data_calloc */
    return 1;
}

static int copy_graph(vs_graph *dst, const vs_graph *src, int64_t n_node_features, vs_error *err)
{
    size_t ne = (size_t)src->n_edges, nx;
    if (!vs_size_mul((size_t)src->n_nodes, (size_t)n_node_features, &nx)) {
        vs_error_set(err, VS_ERR_NOMEM, "dataset_subset: graph node features overflow");
        return 0;
    }
    dst->n_nodes = src->n_nodes;
    dst->n_edges = src->n_edges;
    return copy_array(&dst->src, src->src, ne, sizeof *src->src, err) &&
           copy_array(&dst->dst, src->dst, ne, sizeof *src->dst, err) &&
           copy_array(&dst->rev, src->rev, ne, sizeof *src->rev, err) &&
           copy_array(&dst->x, src->x, nx, sizeof *src->x, err) &&
           copy_array(&dst->edge_label, src->edge_label, ne, sizeof *src->edge_label, err) &&
           copy_array(&dst->edge_truth, src->edge_truth, ne, sizeof *src->edge_truth, err);
}

static int copy_groups(vs_dataset *o, const vs_dataset *d, vs_error *err)
{
    if (!d->groups) return 1;
    if (!(o->groups = vs_data_calloc((size_t)d->n_groups, sizeof *o->groups, "dataset_subset", err))) return 0;
    o->n_groups = d->n_groups;
    for (int64_t g = 0; g < d->n_groups; g++) {
        o->groups[g] = d->groups[g];
        o->groups[g].name = NULL;
        if (d->groups[g].name && !(o->groups[g].name = strdup(d->groups[g].name))) {
            vs_error_set(err, VS_ERR_NOMEM, "dataset_subset: out of memory copying group names");
            return 0;
        }
    }
    return 1;
}

vs_status vs_dataset_subset(const vs_dataset *d, const int64_t *idx, int64_t n_idx, vs_dataset **out, vs_error *err)
{
    const char *fn = "dataset_subset";
    *out = NULL;
    if (!d || (!idx && n_idx > 0) || n_idx < 0)
        return vs_error_set(err, VS_ERR_ARG, "%s: expected a data set and %lld indices", fn, (long long)n_idx);
    for (int64_t i = 0; i < n_idx; i++)
        if (idx[i] < 0 || idx[i] >= d->n)
            return vs_error_set(err, VS_ERR_ARG, "%s: idx[%lld] = %lld, expected a row in [0, %lld)", fn, (long long)i,
                                (long long)idx[i], (long long)d->n);
    vs_dataset *o = vs_data_new(d->kind, d->name, err);
    if (!o) return VS_ERR_NOMEM;
    o->ndim = d->ndim;
    memcpy(o->shape, d->shape, sizeof o->shape);
    o->n_node_features = d->n_node_features;
    int ok = 1;
    if (d->class_names) {
        ok = vs_data_set_classes(o, d->n_classes, (const char *const *)d->class_names, err) == VS_OK;
    } else {
        o->n_classes = d->n_classes;
    }
    if (ok && d->feature_names) {
        ok = (o->feature_names = vs_data_strings_copy((const char *const *)d->feature_names, d->dim, fn, err)) != NULL;
    }
    o->dim = d->dim;   /* after feature_names: vs_dataset_free reads dim names */
    ok = ok && copy_groups(o, d, err) &&
         copy_array(&o->feature_truth, d->feature_truth, (size_t)d->dim, sizeof *d->feature_truth, err) &&
         copy_array(&o->group_truth, d->group_truth, (size_t)d->n_groups, sizeof *d->group_truth, err);
    if (ok && d->y) ok = (o->y = vs_data_calloc((size_t)n_idx, sizeof *o->y, fn, err)) != NULL;
    size_t cells = 0;
    if (ok && d->X) {
        if (!vs_size_mul((size_t)n_idx, (size_t)d->dim, &cells)) {
            vs_error_set(err, VS_ERR_NOMEM, "%s: n x dim overflows", fn);
            ok = 0;
        } else {
            ok = (o->X = vs_data_calloc(cells, sizeof *o->X, fn, err)) != NULL;
        }
    }
    if (ok && d->graphs) ok = (o->graphs = vs_data_calloc((size_t)n_idx, sizeof *o->graphs, fn, err)) != NULL;
    o->n = n_idx;
    for (int64_t i = 0; ok && i < n_idx; i++) {
        int64_t r = idx[i];
        if (o->y) o->y[i] = d->y[r];
        if (o->X) memcpy(o->X + (size_t)i * (size_t)d->dim, d->X + (size_t)r * (size_t)d->dim, (size_t)d->dim * sizeof *o->X);
        if (o->graphs) ok = copy_graph(&o->graphs[i], &d->graphs[r], d->n_node_features, err);
    }
    if (!ok) {
        vs_dataset_free(o);
        return err && err->code != VS_OK ? err->code : VS_ERR_NOMEM;
    }
    *out = o;
    return VS_OK;
}
