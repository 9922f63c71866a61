/* snx_pair.c - one pair explained and scored as `versus explain snx` shows it (one pair, or every
 * test pair with --pairs all): what the pairs of a data set share (DES, PGExplainer), then per pair
 * the SNX-global masks of both rows, the method's local masks and their scores, and the model's
 * similarity of the pair.  The methods are snx_explain.c's; the scores snx_eval.c's. */
#include "explain/snx_internal.h"

#include <math.h>
#include <string.h>

vs_status vs_snx_fit(const vs_siamese *f, const vs_dataset *d, const int64_t *train_rows, int64_t n_train, const vs_pairs *train_pairs,
                     vs_snx_method method, const vs_snx_opts *o, vs_snx_fitted *out, vs_error *err)
{
    memset(out, 0, sizeof *out);
    vs_error e;
    vs_status st = VS_OK;
    if (vs_snx_method_global(method) == VS_SNX_DES && (st = vs_snx_des_fit(d, train_rows, n_train, o, &out->des, &e)) != VS_OK)
        return vs_error_set(err, st, "des: %s", e.msg);
    if (method == VS_SNX_PGEXPLAINER && (st = vs_snx_pg_train(f, d, train_pairs, o, &out->pg, &e)) != VS_OK) {
        vs_snx_fitted_clear(out);
        return vs_error_set(err, st, "pgexplainer: %s", e.msg);
    }
    return VS_OK;
}

void vs_snx_fitted_clear(vs_snx_fitted *fit)
{
    vs_snx_des_free(fit->des);
    vs_snx_pg_free(fit->pg);
    memset(fit, 0, sizeof *fit);
}

void vs_snx_pair_expl_clear(vs_snx_pair_expl *p)
{
    vs_snx_expl_free(p->global);
    vs_snx_expl_free(p->local);
    memset(p, 0, sizeof *p);
}

vs_status vs_snx_explain_pair(const vs_siamese *f, const vs_dataset *d, int64_t s, int64_t t, bool same, vs_snx_method method,
                              const vs_snx_fitted *fit, const vs_snx_opts *o, const vs_snx_eval_opts *eo, vs_snx_pair_expl *out,
                              vs_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t rows[2] = {s, t}, lab = same;
    vs_pairs one = {1, rows, &lab};
    vs_snx_expl *des_masks = NULL;
    int need = vs_snx_method_global(method);
    vs_status st = vs_snx_global(f, d, rows, 2, VS_SNX_GLOBAL, NULL, o, &out->global, err);
    if (st == VS_OK && need == VS_SNX_DES) st = vs_snx_global(f, d, rows, 2, VS_SNX_DES, fit ? fit->des : NULL, o, &des_masks, err);
    if (st == VS_OK)
        st = vs_snx_local(f, d, &one, method, need == VS_SNX_DES ? des_masks : out->global, fit ? fit->pg : NULL, o, &out->local, err);
    if (st == VS_OK) st = vs_snx_evaluate(f, d, out->local, out->global, eo, &out->eval, err);
    if (st == VS_OK) st = vs_snx_evaluate(f, d, out->global, NULL, eo, out->global_eval, err);
    vs_snx_expl_free(des_masks);
    if (st != VS_OK) vs_snx_pair_expl_clear(out);
    return st;
}

double vs_snx_similarity(const vs_siamese *f, const vs_dataset *d, int64_t s, int64_t t)
{
    double sim = NAN;
    vs_scope_begin();
    vs_tensor *c = NULL;
    if (d->kind == VS_DATA_TABULAR) {
        vs_tensor *xs = vs_tensor_from(VS_SHAPE(1, d->dim), d->X + s * d->dim);
        vs_tensor *xt = vs_tensor_from(VS_SHAPE(1, d->dim), d->X + t * d->dim);
        c = vs_cosine_similarity(f->embed(f->ctx, xs), f->embed(f->ctx, xt), 1, 1e-8f);
    } else {
        c = vs_cosine_similarity(f->embed_graph(f->ctx, &d->graphs[s], NULL), f->embed_graph(f->ctx, &d->graphs[t], NULL), 1, 1e-8f);
    }
    if (c) sim = c->data[0];
    vs_scope_end();
    return sim;
}
