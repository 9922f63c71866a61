/* datasets/synth_images.c - colored MNIST (GANMEX colour ablation) and the "shapes" images.
 *
 * Colorize puts each gray image into one randomly chosen RGB channel (colour independent of the
 * label).  Shapes draws squares, pluses and bars on faint noise; only the top-left quadrant decides
 * the class.  Pixel values are products of exact uniform draws and constants: bit-identical. */
#include "versus/synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/synth_common.h"

vs_status vs_synth_colorize(const vs_dataset *gray, vs_rng *rng, vs_dataset **out, int64_t **colours,
                            vs_error *err)
{
    *out = NULL;
    if (colours) *colours = NULL;
    if (!rng) return vs_error_set(err, VS_ERR_ARG, "synth_colorize: rng is NULL");
    if (!gray || gray->kind != VS_DATA_IMAGES || gray->ndim != 3 || gray->shape[0] != 1 || !gray->X || !gray->y)
        return vs_error_set(err, VS_ERR_ARG, "synth_colorize: expected an image data set [n,1,h,w] with X and y");
    const int64_t hw = gray->shape[1] * gray->shape[2];
    if (hw != gray->dim)
        return vs_error_set(err, VS_ERR_ARG, "synth_colorize: dim %lld != 1 x %lld x %lld", (long long)gray->dim,
                            (long long)gray->shape[1], (long long)gray->shape[2]);
    char name[256];
    snprintf(name, sizeof name, "%s-colored", gray->name ? gray->name : "images");
    vs_dataset *d = vs_data_new(VS_DATA_IMAGES, name, err);
    if (!d) return VS_ERR_NOMEM;
    vs_status st = VS_ERR_NOMEM;
    int64_t *col = NULL;
    if (gray->class_names) {
        if ((st = vs_data_set_classes(d, gray->n_classes, (const char *const *)gray->class_names, err)) != VS_OK)
            goto fail;
    } else {
        d->n_classes = gray->n_classes;
    }
    d->n = gray->n;
    d->ndim = 3;
    d->shape[0] = 3;
    d->shape[1] = gray->shape[1];
    d->shape[2] = gray->shape[2];
    d->dim = 3 * hw;
    size_t cells;
    if (!vs_size_mul((size_t)d->n, (size_t)d->dim, &cells)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "synth_colorize: n x dim overflows");
        goto fail;
    }
    d->X = vs_data_calloc(cells, sizeof *d->X, "synth_colorize X", err);
    d->y = vs_data_calloc((size_t)d->n, sizeof *d->y, "synth_colorize y", err);
    col = vs_data_calloc((size_t)d->n, sizeof *col, "synth_colorize colours", err);
    if (!d->X || !d->y || !col) goto fail;
    if (gray->feature_truth) {
        if (!(d->feature_truth = vs_data_calloc((size_t)d->dim, 1, "synth_colorize truth", err))) goto fail;
        for (int c = 0; c < 3; c++) memcpy(d->feature_truth + c * hw, gray->feature_truth, (size_t)hw);
    }
    memcpy(d->y, gray->y, (size_t)d->n * sizeof *d->y);
    for (int64_t i = 0; i < d->n; i++) {
        col[i] = (int64_t)vs_rng_below(rng, 3);
        /* [3, h, w] image i: channel col[i] is the gray image, the other two stay 0. */
        memcpy(d->X + (size_t)i * (size_t)d->dim + (size_t)(col[i] * hw), gray->X + (size_t)i * (size_t)hw,
               (size_t)hw * sizeof *d->X);
    }
    if (colours) *colours = col;
    else free(col);
    *out = d;
    return VS_OK;
fail:
    free(col);
    vs_dataset_free(d);
    return st;
}

void vs_synth_shapes_defaults(vs_synth_shapes_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n = 500;
    o->size = 16;
    o->n_distractors = 3;
    o->noise = 0.1f;
    o->positive_fraction = 0.5;
    o->seed = 1;
}

typedef enum shape_kind { SHAPE_SQUARE = 0, SHAPE_PLUS, SHAPE_HBAR, SHAPE_VBAR, SHAPE_KINDS } shape_kind;

/* Draw an a x a shape with top-left corner (r, c) on img [s, s], max-combined with what is there. */
static void draw_shape(float *img, int64_t s, int64_t a, int64_t r, int64_t c, shape_kind kind, float v)
{
    int64_t mid = a / 2, thick = a / 3 > 0 ? a / 3 : 1, lo = mid - thick / 2;
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < a; j++) {
            int on = kind == SHAPE_SQUARE                     ? 1
                     : kind == SHAPE_PLUS                     ? i == mid || j == mid
                     : kind == SHAPE_HBAR ? i >= lo && i < lo + thick : j >= lo && j < lo + thick;
            float *p = &img[(r + i) * s + c + j];
            if (on && v > *p) *p = v;
        }
}

