/* module.c - the module tree: allocation, ownership of parameters, buffers and children, mode,
 * PyTorch state_dict naming and loading values into a tree.  Forward passes live in forward.c,
 * layer construction in layers.c and spec.c. */
#include "nn/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vs_tensor *vs_nn_owned(vs_tensor *t)
{
    for (int d = vs_scope_depth(); t && d > 0; d--) vs_keep(t);
    return t;
}

vs_module *vs_module_alloc(const vs_layer_spec *spec)
{
    vs_module *m = calloc(1, sizeof *m);
    if (!m) {
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory", vs_module_kind_name(spec->op));
        return NULL;
    }
    m->kind = spec->op;
    m->training = true;
    m->spec = *spec;
    m->spec.block = NULL;
    m->spec.n_block = 0;
    return m;
}

static vs_tensor *add_tensor(vs_module *m, const char *name, int ndim, const int64_t *shape, bool param)
{
    int *n = param ? &m->n_params : &m->n_buffers;
    if (*n == VS_MODULE_MAX_TENSORS) {
        vs_set_last_error(VS_ERR_STATE, "%s: more than %d tensors", vs_module_kind_name(m->kind), VS_MODULE_MAX_TENSORS);
        return NULL;
    }
    bool prev = vs_set_grad_enabled(false);
    vs_tensor *t = vs_nn_owned(vs_tensor_zeros(ndim, shape));
    vs_set_grad_enabled(prev);
    if (!t) return NULL;
    if (param) {
        vs_set_requires_grad(t, true);
        m->param_names[*n] = name;
        m->params[*n] = t;
    } else {
        m->buffer_names[*n] = name;
        m->buffers[*n] = t;
    }
    (*n)++;
    return t;
}

vs_tensor *vs_module_add_param(vs_module *m, const char *name, int ndim, const int64_t *shape)
{
    return add_tensor(m, name, ndim, shape, true);
}

vs_tensor *vs_module_add_buffer(vs_module *m, const char *name, int ndim, const int64_t *shape)
{
    return add_tensor(m, name, ndim, shape, false);
}

vs_status vs_module_add_child(vs_module *m, const char *name, vs_module *child)
{
    if (!child) return vs_set_last_error(VS_ERR_ARG, "%s: missing child %s", vs_module_kind_name(m->kind), name);
    if (m->n_children == m->cap_children) {
        int64_t cap = m->cap_children ? 2 * m->cap_children : 4;
        vs_module **c = realloc(m->children, (size_t)cap * sizeof *c);
        if (c) m->children = c;
        char **nm = c ? realloc(m->child_names, (size_t)cap * sizeof *nm) : NULL;
        if (nm) m->child_names = nm;
        if (!c || !nm) {
            vs_module_free(child);
            return vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory", vs_module_kind_name(m->kind));
        }
        m->cap_children = cap;
    }
    char *copy = strdup(name);
    if (!copy) {
        vs_module_free(child);
        return vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory", vs_module_kind_name(m->kind));
    }
    m->children[m->n_children] = child;
    m->child_names[m->n_children] = copy;
    m->n_children++;
    return VS_OK;
}

void vs_module_free(vs_module *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_params; i++) vs_tensor_free(m->params[i]);
    for (int i = 0; i < m->n_buffers; i++) vs_tensor_free(m->buffers[i]);
    for (int64_t i = 0; i < m->n_children; i++) {
        vs_module_free(m->children[i]);
        free(m->child_names[i]);
    }
    free(m->children);
    free(m->child_names);
    vs_program_free(m->program);
    free(m);
}

void vs_module_train(vs_module *m, bool training)
{
    if (!m) return;
    m->training = training;
    for (int64_t i = 0; i < m->n_children; i++) vs_module_train(m->children[i], training);
}

vs_tensor *vs_module_param(const vs_module *m, const char *name)
{
    for (int i = 0; i < m->n_params; i++)
        if (strcmp(m->param_names[i], name) == 0) return m->params[i];
    for (int i = 0; i < m->n_buffers; i++)
        if (strcmp(m->buffer_names[i], name) == 0) return m->buffers[i];
    return NULL;
}

vs_module *vs_module_child(const vs_module *m, const char *name)
{
    for (int64_t i = 0; i < m->n_children; i++)
        if (strcmp(m->child_names[i], name) == 0) return m->children[i];
    return NULL;
}

int64_t vs_module_param_count(const vs_module *m)
{
    int64_t n = 0;
    for (int i = 0; i < m->n_params; i++) n += m->params[i]->size;
    for (int64_t i = 0; i < m->n_children; i++) n += vs_module_param_count(m->children[i]);
    return n;
}

