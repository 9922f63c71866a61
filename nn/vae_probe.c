/* vae_probe.c - a trained VAE seen from outside the training loop: encoder and decoder as
 * functions, latent traversal grids as PNG, and DIP-VAE's disentanglement scores (label-free
 * off-diagonal covariance mass; supervised correlation gap against known factors). */
#include "versus/composite.h"
#include "versus/ops.h"
#include "versus/picture.h"
#include "versus/task.h"
#include "versus/train.h"
#include "versus/vae.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_BATCH 256

vs_tensor *vs_vae_encode(vs_module *vae, vs_tensor *x, vs_error *err)
{
    const char *in = "x", *want = "mu";
    vs_tensor *mu = NULL;
    if (vs_module_eval(vae, 1, &in, &x, 1, &want, &mu, NULL, err) != VS_OK) return NULL;
    if (mu->ndim != 2 || mu->shape[0] != x->shape[0]) {
        vs_error_set(err, VS_ERR_SHAPE, "vae: \"mu\" is not [n,k] for %lld inputs", (long long)x->shape[0]);
        return NULL;
    }
    return mu;
}

vs_tensor *vs_vae_decode(vs_module *vae, vs_tensor *z, int ndim, const int64_t *shape, vs_error *err)
{
    const char *in = "z", *want = "x_logits";
    vs_tensor *logits = NULL;
    if (vs_module_eval(vae, 1, &in, &z, 1, &want, &logits, NULL, err) != VS_OK) return NULL;
    int64_t s[VS_MAX_DIMS + 1] = {z->shape[0]}, per = 1;
    for (int i = 0; i < ndim; i++) s[i + 1] = shape[i], per *= shape[i];
    if (logits->size != z->shape[0] * per) {
        vs_error_set(err, VS_ERR_SHAPE, "vae: \"x_logits\" has %lld values for %lld codes of %lld pixels", (long long)logits->size,
                     (long long)z->shape[0], (long long)per);
        return NULL;
    }
    vs_tensor *y = vs_sigmoid(vs_reshape(logits, ndim + 1, s));
    if (!y) vs_error_set(err, vs_last_error()->code, "vae: %s", vs_last_error()->msg);
    return y;
}

