/* composite.c - composite models: building the program (inputs, named sub-models, nodes, outputs),
 * evaluating it for wanted values from given ones (vs_module_eval: any module by value names), and
 * introspection.  model.json reading and writing, and the parsing of nodes, live in composite_json.c. */
#include "nn/composite_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_forward_ctx no_ctx;

/* Grow *arr (of elem-sized items, *cap slots) to hold n + 1 items. */
static bool grow(void *arr, int *cap, int n, size_t elem)
{
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 8;
    void *p = realloc(*(void **)arr, (size_t)c * elem);
    if (!p) return false;
    *(void **)arr = p;
    *cap = c;
    return true;
}

static void node_clear(vs_cnode *n)
{
    free(n->in);
    free(n->out);
    free(n->sizes);
    free(n->ints);
    free(n->data);
    vs_module_free(n->layer);
    memset(n, 0, sizeof *n);
}

void vs_program_free(struct vs_program *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_values; i++) free(p->values[i]);
    for (int i = 0; i < p->n_nodes; i++) node_clear(&p->nodes[i]);
    free(p->values);
    free(p->inputs);
    free(p->nodes);
    free(p->outputs);
    free(p->task);
    for (int i = 0; i < p->n_aliases; i++) free(p->aliases[i].name);
    free(p->aliases);
    free(p);
}

int vs_program_find(const struct vs_program *p, const char *name)
{
    for (int i = 0; p && i < p->n_values; i++)
        if (strcmp(p->values[i], name) == 0) return i;
    return -1;
}

static bool is_composite(const vs_module *m, const char *fn)
{
    if (m && m->kind == VS_MODULE_COMPOSITE && m->program) return true;
    vs_set_last_error(VS_ERR_ARG, "%s: the model is %s, not a composite", fn, m ? vs_module_kind_name(m->kind) : "NULL");
    return false;
}

vs_module *vs_composite_new(void)
{
    vs_layer_spec s;
    vs_layer_spec_init(&s, VS_MODULE_COMPOSITE);
    vs_module *m = vs_module_alloc(&s);
    if (m && !(m->program = calloc(1, sizeof *m->program))) {
        vs_module_free(m);
        vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
        return NULL;
    }
    return m;
}

/* A new value called name (an identifier not yet defined); its id or -1 with the last error set. */
static int define(struct vs_program *p, const char *name)
{
    if (!vs_is_identifier(name)) {
        vs_set_last_error(VS_ERR_FORMAT, "\"%s\" is not a name (letters, digits and _, not starting with a digit, at most %d)",
                          name, VS_SPEC_NAME_MAX - 1);
        return -1;
    }
    if (vs_program_find(p, name) >= 0) {
        vs_set_last_error(VS_ERR_FORMAT, "value \"%s\" is already defined", name);
        return -1;
    }
    char *copy = strdup(name);
    if (!copy || !grow(&p->values, &p->cap_values, p->n_values, sizeof *p->values)) {
        free(copy);
        vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
        return -1;
    }
    p->values[p->n_values] = copy;
    return p->n_values++;
}

vs_status vs_composite_add_input(vs_module *m, const char *name, int ndim, const int64_t *shape)
{
    if (!is_composite(m, "vs_composite_add_input")) return VS_ERR_ARG;
    struct vs_program *p = m->program;
    if (shape && (ndim < 0 || ndim > VS_MAX_DIMS - 1))
        return vs_set_last_error(VS_ERR_ARG, "input \"%s\": %d dimensions, expected 0 to %d", name, ndim, VS_MAX_DIMS - 1);
    for (int i = 0; shape && i < ndim; i++)
        if (shape[i] < 1)
            return vs_set_last_error(VS_ERR_ARG, "input \"%s\": dimension %d is %lld, expected a positive size", name, i,
                                     (long long)shape[i]);
    if (!grow(&p->inputs, &p->cap_inputs, p->n_inputs, sizeof *p->inputs))
        return vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    int id = define(p, name);
    if (id < 0) return vs_last_error()->code;
    vs_cinput *in = &p->inputs[p->n_inputs++];
    *in = (vs_cinput){.value = id, .ndim = shape ? ndim : -1};
    if (shape) memcpy(in->shape, shape, (size_t)ndim * sizeof *shape);
    return VS_OK;
}

