/* explain_pairs.c - `versus explain snx --pairs all`: every test pair of the SNX protocol explained by
 * one method, one item per pair (shardable with --shard K/N, journalled, --resume), written to
 * OUT/pairs.json with the masks and scores of each pair and their means. */
#include "cli/cli.h"
#include "cli/explain_pairs.h"
#include "versus/train.h"
#include "versus/versus.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What one pair's record holds besides its masks. */
enum { M_FA, M_CF, M_CONF, M_PREC, M_REC, M_GFA, M_GCF, N_NUM };

typedef struct pairs_job {
    const vs_dataset *d;
    vs_siamese f;
    const vs_pairs *pairs;
    vs_snx_method method;
    vs_snx_opts o;
    vs_snx_eval_opts eo;
    const vs_snx_fitted *fit;
    uint64_t seed;
} pairs_job;

static int64_t mask_len(const vs_dataset *d, int64_t row) { return d->kind == VS_DATA_GRAPHS ? d->graphs[row].n_edges : d->dim; }

/* Pair k explained as `versus explain snx` explains one pair (vs_snx_explain_pair), seeded by
 * vs_item_seed(seed, k), into the record b. */
static int explain_pair(const pairs_job *j, int64_t k, vs_item_buf *b)
{
    int64_t s = j->pairs->idx[2 * k], t = j->pairs->idx[2 * k + 1];
    vs_snx_opts o = j->o;
    o.seed = vs_item_seed(j->seed, k);
    vs_snx_pair_expl p;
    vs_error err;
    if (vs_snx_explain_pair(&j->f, j->d, s, t, j->pairs->label[k] != 0, j->method, j->fit, &o, &j->eo, &p, &err) != VS_OK)
        return vs_fail("pair %lld (rows %lld, %lld): %s", (long long)k, (long long)s, (long long)t, err.msg);
    const vs_snx_eval *ev = &p.eval;
    double num[N_NUM] = {ev->fa, ev->cf, ev->conformity, ev->precision, ev->recall, p.global_eval[0].fa, p.global_eval[0].cf};
    int64_t viol[2] = {ev->violated, ev->n_constraints};
    vs_item_buf_reset(b);
    vs_item_put_f64(b, num, N_NUM);
    vs_item_put_i64(b, viol, 2);
    vs_item_put_f32(b, p.local->ms, (size_t)mask_len(j->d, s));
    vs_item_put_f32(b, p.local->mt, (size_t)mask_len(j->d, t));
    vs_item_put_f32(b, p.global->ms + p.global->s_off[0], (size_t)mask_len(j->d, s));
    vs_item_put_f32(b, p.global->ms + p.global->s_off[1], (size_t)mask_len(j->d, t));
    vs_snx_pair_expl_clear(&p);
    return 0;
}

static vs_json *num(double v) { return isfinite(v) ? vs_json_new_number(v) : vs_json_new_null(); }

