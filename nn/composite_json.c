/* composite_json.c - model.json's "composite" form: program nodes from their JSON objects
 * (vs_composite_add_node_json), a composite module from its object and the object of a module, and
 * the position-keeping JSON copy a model spec holds.  Evaluation lives in composite.c. */
#include "nn/composite_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "file:line:col: " + printf message into err; returns code. */
static vs_status at(vs_error *err, vs_status code, const vs_json *node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static vs_status at(vs_error *err, vs_status code, const vs_json *node, const char *fmt, ...)
{
    char where[256], msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_json_where(node, where, sizeof where);
    return vs_error_set(err, code, "%s: %s", where, msg);
}

/* ---- nodes --------------------------------------------------------------------------------------- */

/* A node's label for messages: "graph[2] (concat)". */
typedef struct node_ctx {
    const vs_json *json;
    char label[96];
    vs_error *err;
} node_ctx;

static vs_status node_err(node_ctx *c, const vs_json *where, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static vs_status node_err(node_ctx *c, const vs_json *where, const char *field, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (field) return at(c->err, VS_ERR_FORMAT, where ? where : c->json, "%s: field \"%s\": %s", c->label, field, msg);
    return at(c->err, VS_ERR_FORMAT, where ? where : c->json, "%s: %s", c->label, msg);
}

/* Names of field "in" or "out": one string or a non-empty array of strings. */
static vs_status names_of(node_ctx *c, const char *field, const char **names, int *n)
{
    const vs_json *v = vs_json_get(c->json, field);
    if (!v) return node_err(c, NULL, field, "missing (a name or a list of names)");
    if (v->type == VS_JSON_STRING) {
        names[0] = v->string;
        *n = 1;
        return strlen(v->string) == v->length ? VS_OK : node_err(c, v, field, "a name cannot hold a NUL byte");
    }
    if (v->type != VS_JSON_ARRAY || v->n < 1 || v->n > VS_CNODE_MAX_ARGS)
        return node_err(c, v, field, "expected a name or a list of 1 to %d names, found %s", VS_CNODE_MAX_ARGS, vs_json_type_name(v->type));
    for (size_t i = 0; i < v->n; i++) {
        const vs_json *s = v->items[i];
        if (s->type != VS_JSON_STRING || strlen(s->string) != s->length)
            return node_err(c, s, field, "item %zu: expected a name, found %s", i, vs_json_type_name(s->type));
        names[i] = s->string;
    }
    *n = (int)v->n;
    return VS_OK;
}

static vs_status arity(node_ctx *c, const char *field, int n, int lo, int hi)
{
    if (n >= lo && n <= hi) return VS_OK;
    const vs_json *v = vs_json_get(c->json, field);
    if (lo == hi) return node_err(c, v, field, "takes %d value%s, got %d", lo, lo == 1 ? "" : "s", n);
    return node_err(c, v, field, "takes %d or more values, got %d", lo, n);
}

/* Keys a node may hold besides "op"/"call", "in" and "out". */
static vs_status only_keys(node_ctx *c, const char *const *extra)
{
    for (size_t i = 0; i < c->json->n; i++) {
        const char *k = c->json->members[i].key;
        bool ok = !strcmp(k, "op") || !strcmp(k, "call") || !strcmp(k, "in") || !strcmp(k, "out");
        for (const char *const *e = extra; !ok && e && *e; e++) ok = strcmp(k, *e) == 0;
        if (!ok) return node_err(c, c->json->members[i].value, k, "unknown field for this node");
    }
    return VS_OK;
}

static vs_status axis_field(node_ctx *c, int *axis)
{
    const vs_json *v = vs_json_get(c->json, "axis");
    *axis = 1;
    if (!v) return VS_OK;
    if (v->type != VS_JSON_NUMBER || !v->is_int || v->integer == 0 || v->integer < -(VS_MAX_DIMS - 1) || v->integer > VS_MAX_DIMS - 1)
        return node_err(c, v, "axis", "expected an integer axis in [1, %d] (or negative, from the end; 0 is the batch)", VS_MAX_DIMS - 1);
    *axis = (int)v->integer;
    return VS_OK;
}

static vs_status sizes_field(node_ctx *c, vs_cnode *n)
{
    const vs_json *v = vs_json_get(c->json, "sizes");
    if (!v) return node_err(c, NULL, "sizes", "missing (one size per output)");
    if (v->type != VS_JSON_ARRAY || (int)v->n != n->n_out)
        return node_err(c, v, "sizes", "expected an array of %d sizes, one per output", n->n_out);
    if (!(n->sizes = calloc(v->n, sizeof *n->sizes))) return vs_error_set(c->err, VS_ERR_NOMEM, "composite: out of memory");
    for (size_t i = 0; i < v->n; i++) {
        const vs_json *s = v->items[i];
        if (s->type != VS_JSON_NUMBER || !s->is_int || s->integer < 1 || s->integer > ((int64_t)1 << 40))
            return node_err(c, s, "sizes", "item %zu: expected a positive integer", i);
        n->sizes[i] = s->integer;
    }
    return VS_OK;
}

static vs_status shape_field(node_ctx *c, vs_cnode *n)
{
    const vs_json *v = vs_json_get(c->json, "shape");
    if (!v) return node_err(c, NULL, "shape", "missing (the shape of one example, one entry may be -1)");
    if (v->type != VS_JSON_ARRAY || v->n < 1 || v->n > VS_MAX_DIMS - 1)
        return node_err(c, v, "shape", "expected an array of 1 to %d sizes", VS_MAX_DIMS - 1);
    int unknown = 0;
    for (size_t i = 0; i < v->n; i++) {
        const vs_json *s = v->items[i];
        if (s->type != VS_JSON_NUMBER || !s->is_int || s->integer == 0 || s->integer < -1 || s->integer > ((int64_t)1 << 40))
            return node_err(c, s, "shape", "item %zu: expected a positive size or -1", i);
        if (s->integer == -1 && unknown++) return node_err(c, s, "shape", "at most one size may be -1");
        n->shape[i] = s->integer;
    }
    n->ndim = (int)v->n;
    return VS_OK;
}

/* A parameter-free layer as a node ({"op": "leaky_relu", "slope": 0.2, ...}). */
static vs_status layer_node(node_ctx *c, vs_module_kind kind, vs_cnode *n)
{
    switch (kind) {
    case VS_MODULE_RELU: case VS_MODULE_LEAKY_RELU: case VS_MODULE_ELU: case VS_MODULE_TANH: case VS_MODULE_SIGMOID:
    case VS_MODULE_SOFTPLUS: case VS_MODULE_FLATTEN: case VS_MODULE_DROPOUT: case VS_MODULE_MAX_POOL2D:
    case VS_MODULE_AVG_POOL2D: case VS_MODULE_GLOBAL_AVG_POOL:
        break;
    default:
        return node_err(c, vs_json_get(c->json, "op"), "op",
                        "\"%s\" has parameters or children: declare it under \"models\" and \"call\" it", vs_module_kind_name(kind));
    }
    static const char *const skip[] = {"in", "out", NULL};
    vs_layer_spec s;
    vs_error e;
    vs_error_clear(&e);
    vs_status st = vs_layer_spec_from_json(c->json, &s, skip, &e);
    if (st == VS_OK) {
        n->layer = vs_layer_new(&s, NULL, &e);
        st = n->layer ? VS_OK : e.code;
    }
    vs_layer_spec_clear(&s);
    if (st == VS_OK) return VS_OK;
    /* the reader's messages start with the position of the bad value: keep it in front */
    const char *rest = strstr(e.msg, ": ");
    if (rest && c->json->source && strncmp(e.msg, c->json->source, strlen(c->json->source)) == 0)
        return vs_error_set(c->err, st, "%.*s: %s: %s", (int)(rest - e.msg), e.msg, c->label, rest + 2);
    return at(c->err, st, c->json, "%s: %s", c->label, e.msg);
}

/* The op-specific part of node n (kind, arity, fields). */
static vs_status op_node(node_ctx *c, const vs_module *m, const char *op, vs_cnode *n)
{
    static const struct {
        const char *name;
        vs_cnode_kind kind;
        int in_lo, in_hi;
        const char *keys[3];
    } ops[] = {
        {"concat", VS_CNODE_CONCAT, 2, VS_CNODE_MAX_ARGS, {"axis"}},
        {"broadcast_planes", VS_CNODE_BROADCAST_PLANES, 2, 2, {0}},
        {"split", VS_CNODE_SPLIT, 1, 1, {"axis", "sizes"}},
        {"reparameterize", VS_CNODE_REPARAMETERIZE, 2, 2, {0}},
        {"add", VS_CNODE_ADD, 2, VS_CNODE_MAX_ARGS, {0}},
        {"mul", VS_CNODE_MUL, 2, 2, {0}},
        {"reshape", VS_CNODE_RESHAPE, 1, 1, {"shape"}},
    };
    (void)m;
    if (vs_cmath_known(op)) return vs_cmath_from_json(c->json, c->label, op, n, c->err);
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        if (strcmp(op, ops[i].name) != 0) continue;
        n->kind = ops[i].kind;
        vs_status st = only_keys(c, ops[i].keys);
        if (!st) st = arity(c, "in", n->n_in, ops[i].in_lo, ops[i].in_hi);
        if (!st && n->kind != VS_CNODE_SPLIT) st = arity(c, "out", n->n_out, 1, 1);
        if (!st && (n->kind == VS_CNODE_CONCAT || n->kind == VS_CNODE_SPLIT)) st = axis_field(c, &n->axis);
        if (!st && n->kind == VS_CNODE_SPLIT) st = sizes_field(c, n);
        if (!st && n->kind == VS_CNODE_RESHAPE) st = shape_field(c, n);
        return st;
    }
    vs_module_kind kind;
    if (!vs_module_kind_from_name(op, &kind))
        return node_err(c, vs_json_get(c->json, "op"), "op",
                        "unknown op \"%s\" (wiring: concat, broadcast_planes, split, reparameterize, add, mul, reshape; "
                        "math: sub, div, max, min, pow, matmul, sqrt, clip, hardsigmoid, hardswish, softmax, log_softmax, "
                        "transpose, reduce_mean, reduce_sum, pad, gather, const; or a parameter-free layer such as relu)", op);
    n->kind = VS_CNODE_LAYER;
    vs_status st = arity(c, "in", n->n_in, 1, 1);
    if (!st) st = arity(c, "out", n->n_out, 1, 1);
    return st ? st : layer_node(c, kind, n);
}

static vs_status call_node(node_ctx *c, const vs_module *m, const char *name, vs_cnode *n)
{
    n->kind = VS_CNODE_CALL;
    n->child = -1;
    for (int64_t i = 0; i < m->n_children; i++)
        if (strcmp(m->child_names[i], name) == 0) n->child = i;
    if (n->child < 0) return node_err(c, vs_json_get(c->json, "call"), "call", "unknown model \"%s\"", name);
    vs_status st = only_keys(c, NULL);
    if (st) return st;
    const vs_module *ch = m->children[n->child];
    if (ch->kind == VS_MODULE_COMPOSITE) {
        int ni = (int)vs_composite_n_inputs(ch), no = (int)vs_composite_n_outputs(ch);
        st = arity(c, "in", n->n_in, ni, ni);
        if (!st && (n->n_out < 1 || n->n_out > no))
            st = node_err(c, vs_json_get(c->json, "out"), "out", "model \"%s\" has %d outputs, %d names given", name, no, n->n_out);
        return st;
    }
    st = arity(c, "in", n->n_in, ch->kind == VS_MODULE_SIAMESE ? 2 : 1, ch->kind == VS_MODULE_SIAMESE ? 2 : 1);
    return st ? st : arity(c, "out", n->n_out, 1, 1);
}

vs_status vs_composite_add_node_json(vs_module *m, const vs_json *node, vs_error *err)
{
    if (!m || m->kind != VS_MODULE_COMPOSITE || !m->program)
        return vs_error_set(err, VS_ERR_ARG, "vs_composite_add_node_json: the model is not a composite");
    node_ctx c = {.json = node, .err = err};
    int idx = m->program->n_nodes;
    snprintf(c.label, sizeof c.label, "graph[%d]", idx);
    if (node->type != VS_JSON_OBJECT) return node_err(&c, NULL, NULL, "a node must be an object");
    const vs_json *call = vs_json_get(node, "call"), *op = vs_json_get(node, "op");
    if (!call == !op) return node_err(&c, NULL, NULL, "a node needs exactly one of \"call\" (a model) and \"op\"");
    const vs_json *what = call ? call : op;
    if (what->type != VS_JSON_STRING || strlen(what->string) != what->length)
        return node_err(&c, what, call ? "call" : "op", "expected a name, found %s", vs_json_type_name(what->type));
    snprintf(c.label, sizeof c.label, "graph[%d] (%s%.60s)", idx, call ? "call " : "", what->string);

    const char *in[VS_CNODE_MAX_ARGS], *out[VS_CNODE_MAX_ARGS];
    vs_cnode n = {0};
    bool no_in = op && !vs_json_get(node, "in") && vs_cmath_arity(op->string) == 0; /* a constant */
    vs_status st = no_in ? VS_OK : names_of(&c, "in", in, &n.n_in);
    if (!st) st = names_of(&c, "out", out, &n.n_out);
    if (!st && (!(n.in = calloc((size_t)n.n_in + 1, sizeof *n.in)) || !(n.out = calloc((size_t)n.n_out, sizeof *n.out))))
        st = vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
    for (int i = 0; !st && i < n.n_in; i++)
        if ((n.in[i] = vs_program_find(m->program, in[i])) < 0)
            st = node_err(&c, vs_json_get(node, "in"), "in", "unknown value \"%s\" (not an input nor an earlier node's output)", in[i]);
    if (!st) st = call ? call_node(&c, m, call->string, &n) : op_node(&c, m, op->string, &n);
    if (st) {
        free(n.in);
        free(n.out);
        free(n.sizes);
        free(n.ints);
        free(n.data);
        vs_module_free(n.layer);
        return st;
    }
    if (vs_program_push_node(m, &n, out) != VS_OK)
        return node_err(&c, vs_json_get(node, "out"), "out", "%s", vs_last_error()->msg);
    return VS_OK;
}

/* ---- a composite from its object ----------------------------------------------------------------- */

static vs_status inputs_from_json(vs_module *m, const vs_json *v, vs_error *err)
{
    if (v->type != VS_JSON_OBJECT)
        return at(err, VS_ERR_FORMAT, v, "\"inputs\" must be an object of name: shape of one example");
    for (size_t i = 0; i < v->n; i++) {
        const vs_json *s = v->members[i].value;
        const char *name = v->members[i].key;
        int64_t shape[VS_MAX_DIMS];
        bool known = s->type != VS_JSON_NULL;
        if (known && (s->type != VS_JSON_ARRAY || s->n > VS_MAX_DIMS - 1))
            return at(err, VS_ERR_FORMAT, s, "input \"%s\": expected the shape of one example (an array of at most %d sizes) or null",
                      name, VS_MAX_DIMS - 1);
        for (size_t k = 0; known && k < s->n; k++) {
            vs_error e;
            if (vs_json_int(s->items[k], 1, (int64_t)1 << 31, &shape[k], &e) != VS_OK)
                return at(err, VS_ERR_FORMAT, s->items[k], "input \"%s\": dimension %zu: expected a positive size", name, k);
        }
        if (vs_composite_add_input(m, name, known ? (int)s->n : -1, known ? shape : NULL) != VS_OK)
            return at(err, vs_last_error()->code, s, "input \"%s\": %s", name, vs_last_error()->msg);
    }
    return VS_OK;
}

/* One MODEL of "models": a LAYER ({"op": ...}) or a model body. */
static vs_module *child_from_json(const vs_json *v, const char *name, vs_rng *r, vs_error *err)
{
    if (v->type != VS_JSON_OBJECT) {
        at(err, VS_ERR_FORMAT, v, "model \"%s\": expected an object ({\"sequential\": [...]}, {\"composite\": {...}}, "
           "{\"siamese\": {...}} or a layer {\"op\": ...})", name);
        return NULL;
    }
    vs_error e;
    vs_error_clear(&e);
    vs_module *m = NULL;
    if (vs_json_get(v, "op")) {
        vs_layer_spec s;
        if (vs_layer_spec_from_json(v, &s, NULL, err) == VS_OK && !(m = vs_layer_new(&s, r, &e)))
            at(err, e.code, v, "model \"%s\": %s", name, e.msg);
        vs_layer_spec_clear(&s);
        return m;
    }
    vs_model_spec spec = {0};
    if (vs_model_body_from_json(v, &spec, true, err) == VS_OK && !(m = vs_model_from_spec(&spec, r, &e)))
        vs_error_set(err, e.code, "model \"%s\": %s", name, e.msg);
    vs_model_spec_clear(&spec);
    return m;
}

/* Every node run once, without gradients, on a zero example of each input (when every input's
 * shape is known): a mismatched add, concat or split is refused when the model is read, not when
 * an output first needs it. */
static vs_status dry_run(vs_module *m, vs_error *err)
{
    const struct vs_program *p = m->program;
    for (int i = 0; i < p->n_inputs; i++)
        if (p->inputs[i].ndim < 0 || p->inputs[i].ndim + 1 > VS_MAX_DIMS) return VS_OK;
    int n_want = p->n_values - p->n_inputs;
    const char **want = calloc((size_t)(n_want > 0 ? n_want : 1), sizeof *want);
    vs_tensor **outs = calloc((size_t)(n_want > 0 ? n_want : 1), sizeof *outs);
    vs_named_tensors given = {0};
    vs_status st = want && outs ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
    bool grad = vs_set_grad_enabled(false), training = m->training;
    vs_module_train(m, false);
    vs_scope_begin();
    for (int i = 0; st == VS_OK && i < p->n_inputs; i++) {
        int64_t shape[VS_MAX_DIMS] = {1};
        for (int k = 0; k < p->inputs[i].ndim; k++) shape[k + 1] = p->inputs[i].shape[k];
        vs_tensor *x = vs_tensor_zeros(p->inputs[i].ndim + 1, shape);
        if (!x || vs_named_tensors_push(&given, p->values[p->inputs[i].value], x, false) != VS_OK)
            st = vs_error_set(err, VS_ERR_NOMEM, "composite: input \"%s\": %s", p->values[p->inputs[i].value],
                              x ? "out of memory" : vs_last_error()->msg);
    }
    int k = 0;
    for (int v = 0; v < p->n_values; v++) {
        bool input = false;
        for (int i = 0; i < p->n_inputs; i++) input |= p->inputs[i].value == v;
        if (!input && k < n_want) want[k++] = p->values[v];
    }
    if (st == VS_OK && k > 0 && vs_composite_eval(m, &given, k, want, outs, NULL) != VS_OK)
        st = vs_error_set(err, vs_last_error()->code, "composite: the graph does not fit its inputs' shapes: %s", vs_last_error()->msg);
    vs_scope_end();
    vs_module_train(m, training);
    vs_set_grad_enabled(grad);
    vs_named_tensors_clear(&given);
    free(want);
    free(outs);
    return st;
}

vs_module *vs_composite_from_json(const vs_json *obj, vs_rng *r, vs_error *err)
{
    static const char *const keys[] = {"inputs", "models", "graph", "outputs", "task", "aliases"};
    if (obj->type != VS_JSON_OBJECT) {
        at(err, VS_ERR_FORMAT, obj, "\"composite\" must be an object");
        return NULL;
    }
    for (size_t i = 0; i < obj->n; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) known = known || strcmp(obj->members[i].key, keys[k]) == 0;
        if (!known) {
            at(err, VS_ERR_FORMAT, obj->members[i].value,
               "unknown key \"%s\" in a composite (expected inputs, models, graph, outputs, task, aliases)", obj->members[i].key);
            return NULL;
        }
    }
    vs_module *m = vs_composite_new();
    if (!m) {
        vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
        return NULL;
    }
    const vs_json *inputs = vs_json_get(obj, "inputs"), *models = vs_json_get(obj, "models"), *graph = vs_json_get(obj, "graph"),
                  *outputs = vs_json_get(obj, "outputs"), *task = vs_json_get(obj, "task"), *aliases = vs_json_get(obj, "aliases");
    vs_status st = inputs ? inputs_from_json(m, inputs, err) : VS_OK;
    if (!st && models && models->type != VS_JSON_OBJECT)
        st = at(err, VS_ERR_FORMAT, models, "\"models\" must be an object of name: model");
    for (size_t i = 0; !st && models && i < models->n; i++) {
        const char *name = models->members[i].key;
        vs_module *c = child_from_json(models->members[i].value, name, r, err);
        if (!c) st = err ? err->code : VS_ERR_FORMAT;
        else if (vs_composite_add_model(m, name, c) != VS_OK)
            st = at(err, vs_last_error()->code, models->members[i].value, "%s", vs_last_error()->msg);
    }
    if (!st && graph && graph->type != VS_JSON_ARRAY) st = at(err, VS_ERR_FORMAT, graph, "\"graph\" must be an array of nodes");
    for (size_t i = 0; !st && graph && i < graph->n; i++) st = vs_composite_add_node_json(m, graph->items[i], err);
    if (!st && outputs && outputs->type != VS_JSON_ARRAY) st = at(err, VS_ERR_FORMAT, outputs, "\"outputs\" must be an array of names");
    for (size_t i = 0; !st && outputs && i < outputs->n; i++) {
        const vs_json *o = outputs->items[i];
        if (o->type != VS_JSON_STRING || strlen(o->string) != o->length)
            st = at(err, VS_ERR_FORMAT, o, "\"outputs\" item %zu: expected a name, found %s", i, vs_json_type_name(o->type));
        else if (vs_composite_add_output(m, o->string) != VS_OK)
            st = at(err, vs_last_error()->code, o, "%s", vs_last_error()->msg);
    }
    if (!st && task) {
        const char *t;
        if (vs_json_str(task, &t, err) != VS_OK) st = err ? err->code : VS_ERR_FORMAT;
        else if (!vs_is_identifier(t)) st = at(err, VS_ERR_FORMAT, task, "\"task\" must be a task name such as \"gan\" or \"vae\"");
        else if (vs_composite_set_task(m, t) != VS_OK) st = vs_error_set(err, VS_ERR_NOMEM, "composite: out of memory");
    }
    if (!st && aliases && aliases->type != VS_JSON_OBJECT) st = at(err, VS_ERR_FORMAT, aliases, "\"aliases\" must be an object of alias: value name");
    for (size_t i = 0; !st && aliases && i < aliases->n; i++) {
        const vs_json *v = aliases->members[i].value;
        if (v->type != VS_JSON_STRING || strlen(v->string) != v->length)
            st = at(err, VS_ERR_FORMAT, v, "\"aliases\": \"%.80s\": expected a value name, found %s", aliases->members[i].key,
                    vs_json_type_name(v->type));
        else if (vs_composite_add_alias(m, aliases->members[i].key, v->string) != VS_OK)
            st = at(err, vs_last_error()->code, v, "\"aliases\": %s", vs_last_error()->msg);
    }
    if (!st && vs_composite_n_outputs(m) == 0 && m->program->n_nodes > 0) /* a graph whose values nobody can get (a GAN's
                                                                            * holder of models has no graph) */
        st = at(err, VS_ERR_FORMAT, outputs ? outputs : obj, "a composite with a graph needs \"outputs\": at least one value it computes");
    if (!st) st = dry_run(m, err);
    if (st) {
        vs_module_free(m);
        return NULL;
    }
    return m;
}