vs_status vs_composite_add_model(vs_module *m, const char *name, vs_module *child)
{
    if (!is_composite(m, "vs_composite_add_model")) {
        vs_module_free(child);
        return VS_ERR_ARG;
    }
    vs_status st = VS_OK;
    if (!child)
        st = vs_set_last_error(VS_ERR_ARG, "model \"%s\" is missing (the last error: %s)", name, vs_last_error()->msg);
    else if (!vs_is_identifier(name))
        st = vs_set_last_error(VS_ERR_FORMAT, "model name \"%s\" is not a name (letters, digits and _, not starting with a digit)", name);
    else if (vs_module_child(m, name))
        st = vs_set_last_error(VS_ERR_FORMAT, "model \"%s\" is already defined", name);
    if (st != VS_OK) {
        vs_module_free(child);
        return st;
    }
    child->training = m->training;
    return vs_module_add_child(m, name, child);
}

vs_status vs_program_push_node(vs_module *m, vs_cnode *n, const char *const *out_names)
{
    struct vs_program *p = m->program;
    int first = p->n_values;
    vs_status st = VS_OK;
    if (!grow(&p->nodes, &p->cap_nodes, p->n_nodes, sizeof *p->nodes))
        st = vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    for (int i = 0; i < n->n_out && st == VS_OK; i++)
        if ((n->out[i] = define(p, out_names[i])) < 0) st = vs_last_error()->code;
    if (st != VS_OK) {
        /* undo the names this node defined */
        while (p->n_values > first) free(p->values[--p->n_values]);
        node_clear(n);
        return st;
    }
    p->nodes[p->n_nodes++] = *n;
    return VS_OK;
}

vs_status vs_composite_add_output(vs_module *m, const char *name)
{
    if (!is_composite(m, "vs_composite_add_output")) return VS_ERR_ARG;
    struct vs_program *p = m->program;
    int id = vs_program_find(p, name);
    if (id < 0) return vs_set_last_error(VS_ERR_FORMAT, "output \"%s\" is not an input or a node's output", name);
    for (int i = 0; i < p->n_outputs; i++)
        if (p->outputs[i] == id) return vs_set_last_error(VS_ERR_FORMAT, "output \"%s\" is listed twice", name);
    if (!grow(&p->outputs, &p->cap_outputs, p->n_outputs, sizeof *p->outputs))
        return vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    p->outputs[p->n_outputs++] = id;
    return VS_OK;
}

const char *vs_composite_task(const vs_module *m)
{
    return m && m->kind == VS_MODULE_COMPOSITE && m->program ? m->program->task : NULL;
}

vs_status vs_composite_set_task(vs_module *m, const char *task)
{
    if (!is_composite(m, "vs_composite_set_task")) return VS_ERR_ARG;
    char *copy = NULL;
    if (task && !(copy = strdup(task))) return vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    free(m->program->task);
    m->program->task = copy;
    return VS_OK;
}

bool vs_composite_alias_ok(const char *alias)
{
    size_t len = strlen(alias);
    bool ok = len > 0 && len < VS_COMPOSITE_ALIAS_MAX;
    for (size_t i = 0; ok && i < len; i++) ok = isalnum((unsigned char)alias[i]) || strchr("_./:-", alias[i]);
    return ok;
}

vs_status vs_composite_add_alias(vs_module *m, const char *alias, const char *value)
{
    if (!is_composite(m, "vs_composite_add_alias")) return VS_ERR_ARG;
    struct vs_program *p = m->program;
    int id = vs_program_find(p, value);
    if (!vs_composite_alias_ok(alias))
        return vs_set_last_error(VS_ERR_FORMAT, "alias \"%.80s\": expected 1 to %d letters, digits and _ . / : -", alias,
                                 VS_COMPOSITE_ALIAS_MAX - 1);
    if (id < 0) return vs_set_last_error(VS_ERR_FORMAT, "alias \"%s\" names \"%s\", which is not an input or a node's output", alias, value);
    if (vs_composite_alias_value(m, alias)) return vs_set_last_error(VS_ERR_FORMAT, "alias \"%s\" is given twice", alias);
    char *copy = strdup(alias);
    if (!copy || !grow(&p->aliases, &p->cap_aliases, p->n_aliases, sizeof *p->aliases)) {
        free(copy);
        return vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    }
    p->aliases[p->n_aliases++] = (vs_calias){copy, id};
    return VS_OK;
}

