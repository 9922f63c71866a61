/* gradcam.c - Grad-CAM (Selvaraju et al.): weights = spatial mean of dS/dA over a conv layer's
 * activation A [1,C,h,w]; map = relu(sum_c weight_c A_c) (vs_job_gradcam_map, shared with Guided
 * Grad-CAM), bilinearly resized to the input's H x W (half-pixel centres, as F.interpolate with
 * align_corners=False) and repeated over input channels. */
#include "explain/internal.h"
#include "versus/search.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct gradcam_opts {
    int layer;
} gradcam_opts;

static void gradcam_defaults(void *o) { ((gradcam_opts *)o)->layer = -1; }

/* The last conv2d of a sequential, or -1. */
static int64_t last_conv(const vs_module *m)
{
    for (int64_t i = m->n_children - 1; i >= 0; i--)
        if (m->children[i]->kind == VS_MODULE_CONV2D) return i;
    return -1;
}

/* The outputs of sequential m for x, and *act = the activation after layer `layer` (-1: the last
 * conv2d), in evaluation mode. */
static vs_tensor *forward_layer(vs_module *m, vs_tensor *x, int layer, vs_tensor **act)
{
    *act = NULL;
    int64_t l = layer >= 0 ? layer : last_conv(m);
    if (layer < 0 && l < 0) {
        vs_set_last_error(VS_ERR_ARG, "the model has no conv2d layer");
        return NULL;
    }
    if (l >= m->n_children) {
        vs_set_last_error(VS_ERR_ARG, "layer %d outside the model's %lld layers", layer, (long long)m->n_children);
        return NULL;
    }
    vs_forward_ctx fc = {0};
    vs_tensor *a = vs_sequential_forward_range(m, x, &fc, 0, l + 1, NULL);
    vs_tensor *y = vs_sequential_forward_range(m, a, &fc, l + 1, m->n_children, NULL);
    *act = a;
    return y;
}

vs_status vs_job_gradcam_map(vs_attr_job *j, int layer, float **cam_out, int64_t *ch, int64_t *cw)
{
    *cam_out = NULL;
    vs_module *seq = j->m == j->model ? j->model->sequential : NULL;
    if (!seq) return vs_error_set(j->err, VS_ERR_ARG, "gradcam: the model does not expose its layers (a sequential classifier)");
    if (j->x->ndim != 4) return vs_error_set(j->err, VS_ERR_SHAPE, "gradcam: inputs must be images [N,C,H,W]");
    vs_status st = VS_OK;
    bool prev = vs_set_grad_enabled(true);
    vs_scope_begin();
    vs_tensor *act = NULL;
    vs_tensor *xt = vs_copy(j->x);
    vs_set_requires_grad(xt, true); /* so the graph is recorded through the model */
    vs_tensor *out = forward_layer(seq, xt, layer, &act);
    j->evaluations++;
    vs_tensor *s = act ? vs_job_score_of(j, out) : NULL, *g = NULL;
    if (!s || !act || act->ndim != 4 || !s->requires_grad) {
        st = vs_error_set(j->err, VS_ERR_ARG, "gradcam: layer %d has no [1,C,h,w] activation the score depends on%s%s", layer,
                          vs_last_error()->code ? ": " : "", vs_last_error()->code ? vs_last_error()->msg : "");
    } else if (vs_grad(1, &s, NULL, 1, &act, &g, false) != VS_OK) {
        st = vs_error_set(j->err, VS_ERR_STATE, "gradcam: %s", vs_last_error()->msg);
    } else {
        int64_t C = act->shape[1], h = act->shape[2], w = act->shape[3];
        float *cam = calloc((size_t)(h * w), sizeof *cam);
        if (!cam) {
            st = vs_error_set(j->err, VS_ERR_NOMEM, "gradcam: out of memory");
        } else {
            for (int64_t c = 0; c < C; c++) {
                double a = 0;
                for (int64_t p = 0; p < h * w; p++) a += g->data[c * h * w + p];
                a /= (double)(h * w);
                for (int64_t p = 0; p < h * w; p++) cam[p] += (float)(a * act->data[c * h * w + p]);
            }
            for (int64_t p = 0; p < h * w; p++) cam[p] = cam[p] > 0 ? cam[p] : 0;
            *cam_out = cam;
            *ch = h;
            *cw = w;
        }
    }
    vs_scope_end();
    vs_set_grad_enabled(prev);
    return st;
}

static vs_status gradcam_run(vs_attr_job *j, const void *opts, float *attr)
{
    float *cam;
    int64_t h, w;
    vs_status st = vs_job_gradcam_map(j, ((const gradcam_opts *)opts)->layer, &cam, &h, &w);
    if (st != VS_OK) return st;
    int64_t IC = j->x->shape[1], H = j->x->shape[2], W = j->x->shape[3];
    vs_search_upsample(cam, h, w, H, W, attr);
    for (int64_t c = 1; c < IC; c++) memcpy(attr + c * H * W, attr, (size_t)(H * W) * sizeof *attr);
    free(cam);
    return VS_OK;
}

static const vs_method_param gradcam_params[] = {
    {"layer", VS_PARAM_INT, offsetof(gradcam_opts, layer), 0, 100000, NULL, "the conv layer: its 0-based position in model.json's \"sequential\" list (default: the last conv2d)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_gradcam = {
    "gradcam", "a conv layer's activations weighted by their mean gradient, upsampled (Selvaraju et al. 2017)",
    VS_OUTPUT_FEATURES, VS_METHOD_LAYERS, sizeof(gradcam_opts), gradcam_defaults, gradcam_params, gradcam_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
