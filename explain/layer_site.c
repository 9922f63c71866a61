/* layer_site.c - the layer a layer or neuron method explains, named by a module path: the names of
 * the module tree joined by dots, as PyTorch's named_modules gives them ("3" in a sequential,
 * "encoder.3" in a Siamese model, "main.2" or "fc1" in a composite), or in a composite any value its
 * program computes, by its name or an alias (an imported ONNX graph's node or tensor name,
 * "/layer4/layer4.1/relu_1/Relu").  The model is split there into
 *     head: x -> A (the layer's output)      tail: A -> the model's outputs (the layer's output replaced)
 * A composite child must be called once, with one input, by the composite's program; the tail runs
 * the rest of the program with the model's inputs given, so branches that skip the layer see x.  A
 * Siamese model's tail ends in the similarity to the fixed other side's embedding (site->fixed).
 * What does not resolve is refused with the path and what exists at that level.  vs_explain_layer_shape:
 * the layer's activation shape for a caller that sizes an explanation before asking for it. */
#include "explain/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "versus/composite.h"

/* The first component of path into comp; the rest (after the dot, or "") is returned. */
static const char *first_of(const char *path, char *comp)
{
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    memcpy(comp, path, len);
    comp[len] = '\0';
    return dot ? dot + 1 : path + len;
}

/* The children's names of m, comma separated, into buf. */
static const char *child_list(const vs_module *m, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int64_t i = 0; i < m->n_children && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", m->child_names[i]);
    return m->n_children ? buf : "(none)";
}

/* The program value of composite m that path names as a whole (an alias, or a value a node computes),
 * unless path names a child; NULL otherwise. */
static const char *composite_site_value(const vs_module *m, const char *path)
{
    if (m->kind != VS_MODULE_COMPOSITE || vs_module_child(m, path)) return NULL;
    const char *v = vs_composite_alias_value(m, path);
    if (!v && vs_composite_defines(m, path)) v = path;
    for (int64_t i = 0; v && i < vs_composite_n_inputs(m); i++)
        if (strcmp(v, vs_composite_input_name(m, i)) == 0) return NULL;
    return v;
}

/* What a composite's --layer can name, for messages: an imported graph's aliases (its node and tensor
 * names) as far as they fit, and its models. */
static const char *composite_names(const vs_module *m, char *buf, size_t n)
{
    char models[256];
    child_list(m, models, sizeof models);
    int64_t na = vs_composite_n_aliases(m), i = 0;
    if (!na) {
        snprintf(buf, n, "a composite of %s", models);
        return buf;
    }
    size_t o = (size_t)snprintf(buf, n, "a graph named by its node and tensor names: ");
    for (; i < na && o < n; i++) {
        const char *a = vs_composite_alias(m, i, NULL);
        if (o + strlen(a) + 80 >= n) break;
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", a);
    }
    if (i < na && o < n) o += (size_t)snprintf(buf + o, n - o, " and %lld more (versus import lists them in model.json's \"aliases\")", (long long)(na - i));
    if (o + strlen(models) + 16 < n) snprintf(buf + o, n - o, "; models: %s", models);
    return buf;
}

/* Index of the sequential layer named comp, or -1. */
static int64_t seq_index(const vs_module *m, const char *comp)
{
    for (int64_t i = 0; i < m->n_children; i++)
        if (strcmp(m->child_names[i], comp) == 0) return i;
    return -1;
}

/* The default layer of a sequential: its last conv2d, else the layer before the last. */
static int64_t seq_default(const vs_module *m)
{
    for (int64_t i = m->n_children - 1; i >= 0; i--)
        if (m->children[i]->kind == VS_MODULE_CONV2D) return i;
    return m->n_children - 2;
}

