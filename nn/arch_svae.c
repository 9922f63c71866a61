/* arch_svae.c - the supervised VAEs as composites: the SVAE (encoders q(z|x,y) and q(z|x), decoder
 * p(x|z), classifier p(y|z1)) and Kingma et al.'s M2 (q(y|x), q(z|x,y), p(x|y,z)), both with one
 * hidden layer per network and the value names of versus/svae.h.  Each is written as the model.json
 * "composite" object it is, then built by vs_composite_from_json, so a saved model reads back as the
 * same architecture. */
#include "nn/composite_internal.h"
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TEXT_MAX 4096

/* A growing text; a write past the end marks it truncated (the arguments are checked, so it is not). */
typedef struct text {
    char s[TEXT_MAX];
    size_t n;
    bool full;
} text;

static void put(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s + t->n, sizeof t->s - t->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof t->s - t->n) t->full = true;
    else t->n += (size_t)k;
}

/* "name": {"sequential": [linear in -> hidden, relu, linear hidden -> out]} */
static void mlp(text *t, const char *name, int64_t in, int64_t hidden, int64_t out)
{
    put(t, "\"%s\": {\"sequential\": [{\"op\": \"linear\", \"in\": %lld, \"out\": %lld}, {\"op\": \"relu\"}, "
           "{\"op\": \"linear\", \"in\": %lld, \"out\": %lld}]}",
        name, (long long)in, (long long)hidden, (long long)hidden, (long long)out);
}

/* The inputs "x" (shape input) and "y" ([c]), opening the object. */
static int64_t inputs(text *t, int ndim, const int64_t *input, int64_t c)
{
    int64_t p = 1;
    put(t, "{\"inputs\": {\"x\": [");
    for (int i = 0; i < ndim; i++) put(t, "%s%lld", i ? ", " : "", (long long)input[i]), p *= input[i];
    put(t, "], \"y\": [%lld]}, \"models\": {", (long long)c);
    return p;
}

/* The decoder's reshape to x's shape, the outputs and the task, closing the object. */
static void finish_text(text *t, int ndim, const int64_t *input, const char *outputs, const char *task)
{
    put(t, "{\"op\": \"reshape\", \"in\": \"logits\", \"shape\": [");
    for (int i = 0; i < ndim; i++) put(t, "%s%lld", i ? ", " : "", (long long)input[i]);
    put(t, "], \"out\": \"x_logits\"}], \"outputs\": [%s], \"task\": \"%s\"}", outputs, task);
}

static vs_module *build(const text *t, const char *what, vs_rng *r, vs_error *err)
{
    if (t->full) {
        vs_error_set(err, VS_ERR_ARG, "%s: the architecture's description is too long", what);
        return NULL;
    }
    vs_json *j = NULL;
    if (vs_json_parse(t->s, t->n, what, NULL, &j, err) != VS_OK) return NULL;
    vs_module *m = vs_composite_from_json(j, r, err);
    vs_json_free(j);
    return m;
}

static bool sizes_ok(const char *what, int ndim, const int64_t *input, int64_t c, int64_t hidden, int64_t a, int64_t b,
                     vs_error *err)
{
    const int64_t big = (int64_t)1 << 20;
    bool ok = ndim >= 1 && ndim <= 3 && c >= 2 && c <= 4096 && hidden >= 1 && hidden <= big && a >= 1 && a <= big && b >= 1 && b <= big;
    for (int i = 0; ok && i < ndim; i++) ok = input[i] >= 1 && input[i] <= ((int64_t)1 << 16);
    if (!ok)
        vs_error_set(err, VS_ERR_ARG, "%s: input must have 1 to 3 positive dimensions, 2 to 4096 classes and positive widths", what);
    return ok;
}