/* ---- the object of a composite ------------------------------------------------------------------- */

static vs_json *names_json(const struct vs_program *p, const int *ids, int n, bool list)
{
    if (n == 1 && !list) return vs_json_new_string(p->values[ids[0]]);
    vs_json *a = vs_json_new_array();
    for (int i = 0; a && i < n; i++)
        if (vs_json_push(a, vs_json_new_string(p->values[ids[i]])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

static vs_json *node_json(const vs_module *m, const vs_cnode *n, vs_error *err)
{
    const struct vs_program *p = m->program;
    char op[64];
    vs_json *o = n->kind == VS_CNODE_LAYER ? vs_layer_to_json(n->layer, err) : vs_json_new_object();
    bool ok = o != NULL;
    if (ok && n->kind == VS_CNODE_CALL) ok = vs_json_set(o, "call", vs_json_new_string(m->child_names[n->child])) == VS_OK;
    else if (ok && n->kind != VS_CNODE_LAYER) ok = vs_json_set(o, "op", vs_json_new_string(vs_cnode_op_name(m, n, op, sizeof op))) == VS_OK;
    bool list_in = n->kind == VS_CNODE_CONCAT || n->kind == VS_CNODE_ADD;
    if (n->n_in) ok = ok && vs_json_set(o, "in", names_json(p, n->in, n->n_in, list_in || n->kind == VS_CNODE_MATH)) == VS_OK;
    if (ok && n->kind == VS_CNODE_MATH) ok = vs_cmath_to_json(n, o) == VS_OK;
    if (ok && (n->kind == VS_CNODE_CONCAT || n->kind == VS_CNODE_SPLIT)) ok = vs_json_set(o, "axis", vs_json_new_int(n->axis)) == VS_OK;
    if (ok && n->kind == VS_CNODE_SPLIT) ok = vs_json_set(o, "sizes", vs_json_new_int_array(n->sizes, n->n_out)) == VS_OK;
    if (ok && n->kind == VS_CNODE_RESHAPE) ok = vs_json_set(o, "shape", vs_json_new_int_array(n->shape, n->ndim)) == VS_OK;
    ok = ok && vs_json_set(o, "out", names_json(p, n->out, n->n_out, n->kind == VS_CNODE_SPLIT)) == VS_OK;
    if (!ok) {
        vs_json_free(o);
        if (!err || err->code == VS_OK) vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        return NULL;
    }
    return o;
}

static vs_json *child_json(const vs_module *c, vs_error *err)
{
    if (c->kind != VS_MODULE_SEQUENTIAL && c->kind != VS_MODULE_SIAMESE && c->kind != VS_MODULE_COMPOSITE)
        return vs_layer_to_json(c, err);
    vs_json *o = vs_json_new_object();
    if (!o) {
        vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        return NULL;
    }
    if (vs_model_body_to_json(c, o, err) != VS_OK) {
        vs_json_free(o);
        return NULL;
    }
    return o;
}

vs_json *vs_composite_to_json(const vs_module *m, vs_error *err)
{
    const struct vs_program *p = m->program;
    vs_json *o = vs_json_new_object(), *inputs = vs_json_new_object(), *models = vs_json_new_object(), *graph = vs_json_new_array(),
            *outputs = names_json(p, p->outputs, p->n_outputs, true);
    bool ok = o && inputs && models && graph && outputs;
    for (int i = 0; ok && i < p->n_inputs; i++) {
        const vs_cinput *in = &p->inputs[i];
        ok = vs_json_set(inputs, p->values[in->value], in->ndim < 0 ? vs_json_new_null() : vs_json_new_int_array(in->shape, in->ndim)) == VS_OK;
    }
    vs_error e;
    vs_error_clear(&e);
    for (int64_t i = 0; ok && i < m->n_children; i++) {
        vs_json *c = child_json(m->children[i], &e);
        ok = c && vs_json_set(models, m->child_names[i], c) == VS_OK;
    }
    for (int i = 0; ok && i < p->n_nodes; i++) {
        vs_json *n = node_json(m, &p->nodes[i], &e);
        ok = n && vs_json_push(graph, n) == VS_OK;
    }
    if (ok) { /* each set takes its value */
        ok = vs_json_set(o, "inputs", inputs) == VS_OK;
        ok = vs_json_set(o, "models", models) == VS_OK && ok;
        ok = vs_json_set(o, "graph", graph) == VS_OK && ok;
        ok = vs_json_set(o, "outputs", outputs) == VS_OK && ok;
        if (ok && p->task) ok = vs_json_set(o, "task", vs_json_new_string(p->task)) == VS_OK;
        if (ok && p->n_aliases) {
            vs_json *a = vs_json_new_object();
            for (int i = 0; a && i < p->n_aliases; i++)
                if (vs_json_set(a, p->aliases[i].name, vs_json_new_string(p->values[p->aliases[i].value])) != VS_OK) {
                    vs_json_free(a);
                    a = NULL;
                }
            ok = a && vs_json_set(o, "aliases", a) == VS_OK;
        }
        if (!ok) vs_json_free(o);
    } else {
        vs_json_free(o);
        vs_json_free(inputs);
        vs_json_free(models);
        vs_json_free(graph);
        vs_json_free(outputs);
    }
    if (!ok) {
        if (e.code != VS_OK)
            vs_error_set(err, e.code, "%s", e.msg);
        else
            vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        return NULL;
    }
    return o;
}

/* ---- copies for specs ---------------------------------------------------------------------------- */

static vs_json *copy_rec(const vs_json *s, const char *source)
{
    vs_json *d = NULL;
    switch (s->type) {
    case VS_JSON_NULL: d = vs_json_new_null(); break;
    case VS_JSON_BOOL: d = vs_json_new_bool(s->boolean); break;
    case VS_JSON_NUMBER:
        d = vs_json_new_number(s->number);
        if (d) d->is_int = s->is_int, d->integer = s->integer;
        break;
    case VS_JSON_STRING: d = vs_json_new_stringn(s->string, s->length); break;
    case VS_JSON_ARRAY:
        d = vs_json_new_array();
        for (size_t i = 0; d && i < s->n; i++)
            if (vs_json_push(d, copy_rec(s->items[i], source)) != VS_OK) {
                vs_json_free(d);
                d = NULL;
            }
        break;
    case VS_JSON_OBJECT:
        d = vs_json_new_object();
        for (size_t i = 0; d && i < s->n; i++) {
            if (vs_json_set(d, s->members[i].key, copy_rec(s->members[i].value, source)) != VS_OK) {
                vs_json_free(d);
                d = NULL;
                break;
            }
            d->members[d->n - 1].line = s->members[i].line;
            d->members[d->n - 1].col = s->members[i].col;
        }
        break;
    }
    if (d) {
        d->line = s->line, d->col = s->col;
        d->source = source;
    }
    return d;
}

vs_json *vs_composite_json_copy(const vs_json *obj)
{
    char *source = obj->source ? strdup(obj->source) : NULL;
    if (obj->source && !source) return NULL;
    vs_json *d = copy_rec(obj, source);
    if (!d) {
        free(source);
        return NULL;
    }
    d->owns_source = source != NULL;
    return d;
}
