/* snx_task.c - masked Siamese predictions for a batch of SNX problems: which rows are masked by
 * which variables, the constant embeddings, and p' = (1 + cos) / 2 of the masked pair.  Also the
 * undirected edge numbering the graph masks use. */
#include "explain/snx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- graphs ----------------------------------------------------------------------------------------- */

int64_t snx_undirected(const vs_graph *g, int64_t *und)
{
    int64_t n = 0;
    for (int64_t e = 0; e < g->n_edges; e++) {
        int64_t r = g->rev ? g->rev[e] : e;
        if (r < 0 || r >= g->n_edges) r = e;
        und[e] = r < e ? und[r] : n++;
    }
    return n;
}

/* ---- tasks ------------------------------------------------------------------------------------------ */

int64_t snx_side_elems(const snx_task *t, int64_t side)
{
    return t->graph ? t->d->graphs[t->side_item[side]].n_edges : t->p;
}

/* Variables of one side's mask. */
static int64_t side_vars(const snx_task *t, int64_t item)
{
    if (!t->graph) return t->p;
    const vs_graph *g = &t->d->graphs[item];
    if (!t->tie) return g->n_edges;
    int64_t n = 0;
    for (int64_t e = 0; e < g->n_edges; e++) {
        int64_t r = g->rev ? g->rev[e] : e;
        n += !(r >= 0 && r < e);
    }
    return n;
}

void snx_task_free(snx_task *t)
{
    free(t->var_off);
    free(t->side_item);
    free(t->side_mi);
    free(t->masked);
    free(t->elem_off);
    free(t->expand);
    free(t->side_row);
    free(t->p0);
    vs_tensor_free(t->Xm);
    vs_tensor_free(t->E0);
    memset(t, 0, sizeof *t);
}

/* Unmasked embeddings of every side [2B, d], reusing the query's when side 1 is the same row. */
static vs_tensor *embed_sides(const snx_task *t)
{
    if (!t->graph) {
        vs_tensor *X = vs_tensor_new(VS_SHAPE(2 * t->B, t->p));
        if (!X) return NULL;
        for (int64_t k = 0; k < 2 * t->B; k++)
            memcpy(X->data + k * t->p, t->d->X + t->side_item[k] * t->p, (size_t)t->p * sizeof(float));
        vs_tensor *E = t->f->embed(t->f->ctx, X);
        vs_tensor_free(X);
        return E;
    }
    vs_tensor **rows = calloc((size_t)(2 * t->B), sizeof *rows);
    if (!rows) return NULL;
    vs_tensor *E = NULL;
    vs_scope_begin();
    int ok = 1;
    for (int64_t k = 0; k < 2 * t->B && ok; k++) {
        if (k % 2 == 1 && t->side_item[k] == t->side_item[k - 1])
            rows[k] = rows[k - 1];
        else
            rows[k] = t->f->embed_graph(t->f->ctx, &t->d->graphs[t->side_item[k]], NULL);
        ok = rows[k] != NULL;
    }
    if (ok) E = vs_keep(vs_concat((int)(2 * t->B), rows, 0));
    vs_scope_end();
    free(rows);
    return E;
}

