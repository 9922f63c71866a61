/* bench/search/data.c - the data and backbones of the search experiment
 * (bench/search/search_bench.h): images with planted objects and their masks, pairs of images that
 * share an object class, and small GAP CNNs trained with versus (a classifier and a Siamese metric
 * model) split into feature maps and embedding. */
#include "bench/search/search_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Object k (0 filled square, 1 plus, 2 ring, 3 cross) of side s at (y0, x0): pixels set to `ink`
 * and marked in mask (may be NULL). */
static void draw_object(float *img, uint8_t *mask, int w, int kind, int y0, int x0, int s, float ink)
{
    for (int dy = 0; dy < s; dy++)
        for (int dx = 0; dx < s; dx++) {
            int c = s / 2;
            bool on = kind == 0                                                      ? true
                      : kind == 1                                                    ? (abs(dy - c) <= 1 || abs(dx - c) <= 1)
                      : kind == 2                                                    ? (dy < 2 || dx < 2 || dy >= s - 2 || dx >= s - 2)
                                                                                     : (abs(dy - dx) <= 1 || abs(dy + dx - (s - 1)) <= 1);
            if (!on) continue;
            img[(y0 + dy) * w + x0 + dx] = ink;
            if (mask) mask[(y0 + dy) * w + x0 + dx] = 1;
        }
}

vs_status vs_search_planted_images(int64_t n, int side, uint64_t seed, vs_dataset **out, uint8_t **masks, vs_error *err)
{
    *out = NULL;
    *masks = NULL;
    vs_dataset *d = vs_dataset_new(VS_DATA_IMAGES, "planted");
    const int s = side / 3, K = VS_SEARCH_PLANTED_CLASSES;
    int64_t dim = (int64_t)side * side;
    if (d) {
        d->X = calloc((size_t)(n * dim), sizeof *d->X);
        d->y = malloc((size_t)n * sizeof *d->y);
    }
    uint8_t *m = calloc((size_t)(n * dim), 1);
    if (!d || !d->X || !d->y || !m) {
        vs_dataset_free(d);
        free(m);
        return vs_error_set(err, VS_ERR_NOMEM, "planted images: out of memory");
    }
    d->n = n;
    d->n_classes = K;
    d->ndim = 3;
    d->shape[0] = 1;
    d->shape[1] = d->shape[2] = side;
    d->dim = dim;
    vs_rng r;
    vs_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) {
        float *img = d->X + i * dim;
        for (int64_t p = 0; p < dim; p++) img[p] = 0.15f * vs_rng_uniformf(&r);
        int k = (int)vs_rng_below(&r, K), other = (k + 1 + (int)vs_rng_below(&r, K - 1)) % K;
        d->y[i] = k;
        /* the object and a distractor of another class, apart */
        int y0, x0, y1, x1;
        do {
            y0 = (int)vs_rng_below(&r, (uint64_t)(side - s + 1));
            x0 = (int)vs_rng_below(&r, (uint64_t)(side - s + 1));
            y1 = (int)vs_rng_below(&r, (uint64_t)(side - s + 1));
            x1 = (int)vs_rng_below(&r, (uint64_t)(side - s + 1));
        } while (abs(y0 - y1) < s + 1 && abs(x0 - x1) < s + 1);
        draw_object(img, m + i * dim, side, k, y0, x0, s, 0.7f + 0.3f * vs_rng_uniformf(&r));
        draw_object(img, NULL, side, other, y1, x1, s, 0.3f + 0.15f * vs_rng_uniformf(&r)); /* fainter: the class is the bright one */
    }
    *out = d;
    *masks = m;
    return VS_OK;
}

void vs_search_foreground_masks(const vs_dataset *d, float threshold, uint8_t *masks)
{
    for (int64_t k = 0; k < d->n * d->dim; k++) masks[k] = d->X[k] > threshold;
}

/* conv(c, 8) relu pool2 conv(8, 16) relu pool2 conv(16, 16) relu [avgpool2] | GAP | linear(16, out);
 * fine: without the last pool (7 x 7 maps of 28x28 images instead of 3 x 3). */
static vs_module *gap_cnn(int64_t c, int64_t out, bool fine, vs_rng *r)
{
    vs_module *m = vs_sequential_new();
    if (!m) return NULL;
    vs_module *layers[] = {
        vs_conv2d_new(c, 8, 3, 1, 1, true, r), vs_activation_new(VS_MODULE_RELU, 0), vs_max_pool2d_new(2, 0, 0),
        vs_conv2d_new(8, 16, 3, 1, 1, true, r), vs_activation_new(VS_MODULE_RELU, 0), vs_max_pool2d_new(2, 0, 0),
        vs_conv2d_new(16, 16, 3, 1, 1, true, r), vs_activation_new(VS_MODULE_RELU, 0), fine ? NULL : vs_avg_pool2d_new(2, 0, 0),
        vs_global_avg_pool_new(), vs_linear_new(16, out, true, r),
    };
    const int n = fine ? 10 : 11;
    if (fine) memmove(layers + 8, layers + 9, 2 * sizeof layers[0]); /* the missing pool's slot closes */
    for (int i = 0; i < n; i++)
        if (vs_sequential_add(m, layers[i]) != VS_OK) {
            for (int k = i + 1; k < n; k++) vs_module_free(layers[k]);
            vs_module_free(m);
            return NULL;
        }
    return m;
}

vs_status vs_search_backbone_train(const vs_dataset *train, bool siamese, bool fine, int64_t epochs, uint64_t seed, FILE *progress,
                                   vs_module **out, double *accuracy, vs_error *err)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_module *cnn = gap_cnn(train->shape[0], siamese ? 16 : train->n_classes, fine, &r);
    vs_module *m = cnn && siamese ? vs_siamese_new(cnn, VS_SIMILARITY_COSINE) : cnn;
    *out = NULL;
    if (!m) return vs_error_set(err, VS_ERR_NOMEM, "search backbone: %s", vs_last_error()->msg);
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = epochs;
    o.seed = seed;
    o.optim = vs_adam_opts(3e-3f);
    o.progress = progress;
    if (siamese) o.pairing = VS_PAIRING_RANDOM;
    vs_train_result res = {0};
    vs_status st = vs_train(m, train, &o, &res, err);
    if (st == VS_OK) {
        vs_module_train(m, false);
        *accuracy = vs_train_result_get(&res, "test_accuracy");
        *out = m;
    } else {
        vs_module_free(m);
    }
    vs_train_result_clear(&res);
    return st;
}

vs_search_model vs_search_backbone_model(vs_module *m, vs_search_similarity sim)
{
    /* the classifier's embedding: its pooled features; the Siamese model's: its own (pooled, then linear) */
    bool siamese = m->kind == VS_MODULE_SIAMESE;
    vs_module *enc = siamese ? m->children[0] : m;
    int64_t gap = 0; /* the global pool's layer: the feature maps end there */
    while (gap + 1 < enc->n_children && enc->children[gap]->kind != VS_MODULE_GLOBAL_AVG_POOL) gap++;
    return (vs_search_model){.encoder = enc, .split = gap, .end = siamese ? 0 : gap + 1, .similarity = sim};
}