vs_status vs_vae_traversal_png(vs_module *vae, const vs_tensor *x, int ndim, const int64_t *shape, const int64_t *dims,
                               int64_t n_dims, int steps, float range, int scale, const char *path, vs_error *err)
{
    if (ndim != 3 || (shape[0] != 1 && shape[0] != 3) || steps < 2 || scale < 1 || !(range > 0))
        return vs_error_set(err, VS_ERR_ARG, "traversal: needs [1 or 3,h,w] images, at least 2 steps, scale >= 1, range > 0");
    bool prev = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_status st = VS_OK;
    vs_tensor *z0 = NULL;
    int64_t k = 0;
    if (x) {
        vs_tensor *mu = vs_vae_encode(vae, (vs_tensor *)x, err);
        if (!mu) st = err ? err->code : VS_ERR_ARG;
        else z0 = mu, k = mu->shape[1];
    } else {
        vs_tensor *probe = vs_tensor_zeros(VS_SHAPE(1, shape[0], shape[1], shape[2]));
        vs_tensor *mu = probe ? vs_vae_encode(vae, probe, err) : NULL;
        if (!mu) st = err ? err->code : VS_ERR_ARG;
        else k = mu->shape[1], z0 = vs_tensor_zeros(VS_SHAPE(1, k));
    }
    int64_t rows = dims ? n_dims : k;
    for (int64_t r = 0; st == VS_OK && dims && r < n_dims; r++)
        if (dims[r] < 0 || dims[r] >= k) st = vs_error_set(err, VS_ERR_ARG, "traversal: latent %lld is not in [0, %lld)", (long long)dims[r], (long long)k);
    vs_tensor *grid = st == VS_OK ? vs_tensor_new(VS_SHAPE(rows * steps, k)) : NULL;
    if (st == VS_OK && !grid) st = vs_error_set(err, VS_ERR_NOMEM, "traversal: out of memory");
    for (int64_t r = 0; st == VS_OK && r < rows; r++)
        for (int s = 0; s < steps; s++) {
            float *row = grid->data + (r * steps + s) * k;
            memcpy(row, z0->data, (size_t)k * sizeof *row);
            row[dims ? dims[r] : r] += -range + 2 * range * (float)s / (float)(steps - 1);
        }
    vs_tensor *img = st == VS_OK ? vs_vae_decode(vae, grid, ndim, shape, err) : NULL;
    if (st == VS_OK && !img) st = err ? err->code : VS_ERR_ARG;
    int c = (int)shape[0], h = (int)shape[1], w = (int)shape[2], pad = 1;
    vs_image *im = st == VS_OK ? vs_image_new(steps * (w * scale + pad) + pad, (int)rows * (h * scale + pad) + pad, c) : NULL;
    if (st == VS_OK && !im) st = vs_error_set(err, VS_ERR_NOMEM, "traversal: out of memory for the picture");
    for (int64_t r = 0; st == VS_OK && r < rows; r++)
        for (int s = 0; s < steps; s++) {
            vs_image *cell = vs_image_from_float(img->data + (r * steps + s) * (int64_t)c * h * w, c, h, w);
            if (!cell) {
                st = vs_error_set(err, VS_ERR_NOMEM, "traversal: out of memory");
                break;
            }
            int x0 = pad + s * (w * scale + pad), y0 = pad + (int)r * (h * scale + pad);
            for (int yy = 0; yy < h * scale; yy++)
                for (int xx = 0; xx < w * scale; xx++)
                    memcpy(im->pixels + ((size_t)(y0 + yy) * im->w + (size_t)(x0 + xx)) * (size_t)c,
                           cell->pixels + ((size_t)(yy / scale) * (size_t)w + (size_t)(xx / scale)) * (size_t)c, (size_t)c);
            vs_image_free(cell);
        }
    if (st == VS_OK) st = vs_png_write(im, path, err);
    vs_image_free(im);
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

/* mu of rows[0..n) of d (all when rows NULL) into a new [n*k] array *out; *k receives k. */
static vs_status encode_rows(vs_module *vae, const vs_dataset *d, const int64_t *rows, int64_t n, float **out, int64_t *k,
                             vs_error *err)
{
    *out = NULL;
    int64_t *all = NULL;
    if (!rows) {
        all = malloc((size_t)(n > 0 ? n : 1) * sizeof *all);
        if (!all) return vs_error_set(err, VS_ERR_NOMEM, "vae: out of memory");
        for (int64_t i = 0; i < n; i++) all[i] = i;
        rows = all;
    }
    bool prev = vs_set_grad_enabled(false);
    vs_status st = VS_OK;
    for (int64_t i0 = 0; i0 < n && st == VS_OK; i0 += PROBE_BATCH) {
        int64_t nb = n - i0 < PROBE_BATCH ? n - i0 : PROBE_BATCH;
        vs_scope_begin();
        vs_tensor *x;
        st = vs_train_input(d, rows + i0, nb, &x, NULL, &(vs_forward_ctx){0}, err);
        vs_tensor *mu = st == VS_OK ? vs_vae_encode(vae, x, err) : NULL;
        if (st == VS_OK && !mu) st = err ? err->code : VS_ERR_ARG;
        if (st == VS_OK && !*out) {
            *k = mu->shape[1];
            *out = malloc((size_t)(n * *k) * sizeof **out);
            if (!*out) st = vs_error_set(err, VS_ERR_NOMEM, "vae: out of memory for %lld codes", (long long)n);
        }
        if (st == VS_OK) memcpy(*out + i0 * *k, mu->data, (size_t)(nb * *k) * sizeof **out);
        vs_scope_end();
    }
    vs_set_grad_enabled(prev);
    free(all);
    if (st != VS_OK) free(*out), *out = NULL;
    return st;
}

vs_status vs_vae_offdiag_score(vs_module *vae, const vs_dataset *d, const int64_t *rows, int64_t n, double *off_diag,
                               float *active, vs_error *err)
{
    if (n < 2) return vs_error_set(err, VS_ERR_ARG, "disentanglement: needs at least 2 examples");
    float *mu;
    int64_t k;
    vs_status st = encode_rows(vae, d, rows, n, &mu, &k, err);
    if (st != VS_OK) return st;
    double *mean = calloc((size_t)k, sizeof *mean), *cov = calloc((size_t)(k * k), sizeof *cov);
    if (!mean || !cov) st = vs_error_set(err, VS_ERR_NOMEM, "disentanglement: out of memory");
    for (int64_t i = 0; st == VS_OK && i < n; i++)
        for (int64_t a = 0; a < k; a++) mean[a] += mu[i * k + a] / (double)n;
    for (int64_t i = 0; st == VS_OK && i < n; i++)
        for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) cov[a * k + b] += (mu[i * k + a] - mean[a]) * (mu[i * k + b] - mean[b]) / (double)n;
    if (st == VS_OK) {
        double all = 0, off = 0;
        for (int64_t a = 0; a < k; a++)
            for (int64_t b = 0; b < k; b++) {
                all += cov[a * k + b] * cov[a * k + b];
                if (a != b) off += cov[a * k + b] * cov[a * k + b];
            }
        *off_diag = all > 0 ? off / all : 0;
        for (int64_t a = 0; active && a < k; a++) active[a] = (float)cov[a * k + a];
    }
    free(mu);
    free(mean);
    free(cov);
    return st;
}

/* Pearson correlation of a[0..n) (stride sa) and b[0..n) (stride sb); 0 when either is constant. */
static double pearson(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n)
{
    double ma = 0, mb = 0;
    for (int64_t i = 0; i < n; i++) ma += a[i * sa], mb += b[i * sb];
    ma /= (double)n, mb /= (double)n;
    double cab = 0, caa = 0, cbb = 0;
    for (int64_t i = 0; i < n; i++) {
        double da = a[i * sa] - ma, db = b[i * sb] - mb;
        cab += da * db, caa += da * da, cbb += db * db;
    }
    return caa > 0 && cbb > 0 ? cab / sqrt(caa * cbb) : 0;
}

vs_status vs_vae_factor_score(vs_module *vae, const vs_dataset *d, const int64_t *rows, int64_t n, const float *factors,
                              int64_t n_factors, double *gap, int64_t *best, float *corr, vs_error *err)
{
    if (n < 2 || n_factors < 1) return vs_error_set(err, VS_ERR_ARG, "disentanglement: needs at least 2 examples and 1 factor");
    float *mu;
    int64_t k;
    vs_status st = encode_rows(vae, d, rows, n, &mu, &k, err);
    if (st != VS_OK) return st;
    double total = 0;
    for (int64_t f = 0; f < n_factors; f++) {
        double top = 0, second = 0, signed_top = 0;
        int64_t arg = 0;
        for (int64_t j = 0; j < k; j++) {
            double rs = pearson(factors + f, n_factors, mu + j, k, n), r = fabs(rs);
            if (r > top) second = top, top = r, arg = j, signed_top = rs;
            else if (r > second) second = r;
        }
        total += top - second;
        if (best) best[f] = arg;
        if (corr) corr[f] = (float)signed_top;
    }
    *gap = total / (double)n_factors;
    free(mu);
    return VS_OK;
}
