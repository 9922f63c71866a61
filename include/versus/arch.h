/* versus/arch.h - the network architectures of the five papers, built in code.
 *
 * The sequential ones fill a model spec (what model.json would hold) and build it with
 * vs_model_from_spec(); the composite ones (StarGAN, VAEs, the GAN root) are built through
 * versus/composite.h with the value names of the training tasks (conventions: "x", "c", "z", "y",
 * "src", "cls", "mu", "logvar", "x_logits").  Either way a model written to disk reads back as the same
 * architecture, and parameter names are those of the PyTorch classes named below.  The returned
 * module is owned by the caller (vs_module_free); weights are PyTorch's default initialisation drawn
 * from r.  NULL with err set on a bad argument.
 */
#ifndef VERSUS_ARCH_H
#define VERSUS_ARCH_H

#include <stdint.h>

#include "versus/error.h"
#include "versus/nn.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GANMEX appendix A.1, MNIST and SVHN classifier: conv c->32 k6 s2 p2, relu, conv 32->64 k6 s2 p2,
 * relu, flatten, linear 64 s^2 -> 256, relu, dropout 0.5, linear 256 -> n_classes, where s is the
 * side after the two convolutions.  MNIST: channels 1, side 28 (s 7, 3136 features); SVHN: channels
 * 3, side 32 (s 8, 4096).  Input [channels, side, side]. */
vs_model_spec vs_arch_ganmex_mnist_spec(int64_t channels, int64_t side, int64_t n_classes);
vs_module *vs_arch_ganmex_mnist(int64_t channels, int64_t side, int64_t n_classes, vs_rng *r, vs_error *err);

/* GANMEX appendix A.1, CIFAR10 classifier: 4 units of [conv 3x3 p1, batch norm, relu, conv 3x3 p1,
 * batch norm, relu, avg pool 2], widths width, 2 width, 4 width, 8 width (the paper leaves them
 * open; width 32 gives 32-64-128-256), then flatten and linear 8 width * 2 * 2 -> n_classes.
 * Input [3,32,32].  Convs before batch norm have no bias. */
vs_model_spec vs_arch_ganmex_cifar10_spec(int64_t width, int64_t n_classes);
vs_module *vs_arch_ganmex_cifar10(int64_t width, int64_t n_classes, vs_rng *r, vs_error *err);

/* CEM-MAF Table 5, Fashion-MNIST clothes (n_classes 6) and shoes (3) classifiers: conv 1->32 k5 p2,
 * relu, max pool 2, conv 32->64 k5 p2, relu, max pool 2, flatten, linear 3136 -> 1024, relu,
 * dropout 0.4, linear 1024 -> n_classes.  Input [1,28,28]. */
vs_model_spec vs_arch_cem_fashion_spec(int64_t n_classes);
vs_module *vs_arch_cem_fashion(int64_t n_classes, vs_rng *r, vs_error *err);

/* Siamese MLP for one-hot tabular rows: encoder linear p -> hidden, relu, linear hidden -> embedding;
 * similarity cosine.  Parameters "encoder.0.weight", ..., "encoder.2.bias". */
vs_model_spec vs_arch_siamese_mlp_spec(int64_t p, int64_t hidden, int64_t embedding);
vs_module *vs_arch_siamese_mlp(int64_t p, int64_t hidden, int64_t embedding, vs_rng *r, vs_error *err);

/* Siamese GNN: encoder of n_layers graph convolutions (conv = VS_MODULE_GCN_CONV or
 * VS_MODULE_GIN_CONV) n_features -> hidden -> ... -> embedding with relu between them, then a mean
 * readout; similarity cosine.  Inputs are node rows with the graph batch in the forward context. */
vs_model_spec vs_arch_siamese_gnn_spec(vs_module_kind conv, int64_t n_features, int64_t hidden, int64_t n_layers,
                                       int64_t embedding);
vs_module *vs_arch_siamese_gnn(vs_module_kind conv, int64_t n_features, int64_t hidden, int64_t n_layers,
                               int64_t embedding, vs_rng *r, vs_error *err);

/* StarGAN's Generator (yunjey/stargan model.py) for `channels`-channel images of side `side` (a
 * multiple of 4: 28 and 32 work): inputs x [channels,side,side] and c [c_dim] (target class one-hot),
 * output y [channels,side,side].  y = main(cat(x, c broadcast to planes)), main = conv7 (channels +
 * c_dim -> conv_dim), two conv4 s2 down-samplings, repeat_num residual blocks (x + main(x), main =
 * conv3 IN relu conv3 IN), two conv-transpose4 s2 up-samplings, conv7 -> channels, tanh; convs without
 * bias, IN = instance norm with affine weights and running statistics, each down/up step IN + relu.
 * Parameters "main.0.weight", ..., "main.9.main.0.weight" as in the PyTorch class (which fixes 3 channels). */