const char *vs_composite_alias_value(const vs_module *m, const char *alias)
{
    if (!m || m->kind != VS_MODULE_COMPOSITE || !m->program) return NULL;
    const struct vs_program *p = m->program;
    for (int i = 0; i < p->n_aliases; i++)
        if (strcmp(p->aliases[i].name, alias) == 0) return p->values[p->aliases[i].value];
    return NULL;
}

int64_t vs_composite_n_aliases(const vs_module *m) { return m && m->kind == VS_MODULE_COMPOSITE && m->program ? m->program->n_aliases : 0; }

const char *vs_composite_alias(const vs_module *m, int64_t i, const char **value)
{
    if (i < 0 || i >= vs_composite_n_aliases(m)) return NULL;
    if (value) *value = m->program->values[m->program->aliases[i].value];
    return m->program->aliases[i].name;
}

/* ---- introspection ------------------------------------------------------------------------------- */

int64_t vs_composite_n_inputs(const vs_module *m) { return m && m->kind == VS_MODULE_COMPOSITE && m->program ? m->program->n_inputs : 0; }

const char *vs_composite_input_name(const vs_module *m, int64_t i)
{
    return i >= 0 && i < vs_composite_n_inputs(m) ? m->program->values[m->program->inputs[i].value] : NULL;
}

int vs_composite_input_shape(const vs_module *m, int64_t i, int64_t *shape)
{
    if (i < 0 || i >= vs_composite_n_inputs(m)) return -1;
    const vs_cinput *in = &m->program->inputs[i];
    if (in->ndim > 0) memcpy(shape, in->shape, (size_t)in->ndim * sizeof *shape);
    return in->ndim;
}

int64_t vs_composite_n_outputs(const vs_module *m) { return m && m->kind == VS_MODULE_COMPOSITE && m->program ? m->program->n_outputs : 0; }

const char *vs_composite_output_name(const vs_module *m, int64_t i)
{
    return i >= 0 && i < vs_composite_n_outputs(m) ? m->program->values[m->program->outputs[i]] : NULL;
}

bool vs_composite_defines(const vs_module *m, const char *value)
{
    return m && m->kind == VS_MODULE_COMPOSITE && vs_program_find(m->program, value) >= 0;
}

int vs_composite_calls(const vs_module *m, const char *child, int *n_in, const char **in, const char **out)
{
    if (!m || m->kind != VS_MODULE_COMPOSITE || !m->program) return -1;
    const struct vs_program *p = m->program;
    int calls = 0;
    for (int i = 0; i < p->n_nodes; i++) {
        const vs_cnode *n = &p->nodes[i];
        if (n->kind != VS_CNODE_CALL || strcmp(m->child_names[n->child], child) != 0) continue;
        if (calls++ == 0) {
            *n_in = n->n_in;
            *in = p->values[n->in[0]];
            *out = p->values[n->out[0]];
        }
    }
    return calls;
}

const char *vs_cnode_op_name(const vs_module *m, const vs_cnode *n, char *buf, size_t len)
{
    static const char *const names[] = {
        [VS_CNODE_CONCAT] = "concat", [VS_CNODE_BROADCAST_PLANES] = "broadcast_planes", [VS_CNODE_SPLIT] = "split",
        [VS_CNODE_REPARAMETERIZE] = "reparameterize", [VS_CNODE_ADD] = "add", [VS_CNODE_MUL] = "mul",
        [VS_CNODE_RESHAPE] = "reshape"};
    if (n->kind == VS_CNODE_CALL)
        snprintf(buf, len, "call %s", m->child_names[n->child]);
    else if (n->kind == VS_CNODE_LAYER)
        snprintf(buf, len, "%s", vs_module_kind_name(n->layer->kind));
    else if (n->kind == VS_CNODE_MATH)
        snprintf(buf, len, "%s", vs_cmath_name(n->math));
    else
        snprintf(buf, len, "%s", names[n->kind]);
    return buf;
}