vs_status snx_task_init(snx_task *t, const vs_siamese *f, const vs_dataset *d, const int64_t *s, const int64_t *tt, int64_t B,
                        snx_layout layout, bool tie, vs_error *err)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->d = d;
    t->graph = d->kind == VS_DATA_GRAPHS;
    t->tie = tie;
    t->layout = layout;
    t->B = B;
    t->p = t->graph ? 0 : d->dim;
    size_t nb = (size_t)B;
    t->var_off = malloc((nb + 1) * sizeof *t->var_off);
    t->side_item = malloc(2 * nb * sizeof *t->side_item);
    t->side_mi = malloc(2 * nb * sizeof *t->side_mi);
    t->masked = malloc(2 * nb * sizeof *t->masked);
    t->elem_off = malloc((2 * nb + 1) * sizeof *t->elem_off);
    t->side_row = malloc(2 * nb * sizeof *t->side_row);
    t->p0 = malloc((nb ? nb : 1) * sizeof *t->p0);
    if (!t->var_off || !t->side_item || !t->side_mi || !t->masked || !t->elem_off || !t->side_row || !t->p0) goto nomem;

    /* sides, variables, masked sides */
    int64_t nv = 0, nm = 0, ne = 0;
    t->var_off[0] = 0;
    t->elem_off[0] = 0;
    for (int64_t b = 0; b < B; b++) {
        int64_t a0 = s[b], a1 = layout == SNX_LAYOUT_GLOBAL && !tt ? s[b] : tt[b];
        t->side_item[2 * b] = a0;
        t->side_item[2 * b + 1] = a1;
        for (int k = 0; k < 2; k++) {
            int64_t side = 2 * b + k;
            bool masked = !(layout == SNX_LAYOUT_GLOBAL && k == 0);
            t->side_mi[side] = masked ? nm : -1;
            if (!masked) continue;
            t->masked[nm++] = side;
            ne += snx_side_elems(t, side);
            t->elem_off[nm] = ne;
        }
        int64_t v = side_vars(t, a1);
        if (layout == SNX_LAYOUT_SEPARATE) v += side_vars(t, a0);
        nv += v;
        t->var_off[b + 1] = nv;
    }
    t->n_vars = nv;
    t->n_masked = nm;
    t->expand = malloc((size_t)(ne ? ne : 1) * sizeof *t->expand);
    if (!t->expand) goto nomem;

    /* element -> variable: side 0 of a separate layout takes the first block, side 1 the rest */
    for (int64_t i = 0; i < nm; i++) {
        int64_t side = t->masked[i], b = side / 2, *x = t->expand + t->elem_off[i];
        int64_t base = t->var_off[b];
        if (layout == SNX_LAYOUT_SEPARATE && side % 2 == 1) base += side_vars(t, t->side_item[side - 1]);
        if (!t->graph) {
            for (int64_t j = 0; j < t->p; j++) x[j] = base + j;
            continue;
        }
        const vs_graph *g = &d->graphs[t->side_item[side]];
        if (tie) {
            snx_undirected(g, x);
            for (int64_t e = 0; e < g->n_edges; e++) x[e] += base;
        } else {
            for (int64_t e = 0; e < g->n_edges; e++) x[e] = base + e;
        }
    }

    /* constant parts: unmasked predictions, embeddings of the unmasked sides, masked rows */
    bool grad = vs_set_grad_enabled(false);
    vs_status st = VS_OK;
    vs_tensor *E = embed_sides(t);
    if (!E || E->ndim != 2 || E->shape[0] != 2 * B) {
        st = vs_error_set(err, VS_ERR_SHAPE, "snx: the model's embeddings are not [%lld, d] (%s)", (long long)(2 * B),
                          E ? "wrong shape" : vs_last_error()->msg);
    } else {
        int64_t *even = malloc(nb * sizeof *even), *odd = malloc(nb * sizeof *odd), *cst = malloc(2 * nb * sizeof *cst);
        if (!even || !odd || !cst) {
            st = vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory");
        } else {
            int64_t nc = 0;
            for (int64_t b = 0; b < B; b++) {
                even[b] = 2 * b;
                odd[b] = 2 * b + 1;
            }
            for (int64_t k = 0; k < 2 * B; k++) {
                if (t->side_mi[k] >= 0) {
                    t->side_row[k] = t->side_mi[k];
                } else {
                    t->side_row[k] = nm + nc;
                    cst[nc++] = k;
                }
            }
            vs_scope_begin();
            vs_tensor *c = vs_cosine_similarity(vs_index_select(E, 0, even, B), vs_index_select(E, 0, odd, B), 1, 1e-8f);
            if (c)
                for (int64_t b = 0; b < B; b++) t->p0[b] = 0.5f * (1.0f + c->data[b]);
            else
                st = vs_error_set(err, VS_ERR_SHAPE, "snx: %s", vs_last_error()->msg);
            vs_scope_end();
            if (st == VS_OK && nc > 0) t->E0 = vs_index_select(E, 0, cst, nc);
            if (st == VS_OK && !t->graph) {
                t->Xm = vs_tensor_new(VS_SHAPE(nm, t->p));
                if (t->Xm)
                    for (int64_t i = 0; i < nm; i++)
                        memcpy(t->Xm->data + i * t->p, d->X + t->side_item[t->masked[i]] * t->p, (size_t)t->p * sizeof(float));
            }
            if (st == VS_OK && ((nc > 0 && !t->E0) || (!t->graph && !t->Xm)))
                st = vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for constant embeddings");
        }
        free(even);
        free(odd);
        free(cst);
    }
    vs_tensor_free(E);
    vs_set_grad_enabled(grad);
    if (st != VS_OK) snx_task_free(t);
    return st;
