/* graph.c - recording nodes and running reverse-mode differentiation over them.
 *
 * Backward walks the graph once in reverse topological order.  Each op's rule is ordinary op code:
 * with create_graph off it runs with recording off (plain numbers); with it on, the rule's ops are
 * recorded and the gradients can be differentiated again. */
#include "autograd/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local bool grad_disabled;
static _Thread_local vs_backward_rule current_rule;
static atomic_ullong visit_epoch;

bool vs_grad_enabled(void) { return !grad_disabled; }

bool vs_set_grad_enabled(bool on)
{
    bool prev = !grad_disabled;
    grad_disabled = !on;
    return prev;
}

vs_backward_rule vs_set_backward_rule(vs_backward_rule rule)
{
    vs_backward_rule prev = current_rule;
    current_rule = rule;
    return prev;
}

void vs_set_requires_grad(vs_tensor *t, bool on)
{
    if (t) t->requires_grad = on;
}

void vs_zero_grad(vs_tensor *t)
{
    if (t && t->grad) {
        vs_release(t->grad);
        t->grad = NULL;
    }
}

vs_tensor *vs_record(vs_tensor *out, const char *name, vs_backward_fn bw, int n_in, vs_tensor *const *in, const void *params,
                     size_t size)
{
    if (grad_disabled || !out) return out;
    bool any = false;
    for (int i = 0; i < n_in; i++)
        if (in[i] && in[i]->requires_grad) any = true;
    if (!any) return out;
    vs_node *n = vs_calloc(1, sizeof *n + size);
    vs_tensor **ins = !n || n_in <= VS_NODE_INLINE_IN ? (n ? n->inline_in : NULL) : vs_calloc((size_t)n_in, sizeof *ins);
    if (!ins) {
        free(n);
        vs_tensor_free(out);
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for its graph node", name);
        return NULL;
    }
    n->in = ins;
    n->name = name;
    n->backward = bw;
    n->n_in = n_in;
    n->rule = current_rule;
    n->params_size = size;
    if (size) memcpy(n->params, params, size);
    for (int i = 0; i < n_in; i++) {
        n->in[i] = in[i];
        vs_retain(in[i]);
    }
    out->node = n;
    out->requires_grad = true;
    return out;
}

void vs_node_save(vs_tensor *out, vs_tensor *t)
{
    if (!out || !out->node) return;
    vs_retain(t);
    vs_release(out->node->saved);
    out->node->saved = t;
}

void vs_node_adopt(vs_tensor *out, void *extra)
{
    if (out && out->node) {
        free(out->node->extra);
        out->node->extra = extra;
    } else {
        free(extra);
    }
}

/* ---- traversal -------------------------------------------------------------------------------- */

typedef struct tensor_list {
    vs_tensor **v;
    int64_t n, cap;
} tensor_list;

static bool list_push(tensor_list *l, vs_tensor *t)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 64;
        vs_tensor **v = vs_realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return true;
}

/* Post-order of the tensors that require grad reachable from the outputs (inputs before users). */
static bool topo_order(int n_out, vs_tensor *const *outs, uint64_t epoch, tensor_list *order)
{
    tensor_list stack = {0};
    bool ok = true;
    for (int k = 0; k < n_out && ok; k++) {
        vs_tensor *root = outs[k];
        if (!root || !root->requires_grad || root->visit == epoch) continue;
        root->visit = epoch;
        root->topo_pending = 0;
        ok = list_push(&stack, root);
        while (ok && stack.n > 0) {
            vs_tensor *t = stack.v[stack.n - 1];
            vs_node *nd = t->node;
            if (nd && t->topo_pending < nd->n_in) {
                vs_tensor *c = nd->in[t->topo_pending++];
                if (c && c->requires_grad && c->visit != epoch) {
                    c->visit = epoch;
                    c->topo_pending = 0;
                    ok = list_push(&stack, c);
                }
                continue;
            }
            stack.n--;
            ok = list_push(order, t);
        }
    }
    free(stack.v);
    return ok;
}

/* t->acc may take g's values in place: recording is off (so no node reads the old values), the
 * running sum is a plain tensor of this walk's scope that only t->acc refers to (the scope's and
 * acc's references, no view of its buffer), and g has its shape. */