/* ---- evaluation ---------------------------------------------------------------------------------- */

/* A new tensor object over t's data (a recorded view), so a value can be handed out twice. */
static vs_tensor *view(vs_tensor *t) { return vs_reshape(t, t->ndim, t->shape); }

static bool check_input(const vs_module *m, const vs_cinput *in, const vs_tensor *t)
{
    bool ok = in->ndim < 0 || t->ndim == in->ndim + 1;
    for (int i = 0; ok && in->ndim >= 0 && i < in->ndim; i++) ok = t->shape[i + 1] == in->shape[i];
    if (ok) return true;
    char got[96], want[96] = "[n";
    vs_shape_str(t, got, sizeof got);
    size_t k = strlen(want);
    for (int i = 0; i < in->ndim && k < sizeof want; i++)
        k += (size_t)snprintf(want + k, sizeof want - k, ",%lld", (long long)in->shape[i]);
    if (k < sizeof want) snprintf(want + k, sizeof want - k, "]");
    vs_set_last_error(VS_ERR_SHAPE, "input \"%s\" is %s, expected %s", m->program->values[in->value], got, want);
    return false;
}

static int resolve_axis(int axis, int ndim) { return axis < 0 ? ndim + axis : axis; }

static vs_tensor *run_call(vs_module *m, const vs_cnode *n, vs_tensor **vals, const vs_forward_ctx *ctx, vs_tensor **outs)
{
    vs_module *c = m->children[n->child];
    if (c->kind == VS_MODULE_SIAMESE) return outs[0] = vs_siamese_forward(c, vals[n->in[0]], ctx, vals[n->in[1]], NULL);
    if (c->kind != VS_MODULE_COMPOSITE) return outs[0] = vs_module_forward(c, vals[n->in[0]], ctx);
    vs_named_tensors given = {0};
    const char *want[VS_CNODE_MAX_ARGS];
    vs_tensor *res = NULL;
    bool ok = true;
    for (int i = 0; ok && i < n->n_in; i++)
        ok = vs_named_tensors_push(&given, vs_composite_input_name(c, i), vals[n->in[i]], false) == VS_OK;
    for (int i = 0; ok && i < n->n_out; i++) want[i] = vs_composite_output_name(c, i);
    if (ok && vs_composite_eval(c, &given, n->n_out, want, outs, ctx) == VS_OK) res = outs[0];
    else if (!ok) vs_set_last_error(VS_ERR_NOMEM, "out of memory");
    vs_named_tensors_clear(&given);
    return res;
}

static vs_tensor *run_split(const vs_cnode *n, vs_tensor *x, vs_tensor **outs)
{
    int axis = resolve_axis(n->axis, x->ndim);
    if (axis < 1 || axis >= x->ndim) {
        vs_set_last_error(VS_ERR_SHAPE, "axis %d is outside the example dimensions of a %d-d value", n->axis, x->ndim);
        return NULL;
    }
    int64_t total = 0;
    for (int i = 0; i < n->n_out; i++) total += n->sizes[i];
    if (total != x->shape[axis]) {
        vs_set_last_error(VS_ERR_SHAPE, "\"sizes\" add up to %lld, the value has %lld along axis %d", (long long)total,
                          (long long)x->shape[axis], n->axis);
        return NULL;
    }
    for (int64_t i = 0, at = 0; i < n->n_out; at += n->sizes[i], i++)
        if (!(outs[i] = vs_slice(x, axis, at, at + n->sizes[i]))) return NULL;
    return outs[0];
}

