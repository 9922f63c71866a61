/* clip_grad.c - gradient clipping by global norm (torch.nn.utils.clip_grad_norm_). */
#include "nn/internal.h"
#include "versus/optim.h"

#include <math.h>
#include <stdlib.h>

float vs_clip_grad_norm(int64_t n, vs_tensor *const *params, float max_norm)
{
    double sq = 0;
    for (int64_t i = 0; i < n; i++) {
        const vs_tensor *g = params[i] ? params[i]->grad : NULL;
        if (!g) continue;
        for (int64_t k = 0; k < g->size; k++) sq += (double)g->data[k] * g->data[k];
    }
    float norm = (float)sqrt(sq);
    float coef = max_norm / (norm + 1e-6f);
    if (!(coef < 1.0f) || n <= 0) return norm;
    /* A gradient may share storage with another or belong to a recorded graph: build scaled copies
     * (all of them first, so running out of memory changes nothing), then swap them in. */
    vs_tensor **scaled = calloc((size_t)n, sizeof *scaled);
    bool ok = scaled != NULL;
    bool prev = vs_set_grad_enabled(false);
    for (int64_t i = 0; ok && i < n; i++) {
        const vs_tensor *p = params[i];
        if (!p || !p->grad) continue;
        scaled[i] = vs_nn_owned(vs_tensor_new(p->grad->ndim, p->grad->shape));
        ok = scaled[i] != NULL;
        if (!ok) break;
        const float *restrict src = p->grad->data;
        float *restrict dst = scaled[i]->data;
        for (int64_t k = 0; k < scaled[i]->size; k++) dst[k] = src[k] * coef;
    }
    vs_set_grad_enabled(prev);
    for (int64_t i = 0; scaled && i < n; i++) {
        if (!scaled[i]) continue;
        if (ok) {
            vs_zero_grad(params[i]);
            params[i]->grad = scaled[i];
        } else {
            vs_tensor_free(scaled[i]);
        }
    }
    free(scaled);
    if (!ok) {
        vs_set_last_error(VS_ERR_NOMEM, "clip_grad_norm: out of memory");
        return NAN;
    }
    return norm;
}
