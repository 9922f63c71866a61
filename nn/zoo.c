/* zoo.c - the architectures of `versus train --arch`, by name: each entry checks the data and calls
 * a constructor of versus/arch.h.  A new architecture is one entry here. */
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/json.h"
#include "versus/zoo.h"

#include <stdio.h>
#include <string.h>

#define MLP_HIDDEN 64
#define SIAMESE_MLP_HIDDEN 64
#define SIAMESE_EMBEDDING 32
#define GNN_HIDDEN 32
#define GNN_LAYERS 3
#define CIFAR_WIDTH 32

static bool image_shape(const vs_dataset *d, int64_t c, int64_t side, const char *name, vs_error *err)
{
    if (d->shape[0] == c && d->shape[1] == side && d->shape[2] == side) return true;
    vs_error_set(err, VS_ERR_ARG, "%s takes [%lld,%lld,%lld] images; %s has [%lld,%lld,%lld]", name, (long long)c, (long long)side,
                 (long long)side, d->name, (long long)d->shape[0], (long long)d->shape[1], (long long)d->shape[2]);
    return false;
}

static vs_module *ganmex_mnist(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    if (d->shape[1] != d->shape[2]) {
        vs_error_set(err, VS_ERR_ARG, "ganmex-mnist needs square images; %s has %lldx%lld", d->name, (long long)d->shape[1],
                     (long long)d->shape[2]);
        return NULL;
    }
    return vs_arch_ganmex_mnist(d->shape[0], d->shape[1], d->n_classes, r, err);
}

static vs_module *ganmex_cifar10(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return image_shape(d, 3, 32, "ganmex-cifar10", err) ? vs_arch_ganmex_cifar10(CIFAR_WIDTH, d->n_classes, r, err) : NULL;
}

static vs_module *cem_fashion(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return image_shape(d, 1, 28, "cem-fashion", err) ? vs_arch_cem_fashion(d->n_classes, r, err) : NULL;
}

/* A plain MLP classifier p -> MLP_HIDDEN -> relu -> n_classes. */
static vs_module *mlp(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t p = d->dim;
    vs_layer_spec l[3];
    vs_layer_spec_init(&l[0], VS_MODULE_LINEAR);
    l[0].in = p, l[0].out = MLP_HIDDEN;
    vs_layer_spec_init(&l[1], VS_MODULE_RELU);
    vs_layer_spec_init(&l[2], VS_MODULE_LINEAR);
    l[2].in = MLP_HIDDEN, l[2].out = d->n_classes;
    return vs_sequential_from_spec(l, 3, 1, &p, r, err);
}

static vs_module *siamese_mlp(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return vs_arch_siamese_mlp(d->dim, SIAMESE_MLP_HIDDEN, SIAMESE_EMBEDDING, r, err);
}

static vs_module *siamese_gcn(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return vs_arch_siamese_gnn(VS_MODULE_GCN_CONV, d->n_node_features, GNN_HIDDEN, GNN_LAYERS, SIAMESE_EMBEDDING, r, err);
}

static vs_module *siamese_gin(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return vs_arch_siamese_gnn(VS_MODULE_GIN_CONV, d->n_node_features, GNN_HIDDEN, GNN_LAYERS, SIAMESE_EMBEDDING, r, err);
}

/* ---- generative models ---------------------------------------------------------------------------- */

#define VAE_HIDDEN 400
#define VAE_LATENT 20
#define DIP_HIDDEN 1200
#define DIP_LATENT 16
#define STARGAN_CONV_DIM 32
#define STARGAN_G_REPEAT 3
#define GANMEX_CONV_DIM 16  /* StarGAN's 64 and 6 blocks, scaled to minutes of CPU training on 28x28 */
#define GANMEX_G_REPEAT 2
#define GAN_MLP_NOISE 64
#define GAN_MLP_HIDDEN 256

static int image_input(const vs_dataset *d, int64_t *in)
{
    for (int i = 0; i < d->ndim; i++) in[i] = d->shape[i];
    return d->ndim;
}

static vs_module *vae(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t in[VS_MAX_DIMS];
    int nd = image_input(d, in);
    return vs_arch_vae_mlp(nd, in, VAE_HIDDEN, VAE_LATENT, r, err);
}