/* n floats of the reader as a JSON array. */
static vs_json *floats(vs_item_reader *rd, int64_t n)
{
    vs_json *a = vs_json_new_array();
    for (int64_t i = 0; a && i < n; i++) {
        float v;
        vs_item_get_f32(rd, &v, 1);
        if (vs_json_push(a, num(v)) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    }
    return a;
}

/* OUT/pairs.json from the records of every pair; rc. */
static int write_pairs(const pairs_job *j, const vs_run *run, const char *spec, const char *path)
{
    int64_t n = j->pairs->n;
    vs_json *root = vs_json_new_object(), *per = vs_json_new_array();
    double *col = malloc((size_t)(N_NUM * n) * sizeof *col);
    bool ok = root && per && col;
    int rc = 0;
    for (int64_t k = 0; ok && rc == 0 && k < n; k++) {
        size_t len;
        const unsigned char *p = vs_run_get(run, k, &len);
        vs_item_reader rd = {p, p ? len : 0, 0, false};
        double v[N_NUM];
        int64_t viol[2], s = j->pairs->idx[2 * k], t = j->pairs->idx[2 * k + 1];
        vs_item_get_f64(&rd, v, N_NUM);
        vs_item_get_i64(&rd, viol, 2);
        for (int m = 0; m < N_NUM; m++) col[m * n + k] = v[m];
        vs_json *o = vs_json_new_object();
        ok = vs_json_push(per, o) == VS_OK;
        ok = ok && vs_json_set(o, "query_row", vs_json_new_int(s)) == VS_OK && vs_json_set(o, "reference_row", vs_json_new_int(t)) == VS_OK;
        ok = ok && vs_json_set(o, "same_class", vs_json_new_bool(j->pairs->label[k] != 0)) == VS_OK;
        ok = ok && vs_json_set(o, "faithfulness", num(v[M_FA])) == VS_OK && vs_json_set(o, "counterfactual", num(v[M_CF])) == VS_OK;
        ok = ok && vs_json_set(o, "conformity", num(v[M_CONF])) == VS_OK;
        ok = ok && vs_json_set(o, "violated_constraints", vs_json_new_int(viol[0])) == VS_OK &&
             vs_json_set(o, "constraints", vs_json_new_int(viol[1])) == VS_OK;
        ok = ok && vs_json_set(o, "precision", num(v[M_PREC])) == VS_OK && vs_json_set(o, "recall", num(v[M_REC])) == VS_OK;
        ok = ok && vs_json_set(o, "global_faithfulness", num(v[M_GFA])) == VS_OK && vs_json_set(o, "global_counterfactual", num(v[M_GCF])) == VS_OK;
        ok = ok && vs_json_set(o, "local_mask_query", floats(&rd, mask_len(j->d, s))) == VS_OK;
        ok = ok && vs_json_set(o, "local_mask_reference", floats(&rd, mask_len(j->d, t))) == VS_OK;
        ok = ok && vs_json_set(o, "global_mask_query", floats(&rd, mask_len(j->d, s))) == VS_OK;
        ok = ok && vs_json_set(o, "global_mask_reference", floats(&rd, mask_len(j->d, t))) == VS_OK;
        if (rd.bad || rd.pos != rd.len) rc = vs_fail("%s.journal: the record of pair %lld does not fit this run", path, (long long)k);
    }
    static const char *const names[N_NUM] = {"faithfulness", "counterfactual", "conformity", "precision", "recall", "global_faithfulness",
                                             "global_counterfactual"};
    vs_json *mean = vs_json_new_object();
    double fa = NAN, cf = NAN;
    ok = ok && vs_json_set(root, "format", vs_json_new_string("versus-explain-pairs/1")) == VS_OK;
    ok = ok && vs_json_set(root, "method", vs_json_new_string(vs_snx_method_name(j->method))) == VS_OK;
    ok = ok && vs_json_set(root, "data", vs_json_new_string(spec)) == VS_OK;
    ok = ok && vs_json_set(root, "seed", vs_json_new_int((int64_t)j->seed)) == VS_OK;
    ok = ok && vs_json_set(root, "pairs", vs_json_new_int(n)) == VS_OK;
    ok = ok && vs_json_set(root, "top", vs_json_new_int(j->eo.top_k)) == VS_OK && vs_json_set(root, "top_fraction", num(j->eo.top_frac)) == VS_OK;
    ok = ok && vs_json_set(root, "top_present", vs_json_new_bool(j->eo.present_only)) == VS_OK;
    for (int m = 0; ok && m < N_NUM; m++) {
        double mu, sd;
        vs_mean_std(col + m * n, n, &mu, &sd);
        if (m == M_FA) fa = mu;
        if (m == M_CF) cf = mu;
        vs_json *s = vs_json_new_object();
        ok = vs_json_set(mean, names[m], s) == VS_OK && vs_json_set(s, "mean", num(mu)) == VS_OK && vs_json_set(s, "std", num(sd)) == VS_OK;
    }
    ok = ok && vs_json_set(root, "summary", mean) == VS_OK;
    mean = NULL;
    ok = ok && vs_json_set(root, "per_pair", per) == VS_OK;
    per = NULL;
    vs_error err;
    if (rc == 0 && !ok) rc = vs_fail("out of memory");
    if (rc == 0 && vs_json_write_file(path, root, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (rc == 0)
        printf("explained %lld test pairs with %s: mean faithfulness %.4f (lower is better), mean counterfactual %.4f (higher is "
               "better)\nwrote %s\n",
               (long long)n, vs_snx_method_name(j->method), fa, cf, path);
    vs_json_free(root);
    vs_json_free(per);
    vs_json_free(mean);
    free(col);
    return rc;
}

int vs_explain_snx_pairs(const vs_args *a, int argc, char **argv, vs_module *m, const vs_dataset *d, const vs_train_split *sp,
                         vs_snx_method method, const vs_snx_opts *o, const vs_snx_eval_opts *eo, const char *spec, const char *out)
{
    const char *which = vs_args_get(a, "pairs");
    if (strcmp(which, "all") != 0) return vs_usage_error("explain", "--pairs expects 'all' (every test pair of the SNX protocol), got '%s'", which);
    if (vs_args_has(a, "query") || vs_args_has(a, "reference")) return vs_usage_error("explain", "--pairs all explains every pair: drop --query and --reference");
    int64_t seed;
    int rc = vs_args_int(a, "seed", 1, 0, INT64_MAX, &seed);
    if (rc) return rc;
    if (!sp->test_pairs || sp->test_pairs->n < 1) return vs_fail("%s: the test portion has no pairs", spec);
    vs_siamese_module sm = {m, d->n_node_features};
    pairs_job j = {.d = d, .f = vs_siamese_from_module(&sm), .pairs = sp->test_pairs, .method = method, .o = *o, .eo = *eo, .seed = (uint64_t)seed};
    j.o.trace = false;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/pairs.json", out) >= (int)sizeof path) return vs_usage_error("explain", "--out: path too long");
    vs_cli_run cr;
    if ((rc = vs_cli_run_opts(a, out, (uint64_t)seed, "pairs", argc, argv, &cr))) return rc;
    vs_error err;
    vs_snx_fitted fit;
    vs_run *run = NULL;
    /* what every pair shares, fitted once on the training portion (deterministic, so every shard fits the same) */
    if (vs_snx_fit(&j.f, d, sp->train, sp->n_train, sp->train_pairs, method, &j.o, &fit, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    j.fit = &fit;
    if (rc == 0 && !cr.o.sharded && mkdir(out, 0777) != 0 && errno != EEXIST) rc = vs_fail("%s: cannot create directory: %s", out, strerror(errno));
    if (rc == 0 && vs_run_open(&cr.o, sp->test_pairs->n, &run, &err) != VS_OK)
        rc = err.code == VS_ERR_ARG ? vs_usage_error("explain", "%s", err.msg) : vs_fail("%s", err.msg);
    vs_item_buf b = {0};
    size_t len;
    for (int64_t k = run ? vs_run_begin(run) : 0; rc == 0 && k < vs_run_end(run); k++) {
        if (vs_run_get(run, k, &len)) continue; /* done before a kill */
        rc = explain_pair(&j, k, &b);
        if (rc == 0 && vs_run_put(run, k, &b, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    }
    vs_item_buf_clear(&b);
    if (rc == 0 && vs_run_sharded(run))
        printf("wrote pairs %lld..%lld of %lld to %s (versus merge joins the shards)\n", (long long)vs_run_begin(run),
               (long long)vs_run_end(run) - 1, (long long)sp->test_pairs->n, out);
    else if (rc == 0)
        rc = write_pairs(&j, run, spec, path);
    if (rc == 0 && vs_run_finish(run, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_run_free(run);
    vs_snx_fitted_clear(&fit);
    return rc;
}