/* c [n,k] -> [n,k,H,W] with H, W from x [n,*,H,W]. */
static vs_tensor *broadcast_planes(vs_tensor *c, vs_tensor *x)
{
    if (c->ndim != 2 || x->ndim != 4 || c->shape[0] != x->shape[0]) {
        char a[96], b[96];
        vs_shape_str(c, a, sizeof a);
        vs_shape_str(x, b, sizeof b);
        vs_set_last_error(VS_ERR_SHAPE, "expects a vector per example [n,k] and an image batch [n,c,h,w], got %s and %s", a, b);
        return NULL;
    }
    vs_tensor *c4 = vs_reshape(c, VS_SHAPE(c->shape[0], c->shape[1], 1, 1));
    return vs_expand(c4, VS_SHAPE(c->shape[0], c->shape[1], x->shape[2], x->shape[3]));
}

static vs_tensor *reparameterize(vs_tensor *mu, vs_tensor *logvar, vs_rng *r)
{
    if (!vs_same_shape(mu, logvar)) {
        char a[96], b[96];
        vs_shape_str(mu, a, sizeof a);
        vs_shape_str(logvar, b, sizeof b);
        vs_set_last_error(VS_ERR_SHAPE, "mu %s and logvar %s differ in shape", a, b);
        return NULL;
    }
    if (!r) return view(mu);
    vs_tensor *eps = vs_tensor_randn(mu->ndim, mu->shape, r, 0.0f, 1.0f);
    return vs_add(mu, vs_mul(eps, vs_exp(vs_mul_scalar(logvar, 0.5f))));
}

static vs_tensor *reshape(const vs_cnode *n, vs_tensor *x)
{
    int64_t shape[VS_MAX_DIMS];
    shape[0] = x->ndim > 0 ? x->shape[0] : 1;
    memcpy(shape + 1, n->shape, (size_t)n->ndim * sizeof *shape);
    return vs_reshape(x, n->ndim + 1, shape);
}

/* Run node n: its first output is returned, all of them are stored in outs. */
static vs_tensor *run_node(vs_module *m, const vs_cnode *n, vs_tensor **vals, const vs_forward_ctx *ctx, vs_tensor **outs)
{
    vs_tensor *y = NULL;
    vs_tensor *ins[VS_CNODE_MAX_ARGS];
    int nin = n->n_in;
    for (int i = 0; i < nin; i++) ins[i] = vals[n->in[i]];
    switch (n->kind) {
    case VS_CNODE_CALL:
        return run_call(m, n, vals, ctx, outs);
    case VS_CNODE_SPLIT:
        return run_split(n, ins[0], outs);
    case VS_CNODE_CONCAT: {
        int axis = resolve_axis(n->axis, ins[0]->ndim);
        if (axis < 1 || axis >= ins[0]->ndim) {
            vs_set_last_error(VS_ERR_SHAPE, "axis %d is outside the example dimensions of a %d-d value", n->axis, ins[0]->ndim);
            return NULL;
        }
        y = vs_concat(nin, ins, axis);
        break;
    }
    case VS_CNODE_BROADCAST_PLANES:
        y = broadcast_planes(ins[0], ins[1]);
        break;
    case VS_CNODE_REPARAMETERIZE:
        y = reparameterize(ins[0], ins[1], ctx->rng);
        break;
    case VS_CNODE_ADD:
        y = ins[0];
        for (int i = 1; i < nin; i++) y = vs_add(y, ins[i]);
        break;
    case VS_CNODE_MUL:
        y = vs_mul(ins[0], ins[1]);
        break;
    case VS_CNODE_RESHAPE:
        y = reshape(n, ins[0]);
        break;
    case VS_CNODE_LAYER:
        n->layer->training = m->training;
        y = vs_module_forward(n->layer, ins[0], ctx);
        break;
    case VS_CNODE_MATH:
        y = vs_cmath_run(n, ins);
        break;
    }
    outs[0] = y;
    return y;
}

typedef struct eval_state {
    vs_tensor **vals;
    unsigned char *given, *need, *kept;
    unsigned char *run;
} eval_state;

static void state_free(eval_state *s)
{
    free(s->vals);
    free(s->given);
    free(s->need);
    free(s->kept);
    free(s->run);
}

/* Which nodes run: those with an output that is needed and not given, walking back from the wanted
 * values.  Fails when a needed input is not given. */