static vs_module *dip_vae(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t in[VS_MAX_DIMS];
    int nd = image_input(d, in);
    return vs_arch_dip_vae_mlp(nd, in, DIP_HIDDEN, DIP_LATENT, r, err);
}

#define DIP_CONV_HIDDEN 256
#define DIP_CONV_LATENT 32

static vs_module *dip_vae_conv(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    if (d->ndim != 3 || d->shape[1] != d->shape[2]) {
        vs_error_set(err, VS_ERR_ARG, "dip-vae-conv needs square images; %s has another shape", d->name);
        return NULL;
    }
    return vs_arch_dip_vae_conv(d->shape[0], d->shape[1], DIP_CONV_HIDDEN, DIP_CONV_LATENT, r, err);
}

/* conv4 s2 p1 halvings that leave a side of at least 2 (3 for 28 and 32). */
static int64_t critic_depth(int64_t side)
{
    int64_t k = 0;
    while (side / 2 >= 2 && k < 6) side /= 2, k++;
    return k;
}

/* StarGAN's generator (conv_dim wide, repeat residual blocks) and critic (with a D_cls head). */
static vs_module *stargan_sized(const vs_dataset *d, int64_t conv_dim, int64_t repeat, vs_rng *r, vs_error *err)
{
    if (d->shape[1] != d->shape[2] || d->shape[1] % 4 != 0) {
        vs_error_set(err, VS_ERR_ARG, "stargan-gen needs square images with a side divisible by 4; %s has %lldx%lld", d->name,
                     (long long)d->shape[1], (long long)d->shape[2]);
        return NULL;
    }
    vs_module *g = vs_arch_stargan_generator(d->shape[0], d->shape[1], d->n_classes, conv_dim, repeat, r, err);
    vs_module *c = g ? vs_arch_stargan_critic(d->shape[0], d->shape[1], d->n_classes, conv_dim, critic_depth(d->shape[1]), r, err)
                     : NULL;
    if (!c) {
        vs_module_free(g);
        return NULL;
    }
    return vs_arch_gan(g, c, err);
}

static vs_module *stargan(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    return stargan_sized(d, STARGAN_CONV_DIM, STARGAN_G_REPEAT, r, err);
}

/* GANMEX: the StarGAN generator and critic (the critic with a D_cls head, trained only by the
 * stand-alone ablation cls=critic) under task "ganmex"; `versus train --classifier DIR` adds S. */
static vs_module *ganmex(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    vs_module *m = stargan_sized(d, GANMEX_CONV_DIM, GANMEX_G_REPEAT, r, err);
    if (m && vs_composite_set_task(m, "ganmex") != VS_OK) {
        vs_error_set(err, VS_ERR_NOMEM, "ganmex: out of memory");
        vs_module_free(m);
        return NULL;
    }
    return m;
}

/* An unconditional MLP GAN: generator z [64] -> 256 -> relu -> p -> sigmoid, reshaped to the image;
 * critic flatten -> 256 -> leaky relu 0.2 -> 1. */
