/* arch.c - the papers' architectures as model specs (the same lists model.json holds), and
 * modules built from them. */
#include "nn/internal.h"
#include "versus/arch.h"

#include <stdlib.h>

#define MAX_ARCH_LAYERS 64

/* A spec list under construction; a failed allocation leaves it without layers (building it then
 * fails).  Writes past the capacity (impossible with the argument checks below) go to the sink. */
typedef struct spec_list {
    vs_model_spec s;
    vs_layer_spec sink;
} spec_list;

static spec_list list_new(int ndim, int64_t d0, int64_t d1, int64_t d2)
{
    spec_list l = {0};
    l.s.layers = calloc(MAX_ARCH_LAYERS, sizeof *l.s.layers);
    l.s.input_ndim = ndim;
    l.s.input[0] = d0, l.s.input[1] = d1, l.s.input[2] = d2;
    return l;
}

static vs_layer_spec *push(spec_list *l, vs_module_kind op)
{
    if (!l->s.layers || l->s.n_layers == MAX_ARCH_LAYERS) {
        vs_layer_spec_init(&l->sink, op);
        return &l->sink;
    }
    vs_layer_spec *s = &l->s.layers[l->s.n_layers++];
    vs_layer_spec_init(s, op);
    return s;
}

static void conv(spec_list *l, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias)
{
    vs_layer_spec *s = push(l, VS_MODULE_CONV2D);
    s->in = in, s->out = out, s->kernel = k, s->stride = stride, s->padding = pad, s->bias = bias;
}

static void linear(spec_list *l, int64_t in, int64_t out)
{
    vs_layer_spec *s = push(l, VS_MODULE_LINEAR);
    s->in = in, s->out = out;
}

static void pool(spec_list *l, vs_module_kind op, int64_t k)
{
    push(l, op)->kernel = k;
}

static void dropout(spec_list *l, double p) { push(l, VS_MODULE_DROPOUT)->p = p; }
static void batch_norm2d(spec_list *l, int64_t f) { push(l, VS_MODULE_BATCH_NORM2D)->features = f; }

/* Validity of the spec list, then the module. */
static vs_module *build(vs_model_spec s, vs_rng *r, vs_error *err)
{
    vs_module *m = NULL;
    if (!s.layers)
        vs_error_set(err, VS_ERR_NOMEM, "architecture: out of memory");
    else
        m = vs_model_from_spec(&s, r, err);
    vs_model_spec_clear(&s);
    return m;
}

/* Side after a k6 s2 p2 convolution (0 when the input is too small; shape checks report it). */
static int64_t ganmex_side(int64_t n) { return n + 4 >= 6 ? (n + 4 - 6) / 2 + 1 : 0; }

vs_model_spec vs_arch_ganmex_mnist_spec(int64_t channels, int64_t side, int64_t n_classes)
{
    spec_list l = list_new(3, channels, side, side);
    int64_t s = ganmex_side(ganmex_side(side));
    conv(&l, channels, 32, 6, 2, 2, true);
    push(&l, VS_MODULE_RELU);
    conv(&l, 32, 64, 6, 2, 2, true);
    push(&l, VS_MODULE_RELU);
    push(&l, VS_MODULE_FLATTEN);
    linear(&l, 64 * s * s, 256);
    push(&l, VS_MODULE_RELU);
    dropout(&l, 0.5);
    linear(&l, 256, n_classes);
    return l.s;
}

vs_module *vs_arch_ganmex_mnist(int64_t channels, int64_t side, int64_t n_classes, vs_rng *r, vs_error *err)
{
    return build(vs_arch_ganmex_mnist_spec(channels, side, n_classes), r, err);
}

vs_model_spec vs_arch_ganmex_cifar10_spec(int64_t width, int64_t n_classes)
{
    spec_list l = list_new(3, 3, 32, 32);
    int64_t c = 3;
    for (int u = 0; u < 4; u++) {
        int64_t w = width << u;
        conv(&l, c, w, 3, 1, 1, false);
        batch_norm2d(&l, w);
        push(&l, VS_MODULE_RELU);
        conv(&l, w, w, 3, 1, 1, false);
        batch_norm2d(&l, w);
        push(&l, VS_MODULE_RELU);
        pool(&l, VS_MODULE_AVG_POOL2D, 2);
        c = w;
    }
    push(&l, VS_MODULE_FLATTEN);
    linear(&l, c * 2 * 2, n_classes);
    return l.s;
}