static vs_status plan(const vs_module *m, eval_state *s)
{
    const struct vs_program *p = m->program;
    for (int i = p->n_nodes - 1; i >= 0; i--) {
        const vs_cnode *n = &p->nodes[i];
        for (int k = 0; k < n->n_out && !s->run[i]; k++) s->run[i] = s->need[n->out[k]] && !s->given[n->out[k]];
        for (int k = 0; s->run[i] && k < n->n_in; k++) s->need[n->in[k]] = 1;
    }
    for (int i = 0; i < p->n_inputs; i++) {
        int v = p->inputs[i].value;
        if (s->need[v] && !s->given[v]) return vs_set_last_error(VS_ERR_ARG, "input \"%s\" is needed but not given", p->values[v]);
    }
    return VS_OK;
}

/* Without recording, node i's inputs that no later node reads are released as soon as it has run, when
 * this evaluation's scope owns them and no other value still to be read or wanted is the same tensor:
 * an imported resnet18's forward then holds the activations in flight instead of all of them.  last[v]:
 * the last node reading v; keep[v]: wanted or given. */
static void release_dead(const struct vs_program *p, const vs_cnode *n, int i, eval_state *s, const int *last, const unsigned char *keep)
{
    for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        vs_tensor *t = s->vals[v];
        if (!t || last[v] != i || keep[v] || t->scope_depth != vs_scope_depth()) continue;
        bool shared = false;
        for (int u = 0; u < p->n_values && !shared; u++) shared = u != v && s->vals[u] == t && (last[u] > i || keep[u]);
        if (shared) continue;
        for (int u = 0; u < p->n_values; u++)
            if (s->vals[u] == t) s->vals[u] = NULL;
        vs_tensor_free(t);
    }
}

vs_status vs_composite_eval(vs_module *m, const vs_named_tensors *given, int n_want, const char *const *want,
                            vs_tensor **outs, const vs_forward_ctx *ctx)
{
    if (!is_composite(m, "vs_composite_eval")) return VS_ERR_ARG;
    for (int i = 0; i < n_want; i++) outs[i] = NULL;
    const struct vs_program *p = m->program;
    if (!ctx) ctx = &no_ctx;
    size_t nv = (size_t)p->n_values + 1;
    eval_state s = {calloc(nv, sizeof *s.vals), calloc(nv, 1), calloc(nv, 1), calloc(nv, 1), calloc((size_t)p->n_nodes + 1, 1)};
    vs_status st = VS_OK;
    if (!s.vals || !s.given || !s.need || !s.kept || !s.run) st = vs_set_last_error(VS_ERR_NOMEM, "composite: out of memory");
    for (int64_t i = 0; given && st == VS_OK && i < given->n; i++) {
        int v = vs_program_find(p, given->items[i].name);
        if (v < 0)
            st = vs_set_last_error(VS_ERR_ARG, "given value \"%s\" is not defined by the composite", given->items[i].name);
        else if (!given->items[i].tensor) /* the caller's failure to make it (a memory budget) is the message */
            st = vs_last_error()->code != VS_OK ? vs_last_error()->code
                                                : vs_set_last_error(VS_ERR_ARG, "given value \"%s\" was not made", given->items[i].name);
        s.vals[v < 0 ? 0 : v] = given->items[i].tensor;
        if (v >= 0) s.given[v] = 1;
    }
    for (int i = 0; st == VS_OK && i < p->n_inputs; i++)
        if (s.given[p->inputs[i].value] && !check_input(m, &p->inputs[i], s.vals[p->inputs[i].value])) st = VS_ERR_SHAPE;
    for (int i = 0; st == VS_OK && i < n_want; i++) {
        int v = vs_program_find(p, want[i]);
        if (v < 0)
            st = vs_set_last_error(VS_ERR_ARG, "wanted value \"%s\" is not defined by the composite", want[i]);
        else
            s.need[v] = 1;
    }
    if (st == VS_OK) st = plan(m, &s);
    if (st != VS_OK) {
        state_free(&s);
        return st;
    }
    /* the last reader of each value, and the values to keep, when nothing is recorded */
    int *last = vs_grad_enabled() ? NULL : malloc(nv * sizeof *last);
    unsigned char *keep = last ? calloc(nv, 1) : NULL;
    if (last && !keep) free(last), last = NULL;
    for (int v = 0; last && v < (int)nv; v++) last[v] = -1, keep[v] = s.given[v];
    for (int i = 0; last && i < p->n_nodes; i++)
        for (int k = 0; s.run[i] && k < p->nodes[i].n_in; k++) last[p->nodes[i].in[k]] = i;
    for (int i = 0; last && i < n_want; i++) keep[vs_program_find(p, want[i])] = 1;
    vs_scope_begin();
    for (int i = 0; i < p->n_nodes && st == VS_OK; i++) {
        if (!s.run[i]) continue;
        const vs_cnode *n = &p->nodes[i];
        vs_tensor *res[VS_CNODE_MAX_ARGS] = {0};
        if (!run_node(m, n, s.vals, ctx, res)) {
            vs_error e = *vs_last_error();
            char op[64];
            st = vs_set_last_error(e.code, "graph[%d] (%s): %s", i, vs_cnode_op_name(m, n, op, sizeof op), e.msg);
            break;
        }
        for (int k = 0; k < n->n_out; k++)
            if (!s.given[n->out[k]]) s.vals[n->out[k]] = res[k];
        if (last) release_dead(p, n, i, &s, last, keep);
    }
    free(last);
    free(keep);
    for (int i = 0; i < n_want && st == VS_OK; i++) {
        int v = vs_program_find(p, want[i]);
        vs_tensor *t = s.vals[v];
        if (s.given[v] || s.kept[v]) t = view(t); /* given ones belong to the caller; one keep per tensor */
        if (!t) st = vs_last_error()->code;
        s.kept[v] = 1;
        outs[i] = t;
    }
    for (int i = 0; i < n_want; i++) {
        if (st == VS_OK)
            vs_keep(outs[i]);
        else
            outs[i] = NULL; /* released with the scope */
    }
    vs_scope_end();
    state_free(&s);
    return st;
}