/* Check path below m (a suffix of full; root: m is the model itself). */
static vs_status check(const vs_module *m, const char *full, const char *path, bool root, vs_error *err)
{
    char comp[VS_PARAM_PATH_MAX], names[400];
    const char *rest = first_of(path, comp);
    char where[VS_PARAM_PATH_MAX + 8] = "the model";
    if (!root) snprintf(where, sizeof where, "'%.*s'", (int)(path - full - 1), full);
    const vs_module *child = NULL;
    if (m->kind == VS_MODULE_SEQUENTIAL) {
        int64_t i = seq_index(m, comp);
        if (i < 0)
            return vs_error_set(err, VS_ERR_ARG, "--layer %s: '%s' is not a layer of %s, a sequential of layers 0..%lld", full, comp, where,
                                (long long)m->n_children - 1);
        if (root && !*rest && i == m->n_children - 1)
            return vs_error_set(err, VS_ERR_ARG, "--layer %s: the model's layers are 0..%lld and the last one is its output", full,
                                (long long)m->n_children - 1);
        child = m->children[i];
    } else if (m->kind == VS_MODULE_SIAMESE) {
        if (strcmp(comp, m->child_names[0]) != 0)
            return vs_error_set(err, VS_ERR_ARG, "--layer %s: '%s' is not in %s, a Siamese model whose one child is '%s'", full, comp, where,
                                m->child_names[0]);
        child = m->children[0];
    } else if (m->kind == VS_MODULE_COMPOSITE) {
        int n_in = 0;
        const char *in, *out;
        if (composite_site_value(m, path)) return VS_OK;
        child = vs_module_child(m, comp);
        if (!child)
            return vs_error_set(err, VS_ERR_ARG, "--layer %s: '%s' is not a model or a value of %s, %s", full, *rest ? comp : path, where,
                                composite_names(m, names, sizeof names));
        int calls = vs_composite_calls(m, comp, &n_in, &in, &out);
        if (calls != 1)
            return vs_error_set(err, VS_ERR_ARG, "--layer %s: the composite's program calls '%s' %d times; a layer is called once", full, comp,
                                calls);
        if (n_in != 1) return vs_error_set(err, VS_ERR_ARG, "--layer %s: '%s' takes %d inputs; a layer takes one", full, comp, n_in);
    } else {
        return vs_error_set(err, VS_ERR_ARG, "--layer %s: a %s layer has no sub-modules", full, vs_module_kind_name(m->kind));
    }
    return *rest ? check(child, full, rest, false, err) : VS_OK;
}

vs_status vs_layer_site_find(vs_module *root, const char *path, vs_tensor *fixed, vs_layer_site *s, vs_error *err)
{
    if (!root) return vs_error_set(err, VS_ERR_ARG, "layer methods walk a model's module tree: this model has none");
    *s = (vs_layer_site){.root = root, .fixed = fixed};
    if (path && *path) {
        snprintf(s->path, sizeof s->path, "%s", path);
    } else if (root->kind == VS_MODULE_SEQUENTIAL && root->n_children >= 2) {
        snprintf(s->path, sizeof s->path, "%lld", (long long)seq_default(root));
    } else if (root->kind == VS_MODULE_SIAMESE && root->children[0]->kind == VS_MODULE_SEQUENTIAL && root->children[0]->n_children >= 2) {
        snprintf(s->path, sizeof s->path, "%s.%lld", root->child_names[0], (long long)seq_default(root->children[0]));
    } else {
        char names[400];
        if (vs_composite_n_aliases(root) > 0)
            return vs_error_set(err, VS_ERR_ARG, "name the layer with --layer PATH: the model is %s", composite_names(root, names, sizeof names));
        return vs_error_set(err, VS_ERR_ARG, "name the layer of this %s with --layer PATH (its models: %s)", vs_module_kind_name(root->kind),
                            child_list(root, names, sizeof names));
    }
    return check(root, s->path, s->path, true, err);
}

/* Composite m with {first input: x} and `name` given (name NULL: x alone): value want. */
static vs_tensor *composite_value(vs_module *m, vs_tensor *x, const char *name, vs_tensor *v, const char *want)
{
    vs_named_tensors given = {0};
    vs_tensor *out = NULL;
    if (vs_named_tensors_push(&given, vs_composite_input_name(m, 0), x, false) != VS_OK ||
        (name && vs_named_tensors_push(&given, name, v, false) != VS_OK))
        vs_set_last_error(VS_ERR_NOMEM, "out of memory");
    else
        vs_composite_eval(m, &given, 1, &want, &out, NULL);
    vs_named_tensors_clear(&given);
    return out;
}

static vs_tensor *head(vs_module *m, const char *path, vs_tensor *x)
{
    char comp[VS_PARAM_PATH_MAX];
    const char *rest = first_of(path, comp);
    if (!x) return NULL;
    if (m->kind == VS_MODULE_SEQUENTIAL) {
        int64_t i = seq_index(m, comp);
        return *rest ? head(m->children[i], rest, vs_sequential_forward_range(m, x, NULL, 0, i, NULL))
                     : vs_sequential_forward_range(m, x, NULL, 0, i + 1, NULL);
    }
    if (m->kind == VS_MODULE_SIAMESE) return *rest ? head(m->children[0], rest, x) : vs_module_forward(m->children[0], x, NULL);
    const char *v = composite_site_value(m, path);
    if (v) return composite_value(m, x, NULL, NULL, v);
    int n_in;
    const char *in, *out;
    vs_composite_calls(m, comp, &n_in, &in, &out);
    return *rest ? head(vs_module_child(m, comp), rest, composite_value(m, x, NULL, NULL, in)) : composite_value(m, x, NULL, NULL, out);
}