static vs_module *gan_mlp(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t p = d->dim, z = GAN_MLP_NOISE;
    vs_layer_spec g[4], c[4];
    vs_layer_spec_init(&g[0], VS_MODULE_LINEAR);
    g[0].in = z, g[0].out = GAN_MLP_HIDDEN;
    vs_layer_spec_init(&g[1], VS_MODULE_RELU);
    vs_layer_spec_init(&g[2], VS_MODULE_LINEAR);
    g[2].in = GAN_MLP_HIDDEN, g[2].out = p;
    vs_layer_spec_init(&g[3], VS_MODULE_SIGMOID);
    vs_layer_spec_init(&c[0], VS_MODULE_FLATTEN);
    vs_layer_spec_init(&c[1], VS_MODULE_LINEAR);
    c[1].in = p, c[1].out = GAN_MLP_HIDDEN;
    vs_layer_spec_init(&c[2], VS_MODULE_LEAKY_RELU);
    c[2].slope = 0.2;
    vs_layer_spec_init(&c[3], VS_MODULE_LINEAR);
    c[3].in = GAN_MLP_HIDDEN, c[3].out = 1;
    int64_t in[VS_MAX_DIMS];
    int nd = image_input(d, in);
    vs_module *net = vs_sequential_from_spec(g, 4, 1, &z, r, err);
    vs_module *critic = net ? vs_sequential_from_spec(c, 4, nd, in, r, err) : NULL;
    vs_module *gen = critic ? vs_composite_new() : NULL;
    char node[160];
    snprintf(node, sizeof node, "{\"op\": \"reshape\", \"in\": \"h\", \"shape\": [%lld, %lld, %lld], \"out\": \"y\"}",
             (long long)in[0], (long long)in[1], (long long)in[2]);
    vs_json *call = NULL, *reshape = NULL;
    bool ok = gen && vs_composite_add_input(gen, "z", 1, &z) == VS_OK;
    if (gen) {
        ok = vs_composite_add_model(gen, "net", net) == VS_OK && ok;
        net = NULL; /* the composite owns it now (or freed it) */
    }
    const char *call_text = "{\"call\": \"net\", \"in\": \"z\", \"out\": \"h\"}";
    ok = ok && vs_json_parse(call_text, strlen(call_text), "gan-mlp", NULL, &call, err) == VS_OK &&
         vs_json_parse(node, strlen(node), "gan-mlp", NULL, &reshape, err) == VS_OK &&
         vs_composite_add_node_json(gen, call, err) == VS_OK && vs_composite_add_node_json(gen, reshape, err) == VS_OK &&
         vs_composite_add_output(gen, "y") == VS_OK;
    vs_json_free(call);
    vs_json_free(reshape);
    if (!ok) {
        if (err && err->code == VS_OK) vs_error_set(err, VS_ERR_NOMEM, "gan-mlp: %s", vs_last_error()->msg);
        vs_module_free(net);
        vs_module_free(gen);
        vs_module_free(critic);
        return NULL;
    }
    return vs_arch_gan(gen, critic, err);
}

/* The supervised VAEs (versus/svae.h): hidden 500 as Kingma et al.'s M2; z1 of 10 and z2 of 5 as the
 * SVAE paper's Figs. 3 and 7; M2's z matches z2, its one-hot y takes z1's place in the decoder. */
#define SVAE_HIDDEN 500
#define SVAE_Z1 10
#define SVAE_Z2 5

static vs_module *svae(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t in[VS_MAX_DIMS];
    int nd = image_input(d, in);
    return vs_arch_svae_mlp(nd, in, d->n_classes, SVAE_HIDDEN, SVAE_Z1, SVAE_Z2, r, err);
}

static vs_module *m2(const vs_dataset *d, vs_rng *r, vs_error *err)
{
    int64_t in[VS_MAX_DIMS];
    int nd = image_input(d, in);
    return vs_arch_m2_mlp(nd, in, d->n_classes, SVAE_HIDDEN, SVAE_Z2, r, err);
}