vs_module *vs_arch_ganmex_cifar10(int64_t width, int64_t n_classes, vs_rng *r, vs_error *err)
{
    if (width < 1 || width > ((int64_t)1 << 16)) {
        vs_error_set(err, VS_ERR_ARG, "ganmex cifar10: width %lld must be in [1, 65536]", (long long)width);
        return NULL;
    }
    return build(vs_arch_ganmex_cifar10_spec(width, n_classes), r, err);
}

vs_model_spec vs_arch_cem_fashion_spec(int64_t n_classes)
{
    spec_list l = list_new(3, 1, 28, 28);
    conv(&l, 1, 32, 5, 1, 2, true);
    push(&l, VS_MODULE_RELU);
    pool(&l, VS_MODULE_MAX_POOL2D, 2);
    conv(&l, 32, 64, 5, 1, 2, true);
    push(&l, VS_MODULE_RELU);
    pool(&l, VS_MODULE_MAX_POOL2D, 2);
    push(&l, VS_MODULE_FLATTEN);
    linear(&l, 64 * 7 * 7, 1024);
    push(&l, VS_MODULE_RELU);
    dropout(&l, 0.4);
    linear(&l, 1024, n_classes);
    return l.s;
}

vs_module *vs_arch_cem_fashion(int64_t n_classes, vs_rng *r, vs_error *err)
{
    return build(vs_arch_cem_fashion_spec(n_classes), r, err);
}

vs_model_spec vs_arch_siamese_mlp_spec(int64_t p, int64_t hidden, int64_t embedding)
{
    spec_list l = list_new(1, p, 0, 0);
    l.s.siamese = true;
    l.s.similarity = VS_SIMILARITY_COSINE;
    linear(&l, p, hidden);
    push(&l, VS_MODULE_RELU);
    linear(&l, hidden, embedding);
    return l.s;
}

vs_module *vs_arch_siamese_mlp(int64_t p, int64_t hidden, int64_t embedding, vs_rng *r, vs_error *err)
{
    return build(vs_arch_siamese_mlp_spec(p, hidden, embedding), r, err);
}

vs_model_spec vs_arch_siamese_gnn_spec(vs_module_kind conv_kind, int64_t n_features, int64_t hidden, int64_t n_layers,
                                       int64_t embedding)
{
    spec_list l = list_new(1, n_features, 0, 0);
    l.s.siamese = true;
    l.s.similarity = VS_SIMILARITY_COSINE;
    if (conv_kind != VS_MODULE_GCN_CONV && conv_kind != VS_MODULE_GIN_CONV) return l.s; /* no layers: rejected */
    for (int64_t i = 0; i < n_layers && i < MAX_ARCH_LAYERS / 2; i++) {
        if (i) push(&l, VS_MODULE_RELU);
        vs_layer_spec *s = push(&l, conv_kind);
        s->in = i ? hidden : n_features;
        s->out = i == n_layers - 1 ? embedding : hidden;
        if (conv_kind == VS_MODULE_GIN_CONV) s->hidden = hidden;
    }
    push(&l, VS_MODULE_MEAN_READOUT);
    return l.s;
}

vs_module *vs_arch_siamese_gnn(vs_module_kind conv_kind, int64_t n_features, int64_t hidden, int64_t n_layers,
                               int64_t embedding, vs_rng *r, vs_error *err)
{
    if (conv_kind != VS_MODULE_GCN_CONV && conv_kind != VS_MODULE_GIN_CONV) {
        vs_error_set(err, VS_ERR_ARG, "siamese gnn: convolution must be gcn_conv or gin_conv, not %s",
                     vs_module_kind_name(conv_kind));
        return NULL;
    }
    if (n_layers < 1 || n_layers > MAX_ARCH_LAYERS / 2 - 1) {
        vs_error_set(err, VS_ERR_ARG, "siamese gnn: %lld layers, expected 1 to %d", (long long)n_layers, MAX_ARCH_LAYERS / 2 - 1);
        return NULL;
    }
    return build(vs_arch_siamese_gnn_spec(conv_kind, n_features, hidden, n_layers, embedding), r, err);
}