vs_tensor *vs_composite_forward_first(vs_module *m, vs_tensor *x, const vs_forward_ctx *ctx)
{
    if (!is_composite(m, "composite forward")) return NULL;
    const struct vs_program *p = m->program;
    if (p->n_inputs < 1 || p->n_outputs < 1) {
        vs_set_last_error(VS_ERR_ARG, "composite forward: the composite has %d inputs and %d outputs, needs at least one of each",
                          p->n_inputs, p->n_outputs);
        return NULL;
    }
    vs_named_tensor item = {.name = p->values[p->inputs[0].value], .tensor = x};
    vs_named_tensors given = {.n = 1, .cap = 1, .items = &item};
    const char *want = p->values[p->outputs[0]];
    vs_tensor *y = NULL;
    return vs_composite_eval(m, &given, 1, &want, &y, ctx) == VS_OK ? y : NULL;
}

vs_status vs_module_eval(vs_module *m, int n_given, const char *const *given_names, vs_tensor *const *given, int n_want,
                         const char *const *want, vs_tensor **outs, vs_rng *rng, vs_error *err)
{
    vs_forward_ctx ctx = {.rng = rng};
    vs_clear_last_error();
    if (m->kind != VS_MODULE_COMPOSITE) {
        if (n_given != 1 || n_want != 1)
            return vs_error_set(err, VS_ERR_ARG, "a %s takes one input and gives one output, not %s", vs_module_kind_name(m->kind),
                                n_want > 1 ? want[1] : given_names[1]);
        outs[0] = vs_module_forward(m, given[0], &ctx);
        return outs[0] ? VS_OK : vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
    }
    vs_named_tensors l = {0};
    vs_status st = VS_OK;
    for (int i = 0; i < n_given && st == VS_OK; i++) st = vs_named_tensors_push(&l, given_names[i], given[i], false);
    if (st != VS_OK) st = vs_error_set(err, VS_ERR_NOMEM, "out of memory");
    if (st == VS_OK && vs_composite_eval(m, &l, n_want, want, outs, &ctx) != VS_OK)
        st = vs_error_set(err, vs_last_error()->code, "%s", vs_last_error()->msg);
    vs_named_tensors_clear(&l);
    return st;
}