static const vs_zoo_entry zoo[] = {
    {"ganmex-mnist", "GANMEX A.1 MNIST/SVHN classifier (square images, e.g. mnist-train)", VS_DATA_IMAGES, NULL, ganmex_mnist},
    {"ganmex-cifar10", "GANMEX A.1 CIFAR10 classifier, widths 32-64-128-256 ([3,32,32] images)", VS_DATA_IMAGES, NULL,
     ganmex_cifar10},
    {"cem-fashion",
     "CEM-MAF Table 5 classifier on [1,28,28] images (Fashion-MNIST); the paper's subsets are\n"
     "--classes 5,7,9 (shoes) and --classes 0,1,2,3,4,6 (clothes), which versus bench cem trains",
     VS_DATA_IMAGES, NULL, cem_fashion},
    {"mlp", "tabular classifier: linear p->64, relu, linear 64->classes", VS_DATA_TABULAR, NULL, mlp},
    {"siamese-mlp", "Siamese MLP on tabular rows: linear p->64, relu, linear 64->32, cosine similarity", VS_DATA_TABULAR,
     NULL, siamese_mlp},
    {"siamese-gcn", "Siamese GNN on graphs: 3 GCN layers (32 wide) with relu, mean readout, cosine", VS_DATA_GRAPHS, NULL,
     siamese_gcn},
    {"siamese-gin", "the same with GIN layers", VS_DATA_GRAPHS, NULL, siamese_gin},
    {"vae", "PyTorch's VAE example: fc p->400, relu, mu/logvar 400->20 each, fc 20->400, relu,\n"
     "400->p Bernoulli logits (task vae; 784-400-20 on MNIST)", VS_DATA_IMAGES, NULL, vae},
    {"dip-vae", "DIP-VAE's MLP (CEM-MAF Table 4): encoder p-1200-1200-2x16, decoder 16-1200-1200-1200-p;\n"
     "task vae with the DIP-VAE-i penalty (dip=i, lambda_od 10, lambda_d 100)", VS_DATA_IMAGES,
     "dip=i,lambda_od=10,lambda_d=100", dip_vae},
    {"dip-vae-ii", "the same MLP with the DIP-VAE-ii penalty (Cov[mu] + E[diag e^logvar]; dip=ii, lambda_od 10, lambda_d 100)",
     VS_DATA_IMAGES, "dip=ii,lambda_od=10,lambda_d=100", dip_vae},
    {"dip-vae-conv", "DIP-VAE's conv net (CEM-MAF Table 3): conv 32-32-64-64 4x4 s2, FC 256, 32 latents, the\n"
     "decoder reversed (square images, side a multiple of 16; dip=i, lambda_od 10, lambda_d 100)", VS_DATA_IMAGES,
     "dip=i,lambda_od=10,lambda_d=100", dip_vae_conv},
    {"stargan-gen", "StarGAN generator G(x, c) (32 wide, 3 residual blocks, tanh) and PatchGAN critic with\n"
     "src/cls heads (task gan, WGAN-GP, images in [-1,1]; square images, side divisible by 4)", VS_DATA_IMAGES,
     "range=tanh", stargan},
    {"ganmex", "GANMEX Eq. 9: StarGAN generator (16 wide, 2 residual blocks) and PatchGAN critic plus the frozen\n"
     "classifier to explain (--classifier DIR); task ganmex (WGAN-GP, class term from S, L1 similarity; images in [-1,1])", VS_DATA_IMAGES,
     NULL, ganmex},
    {"gan-mlp", "unconditional GAN: generator z[64]-256-p sigmoid, critic p-256-1 (task gan, WGAN-GP)", VS_DATA_IMAGES, NULL,
     gan_mlp},
    {"svae", "supervised VAE (Eqs. 6-7): encoders q(z|x,y), q(z|x) p(+C)-500-2x15, decoder 15-500-p, classifier\n"
     "p(y|z1) linear 10->C on z1 (z2: 5 nuisance dims); task svae (alpha, beta)", VS_DATA_IMAGES, NULL, svae},
    {"m2", "Kingma et al.'s M2 with labels (Eq. 8): q(y|x) p-500-C, q(z|x,y) p+C-500-2x5, p(x|y,z) 5+C-500-p;\n"
     "task m2 (alpha, unlabelled)", VS_DATA_IMAGES, NULL, m2},
};
#define ZOO_N ((int)(sizeof zoo / sizeof zoo[0]))

const vs_zoo_entry *vs_zoo_at(int i) { return i >= 0 && i < ZOO_N ? &zoo[i] : NULL; }

const vs_zoo_entry *vs_zoo_find(const char *name)
{
    for (int i = 0; i < ZOO_N; i++)
        if (strcmp(zoo[i].name, name) == 0) return &zoo[i];
    return NULL;
}

static const char *kind_name(vs_data_kind k)
{
    return k == VS_DATA_IMAGES ? "images" : k == VS_DATA_GRAPHS ? "graphs" : "tabular data";
}

vs_module *vs_zoo_build(const vs_zoo_entry *e, const vs_dataset *d, vs_rng *r, vs_error *err)
{
    if (d->kind != e->kind) {
        vs_error_set(err, VS_ERR_ARG, "%s trains on %s; %s holds %s", e->name, kind_name(e->kind), d->name, kind_name(d->kind));
        return NULL;
    }
    return e->build(d, r, err);
}
