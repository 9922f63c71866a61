/* search_sam.c - the feature-map explainers of similarity (versus/search.h): SAM and second-order SAM
 * in closed form (Props. 4.1 and 5.1), Grad-CAM and VESM on the similarity, and IG-SAM first and second
 * order (integrated gradients and Integrated Hessians of the soft location mask, through the method
 * registry). */
#include "versus/method.h"
#include "versus/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mean over locations of channel c of a feature map [1, C, h, w] */
static double gap(const vs_tensor *f, int64_t c)
{
    int64_t hw = f->shape[2] * f->shape[3];
    double s = 0;
    for (int64_t k = 0; k < hw; k++) s += f->data[c * hw + k];
    return s / (double)hw;
}

/* The closed forms are those of the dot product <GAP(x), GAP(y)>.  Under a cosine head they are
 * taken on the embeddings normalised at the pair itself, 1 / (|GAP(f(x))| |GAP(f(y))|): the
 * closed form of the cosine's linearisation, whose sum is cos(x, y) - <GAP(x), GAP(by)> / (|GAP(x)|
 * |GAP(y)|), off v(N) - v(empty) only by how far |GAP(by)| is from |GAP(y)|.  The raw dot form sums
 * to a number on the scale of the features, not of the game (an inefficiency of 100+ on 0..1
 * similarities).  A caller's own head is read as the dot product. */
static double head_scale(const vs_search_pair *p)
{
    if (p->model->similarity != VS_SEARCH_COSINE || p->model->head) return 1;
    const int64_t C = p->fx->shape[1];
    double nx = 0, ny = 0;
    for (int64_t c = 0; c < C; c++) {
        double gx = gap(p->fx, c), gy = gap(p->fy, c);
        nx += gx * gx, ny += gy * gy;
    }
    return 1 / fmax(sqrt(nx) * sqrt(ny), 1e-8); /* the eps of the head's vs_cosine_similarity */
}

vs_status vs_search_sam(const vs_search_pair *p, double *phi, vs_error *err)
{
    (void)err;
    const int64_t C = p->fx->shape[1], hw = vs_search_locations(p);
    const double s = head_scale(p); /* 1 under the dot product: the same bits as without it */
    for (int64_t k = 0; k < hw; k++) phi[k] = 0;
    for (int64_t c = 0; c < C; c++) {
        double gx = gap(p->fx, c);
        for (int64_t k = 0; k < hw; k++) phi[k] += gx * (p->fy->data[c * hw + k] - p->fby->data[c * hw + k]) * s / (double)hw;
    }
    return VS_OK;
}

vs_status vs_search_sam2(const vs_search_pair *p, double *phi2, vs_error *err)
{
    (void)err;
    const int64_t C = p->fx->shape[1], hw = vs_search_locations(p), n = 2 * hw;
    const double s = head_scale(p);
    memset(phi2, 0, (size_t)(n * n) * sizeof *phi2);
    const float *x = p->fx->data, *y = p->fy->data, *a = p->fbx->data, *b = p->fby->data;
    for (int64_t c = 0; c < C; c++) {
        double A = gap(p->fbx, c), B = gap(p->fby, c);
        for (int64_t k = 0; k < hw; k++) {
            double dx = x[c * hw + k] - a[c * hw + k];
            phi2[k * n + k] += dx * B * s / (double)hw;                    /* query singleton */
            phi2[(hw + k) * n + hw + k] += A * (y[c * hw + k] - b[c * hw + k]) * s / (double)hw; /* retrieved singleton */
            for (int64_t l = 0; l < hw; l++) {
                double half = dx * (y[c * hw + l] - b[c * hw + l]) * s / ((double)hw * (double)hw) / 2;
                phi2[k * n + hw + l] += half;
                phi2[(hw + l) * n + k] += half;
            }
        }
    }
    return VS_OK;
}

/* dd/df(y) at the pair's feature maps into g [C h w]. */
static vs_status head_grad_y(const vs_search_pair *p, float *g, vs_error *err)
{
    bool was = vs_set_grad_enabled(true);
    vs_scope_begin();
    vs_tensor *fy = vs_tensor_from(p->fy->ndim, p->fy->shape, p->fy->data);
    vs_set_requires_grad(fy, true);
    vs_tensor *d = vs_search_head(p->model, p->fx, fy);
    vs_status st = d ? vs_backward(vs_sum(d, VS_ALL_AXES, false), NULL, false) : vs_last_error()->code;
    if (st != VS_OK || !fy->grad) st = vs_error_set(err, st != VS_OK ? st : VS_ERR_ARG, "search: gradient of the similarity: %s", vs_last_error()->msg);
    else memcpy(g, fy->grad->data, (size_t)fy->size * sizeof *g);
    vs_scope_end();
    vs_set_grad_enabled(was);
    return st;
}