/* m's outputs for inputs x when the layer at path outputs a; fixed: a Siamese m's other side. */
static vs_tensor *tail(vs_module *m, const char *path, vs_tensor *a, vs_tensor *x, vs_tensor *fixed)
{
    char comp[VS_PARAM_PATH_MAX];
    const char *rest = first_of(path, comp);
    if (!a || !x) return NULL;
    if (m->kind == VS_MODULE_SEQUENTIAL) {
        int64_t i = seq_index(m, comp);
        vs_tensor *y = *rest ? tail(m->children[i], rest, a, vs_sequential_forward_range(m, x, NULL, 0, i, NULL), NULL) : a;
        return y ? vs_sequential_forward_range(m, y, NULL, i + 1, m->n_children, NULL) : NULL;
    }
    if (m->kind == VS_MODULE_SIAMESE) {
        if (!fixed) {
            vs_set_last_error(VS_ERR_ARG, "a Siamese model's layers are explained on pairs: give the other side (--reference)");
            return NULL;
        }
        vs_tensor *q = *rest ? tail(m->children[0], rest, a, x, NULL) : a, *e = vs_module_forward(m->children[0], fixed, NULL);
        if (!q || !e) return NULL;
        if (q->ndim != 2 || e->ndim != 2 || e->shape[1] != q->shape[1]) {
            vs_set_last_error(VS_ERR_SHAPE, "siamese: the embeddings must be [n, dim]");
            return NULL;
        }
        return vs_cosine_similarity(q, vs_expand(e, q->ndim, q->shape), 1, 1e-8f); /* as vs_siamese_forward */
    }
    const char *v = composite_site_value(m, path);
    if (v) return composite_value(m, x, v, a, vs_composite_output_name(m, 0));
    int n_in;
    const char *in, *out;
    vs_composite_calls(m, comp, &n_in, &in, &out);
    vs_tensor *y = *rest ? tail(vs_module_child(m, comp), rest, a, composite_value(m, x, NULL, NULL, in), NULL) : a;
    return y ? composite_value(m, x, out, y, vs_composite_output_name(m, 0)) : NULL;
}

vs_tensor *vs_layer_site_head(const vs_layer_site *s, vs_tensor *x) { return head(s->root, s->path, x); }

vs_tensor *vs_layer_site_tail(const vs_layer_site *s, vs_tensor *a, vs_tensor *x) { return tail(s->root, s->path, a, x, s->fixed); }

vs_status vs_explain_layer_shape(const vs_model_fn *model, const vs_method *m, const vs_method_opts *opts, vs_tensor *x, int *ndim,
                                 int64_t *shape, vs_error *err)
{
    const vs_method_param *p = m ? vs_method_param_find(m, "layer") : NULL;
    if (!m || m->output != VS_OUTPUT_LAYER || !p || p->kind != VS_PARAM_PATH)
        return vs_error_set(err, VS_ERR_ARG, "explain: not a layer method (a layer output and a --layer option)");
    if (!model || !x || x->ndim < 2 || x->shape[0] < 1) return vs_error_set(err, VS_ERR_SHAPE, "%s: inputs must be [N, ...] with N >= 1", m->name);
    if (opts && vs_method_opts_method(opts) != m) return vs_error_set(err, VS_ERR_ARG, "explain: options of another method");
    char layer[VS_PARAM_PATH_MAX] = "";
    if (opts) memcpy(layer, (const unsigned char *)vs_method_opts_data(opts) + p->offset, sizeof layer);
    int64_t row_shape[VS_MAX_DIMS];
    memcpy(row_shape, x->shape, sizeof row_shape);
    row_shape[0] = 1;
    vs_scope_begin();
    bool prev = vs_set_grad_enabled(false);
    vs_layer_site s;
    vs_status st = vs_layer_site_find(model->module, layer, NULL, &s, err);
    vs_tensor *row = st == VS_OK ? vs_tensor_from(x->ndim, row_shape, x->data) : NULL, *a = row ? vs_layer_site_head(&s, row) : NULL;
    if (st == VS_OK && !a) st = vs_error_set(err, VS_ERR_SHAPE, "layer %s: %s", s.path, vs_last_error()->msg);
    if (a) {
        *ndim = a->ndim;
        memcpy(shape, a->shape, (size_t)a->ndim * sizeof *shape);
    }
    vs_scope_end();
    vs_set_grad_enabled(prev);
    if (st == VS_OK) shape[0] = x->shape[0];
    return st;
}