nomem:
    snx_task_free(t);
    return vs_error_set(err, VS_ERR_NOMEM, "snx: out of memory for %lld problems", (long long)B);
}

vs_tensor *snx_task_predict(const snx_task *t, vs_tensor *m)
{
    int64_t nm = t->n_masked, ne = t->elem_off[nm];
    vs_tensor *Em = NULL;
    if (!t->graph) {
        vs_tensor *me = vs_reshape(vs_index_select(m, 0, t->expand, ne), VS_SHAPE(nm, t->p));
        Em = t->f->embed(t->f->ctx, vs_mul(me, t->Xm));
    } else {
        vs_tensor **rows = malloc((size_t)(nm ? nm : 1) * sizeof *rows);
        if (!rows) return NULL;
        vs_tensor *w = ne > 0 ? vs_index_select(m, 0, t->expand, ne) : NULL;
        int ok = 1;
        for (int64_t i = 0; i < nm && ok; i++) {
            const vs_graph *g = &t->d->graphs[t->side_item[t->masked[i]]];
            vs_tensor *wi = g->n_edges > 0 ? vs_slice(w, 0, t->elem_off[i], t->elem_off[i + 1]) : NULL;
            rows[i] = (g->n_edges > 0 && !wi) ? NULL : t->f->embed_graph(t->f->ctx, g, wi);
            ok = rows[i] != NULL;
        }
        if (ok) Em = vs_concat((int)nm, rows, 0);
        free(rows);
    }
    if (!Em) return NULL;
    vs_tensor *all = t->E0 ? vs_concat(2, (vs_tensor *[]){Em, t->E0}, 0) : Em;
    int64_t *r0 = malloc((size_t)(2 * t->B) * sizeof *r0);
    if (!r0) return NULL;
    int64_t *r1 = r0 + t->B;
    for (int64_t b = 0; b < t->B; b++) {
        r0[b] = t->side_row[2 * b];
        r1[b] = t->side_row[2 * b + 1];
    }
    vs_tensor *c = vs_cosine_similarity(vs_index_select(all, 0, r0, t->B), vs_index_select(all, 0, r1, t->B), 1, 1e-8f);
    free(r0);
    return vs_mul_scalar(vs_add_scalar(c, 1.0f), 0.5f);
}

void snx_task_side_mask(const snx_task *t, int64_t side, const float *vars, float *out)
{
    int64_t i = t->side_mi[side];
    if (i < 0) return;
    const int64_t *x = t->expand + t->elem_off[i];
    for (int64_t e = 0; e < t->elem_off[i + 1] - t->elem_off[i]; e++) out[e] = vars[x[e]];
}

void snx_task_side_vars(const snx_task *t, int64_t side, const float *mask, float *out)
{
    int64_t i = t->side_mi[side];
    if (i < 0) return;
    const int64_t *x = t->expand + t->elem_off[i];
    for (int64_t e = t->elem_off[i + 1] - t->elem_off[i] - 1; e >= 0; e--) out[x[e]] = mask[e];
}