vs_module *vs_arch_stargan_generator(int64_t channels, int64_t side, int64_t c_dim, int64_t conv_dim, int64_t repeat_num,
                                     vs_rng *r, vs_error *err);
/* StarGAN's PatchGAN Discriminator: input x [channels,side,side]; main = repeat_num conv4 s2 p1 with
 * leaky relu 0.01 (conv_dim doubling each time); outputs src = conv1(h) [n,1,s,s] (conv3 p1, no bias)
 * and, when c_dim > 0, cls = conv2(h) reshaped to [n,c_dim] (conv with kernel s, the side left after
 * main: PyTorch's int(image_size / 2^repeat_num) for side 28 or 32). */
vs_module *vs_arch_stargan_critic(int64_t channels, int64_t side, int64_t c_dim, int64_t conv_dim, int64_t repeat_num,
                                  vs_rng *r, vs_error *err);
/* The root of a GAN: a composite with children "generator" and "critic" (both taken, also on
 * failure), no program, task "gan". */
vs_module *vs_arch_gan(vs_module *generator, vs_module *critic, vs_error *err);

/* PyTorch's VAE example (examples/vae/main.py) for inputs of shape input (one example, e.g. [1,28,28]):
 * fc1 p -> hidden, relu, fc21 / fc22 hidden -> latent (mu, logvar), z = reparameterize, fc3 latent
 * -> hidden, relu, fc4 hidden -> p: the Bernoulli decoder's logits (PyTorch applies the sigmoid in
 * decode) reshaped to x's shape.  Outputs mu, logvar, x_logits; task "vae".  784-400-20 for MNIST. */
vs_module *vs_arch_vae_mlp(int ndim, const int64_t *input, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err);
/* DIP-VAE's MLP (CEM-MAF Table 4, Fashion-MNIST: hidden 1200, latent 16): "encoder" = linear p ->
 * hidden, relu, hidden -> hidden, relu, hidden -> 2 latent, split into mu and logvar; "decoder" =
 * latent -> hidden, relu, hidden -> hidden, relu, hidden -> hidden, relu, hidden -> p (logits).
 * Same values and task as vs_arch_vae_mlp. */
vs_module *vs_arch_dip_vae_mlp(int ndim, const int64_t *input, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err);

/* The SVAE of "Learning the invariances of a classifier with a supervised VAE" (Eqs. 6-7) for inputs of
 * shape input and n_classes classes: encoders q(z|x,y) "enc_xy" (p + C -> hidden -> 2 (z1 + z2)) and
 * q(z|x) "enc_x" (p -> hidden -> 2 (z1 + z2)), decoder p(x|z) "dec" (z1 + z2 -> hidden -> p Bernoulli
 * logits), classifier p(y|z1) "cls" (linear z1 -> C); relu after each hidden layer.  Inputs x, y
 * (one-hot); the values of versus/svae.h; task "svae". */
vs_module *vs_arch_svae_mlp(int ndim, const int64_t *input, int64_t n_classes, int64_t hidden, int64_t z1, int64_t z2, vs_rng *r,
                            vs_error *err);
/* Kingma et al.'s M2 with the same networks: q(y|x) "enc_y" (p -> hidden -> C), q(z|x,y) "enc_xy"
 * (p + C -> hidden -> 2 z), p(x|y,z) "dec" (z + C -> hidden -> p); task "m2". */
vs_module *vs_arch_m2_mlp(int ndim, const int64_t *input, int64_t n_classes, int64_t hidden, int64_t z, vs_rng *r, vs_error *err);
/* DIP-VAE's convolutional encoder/decoder (CEM-MAF Table 3, ISIC: 128x128, latent 32, FC 256) for
 * [channels, side, side] images, side a multiple of 16: "encoder" = 4 x (conv 4x4 s2 p1: 32, 32, 64,
 * 64; relu), flatten, linear -> hidden, relu, linear -> 2 latent (mu, logvar); "decoder_fc" = linear
 * latent -> hidden, relu, hidden -> 64 (side/16)^2, relu, reshaped to [64, side/16, side/16];
 * "decoder" = the encoder's convolutions reversed as conv-transposes 4x4 s2 p1 (64, 32, 32, channels)
 * with relu between, giving the logits.  Same values and task as vs_arch_vae_mlp. */
vs_module *vs_arch_dip_vae_conv(int64_t channels, int64_t side, int64_t hidden, int64_t latent, vs_rng *r, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
