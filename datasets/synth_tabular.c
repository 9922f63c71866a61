/* datasets/synth_tabular.c - synthetic "credit applicants" (SNX Fig. 1) with planted salient features.
 *
 * Categorical major features from a fixed catalogue, one-hot encoded; the label is an integer score
 * rule over a seeded choice of salient features, with correlated and noise distractors.  Only
 * integer arithmetic and comparisons of exact uniform draws: bit-identical for a given seed. */
#include "versus/synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/synth_common.h"

#define MAX_CATS 6

/* Categories in increasing order of favourability for the applicant (index 0 = worst). */
typedef struct major_feature {
    const char *name;
    int k;
    const char *cats[MAX_CATS];
} major_feature;

static const major_feature catalogue[VS_SYNTH_TABULAR_MAX_FEATURES] = {
    {"income", 3, {"low", "medium", "high"}},
    {"employment", 4, {"unemployed", "part_time", "self_employed", "full_time"}},
    {"housing", 3, {"free", "rent", "own"}},
    {"credit_history", 4, {"critical", "delayed", "paid", "excellent"}},
    {"age_band", 5, {"18-25", "26-35", "36-50", "51-65", "65+"}},
    {"purpose", 6, {"vacation", "car", "furniture", "repairs", "education", "business"}},
    {"savings", 5, {"none", "<100", "100-500", "500-1000", ">=1000"}},
    {"phone", 2, {"no", "yes"}},
    {"deposits", 2, {"<500", ">=500"}},
    {"marital", 3, {"divorced", "single", "married"}},
    {"foreign_worker", 2, {"yes", "no"}},
    {"dependents", 3, {"2+", "1", "0"}},
    {"guarantor", 3, {"none", "co_applicant", "guarantor"}},
    {"residence_years", 4, {"<1", "1-4", "4-7", "7+"}},
    {"job_skill", 3, {"unskilled", "skilled", "management"}},
    {"loan_duration", 4, {"48m+", "24-48m", "12-24m", "<12m"}},
};

enum role { ROLE_NOISE = 0, ROLE_SALIENT, ROLE_CORRELATED };

void vs_synth_tabular_defaults(vs_synth_tabular_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n = 1000;
    o->n_features = 10;
    o->n_salient = 3;
    o->n_correlated = 2;
    o->label_noise = 0.1;
    o->corr_strength = 0.8;
    o->seed = 1;
}

static vs_status check_opts(const vs_synth_tabular_opts *o, vs_error *err)
{
    const char *f = "synth_tabular";
    if (o->n < 1) return vs_error_set(err, VS_ERR_ARG, "%s: n = %lld, expected >= 1", f, (long long)o->n);
    if (o->n_features < 2 || o->n_features > VS_SYNTH_TABULAR_MAX_FEATURES)
        return vs_error_set(err, VS_ERR_ARG, "%s: n_features = %lld, expected 2..%d", f, (long long)o->n_features,
                            VS_SYNTH_TABULAR_MAX_FEATURES);
    if (o->n_salient < 1 || o->n_salient > o->n_features)
        return vs_error_set(err, VS_ERR_ARG, "%s: n_salient = %lld, expected 1..n_features (%lld)", f,
                            (long long)o->n_salient, (long long)o->n_features);
    if (o->n_correlated < 0 || o->n_correlated > o->n_features - o->n_salient)
        return vs_error_set(err, VS_ERR_ARG, "%s: n_correlated = %lld, expected 0..n_features - n_salient (%lld)", f,
                            (long long)o->n_correlated, (long long)(o->n_features - o->n_salient));
    if (!(o->label_noise >= 0.0 && o->label_noise <= 0.5))
        return vs_error_set(err, VS_ERR_ARG, "%s: label_noise = %g, expected [0, 0.5]", f, o->label_noise);
    if (!(o->corr_strength >= 0.0 && o->corr_strength <= 1.0))
        return vs_error_set(err, VS_ERR_ARG, "%s: corr_strength = %g, expected [0, 1]", f, o->corr_strength);
    return VS_OK;
}

