/* guided_gradcam.c - Guided Grad-CAM (Selvaraju et al. 2017), as Captum's GuidedGradCam: guided
 * backpropagation times the layer's Grad-CAM map upsampled to the input's H x W by nearest neighbour
 * (F.interpolate's default mode: source pixel floor(y h / H)), the map shared by every channel. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>

typedef struct guided_gradcam_opts {
    int layer;
} guided_gradcam_opts;

static void guided_gradcam_defaults(void *o) { ((guided_gradcam_opts *)o)->layer = -1; }

static vs_status guided_gradcam_run(vs_attr_job *j, const void *opts, float *attr)
{
    float *cam;
    int64_t h, w;
    vs_status st = vs_job_gradcam_map(j, ((const guided_gradcam_opts *)opts)->layer, &cam, &h, &w);
    if (st == VS_OK) st = vs_job_rule_grads(j, VS_RULE_GUIDED, attr);
    if (st == VS_OK) {
        int64_t C = j->x->shape[1], H = j->x->shape[2], W = j->x->shape[3];
        for (int64_t c = 0; c < C; c++)
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++) attr[(c * H + y) * W + x] *= cam[(y * h / H) * w + x * w / W];
    }
    free(cam);
    return st;
}

static const vs_method_param guided_gradcam_params[] = {
    {"layer", VS_PARAM_INT, offsetof(guided_gradcam_opts, layer), 0, 100000, NULL, "the conv layer: its 0-based position in model.json's \"sequential\" list (default: the last conv2d)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_guided_gradcam = {
    "guided_gradcam", "guided backpropagation times the Grad-CAM map, upsampled by nearest neighbour (Selvaraju et al. 2017)",
    VS_OUTPUT_FEATURES, VS_METHOD_LAYERS, sizeof(guided_gradcam_opts), guided_gradcam_defaults, guided_gradcam_params, guided_gradcam_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
