/* occlusion.c - occlusion (Zeiler & Fergus): slide a window over the example, replace it with the
 * baseline, and credit each covered element with the score drop, averaged over the windows that
 * cover it (Captum's convention).  Occlusion-1 is the default 1-element window.  Its accelerator,
 * the incremental forward of sequential image classifiers (nn/forward_boxes.c), scores the occluded
 * copies without materialising them: only the region each window changes is recomputed. */
#include "explain/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Origin {o0, o1, o2} of window q of the pos[0] x pos[1] x pos[2] grid, windows every s. */
static void window_origin(int64_t q, const int64_t *pos, const int64_t *s, int64_t *o)
{
    o[2] = (q % pos[2]) * s[2];
    o[1] = (q / pos[2] % pos[1]) * s[1];
    o[0] = (q / pos[2] / pos[1]) * s[0];
}

/* Occlusion's accelerators. */
static const vs_accel occlusion_accels[] = {
    {VS_MODULE_SEQUENTIAL, NULL, vs_sequential_forward_boxes, NULL},
};

/* Scores of windows [w0, w0 + n) occluded by the baseline: through accelerator acc on m when one
 * holds and examples are [C, H, W] (box = the window), else on rows built here (rows: scratch of n
 * examples). */
static vs_status window_scores(vs_attr_job *j, const vs_accel *acc, vs_module *m, int64_t w0, int64_t n, const int64_t *d, const int64_t *w,
                               const int64_t *s, const int64_t *pos, float *rows, int64_t *boxes, double *scores)
{
    int64_t o[3];
    for (int64_t r = 0; r < n; r++) {
        window_origin(w0 + r, pos, s, o);
        if (boxes) {
            int64_t *b = boxes + 6 * r;
            b[0] = o[0], b[1] = o[1], b[2] = o[2], b[3] = w[0], b[4] = w[1], b[5] = w[2];
            continue;
        }
        float *row = rows + r * j->dim;
        memcpy(row, j->x->data, (size_t)j->dim * sizeof(float));
        for (int64_t a = o[0]; a < o[0] + w[0]; a++)
            for (int64_t b = o[1]; b < o[1] + w[1]; b++)
                for (int64_t c = o[2]; c < o[2] + w[2]; c++) {
                    int64_t e = (a * d[1] + b) * d[2] + c;
                    row[e] = j->baseline->data[e];
                }
    }
    return boxes ? vs_job_box_scores(j, acc, m, n, boxes, scores) : vs_job_scores(j, rows, n, scores);
}

typedef struct occlusion_opts {
    int window[3], stride[3];
} occlusion_opts;

static vs_status occlusion_run(vs_attr_job *j, const void *opts, float *attr)
{
    const occlusion_opts *oo = opts;
    int k = j->x->ndim - 1; /* dims of one example */
    if (k > 3) return vs_error_set(j->err, VS_ERR_SHAPE, "occlusion: examples of at most 3 dims");
    int64_t d[3] = {1, 1, 1}, w[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pos[3], o[3];
    for (int i = 0; i < k; i++) {
        d[3 - k + i] = j->x->shape[1 + i];
        w[3 - k + i] = oo->window[i] > 0 ? oo->window[i] : 1;
        s[3 - k + i] = oo->stride[i] > 0 ? oo->stride[i] : 1;
    }
    for (int i = k; i < 3; i++) /* sizes for dimensions the examples do not have are refused, not dropped */
        if (oo->window[i] > 1 || oo->stride[i] > 1)
            return vs_error_set(j->err, VS_ERR_ARG, "occlusion: --window/--stride size %d is %d, but the examples have %d dimension%s", i + 1,
                                oo->window[i] > 1 ? oo->window[i] : oo->stride[i], k, k == 1 ? "" : "s");
    int64_t nwin = 1;
    for (int i = 0; i < 3; i++) {
        if (w[i] > d[i]) return vs_error_set(j->err, VS_ERR_ARG, "occlusion: window %lld larger than dimension %lld", (long long)w[i], (long long)d[i]);
        pos[i] = (d[i] - w[i]) / s[i] + 1;
        nwin *= pos[i];
    }
    vs_module *am = NULL;
    const vs_accel *accel = k == 3 ? vs_job_accel(j, occlusion_accels, 1, &am) : NULL;
    bool incremental = accel != NULL;
    /* The incremental path takes every window in one call: it chunks the copies itself, within a
     * memory budget, and makes the base pass and its weight layouts once instead of per batch. */
    int64_t chunk = incremental ? nwin : j->r->batch > 0 ? j->r->batch : 64;
    float *rows = incremental ? NULL : malloc((size_t)(chunk * j->dim) * sizeof *rows);
    int64_t *boxes = incremental ? malloc((size_t)chunk * 6 * sizeof *boxes) : NULL;
    double *scores = malloc((size_t)chunk * sizeof *scores), *acc = calloc((size_t)j->dim, sizeof *acc), base;
    int32_t *count = calloc((size_t)j->dim, sizeof *count);
    vs_status st = (rows || boxes) && scores && acc && count ? VS_OK
                                                             : vs_error_set(j->err, VS_ERR_NOMEM, "occlusion: out of memory");
    if (st == VS_OK) st = vs_job_scores(j, j->x->data, 1, &base);
    for (int64_t w0 = 0; w0 < nwin && st == VS_OK; w0 += chunk) {
        int64_t n = nwin - w0 < chunk ? nwin - w0 : chunk;
        st = window_scores(j, accel, am, w0, n, d, w, s, pos, rows, boxes, scores);
        for (int64_t r = 0; r < n && st == VS_OK; r++) {
            window_origin(w0 + r, pos, s, o);
            for (int64_t a = o[0]; a < o[0] + w[0]; a++)
                for (int64_t b = o[1]; b < o[1] + w[1]; b++)
                    for (int64_t c = o[2]; c < o[2] + w[2]; c++) {
                        int64_t e = (a * d[1] + b) * d[2] + c;
                        acc[e] += base - scores[r];
                        count[e]++;
                    }
        }
    }
    if (st == VS_OK)
        for (int64_t e = 0; e < j->dim; e++) attr[e] = count[e] ? (float)(acc[e] / count[e]) : 0.0f;
    free(rows);
    free(boxes);
    free(scores);
    free(acc);
    free(count);
    return st;
}

static const vs_method_param occlusion_params[] = {
    {"window", VS_PARAM_INT3, offsetof(occlusion_opts, window), 1, 100000, NULL, "window C,H,W over the trailing dims (default 1,1,1)"},
    {"stride", VS_PARAM_INT3, offsetof(occlusion_opts, stride), 1, 100000, NULL, "stride C,H,W (default 1,1,1)"},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

const vs_method vs_method_occlusion = {
    "occlusion", "score drop when a sliding window takes the baseline's values (Zeiler & Fergus 2014)", VS_OUTPUT_FEATURES, 0,
    sizeof(occlusion_opts), NULL, occlusion_params, occlusion_run,
    VS_METHOD_ATTRIBUTION, NULL,
};