/* Columns, names, groups and truth masks: everything that does not depend on the rows. */
static vs_status build_schema(vs_dataset *d, int64_t q, const int *role, vs_error *err)
{
    int64_t p = 0;
    for (int64_t j = 0; j < q; j++) p += catalogue[j].k;
    d->ndim = 1;
    d->shape[0] = p;
    if (!(d->groups = vs_data_calloc((size_t)q, sizeof *d->groups, "synth_tabular groups", err))) return VS_ERR_NOMEM;
    d->n_groups = q;
    if (!(d->feature_names = vs_data_calloc((size_t)p, sizeof *d->feature_names, "synth_tabular names", err)))
        return VS_ERR_NOMEM;
    d->dim = p;
    d->group_truth = vs_data_calloc((size_t)q, sizeof *d->group_truth, "synth_tabular truth", err);
    d->feature_truth = vs_data_calloc((size_t)p, sizeof *d->feature_truth, "synth_tabular truth", err);
    if (!d->group_truth || !d->feature_truth) return VS_ERR_NOMEM;
    int64_t col = 0;
    for (int64_t j = 0; j < q; j++) {
        const major_feature *f = &catalogue[j];
        if (!(d->groups[j].name = strdup(f->name)))
            return vs_error_set(err, VS_ERR_NOMEM, "synth_tabular: out of memory for names");
        d->groups[j].first = col;
        d->groups[j].count = f->k;
        d->group_truth[j] = role[j] == ROLE_SALIENT;
        for (int c = 0; c < f->k; c++, col++) {
            size_t len = strlen(f->name) + strlen(f->cats[c]) + 2;
            if (!(d->feature_names[col] = malloc(len)))
                return vs_error_set(err, VS_ERR_NOMEM, "synth_tabular: out of memory for names");
            snprintf(d->feature_names[col], len, "%s=%s", f->name, f->cats[c]);
            d->feature_truth[col] = role[j] == ROLE_SALIENT;
        }
    }
    return VS_OK;
}

/* Clean label of one row from the categories z of the salient features sal[0..ns). */
static int64_t rule_label(const int *z, const int64_t *sal, int64_t ns)
{
    int64_t score = 0;
    for (int64_t s = 0; s < ns; s++) score += 2 * z[sal[s]] - (catalogue[sal[s]].k - 1);
    if (score != 0) return score > 0;
    return 2 * z[sal[0]] >= catalogue[sal[0]].k;
}

vs_status vs_synth_tabular(const vs_synth_tabular_opts *o, vs_dataset **out, vs_error *err)
{
    *out = NULL;
    vs_status st = check_opts(o, err);
    if (st != VS_OK) return st;
    const int64_t q = o->n_features, ns = o->n_salient;
    vs_rng rng;
    vs_rng_seed(&rng, o->seed);

    /* Roles: a seeded permutation of the features; salient first, then correlated, then noise. */
    size_t perm[VS_SYNTH_TABULAR_MAX_FEATURES];
    int role[VS_SYNTH_TABULAR_MAX_FEATURES] = {0};
    int64_t parent[VS_SYNTH_TABULAR_MAX_FEATURES] = {0};
    int64_t sal[VS_SYNTH_TABULAR_MAX_FEATURES];
    for (int64_t j = 0; j < q; j++) perm[j] = (size_t)j;
    vs_rng_shuffle(&rng, perm, (size_t)q);
    for (int64_t r = 0; r < q; r++) {
        int64_t j = (int64_t)perm[r];
        if (r < ns) {
            role[j] = ROLE_SALIENT;
            sal[r] = j;
        } else if (r < ns + o->n_correlated) {
            role[j] = ROLE_CORRELATED;
            parent[j] = (int64_t)perm[(r - ns) % ns];
        }
    }

    vs_dataset *d = vs_data_new(VS_DATA_TABULAR, "synthetic-tabular", err);
    if (!d) return VS_ERR_NOMEM;
    static const char *const classes[2] = {"reject", "approve"};
    if ((st = vs_data_set_classes(d, 2, classes, err)) != VS_OK || (st = build_schema(d, q, role, err)) != VS_OK)
        goto fail;
    d->n = o->n;
    size_t cells;
    if (!vs_size_mul((size_t)o->n, (size_t)d->dim, &cells)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "synth_tabular: n x dim overflows");
        goto fail;
    }
    d->X = vs_data_calloc(cells, sizeof *d->X, "synth_tabular X", err);
    d->y = vs_data_calloc((size_t)o->n, sizeof *d->y, "synth_tabular y", err);
    if (!d->X || !d->y) {
        st = VS_ERR_NOMEM;
        goto fail;
    }

    int z[VS_SYNTH_TABULAR_MAX_FEATURES];
    for (int64_t i = 0; i < o->n; i++) {
        /* Features in index order; a correlated one may read its parent, so parents go first. */
        for (int64_t j = 0; j < q; j++)
            if (role[j] != ROLE_CORRELATED) z[j] = (int)vs_rng_below(&rng, (uint64_t)catalogue[j].k);
        for (int64_t j = 0; j < q; j++) {
            if (role[j] != ROLE_CORRELATED) continue;
            int k = catalogue[j].k, kp = catalogue[parent[j]].k;
            int u = (int)vs_rng_below(&rng, (uint64_t)k);
            z[j] = vs_rng_uniform(&rng) < o->corr_strength ? z[parent[j]] * k / kp : u;
        }
        int64_t y = rule_label(z, sal, ns);
        if (vs_rng_uniform(&rng) < o->label_noise) y = 1 - y;
        d->y[i] = y;
        float *row = d->X + (size_t)i * (size_t)d->dim;
        for (int64_t j = 0; j < q; j++) row[d->groups[j].first + z[j]] = 1.0f;
    }
    *out = d;
    return VS_OK;
fail:
    vs_dataset_free(d);
    return st;
}
