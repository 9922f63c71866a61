/* arch.c - the papers' architectures: sequentials as model specs (the same lists model.json holds)
 * and modules built from them; composites (StarGAN, VAEs, the GAN root) built through composite.h. */
#include "nn/internal.h"
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- composite models ---------------------------------------------------------------------------- */

/* Append a node written as JSON with ' for " (the nodes below read like model.json). */
static vs_status node(vs_module *m, vs_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static vs_status node(vs_module *m, vs_error *err, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (char *p = text; *p; p++)
        if (*p == '\'') *p = '"';
    vs_json *j = NULL;
    vs_status st = vs_json_parse(text, strlen(text), "architecture", NULL, &j, err);
    if (st == VS_OK) st = vs_composite_add_node_json(m, j, err);
    vs_json_free(j);
    return st;
}

/* The last error as err's message (constructors report through vs_last_error). */
static vs_status last(vs_error *err, vs_status st)
{
    if (st != VS_OK) vs_error_set(err, st, "%s", vs_last_error()->msg);
    return st;
}

static vs_module *finish(vs_module *m, vs_status st)
{
    if (st == VS_OK) return m;
    vs_module_free(m);
    return NULL;
}

/* conv (no bias) + instance norm (affine, running statistics) + relu, as StarGAN's generator has them. */
static void conv_in_relu(spec_list *l, vs_module_kind op, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
                         bool relu)
{
    vs_layer_spec *s = push(l, op);
    s->in = in, s->out = out, s->kernel = k, s->stride = stride, s->padding = pad, s->bias = 0;
    s = push(l, VS_MODULE_INSTANCE_NORM2D);
    s->features = out, s->affine = 1, s->track_running_stats = 1;
    if (relu) push(l, VS_MODULE_RELU);
}

/* StarGAN's ResidualBlock: x + main(x), main = conv3 IN relu conv3 IN. */
static void stargan_residual(spec_list *l, int64_t dim)
{
    vs_layer_spec *s = push(l, VS_MODULE_RESIDUAL);
    snprintf(s->name, sizeof s->name, "main");
    spec_list b = list_new(0, 0, 0, 0);
    conv_in_relu(&b, VS_MODULE_CONV2D, dim, dim, 3, 1, 1, true);
    conv_in_relu(&b, VS_MODULE_CONV2D, dim, dim, 3, 1, 1, false);
    if (s == &l->sink || !b.s.layers) {
        vs_model_spec_clear(&b.s);
        return; /* no block: building reports it */
    }
    s->block = b.s.layers;
    s->n_block = b.s.n_layers;
}

vs_module *vs_arch_stargan_generator(int64_t channels, int64_t side, int64_t c_dim, int64_t conv_dim, int64_t repeat_num,
                                     vs_rng *r, vs_error *err)
{
    if (side < 4 || side % 4 || channels < 1 || c_dim < 1 || conv_dim < 1 || conv_dim > ((int64_t)1 << 16) || repeat_num < 0 ||
        repeat_num > MAX_ARCH_LAYERS - 20) {
        vs_error_set(err, VS_ERR_ARG,
                     "stargan generator: side %lld must be a positive multiple of 4, channels %lld, c_dim %lld and conv_dim %lld "
                     "positive, repeat_num %lld in [0, %d]",
                     (long long)side, (long long)channels, (long long)c_dim, (long long)conv_dim, (long long)repeat_num,
                     MAX_ARCH_LAYERS - 20);
        return NULL;
    }
    spec_list l = list_new(3, channels + c_dim, side, side);
    int64_t d = conv_dim;
    conv_in_relu(&l, VS_MODULE_CONV2D, channels + c_dim, d, 7, 1, 3, true);
    for (int i = 0; i < 2; i++, d *= 2) conv_in_relu(&l, VS_MODULE_CONV2D, d, 2 * d, 4, 2, 1, true);
    for (int64_t i = 0; i < repeat_num; i++) stargan_residual(&l, d);
    for (int i = 0; i < 2; i++, d /= 2) conv_in_relu(&l, VS_MODULE_CONV_TRANSPOSE2D, d, d / 2, 4, 2, 1, true);
    conv(&l, d, channels, 7, 1, 3, false);
    push(&l, VS_MODULE_TANH);
    vs_module *main = build(l.s, r, err);
    if (!main) return NULL;
    vs_module *m = vs_composite_new();
    vs_status st = m ? VS_OK : last(err, VS_ERR_NOMEM);
    if (!st) st = last(err, vs_composite_add_input(m, "x", VS_SHAPE(channels, side, side)));
    if (!st) st = last(err, vs_composite_add_input(m, "c", VS_SHAPE(c_dim)));
    if (!st) st = last(err, vs_composite_add_model(m, "main", main));
    else vs_module_free(main);
    if (!st) st = node(m, err, "{'op': 'broadcast_planes', 'in': ['c', 'x'], 'out': 'cmap'}");
    if (!st) st = node(m, err, "{'op': 'concat', 'in': ['x', 'cmap'], 'axis': 1, 'out': 'xc'}");
    if (!st) st = node(m, err, "{'call': 'main', 'in': 'xc', 'out': 'y'}");
    if (!st) st = last(err, vs_composite_add_output(m, "y"));
    return finish(m, st);
}

vs_module *vs_arch_stargan_critic(int64_t channels, int64_t side, int64_t c_dim, int64_t conv_dim, int64_t repeat_num,
                                  vs_rng *r, vs_error *err)
{
    int64_t s = side;
    for (int64_t i = 0; i < repeat_num && s >= 2; i++) s = (s + 2 - 4) / 2 + 1;
    if (channels < 1 || c_dim < 0 || conv_dim < 1 || repeat_num < 1 || repeat_num > 16 || (conv_dim << (repeat_num - 1)) > ((int64_t)1 << 20) ||
        s < 1) {
        vs_error_set(err, VS_ERR_ARG,
                     "stargan critic: side %lld is too small for %lld stride-2 convolutions, or channels %lld, c_dim %lld, "
                     "conv_dim %lld, repeat_num %lld out of range",
                     (long long)side, (long long)repeat_num, (long long)channels, (long long)c_dim, (long long)conv_dim,
                     (long long)repeat_num);
        return NULL;
    }
    spec_list l = list_new(3, channels, side, side);
    int64_t d = conv_dim;
    conv(&l, channels, d, 4, 2, 1, true);
    push(&l, VS_MODULE_LEAKY_RELU)->slope = 0.01;
    for (int64_t i = 1; i < repeat_num; i++, d *= 2) {
        conv(&l, d, 2 * d, 4, 2, 1, true);
        push(&l, VS_MODULE_LEAKY_RELU)->slope = 0.01;
    }
    vs_module *main = build(l.s, r, err);
    if (!main) return NULL;
    vs_module *m = vs_composite_new();
    vs_status st = m ? VS_OK : last(err, VS_ERR_NOMEM);
    if (!st) st = last(err, vs_composite_add_input(m, "x", VS_SHAPE(channels, side, side)));
    if (!st) st = last(err, vs_composite_add_model(m, "main", main));
    else vs_module_free(main);
    if (!st) st = last(err, vs_composite_add_model(m, "conv1", vs_conv2d_new(d, 1, 3, 1, 1, false, r)));
    if (!st && c_dim) st = last(err, vs_composite_add_model(m, "conv2", vs_conv2d_new(d, c_dim, s, 1, 0, false, r)));
    if (!st) st = node(m, err, "{'call': 'main', 'in': 'x', 'out': 'h'}");
    if (!st) st = node(m, err, "{'call': 'conv1', 'in': 'h', 'out': 'src'}");
    if (!st && c_dim) st = node(m, err, "{'call': 'conv2', 'in': 'h', 'out': 'cls_map'}");
    if (!st && c_dim) st = node(m, err, "{'op': 'reshape', 'in': 'cls_map', 'shape': [%lld], 'out': 'cls'}", (long long)c_dim);
    if (!st) st = last(err, vs_composite_add_output(m, "src"));
    if (!st && c_dim) st = last(err, vs_composite_add_output(m, "cls"));
    return finish(m, st);
}

vs_module *vs_arch_gan(vs_module *generator, vs_module *critic, vs_error *err)
{
    vs_module *m = vs_composite_new();
    if (!m) {
        vs_module_free(generator);
        vs_module_free(critic);
        last(err, VS_ERR_NOMEM);
        return NULL;
    }
    vs_status st = last(err, vs_composite_add_model(m, "generator", generator));
    if (st) vs_module_free(critic);
    if (!st) st = last(err, vs_composite_add_model(m, "critic", critic));
    if (!st) st = last(err, vs_composite_set_task(m, "gan"));
    return finish(m, st);
}

/* Input x of shape input (one example), flattened to p features when it is an image. */
static vs_status vae_input(vs_module *m, int ndim, const int64_t *input, int64_t *p, vs_error *err)
{
    *p = 1;
    for (int i = 0; i < ndim; i++) *p *= input[i];
    vs_status st = last(err, vs_composite_add_input(m, "x", ndim, input));
    if (!st) st = node(m, err, "{'op': 'flatten', 'in': 'x', 'out': 'x_flat'}");
    return st;
}

/* x_logits: the decoder's logits in x's shape; outputs mu, logvar, x_logits; task vae. */
static vs_status vae_output(vs_module *m, int ndim, const int64_t *input, vs_error *err)
{
    char shape[160];
    size_t k = 0;
    for (int i = 0; i < ndim && k < sizeof shape; i++) k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", i ? ", " : "", (long long)input[i]);
    vs_status st = node(m, err, "{'op': 'reshape', 'in': 'logits', 'shape': [%s], 'out': 'x_logits'}", shape);
    if (!st) st = last(err, vs_composite_add_output(m, "mu"));
    if (!st) st = last(err, vs_composite_add_output(m, "logvar"));
    if (!st) st = last(err, vs_composite_add_output(m, "x_logits"));
    if (!st) st = last(err, vs_composite_set_task(m, "vae"));
    return st;
}

static bool vae_args(const char *what, int ndim, const int64_t *input, int64_t a, int64_t b, vs_error *err)
{
    bool ok = ndim >= 1 && ndim <= 3 && a >= 1 && a <= ((int64_t)1 << 20) && b >= 1 && b <= ((int64_t)1 << 20);
    for (int i = 0; ok && i < ndim; i++) ok = input[i] >= 1 && input[i] <= ((int64_t)1 << 16);
    if (!ok) vs_error_set(err, VS_ERR_ARG, "%s: input must have 1 to 3 positive dimensions and the widths must be positive", what);
    return ok;
}

vs_module *vs_arch_vae_mlp(int ndim, const int64_t *input, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err)
{
    if (!vae_args("vae", ndim, input, hidden, latent, err)) return NULL;
    vs_module *m = vs_composite_new();
    int64_t p = 0;
    vs_status st = m ? vae_input(m, ndim, input, &p, err) : last(err, VS_ERR_NOMEM);
    const char *names[] = {"fc1", "fc21", "fc22", "fc3", "fc4"};
    const int64_t ins[] = {p, hidden, hidden, latent, hidden}, outs[] = {hidden, latent, latent, hidden, p};
    for (int i = 0; i < 5 && !st; i++) st = last(err, vs_composite_add_model(m, names[i], vs_linear_new(ins[i], outs[i], true, r)));
    if (!st) st = node(m, err, "{'call': 'fc1', 'in': 'x_flat', 'out': 'h1_pre'}");
    if (!st) st = node(m, err, "{'op': 'relu', 'in': 'h1_pre', 'out': 'h1'}");
    if (!st) st = node(m, err, "{'call': 'fc21', 'in': 'h1', 'out': 'mu'}");
    if (!st) st = node(m, err, "{'call': 'fc22', 'in': 'h1', 'out': 'logvar'}");
    if (!st) st = node(m, err, "{'op': 'reparameterize', 'in': ['mu', 'logvar'], 'out': 'z'}");
    if (!st) st = node(m, err, "{'call': 'fc3', 'in': 'z', 'out': 'h3_pre'}");
    if (!st) st = node(m, err, "{'op': 'relu', 'in': 'h3_pre', 'out': 'h3'}");
    if (!st) st = node(m, err, "{'call': 'fc4', 'in': 'h3', 'out': 'logits'}");
    if (!st) st = vae_output(m, ndim, input, err);
    return finish(m, st);
}

/* An MLP sequential in -> widths[0] -> ... -> widths[n-1] with relu between the linear layers. */
static vs_module *mlp(int64_t in, const int64_t *widths, int n, vs_rng *r, vs_error *err)
{
    spec_list l = list_new(1, in, 0, 0);
    for (int i = 0; i < n; i++) {
        if (i) push(&l, VS_MODULE_RELU);
        linear(&l, i ? widths[i - 1] : in, widths[i]);
    }
    return build(l.s, r, err);
}

vs_module *vs_arch_dip_vae_mlp(int ndim, const int64_t *input, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err)
{
    if (!vae_args("dip-vae", ndim, input, hidden, latent, err)) return NULL;
    vs_module *m = vs_composite_new();
    int64_t p = 0;
    vs_status st = m ? vae_input(m, ndim, input, &p, err) : last(err, VS_ERR_NOMEM);
    if (!st) st = last(err, vs_composite_add_model(m, "encoder", mlp(p, (int64_t[]){hidden, hidden, 2 * latent}, 3, r, err)));
    if (!st) st = last(err, vs_composite_add_model(m, "decoder", mlp(latent, (int64_t[]){hidden, hidden, hidden, p}, 4, r, err)));
    if (!st) st = node(m, err, "{'call': 'encoder', 'in': 'x_flat', 'out': 'h'}");
    if (!st) st = node(m, err, "{'op': 'split', 'in': 'h', 'axis': 1, 'sizes': [%lld, %lld], 'out': ['mu', 'logvar']}",
                       (long long)latent, (long long)latent);
    if (!st) st = node(m, err, "{'op': 'reparameterize', 'in': ['mu', 'logvar'], 'out': 'z'}");
    if (!st) st = node(m, err, "{'call': 'decoder', 'in': 'z', 'out': 'logits'}");
    if (!st) st = vae_output(m, ndim, input, err);
    return finish(m, st);
}

vs_module *vs_arch_dip_vae_conv(int64_t channels, int64_t side, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err)
{
    if (channels < 1 || channels > 4 || side < 16 || side % 16 != 0 || side > 1024 || hidden < 1 || latent < 1 || latent > 4096) {
        vs_error_set(err, VS_ERR_ARG, "dip-vae-conv: needs 1-4 channels, a side that is a multiple of 16 (16..1024) and positive widths");
        return NULL;
    }
    static const int64_t widths[4] = {32, 32, 64, 64};
    int64_t s = side / 16, flat = 64 * s * s;
    spec_list enc = list_new(3, channels, side, side), dec = list_new(3, 64, s, s);
    for (int i = 0; i < 4; i++) {
        conv(&enc, i ? widths[i - 1] : channels, widths[i], 4, 2, 1, true);
        push(&enc, VS_MODULE_RELU);
    }
    push(&enc, VS_MODULE_FLATTEN);
    linear(&enc, flat, hidden);
    push(&enc, VS_MODULE_RELU);
    linear(&enc, hidden, 2 * latent);
    for (int i = 3; i >= 0; i--) {
        vs_layer_spec *t = push(&dec, VS_MODULE_CONV_TRANSPOSE2D);
        t->in = widths[i], t->out = i ? widths[i - 1] : channels, t->kernel = 4, t->stride = 2, t->padding = 1;
        if (i) push(&dec, VS_MODULE_RELU);
    }
    vs_module *m = vs_composite_new();
    int64_t in[3] = {channels, side, side};
    vs_status st = m ? last(err, vs_composite_add_input(m, "x", 3, in)) : last(err, VS_ERR_NOMEM);
    vs_module *e = build(enc.s, r, err), *d0 = mlp(latent, (int64_t[]){hidden, flat}, 2, r, err), *d1 = build(dec.s, r, err);
    if (!e || !d0 || !d1) {
        vs_module_free(e), vs_module_free(d0), vs_module_free(d1), vs_module_free(m);
        return NULL;
    }
    if (!st) st = last(err, vs_composite_add_model(m, "encoder", e));
    else vs_module_free(e);
    if (!st) st = last(err, vs_composite_add_model(m, "decoder_fc", d0));
    else vs_module_free(d0);
    if (!st) st = last(err, vs_composite_add_model(m, "decoder", d1));
    else vs_module_free(d1);
    if (!st) st = node(m, err, "{'call': 'encoder', 'in': 'x', 'out': 'h'}");
    if (!st) st = node(m, err, "{'op': 'split', 'in': 'h', 'axis': 1, 'sizes': [%lld, %lld], 'out': ['mu', 'logvar']}", (long long)latent,
                       (long long)latent);
    if (!st) st = node(m, err, "{'op': 'reparameterize', 'in': ['mu', 'logvar'], 'out': 'z'}");
    if (!st) st = node(m, err, "{'call': 'decoder_fc', 'in': 'z', 'out': 'hd'}");
    if (!st) st = node(m, err, "{'op': 'relu', 'in': 'hd', 'out': 'hd_relu'}");
    if (!st) st = node(m, err, "{'op': 'reshape', 'in': 'hd_relu', 'shape': [64, %lld, %lld], 'out': 'hd_map'}", (long long)s, (long long)s);
    if (!st) st = node(m, err, "{'call': 'decoder', 'in': 'hd_map', 'out': 'logits'}");
    if (!st) st = vae_output(m, 3, in, err);
    return finish(m, st);
}
