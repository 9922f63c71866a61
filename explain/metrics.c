/* metrics.c - perturbation curves, AOPC, Gini sparsity, faithfulness, monotonicity, inverse
 * localisation, SSIM and the cascading-randomisation sanity check. */
#include "explain/internal.h"
#include "versus/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vs_perturb_opts_init(vs_perturb_opts *o)
{
    memset(o, 0, sizeof *o);
    o->contrast = -1;
    o->per_step = 1;
    o->batch = 64;
}

/* A job that only scores rows: the metric functions reuse the explainers' batching. */
static vs_status metric_job(const vs_model_fn *m, const vs_tensor *x, const vs_perturb_opts *po, vs_explain_request *rq,
                            vs_attr_job *j, vs_error *err)
{
    vs_explain_request_init(rq);
    rq->batch = po->batch > 0 ? po->batch : 64;
    memset(j, 0, sizeof *j);
    j->m = m;
    j->r = rq;
    j->x = (vs_tensor *)x;
    j->target = po->target;
    j->contrast = po->contrast;
    j->err = err;
    if (!x || x->ndim < 2 || x->shape[0] != 1) return vs_error_set(err, VS_ERR_SHAPE, "metrics: input must be one example [1, ...]");
    j->dim = x->size;
    if (po->replace && po->replace->size != j->dim)
        return vs_error_set(err, VS_ERR_SHAPE, "metrics: replacement has %lld elements, the input %lld", (long long)po->replace->size,
                            (long long)j->dim);
    return VS_OK;
}

static float flipped(const vs_perturb_opts *o, const vs_tensor *x, int64_t i)
{
    return o->replace ? o->replace->data[i] : 1.0f - x->data[i];
}

typedef struct keyed {
    double v;
    int64_t i;
} keyed;

/* Decreasing value, NaN after every number (a total order, as qsort needs); equal values by
 * increasing index, so orders are reproducible. */
static int keyed_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    bool nx = isnan(x->v), ny = isnan(y->v);
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : 1;
}

/* Indices sorted by decreasing value. */
static int64_t *order_desc(const float *v, int64_t n)
{
    keyed *k = malloc((size_t)n * sizeof *k);
    int64_t *idx = malloc((size_t)n * sizeof *idx);
    if (k && idx) {
        for (int64_t i = 0; i < n; i++) k[i] = (keyed){v[i], i};
        qsort(k, (size_t)n, sizeof *k, keyed_desc);
        for (int64_t i = 0; i < n; i++) idx[i] = k[i].i;
    } else {
        free(idx);
        idx = NULL;
    }
    free(k);
    return idx;
}

vs_status vs_perturbation_curve(const vs_model_fn *m, const vs_tensor *x, const vs_tensor *attr, const vs_perturb_opts *o,
                                double **curve, int64_t *n_points, vs_error *err)
{
    *curve = NULL;
    vs_explain_request rq;
    vs_attr_job j;
    vs_status st = metric_job(m, x, o, &rq, &j, err);
    if (st != VS_OK) return st;
    if (!attr || attr->size != j.dim) return vs_error_set(err, VS_ERR_SHAPE, "perturbation curve: attributions and input differ in size");
    int64_t per = o->per_step > 0 ? o->per_step : 1;
    int64_t np = (j.dim + per - 1) / per + 1;
    int64_t *idx = order_desc(attr->data, j.dim);
    float *rows = malloc((size_t)(np * j.dim) * sizeof *rows);
    double *c = malloc((size_t)np * sizeof *c);
    if (!idx || !rows || !c) {
        free(idx);
        free(rows);
        free(c);
        return vs_error_set(err, VS_ERR_NOMEM, "perturbation curve: out of memory");
    }
    memcpy(rows, x->data, (size_t)j.dim * sizeof(float));
    for (int64_t k = 1; k < np; k++) {
        float *row = rows + k * j.dim;
        memcpy(row, row - j.dim, (size_t)j.dim * sizeof(float));
        for (int64_t q = (k - 1) * per; q < k * per && q < j.dim; q++) row[idx[q]] = flipped(o, x, idx[q]);
    }
    st = vs_job_scores(&j, rows, np, c);
    free(idx);
    free(rows);
    if (st != VS_OK) {
        free(c);
        return st;
    }
    *curve = c;
    *n_points = np;
    return VS_OK;
}