vs_status vs_search_gradcam(const vs_search_pair *p, double *phi, vs_error *err)
{
    const int64_t C = p->fy->shape[1], hw = vs_search_locations(p);
    float *g = malloc((size_t)p->fy->size * sizeof *g);
    if (!g) return vs_error_set(err, VS_ERR_NOMEM, "gradcam: out of memory");
    vs_status st = head_grad_y(p, g, err);
    for (int64_t k = 0; st == VS_OK && k < hw; k++) phi[k] = 0;
    for (int64_t c = 0; st == VS_OK && c < C; c++) {
        double alpha = 0;
        for (int64_t k = 0; k < hw; k++) alpha += g[c * hw + k];
        alpha /= (double)hw;
        for (int64_t k = 0; k < hw; k++) phi[k] += alpha * p->fy->data[c * hw + k];
    }
    free(g);
    return st;
}

vs_status vs_search_vesm(const vs_search_pair *p, double *phi, vs_error *err)
{
    (void)err;
    const int64_t C = p->fy->shape[1], hw = vs_search_locations(p);
    for (int64_t k = 0; k < hw; k++) phi[k] = 0;
    for (int64_t c = 0; c < C; c++) {
        double w = gap(p->fx, c) * gap(p->fy, c);
        for (int64_t k = 0; k < hw; k++) phi[k] += w * p->fy->data[c * hw + k];
    }
    for (int64_t k = 0; k < hw; k++) phi[k] = phi[k] > 0 ? phi[k] : 0;
    return VS_OK;
}

/* ---- IG-SAM: the soft location mask as the explained input ------------------------------------------ */

typedef struct mask_model {
    const vs_search_pair *p;
    bool both;       /* v2: the mask covers query then retrieved locations */
} mask_model;

/* f at the masked feature maps: b + M (f - b), M [B, hw] broadcast over channels. */
static vs_tensor *soft_mask(const vs_tensor *f, const vs_tensor *b, vs_tensor *M)
{
    int64_t shape[4] = {M->shape[0], 1, f->shape[2], f->shape[3]};
    return vs_add((vs_tensor *)b, vs_mul(vs_reshape(M, 4, shape), vs_sub((vs_tensor *)f, (vs_tensor *)b)));
}

static vs_tensor *mask_forward(void *ctx, vs_tensor *M)
{
    const mask_model *mm = ctx;
    const vs_search_pair *p = mm->p;
    int64_t hw = vs_search_locations(p), B = M->shape[0];
    int64_t shape[4] = {B, p->fx->shape[1], p->fx->shape[2], p->fx->shape[3]};
    vs_scope_begin();
    vs_tensor *fx, *fy;
    if (mm->both) {
        fx = soft_mask(p->fx, p->fbx, vs_slice(M, 1, 0, hw));
        fy = soft_mask(p->fy, p->fby, vs_slice(M, 1, hw, 2 * hw));
    } else {
        fx = vs_expand(p->fx, 4, shape);
        fy = soft_mask(p->fy, p->fby, M);
    }
    return vs_scope_return(vs_search_head(p->model, fx, fy));
}

/* Run a registered method on the all-ones mask against the zero mask. */
static vs_status mask_explain(const vs_search_pair *p, bool both, const char *method, int steps, double *out, vs_error *err)
{
    mask_model mm = {p, both};
    vs_model_fn fn = {.forward = mask_forward, .ctx = &mm};
    const vs_method *m = vs_method_find(method);
    vs_method_opts *o = m ? vs_method_opts_new(m) : NULL;
    if (!o) return vs_error_set(err, VS_ERR_NOMEM, "igsam: method %s unavailable", method);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", steps);
    vs_status st = vs_method_opts_set(o, "steps", buf, err);
    int64_t n = (both ? 2 : 1) * vs_search_locations(p);
    vs_scope_begin();
    vs_tensor *ones = vs_tensor_zeros(2, (int64_t[]){1, n}), *res = NULL;
    for (int64_t k = 0; ones && k < n; k++) ones->data[k] = 1;
    vs_explain_request r;
    vs_explain_request_init(&r);
    if (st == VS_OK) st = ones ? vs_explain(&fn, ones, m, o, &r, &res, NULL, err) : vs_error_set(err, VS_ERR_NOMEM, "igsam: out of memory");
    for (int64_t k = 0; st == VS_OK && k < res->size; k++) out[k] = res->data[k];
    vs_scope_end(); /* frees res */
    vs_method_opts_free(o);
    return st;
}

vs_status vs_search_igsam(const vs_search_pair *p, int steps, double *phi, vs_error *err)
{
    return mask_explain(p, false, "integrated_gradients", steps, phi, err);
}

vs_status vs_search_igsam2(const vs_search_pair *p, int steps, double *phi2, vs_error *err)
{
    return mask_explain(p, true, "integrated_hessians", steps, phi2, err);
}
