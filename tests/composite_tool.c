/* tests/composite_tool.c - the versus side of the PyTorch round trip (tests/torch_composite.sh):
 *   composite_tool build ARCH DIR            save a zoo model (seed 7) after one training-mode
 *                                            forward (instance-norm running statistics move)
 *   composite_tool eval DIR OUT name=X.npy ... load DIR, evaluate every output from the given
 *                                            values in evaluation mode, write OUT/<output>.npy
 *   composite_tool init SPEC.json DIR        build any model.json with its initialisers (seed 7) and
 *                                            save it untrained (models no task trains, e.g. a pair
 *                                            composite with a learned head)
 * ARCH: stargan-gen (1 channel, 28x28, c_dim 3, conv_dim 8, 2 residual blocks), stargan-critic
 * (3 channels, 32x32, c_dim 5, conv_dim 8, repeat 3), vae (784-400-20 on [1,28,28]). */
#include "versus/versus.h"

#include <stdio.h>
#include <string.h>

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "composite_tool: %s: %s\n", what, msg);
    return 1;
}

static int build(const char *arch, const char *dir)
{
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_error err;
    vs_error_clear(&err);
    vs_module *m = NULL;
    vs_named_tensors given = {0};
    if (strcmp(arch, "stargan-gen") == 0)
        m = vs_arch_stargan_generator(1, 28, 3, 8, 2, &r, &err);
    else if (strcmp(arch, "stargan-critic") == 0)
        m = vs_arch_stargan_critic(3, 32, 5, 8, 3, &r, &err);
    else if (strcmp(arch, "vae") == 0)
        m = vs_arch_vae_mlp(3, (int64_t[]){1, 28, 28}, 400, 20, &r, &err);
    else
        return fail(arch, "unknown architecture");
    if (!m) return fail(arch, err.msg);
    /* one training-mode forward on random inputs, so running statistics are not at their defaults */
    vs_scope_begin();
    for (int64_t i = 0; i < vs_composite_n_inputs(m); i++) {
        int64_t shape[VS_MAX_DIMS] = {4};
        int nd = vs_composite_input_shape(m, i, shape + 1);
        vs_named_tensors_push(&given, vs_composite_input_name(m, i), vs_tensor_randn(nd + 1, shape, &r, 0.5f, 1.0f), false);
    }
    const char *want = vs_composite_output_name(m, 0);
    vs_tensor *y;
    vs_forward_ctx ctx = {.rng = &r};
    int rc = vs_composite_eval(m, &given, 1, &want, &y, &ctx) == VS_OK ? 0 : fail("forward", vs_last_error()->msg);
    vs_scope_end();
    vs_named_tensors_clear(&given);
    vs_module_train(m, false);
    if (!rc && vs_model_save(m, 0, NULL, dir, &err) != VS_OK) rc = fail(dir, err.msg);
    vs_module_free(m);
    return rc;
}

static int eval(const char *dir, const char *out, int n, char **pairs)
{
    vs_error err;
    vs_module *m = vs_model_load(dir, NULL, &err);
    if (!m) return fail(dir, err.msg);
    vs_named_tensors given = {0};
    int rc = 0;
    vs_scope_begin();
    for (int i = 0; i < n && !rc; i++) {
        char *eq = strchr(pairs[i], '=');
        vs_tensor *t = NULL;
        if (!eq) {
            rc = fail(pairs[i], "expected name=file.npy");
            break;
        }
        *eq = 0;
        if (vs_npy_read(eq + 1, &t, &err) != VS_OK) rc = fail(eq + 1, err.msg);
        else vs_named_tensors_push(&given, pairs[i], t, false);
    }
    int64_t no = vs_composite_n_outputs(m);
    const char *want[16];
    vs_tensor *y[16];
    for (int64_t i = 0; i < no && i < 16; i++) want[i] = vs_composite_output_name(m, i);
    if (!rc && vs_composite_eval(m, &given, (int)no, want, y, NULL) != VS_OK) rc = fail("eval", vs_last_error()->msg);
    for (int64_t i = 0; !rc && i < no; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.npy", out, want[i]);
        if (vs_npy_write(path, y[i], &err) != VS_OK) rc = fail(path, err.msg);
    }
    vs_scope_end();
    vs_named_tensors_clear(&given);
    vs_module_free(m);
    return rc;
}

static int init(const char *spec, const char *dir)
{
    vs_rng r;
    vs_rng_seed(&r, 7);
    vs_error err;
    vs_error_clear(&err);
    vs_json *doc = NULL;
    vs_model_spec s = {0};
    vs_module *m = NULL;
    if (vs_json_parse_file(spec, NULL, &doc, &err) == VS_OK && vs_model_spec_from_json(doc, &s, &err) == VS_OK)
        m = vs_model_from_spec(&s, &r, &err);
    int rc = m ? 0 : fail(spec, err.msg);
    if (m) vs_module_train(m, false);
    if (m && vs_model_save(m, s.input_ndim, s.input, dir, &err) != VS_OK) rc = fail(dir, err.msg);
    vs_model_spec_clear(&s);
    vs_json_free(doc);
    vs_module_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    bool grad = vs_set_grad_enabled(false);
    (void)grad;
    if (argc == 4 && strcmp(argv[1], "build") == 0) return build(argv[2], argv[3]);
    if (argc >= 4 && strcmp(argv[1], "eval") == 0) return eval(argv[2], argv[3], argc - 4, argv + 4);
    if (argc == 4 && strcmp(argv[1], "init") == 0) return init(argv[2], argv[3]);
    fprintf(stderr, "usage: composite_tool build ARCH DIR | eval DIR OUT name=X.npy ... | init SPEC.json DIR\n");
    return 2;
}