vs_module *vs_arch_svae_mlp(int ndim, const int64_t *input, int64_t n_classes, int64_t hidden, int64_t z1, int64_t z2, vs_rng *r,
                            vs_error *err)
{
    if (!sizes_ok("svae", ndim, input, n_classes, hidden, z1, z2, err)) return NULL;
    text t = {.n = 0};
    int64_t p = inputs(&t, ndim, input, n_classes), k = z1 + z2;
    mlp(&t, "enc_xy", p + n_classes, hidden, 2 * k);
    put(&t, ", ");
    mlp(&t, "enc_x", p, hidden, 2 * k);
    put(&t, ", ");
    mlp(&t, "dec", k, hidden, p);
    put(&t, ", \"cls\": {\"op\": \"linear\", \"in\": %lld, \"out\": %lld}}, \"graph\": [", (long long)z1, (long long)n_classes);
    put(&t, "{\"op\": \"flatten\", \"in\": \"x\", \"out\": \"x_flat\"}, "
            "{\"op\": \"concat\", \"in\": [\"x_flat\", \"y\"], \"out\": \"xy\"}, "
            "{\"call\": \"enc_xy\", \"in\": \"xy\", \"out\": \"h_xy\"}, "
            "{\"op\": \"split\", \"in\": \"h_xy\", \"sizes\": [%lld, %lld], \"out\": [\"mu\", \"logvar\"]}, "
            "{\"call\": \"enc_x\", \"in\": \"x_flat\", \"out\": \"h_x\"}, "
            "{\"op\": \"split\", \"in\": \"h_x\", \"sizes\": [%lld, %lld], \"out\": [\"mu_x\", \"logvar_x\"]}, "
            "{\"op\": \"split\", \"in\": \"mu_x\", \"sizes\": [%lld, %lld], \"out\": [\"mu_x1\", \"mu_x2\"]}, "
            "{\"call\": \"cls\", \"in\": \"mu_x1\", \"out\": \"class_logits\"}, "
            "{\"op\": \"reparameterize\", \"in\": [\"mu\", \"logvar\"], \"out\": \"z\"}, "
            "{\"op\": \"split\", \"in\": \"z\", \"sizes\": [%lld, %lld], \"out\": [\"z1\", \"z2\"]}, "
            "{\"call\": \"cls\", \"in\": \"z1\", \"out\": \"y_logits\"}, "
            "{\"call\": \"dec\", \"in\": \"z\", \"out\": \"logits\"}, ",
        (long long)k, (long long)k, (long long)k, (long long)k, (long long)z1, (long long)z2, (long long)z1, (long long)z2);
    finish_text(&t, ndim, input, "\"class_logits\", \"mu\", \"logvar\", \"x_logits\", \"mu_x\", \"logvar_x\", \"y_logits\"", "svae");
    return build(&t, "svae", r, err);
}

vs_module *vs_arch_m2_mlp(int ndim, const int64_t *input, int64_t n_classes, int64_t hidden, int64_t z, vs_rng *r, vs_error *err)
{
    if (!sizes_ok("m2", ndim, input, n_classes, hidden, z, 1, err)) return NULL;
    text t = {.n = 0};
    int64_t p = inputs(&t, ndim, input, n_classes);
    mlp(&t, "enc_y", p, hidden, n_classes);
    put(&t, ", ");
    mlp(&t, "enc_xy", p + n_classes, hidden, 2 * z);
    put(&t, ", ");
    mlp(&t, "dec", z + n_classes, hidden, p);
    put(&t, "}, \"graph\": [");
    put(&t, "{\"op\": \"flatten\", \"in\": \"x\", \"out\": \"x_flat\"}, "
            "{\"call\": \"enc_y\", \"in\": \"x_flat\", \"out\": \"class_logits\"}, "
            "{\"op\": \"concat\", \"in\": [\"x_flat\", \"y\"], \"out\": \"xy\"}, "
            "{\"call\": \"enc_xy\", \"in\": \"xy\", \"out\": \"h_xy\"}, "
            "{\"op\": \"split\", \"in\": \"h_xy\", \"sizes\": [%lld, %lld], \"out\": [\"mu\", \"logvar\"]}, "
            "{\"op\": \"reparameterize\", \"in\": [\"mu\", \"logvar\"], \"out\": \"z\"}, "
            "{\"op\": \"concat\", \"in\": [\"z\", \"y\"], \"out\": \"zy\"}, "
            "{\"call\": \"dec\", \"in\": \"zy\", \"out\": \"logits\"}, ",
        (long long)z, (long long)z);
    finish_text(&t, ndim, input, "\"class_logits\", \"mu\", \"logvar\", \"x_logits\"", "m2");
    return build(&t, "m2", r, err);
}