double vs_aopc(const double *curve, int64_t n_points, int64_t L)
{
    if (n_points < 1) return NAN;
    if (L < 0 || L >= n_points) L = n_points - 1;
    double s = 0;
    for (int64_t k = 0; k <= L; k++) s += curve[0] - curve[k];
    return s / (double)(L + 1);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double vs_gini(const float *a, int64_t n)
{
    if (n < 1) return NAN;
    float *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    double l1 = 0;
    for (int64_t i = 0; i < n; i++) {
        s[i] = fabsf(a[i]);
        l1 += s[i];
    }
    if (l1 == 0) {
        free(s);
        return 0;
    }
    qsort(s, (size_t)n, sizeof *s, cmp_float);
    double g = 0;
    for (int64_t i = 0; i < n; i++) g += (s[i] / l1) * ((double)(n - (i + 1)) + 0.5) / (double)n;
    free(s);
    return 1 - 2 * g;
}

double vs_pearson(const double *x, const double *y, int64_t n)
{
    if (n < 2) return NAN;
    double mx = 0, my = 0;
    for (int64_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* Ranks 1..n (ties share their mean rank). */
static bool ranks(const double *v, int64_t n, double *r)
{
    keyed *k = malloc((size_t)n * sizeof *k);
    if (!k) return false;
    for (int64_t i = 0; i < n; i++) k[i] = (keyed){-v[i], i}; /* decreasing -v = increasing v */
    qsort(k, (size_t)n, sizeof *k, keyed_desc);
    for (int64_t i = 0; i < n;) {
        int64_t q = i;
        while (q + 1 < n && k[q + 1].v == k[i].v) q++;
        double mean = 0.5 * (double)(i + q) + 1;
        for (int64_t p = i; p <= q; p++) r[k[p].i] = mean;
        i = q + 1;
    }
    free(k);
    return true;
}

double vs_spearman(const double *x, const double *y, int64_t n)
{
    double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
    double out = NAN;
    if (rx && ry && ranks(x, n, rx) && ranks(y, n, ry)) out = vs_pearson(rx, ry, n);
    free(rx);
    free(ry);
    return out;
}

vs_status vs_single_feature_effects(const vs_model_fn *m, const vs_tensor *x, const vs_perturb_opts *o, double *e, vs_error *err)
{
    vs_explain_request rq;
    vs_attr_job j;
    vs_status st = metric_job(m, x, o, &rq, &j, err);
    if (st != VS_OK) return st;
    int64_t chunk = rq.batch;
    float *rows = malloc((size_t)(chunk * j.dim) * sizeof *rows);
    double s0;
    st = rows ? vs_job_scores(&j, x->data, 1, &s0) : vs_error_set(err, VS_ERR_NOMEM, "single-feature effects: out of memory");
    for (int64_t i0 = 0; i0 < j.dim && st == VS_OK; i0 += chunk) {
        int64_t n = j.dim - i0 < chunk ? j.dim - i0 : chunk;
        for (int64_t r = 0; r < n; r++) {
            memcpy(rows + r * j.dim, x->data, (size_t)j.dim * sizeof(float));
            rows[r * j.dim + i0 + r] = flipped(o, x, i0 + r);
        }
        st = vs_job_scores(&j, rows, n, e + i0);
    }
    for (int64_t i = 0; i < j.dim && st == VS_OK; i++) e[i] = s0 - e[i];
    free(rows);
    return st;
}

vs_status vs_faithfulness_monotonicity(const vs_model_fn *m, const vs_tensor *x, const vs_tensor *attr, const vs_perturb_opts *o,
                                       double *faithfulness, double *monotonicity, vs_error *err)
{
    if (!x || !attr || attr->size != x->size) return vs_error_set(err, VS_ERR_SHAPE, "faithfulness: attributions and input differ in size");
    int64_t dim = x->size;
    double *e = malloc((size_t)dim * sizeof *e), *a = calloc((size_t)dim, sizeof *a), *ae = calloc((size_t)dim, sizeof *ae);
    vs_status st = e && a && ae ? vs_single_feature_effects(m, x, o, e, err) : vs_error_set(err, VS_ERR_NOMEM, "faithfulness: out of memory");
    if (st == VS_OK) {
        for (int64_t i = 0; i < dim; i++) a[i] = attr->data[i];
        *faithfulness = vs_pearson(a, e, dim);
        for (int64_t i = 0; i < dim; i++) {
            a[i] = fabs(a[i]);
            ae[i] = fabs(e[i]);
        }
        *monotonicity = vs_spearman(a, ae, dim);
    }
    free(e);
    free(a);
    free(ae);
    return st;
}

double vs_inverse_localization(const float *a, int64_t c, int64_t h, int64_t w, int64_t edge)
{
    if (edge < 1 || 2 * edge >= w) return NAN;
    double se = 0, sc = 0;
    int64_t ne = 0, nc = 0;
    for (int64_t k = 0; k < c; k++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                double v = fabs(a[(k * h + y) * w + x]);
                if (x < edge || x >= w - edge) {
                    se += v;
                    ne++;
                } else {
                    sc += v;
                    nc++;
                }
            }
    return sc > 0 ? (se / (double)ne) / (sc / (double)nc) : NAN;
}

double vs_ssim(const float *a, const float *b, int64_t h, int64_t w)
{
    const int win = 7, half = 3;
    if (h < win || w < win) return NAN;
    double ma = 0, mb = 0;
    for (int64_t i = 0; i < h * w; i++) {
        ma = fmax(ma, fabs(a[i]));
        mb = fmax(mb, fabs(b[i]));
    }
    double sa = ma > 0 ? 1 / ma : 0, sb = mb > 0 ? 1 / mb : 0;
    const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03, np = win * win, cov = np / (np - 1);
    double total = 0;
    int64_t count = 0;
    for (int64_t y = half; y < h - half; y++)
        for (int64_t x = half; x < w - half; x++) {
            double m1 = 0, m2 = 0, s11 = 0, s22 = 0, s12 = 0;
            for (int dy = -half; dy <= half; dy++)
                for (int dx = -half; dx <= half; dx++) {
                    double p = fabs(a[(y + dy) * w + x + dx]) * sa, q = fabs(b[(y + dy) * w + x + dx]) * sb;
                    m1 += p;
                    m2 += q;
                    s11 += p * p;
                    s22 += q * q;
                    s12 += p * q;
                }
            m1 /= np;
            m2 /= np;
            double v1 = cov * (s11 / np - m1 * m1), v2 = cov * (s22 / np - m2 * m2), v12 = cov * (s12 / np - m1 * m2);
            total += ((2 * m1 * m2 + c1) * (2 * v12 + c2)) / ((m1 * m1 + m2 * m2 + c1) * (v1 + v2 + c2));
            count++;
        }
    return total / (double)count;
}

vs_status vs_cascading_randomization(vs_tensor *const *const *layers, const int *n_params, int n_layers, vs_attribute_cb attribute,
                                     void *ctx, int64_t map_h, int64_t map_w, vs_rng *r, double *rank, double *ssim, vs_error *err)
{
    /* Save every parameter so the model is left as it was found. */
    int64_t total = 0;
    for (int k = 0; k < n_layers; k++)
        for (int p = 0; p < n_params[k]; p++) total += layers[k][p]->size;
    float *saved = malloc((size_t)(total ? total : 1) * sizeof *saved);
    if (!saved) return vs_error_set(err, VS_ERR_NOMEM, "cascading randomisation: out of memory");
    int64_t off = 0;
    for (int k = 0; k < n_layers; k++)
        for (int p = 0; p < n_params[k]; p++) {
            memcpy(saved + off, layers[k][p]->data, (size_t)layers[k][p]->size * sizeof(float));
            off += layers[k][p]->size;
        }
    vs_tensor *orig = NULL;
    vs_status st = attribute(ctx, &orig);
    if (st != VS_OK && err && err->code == VS_OK) vs_error_set(err, st, "cascading randomisation: attribution failed");
    double *da = NULL, *db = NULL;
    if (st == VS_OK) {
        da = malloc((size_t)orig->size * sizeof *da);
        db = malloc((size_t)orig->size * sizeof *db);
        if (!da || !db) st = vs_error_set(err, VS_ERR_NOMEM, "cascading randomisation: out of memory");
        else
            for (int64_t i = 0; i < orig->size; i++) da[i] = fabs(orig->data[i]);
    }
    for (int k = 0; k < n_layers && st == VS_OK; k++) {
        for (int p = 0; p < n_params[k]; p++) {
            vs_tensor *t = layers[k][p];
            double norm = 0, gn = 0;
            for (int64_t i = 0; i < t->size; i++) norm += (double)t->data[i] * t->data[i];
            for (int64_t i = 0; i < t->size; i++) {
                t->data[i] = (float)vs_rng_normal(r);
                gn += (double)t->data[i] * t->data[i];
            }
            double scale = gn > 0 ? sqrt(norm / gn) : 0;
            for (int64_t i = 0; i < t->size; i++) t->data[i] = (float)(t->data[i] * scale);
        }
        vs_tensor *rand_map = NULL;
        st = attribute(ctx, &rand_map);
        if (st != VS_OK) break;
        for (int64_t i = 0; i < rand_map->size; i++) db[i] = fabs(rand_map->data[i]);
        rank[k] = vs_spearman(da, db, orig->size);
        /* SSIM on the channel-averaged map */
        int64_t hw = map_h * map_w, ch = hw > 0 ? orig->size / hw : 0;
        float *ma = calloc((size_t)(hw ? hw : 1), sizeof *ma), *mb = calloc((size_t)(hw ? hw : 1), sizeof *mb);
        if (ma && mb && ch > 0) {
            for (int64_t c = 0; c < ch; c++)
                for (int64_t i = 0; i < hw; i++) {
                    ma[i] += (float)da[c * hw + i];
                    mb[i] += (float)db[c * hw + i];
                }
            ssim[k] = vs_ssim(ma, mb, map_h, map_w);
        } else {
            ssim[k] = NAN;
        }
        free(ma);
        free(mb);
        vs_tensor_free(rand_map);
    }
    off = 0;
    for (int k = 0; k < n_layers; k++)
        for (int p = 0; p < n_params[k]; p++) {
            memcpy(layers[k][p]->data, saved + off, (size_t)layers[k][p]->size * sizeof(float));
            off += layers[k][p]->size;
        }
    free(saved);
    free(da);
    free(db);
    vs_tensor_free(orig);
    return st;
}