/* Shape intensity (45 + k) / 64, k uniform in [0, 19): in [0.7, 1), one exact operation, so no
 * rounding (or fused multiply-add) can make it differ between machines. */
static float intensity(vs_rng *r) { return (float)(45 + vs_rng_below(r, 19)) * 0x1p-6f; }

vs_status vs_synth_shapes(const vs_synth_shapes_opts *o, vs_dataset **out, vs_error *err)
{
    *out = NULL;
    const char *f = "synth_shapes";
    if (o->n < 1) return vs_error_set(err, VS_ERR_ARG, "%s: n = %lld, expected >= 1", f, (long long)o->n);
    if (o->size < 12 || o->size > 256)
        return vs_error_set(err, VS_ERR_ARG, "%s: size = %lld, expected 12..256", f, (long long)o->size);
    if (o->n_distractors < 0 || o->n_distractors > 8)
        return vs_error_set(err, VS_ERR_ARG, "%s: n_distractors = %lld, expected 0..8", f, (long long)o->n_distractors);
    if (!(o->noise >= 0.0f && o->noise <= 0.5f))
        return vs_error_set(err, VS_ERR_ARG, "%s: noise = %g, expected [0, 0.5]", f, (double)o->noise);
    if (!(o->positive_fraction >= 0.0 && o->positive_fraction <= 1.0))
        return vs_error_set(err, VS_ERR_ARG, "%s: positive_fraction = %g, expected [0, 1]", f, o->positive_fraction);

    const int64_t s = o->size, h = s / 2, a = s / 4 >= 3 ? s / 4 : 3;
    vs_dataset *d = vs_data_new(VS_DATA_IMAGES, "synthetic-shapes", err);
    if (!d) return VS_ERR_NOMEM;
    static const char *const classes[2] = {"other", "square"};
    vs_status st = vs_data_set_classes(d, 2, classes, err);
    if (st != VS_OK) goto fail;
    d->n = o->n;
    d->ndim = 3;
    d->shape[0] = 1;
    d->shape[1] = d->shape[2] = s;
    d->dim = s * s;
    size_t cells;
    if (!vs_size_mul((size_t)d->n, (size_t)d->dim, &cells)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: n x dim overflows", f);
        goto fail;
    }
    d->X = vs_data_calloc(cells, sizeof *d->X, "synth_shapes X", err);
    d->y = vs_data_calloc((size_t)d->n, sizeof *d->y, "synth_shapes y", err);
    d->feature_truth = vs_data_calloc((size_t)d->dim, 1, "synth_shapes truth", err);
    if (!d->X || !d->y || !d->feature_truth) {
        st = VS_ERR_NOMEM;
        goto fail;
    }
    for (int64_t i = 0; i < h; i++) memset(d->feature_truth + i * s, 1, (size_t)h);

    vs_rng rng;
    vs_rng_seed(&rng, o->seed);
    for (int64_t n = 0; n < d->n; n++) {
        float *img = d->X + (size_t)n * (size_t)d->dim;
        for (int64_t p = 0; p < d->dim; p++) img[p] = o->noise * vs_rng_uniformf(&rng);
        int64_t y = vs_rng_uniform(&rng) < o->positive_fraction;
        d->y[n] = y;
        /* The deciding region R = [0, h) x [0, h): a square for y = 1; nothing, a plus or a bar else. */
        uint64_t what = y ? 0 : vs_rng_below(&rng, 3);
        if (y || what > 0) {
            shape_kind k = y ? SHAPE_SQUARE : what == 1 ? SHAPE_PLUS : (vs_rng_below(&rng, 2) ? SHAPE_HBAR : SHAPE_VBAR);
            int64_t r = (int64_t)vs_rng_below(&rng, (uint64_t)(h - a + 1));
            int64_t c = (int64_t)vs_rng_below(&rng, (uint64_t)(h - a + 1));
            draw_shape(img, s, a, r, c, k, intensity(&rng));
        }
        /* Distractors anywhere their box misses R (a box at (r, c) meets R iff r < h and c < h). */
        for (int64_t k = 0; k < o->n_distractors; k++) {
            shape_kind kind = (shape_kind)vs_rng_below(&rng, SHAPE_KINDS);
            int64_t r, c;
            do {
                r = (int64_t)vs_rng_below(&rng, (uint64_t)(s - a + 1));
                c = (int64_t)vs_rng_below(&rng, (uint64_t)(s - a + 1));
            } while (r < h && c < h);
            draw_shape(img, s, a, r, c, kind, intensity(&rng));
        }
    }
    *out = d;
    return VS_OK;
fail:
    vs_dataset_free(d);
    return st;
}
