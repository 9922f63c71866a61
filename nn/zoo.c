/* zoo.c - the architectures of `versus train --arch`, by name: each entry checks the data and calls
 * a constructor of versus/arch.h.  A new architecture is one entry here. */
#include "versus/arch.h"
#include "versus/zoo.h"

#include <string.h>

/* Fashion-MNIST classes of the CEM-MAF subsets (the bag, class 8, is in neither). */
static const int64_t shoes_classes[] = {5, 7, 9};          /* sandal, sneaker, ankle boot */
static const int64_t clothes_classes[] = {0, 1, 2, 3, 4, 6}; /* T-shirt/top, trouser, pullover, dress, coat, shirt */

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

static vs_module *cem_fashion(const vs_dataset *d, int64_t want, const char *name, vs_rng *r, vs_error *err)
{
    if (!image_shape(d, 1, 28, name, err)) return NULL;
    if (d->n_classes != want) {
        vs_error_set(err, VS_ERR_ARG, "%s classifies %lld classes; the data has %lld (see --classes)", name, (long long)want,
                     (long long)d->n_classes);
        return NULL;
    }
    return vs_arch_cem_fashion(want, r, err);
}

static vs_module *cem_clothes(const vs_dataset *d, vs_rng *r, vs_error *err) { return cem_fashion(d, 6, "cem-fashion-clothes", r, err); }
static vs_module *cem_shoes(const vs_dataset *d, vs_rng *r, vs_error *err) { return cem_fashion(d, 3, "cem-fashion-shoes", r, err); }

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

static const vs_zoo_entry zoo[] = {
    {"ganmex-mnist", "GANMEX A.1 MNIST/SVHN classifier (square images, e.g. mnist-train)", VS_DATA_IMAGES, NULL, 0, NULL, ganmex_mnist},
    {"ganmex-cifar10", "GANMEX A.1 CIFAR10 classifier, widths 32-64-128-256 ([3,32,32] images)", VS_DATA_IMAGES, NULL, 0, NULL,
     ganmex_cifar10},
    {"cem-fashion-clothes",
     "CEM-MAF Table 5 classifier on Fashion-MNIST clothes: classes 0,1,2,3,4,6\n"
     "(T-shirt/top, trouser, pullover, dress, coat, shirt) relabelled 0..5",
     VS_DATA_IMAGES, clothes_classes, 6, NULL, cem_clothes},
    {"cem-fashion-shoes",
     "the same network on Fashion-MNIST shoes: classes 5,7,9 (sandal, sneaker,\n"
     "ankle boot) relabelled 0..2 (the subsets apply to 10-class data; --classes overrides)",
     VS_DATA_IMAGES, shoes_classes, 3, NULL, cem_shoes},
    {"mlp", "tabular classifier: linear p->64, relu, linear 64->classes", VS_DATA_TABULAR, NULL, 0, NULL, mlp},
    {"siamese-mlp", "Siamese MLP on tabular rows: linear p->64, relu, linear 64->32, cosine similarity", VS_DATA_TABULAR, NULL, 0,
     NULL, siamese_mlp},
    {"siamese-gcn", "Siamese GNN on graphs: 3 GCN layers (32 wide) with relu, mean readout, cosine", VS_DATA_GRAPHS, NULL, 0, NULL,
     siamese_gcn},
    {"siamese-gin", "the same with GIN layers", VS_DATA_GRAPHS, NULL, 0, NULL, siamese_gin},
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