static bool acc_in_place(const vs_tensor *acc, const vs_tensor *g)
{
    return !vs_grad_enabled() && acc != g && !acc->node && acc->refs == 2 && acc->buf->refs == 1 &&
           acc->scope_depth == vs_scope_depth() && vs_same_shape(acc, g);
}

static void accumulate(vs_tensor *t, vs_tensor *g)
{
    if (!g) return;
    if (!t->acc) {
        vs_retain(g);
        t->acc = g;
        return;
    }
    if (acc_in_place(t->acc, g)) {
        vs_add_into(t->acc, g);
        return;
    }
    vs_tensor *sum = vs_add(t->acc, g);
    if (!sum) return;
    vs_retain(sum);
    vs_release(t->acc);
    t->acc = sum;
}

/* Core of vs_backward and vs_grad.  With ins == NULL: accumulate into leaves' ->grad. */
static vs_status run_backward(int n_out, vs_tensor *const *outs, vs_tensor *const *gouts, int n_in,
                              vs_tensor *const *ins, vs_tensor **grads, bool create_graph)
{
    for (int j = 0; grads && j < n_in; j++) grads[j] = NULL;
    for (int k = 0; k < n_out; k++) {
        if (!outs[k]) {
            /* The op that gave NULL has said why (out of memory, a shape): keep its message. */
            vs_status prev = vs_last_error()->code;
            return prev != VS_OK ? prev : vs_set_last_error(VS_ERR_ARG, "backward: output %d is NULL", k);
        }
        vs_tensor *g = gouts ? gouts[k] : NULL;
        if (g && !vs_same_shape(g, outs[k]))
            return vs_set_last_error(VS_ERR_SHAPE, "backward: gradient %d has a different shape from its output", k);
        if (!g && outs[k]->size != 1)
            return vs_set_last_error(VS_ERR_SHAPE, "backward: output %d has %lld elements; give its output gradient", k,
                                     (long long)outs[k]->size);
    }
    for (int j = 0; j < n_in; j++)
        if (!ins[j]) return vs_set_last_error(VS_ERR_ARG, "grad: input %d is NULL", j);

    uint64_t epoch = atomic_fetch_add(&visit_epoch, 1) + 1;
    tensor_list order = {0};
    if (!topo_order(n_out, outs, epoch, &order)) {
        free(order.v);
        return vs_set_last_error(VS_ERR_NOMEM, "backward: out of memory");
    }

    /* needed[t]: t is a wanted input (or a leaf for vs_backward) or leads to one.  Stored in
     * topo_pending, which the ordering no longer uses. */
    for (int64_t k = 0; k < order.n; k++) order.v[k]->topo_pending = 0;
    for (int j = 0; j < n_in; j++)
        if (ins[j]->visit == epoch) ins[j]->topo_pending = 2; /* 2: requested */
    for (int64_t k = 0; k < order.n; k++) {
        vs_tensor *t = order.v[k];
        if (!ins && !t->node) t->topo_pending = 2;
        if (t->node && !t->topo_pending)
            for (int i = 0; i < t->node->n_in; i++) {
                vs_tensor *c = t->node->in[i];
                if (c && c->requires_grad && c->visit == epoch && c->topo_pending) t->topo_pending = 1;
            }
    }

    bool prev_grad = vs_set_grad_enabled(create_graph);
    vs_backward_rule prev_rule = vs_set_backward_rule(VS_RULE_GRADIENT);
    vs_clear_last_error();
    vs_scope_begin();

    for (int k = 0; k < n_out; k++) {
        vs_tensor *o = outs[k];
        if (!o->requires_grad || o->visit != epoch) continue;
        vs_tensor *g = gouts && gouts[k] ? gouts[k] : vs_ones_like(o);
        accumulate(o, g);
    }

    /* A rule whose ops fail leaves its gradients NULL, which reads as zero: the error it records
     * stops the walk, and the status below reports it instead of handing out partial sums. */
    vs_tensor *gin_local[8];
    for (int64_t k = order.n - 1; k >= 0 && vs_last_error()->code == VS_OK; k--) {
        vs_tensor *t = order.v[k];
        vs_node *nd = t->node;
        if (!t->acc || !nd || !t->topo_pending) continue;
        vs_tensor **gin = nd->n_in <= 8 ? gin_local : vs_calloc((size_t)nd->n_in, sizeof *gin);
        if (!gin) {
            vs_set_last_error(VS_ERR_NOMEM, "backward: out of memory");
            break;
        }
        nd->needs = 0;
        for (int i = 0; i < nd->n_in; i++) {
            gin[i] = NULL;
            vs_tensor *c = nd->in[i];
            if (c && c->requires_grad && c->visit == epoch && c->topo_pending) nd->needs |= 1u << (i < 31 ? i : 31);
        }
        nd->backward(nd, t, t->acc, gin);
        for (int i = 0; i < nd->n_in; i++)
            if (gin[i] && vs_node_needs(nd, i)) accumulate(nd->in[i], gin[i]);
        if (gin != gin_local) free(gin);
        if (t->topo_pending != 2) { /* intermediate: its gradient is spent */
            vs_release(t->acc);
            t->acc = NULL;
        }
    }

    vs_status st = vs_last_error()->code;
    /* Hand the results over before the scope closes - all of them or, after a failure, none. */
    if (ins) {
        for (int j = 0; j < n_in; j++) {
            vs_tensor *in = ins[j];
            vs_tensor *g = st == VS_OK && in->visit == epoch && in->acc ? in->acc : NULL;
            if (g) vs_retain(g);
            grads[j] = g;
        }
    } else if (st == VS_OK) {
        /* Leaves' new totals first (each acc becomes grad + acc), then commit them all. */
        for (int64_t k = 0; k < order.n && st == VS_OK; k++) {
            vs_tensor *t = order.v[k];
            if (t->node || !t->acc || !t->grad) continue;
            vs_tensor *sum = vs_add(t->grad, t->acc);
            if (!sum) {
                st = vs_last_error()->code;
                break;
            }
            vs_retain(sum);
            vs_release(t->acc);
            t->acc = sum;
        }
        for (int64_t k = 0; k < order.n && st == VS_OK; k++) {
            vs_tensor *t = order.v[k];
            if (t->node || !t->acc) continue;
            vs_retain(t->acc);
            vs_release(t->grad);
            t->grad = t->acc;
        }
    }
    for (int64_t k = 0; k < order.n; k++) {
        vs_tensor *t = order.v[k];
        vs_release(t->acc);
        t->acc = NULL;
        t->topo_pending = 0;
    }
    free(order.v);
    vs_scope_end();
    vs_set_backward_rule(prev_rule);
    vs_set_grad_enabled(prev_grad);

    if (ins) {
        /* Each result now has exactly our reference; give it to the caller's scope. */
        for (int j = 0; j < n_in; j++) {
            vs_tensor *g = grads[j];
            if (st != VS_OK) {
                grads[j] = NULL;
            } else if (g) {
                /* A fresh handle (a view) owned by the caller's scope; recorded when create_graph. */
                bool pg = vs_set_grad_enabled(create_graph);
                grads[j] = vs_reshape(g, g->ndim, g->shape);
                vs_set_grad_enabled(pg);
            } else {
                grads[j] = vs_zeros_like(ins[j]);
            }
            vs_release(g);
            if (st == VS_OK && !grads[j]) {
                st = vs_last_error()->code; /* out of memory: none of the gradients is handed out */
                for (int i = 0; i < j; i++) {
                    vs_tensor_free(grads[i]);
                    grads[i] = NULL;
                }
            }
        }
    }
    return st;
}

vs_status vs_backward(vs_tensor *out, vs_tensor *gout, bool create_graph)
{
    vs_tensor *gouts[1] = {gout};
    return run_backward(1, &out, gouts, 0, NULL, NULL, create_graph);
}

vs_status vs_grad(int n_out, vs_tensor *const *outs, vs_tensor *const *gouts, int n_in, vs_tensor *const *ins,
                  vs_tensor **grads, bool create_graph)
{
    return run_backward(n_out, outs, gouts, n_in, ins, grads, create_graph);
}
