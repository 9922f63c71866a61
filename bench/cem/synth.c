/* bench/cem/synth.c - synthetic images with known generative factors for the CEM-MAF experiment:
 * one filled rectangle on a black 28x28 image, factors width, height, x, y (its centre) and
 * brightness drawn uniformly; class "wide" (width >= height + 4), "tall" (height >= width + 4) or
 * "square".  The factors give the supervised disentanglement score and name the attributes. */
#include "bench/cem/cem_bench.h"

#include <stdlib.h>
#include <string.h>

#define SIDE 28

const char *const vs_cem_synth_factor_names[VS_CEM_SYNTH_FACTORS] = {"width", "height", "x", "y", "brightness"};

vs_status vs_cem_synthetic(int64_t n, uint64_t seed, vs_dataset **out, float **factors, vs_error *err)
{
    static const char *const names[3] = {"wide", "tall", "square"};
    *out = NULL, *factors = NULL;
    vs_dataset *d = vs_dataset_new(VS_DATA_IMAGES, "synthetic-factors");
    float *f = malloc((size_t)(n * VS_CEM_SYNTH_FACTORS) * sizeof *f);
    if (d) {
        d->n = n, d->n_classes = 3, d->ndim = 3, d->dim = SIDE * SIDE;
        d->shape[0] = 1, d->shape[1] = SIDE, d->shape[2] = SIDE;
        d->X = calloc((size_t)(n * SIDE * SIDE), sizeof *d->X);
        d->y = malloc((size_t)n * sizeof *d->y);
        d->class_names = calloc(3, sizeof *d->class_names);
        for (int c = 0; d->class_names && c < 3; c++) d->class_names[c] = strdup(names[c]);
    }
    if (!d || !f || !d->X || !d->y || !d->class_names || !d->class_names[0] || !d->class_names[1] || !d->class_names[2]) {
        vs_dataset_free(d);
        free(f);
        return vs_error_set(err, VS_ERR_NOMEM, "synthetic factors: out of memory for %lld images", (long long)n);
    }
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) {
        int w = 3 + (int)vs_rng_below(&r, 18), h = 3 + (int)vs_rng_below(&r, 18);
        int x0 = 1 + (int)vs_rng_below(&r, (uint64_t)(SIDE - 1 - w)), y0 = 1 + (int)vs_rng_below(&r, (uint64_t)(SIDE - 1 - h));
        float b = 0.4f + 0.6f * vs_rng_uniformf(&r);
        for (int y = y0; y < y0 + h; y++)
            for (int x = x0; x < x0 + w; x++) d->X[i * SIDE * SIDE + y * SIDE + x] = b;
        d->y[i] = w >= h + 4 ? 0 : h >= w + 4 ? 1 : 2;
        float *fi = f + i * VS_CEM_SYNTH_FACTORS;
        fi[0] = (float)w, fi[1] = (float)h, fi[2] = (float)x0 + (float)w / 2, fi[3] = (float)y0 + (float)h / 2, fi[4] = b;
    }
    *out = d, *factors = f;
    return VS_OK;
}