void vs_module_zero_grad(vs_module *m)
{
    for (int i = 0; i < m->n_params; i++) vs_zero_grad(m->params[i]);
    for (int64_t i = 0; i < m->n_children; i++) vs_module_zero_grad(m->children[i]);
}

/* ---- named tensors ------------------------------------------------------------------------------ */

vs_status vs_named_tensors_push(vs_named_tensors *l, const char *name, vs_tensor *t, bool is_buffer)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 16;
        vs_named_tensor *it = realloc(l->items, (size_t)cap * sizeof *it);
        if (!it) return vs_set_last_error(VS_ERR_NOMEM, "named tensors: out of memory");
        l->items = it;
        l->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return vs_set_last_error(VS_ERR_NOMEM, "named tensors: out of memory");
    l->items[l->n++] = (vs_named_tensor){.name = copy, .tensor = t, .is_buffer = is_buffer};
    return VS_OK;
}

void vs_named_tensors_clear(vs_named_tensors *l)
{
    for (int64_t i = 0; i < l->n; i++) free(l->items[i].name);
    free(l->items);
    *l = (vs_named_tensors){0};
}

vs_tensor *vs_named_tensors_find(const vs_named_tensors *l, const char *name)
{
    for (int64_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0) return l->items[i].tensor;
    return NULL;
}

/* prefix + name into a fresh string (prefix "" at the root). */
static char *join(const char *prefix, const char *name)
{
    size_t n = strlen(prefix) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", prefix, *prefix ? "." : "", name);
    return s;
}

static vs_status named_rec(const vs_module *m, const char *prefix, unsigned what, vs_named_tensors *out)
{
    vs_status st = VS_OK;
    for (int k = 0; k < 2 && st == VS_OK; k++) {
        bool buffers = k == 1;
        if (!(what & (buffers ? VS_STATE_BUFFERS : VS_STATE_PARAMS))) continue;
        int n = buffers ? m->n_buffers : m->n_params;
        for (int i = 0; i < n && st == VS_OK; i++) {
            char *name = join(prefix, buffers ? m->buffer_names[i] : m->param_names[i]);
            st = name ? vs_named_tensors_push(out, name, buffers ? m->buffers[i] : m->params[i], buffers)
                      : vs_set_last_error(VS_ERR_NOMEM, "named tensors: out of memory");
            free(name);
        }
    }
    for (int64_t i = 0; i < m->n_children && st == VS_OK; i++) {
        char *p = join(prefix, m->child_names[i]);
        st = p ? named_rec(m->children[i], p, what, out) : vs_set_last_error(VS_ERR_NOMEM, "named tensors: out of memory");
        free(p);
    }
    return st;
}

vs_status vs_module_named_tensors(const vs_module *m, unsigned what, vs_named_tensors *out)
{
    return named_rec(m, "", what, out);
}

/* ---- loading values ----------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

vs_status vs_module_load_state(vs_module *m, const vs_named_tensors *src, vs_error *err)
{
    vs_named_tensors own = {0};
    if (vs_module_named_tensors(m, VS_STATE_ALL, &own) != VS_OK)
        return vs_error_set(err, VS_ERR_NOMEM, "load state: out of memory");
    vs_status st = VS_OK;
    /* Check everything before writing anything: a failed load leaves the model as it was. */
    for (int64_t i = 0; i < own.n && st == VS_OK; i++) {
        const vs_tensor *want = own.items[i].tensor, *got = vs_named_tensors_find(src, own.items[i].name);
        if (!got) {
            st = vs_error_set(err, VS_ERR_FORMAT, "tensor %s is missing", own.items[i].name);
        } else if (!vs_same_shape(want, got)) {
            char a[96], b[96];
            vs_shape_str(got, a, sizeof a);
            vs_shape_str(want, b, sizeof b);
            st = vs_error_set(err, VS_ERR_SHAPE, "tensor %s has shape %s, the model expects %s", own.items[i].name, a, b);
        }
    }
    for (int64_t i = 0; i < src->n && st == VS_OK; i++)
        if (!vs_named_tensors_find(&own, src->items[i].name) && !ends_with(src->items[i].name, "num_batches_tracked"))
            st = vs_error_set(err, VS_ERR_FORMAT, "tensor %s is not part of the model", src->items[i].name);
    if (st == VS_OK)
        for (int64_t i = 0; i < own.n; i++) {
            vs_tensor *t = own.items[i].tensor;
            memcpy(t->data, vs_named_tensors_find(src, own.items[i].name)->data, (size_t)t->size * sizeof(float));
        }
    vs_named_tensors_clear(&own);
    return st;
}
