/* cem_attr.c - CEM-MAF's monotonic attribute functions g_i: latent dimensions of a VAE's posterior
 * mean (identity or negated, clamped to a range) or presence logits of binary attribute classifiers;
 * their parsing from "NAME:+J[:LO:HI],NAME@DIR", their evaluation on images, and the PN as text. */
#include "versus/cem.h"
#include "versus/model.h"
#include "versus/ops.h"
#include "versus/vae.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || isnan(v)) return false;
    *out = (float)v;
    return true;
}

/* One item "NAME:+J[:LO:HI]" or "NAME@DIR" into at. */
static vs_status parse_item(char *item, vs_module *vae, int64_t latent, vs_cem_attr *at, vs_error *err)
{
    memset(at, 0, sizeof *at);
    char *dir = strchr(item, '@'), *colon = strchr(item, ':');
    char *sep = dir && (!colon || dir < colon) ? dir : colon;
    if (!sep || sep == item || (size_t)(sep - item) >= sizeof at->name)
        return vs_error_set(err, VS_ERR_ARG, "attributes: '%s' is not NAME:+J[:LO:HI] or NAME@DIR (a name of 1-47 characters first)", item);
    memcpy(at->name, item, (size_t)(sep - item));
    if (sep == dir) {
        at->kind = VS_CEM_ATTR_CLASSIFIER;
        vs_error e2;
        at->classifier = vs_model_load(dir + 1, NULL, &e2);
        if (!at->classifier) return vs_error_set(err, e2.code, "attributes: %s: %s", at->name, e2.msg);
        at->owned = true;
        at->sign = 1, at->lo = -INFINITY, at->hi = INFINITY;
        return VS_OK;
    }
    at->kind = VS_CEM_ATTR_LATENT;
    char *f[4] = {NULL};
    int nf = 0;
    for (char *save = NULL, *t = strtok_r(sep + 1, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        if (nf == 3) return vs_error_set(err, VS_ERR_ARG, "attributes: %s: too many fields (NAME:+J[:LO:HI])", at->name);
        f[nf++] = t;
    }
    char *end;
    long j = nf > 0 && (f[0][0] == '+' || f[0][0] == '-') ? strtol(f[0] + 1, &end, 10) : -1;
    if (j < 0 || *end || j >= latent)
        return vs_error_set(err, VS_ERR_ARG, "attributes: %s: expected a sign and a latent index in [0, %lld) like +3 or -3, got '%s'", at->name,
                            (long long)latent, nf > 0 ? f[0] : "");
    at->dim = j, at->sign = f[0][0] == '-' ? -1.0f : 1.0f;
    at->lo = -INFINITY, at->hi = INFINITY;
    if (nf == 2) return vs_error_set(err, VS_ERR_ARG, "attributes: %s: a range needs both LO and HI", at->name);
    if (nf == 3 && (!parse_float(f[1], &at->lo) || !parse_float(f[2], &at->hi) || !(at->lo < at->hi)))
        return vs_error_set(err, VS_ERR_ARG, "attributes: %s: the range expects numbers LO < HI, got '%s:%s'", at->name, f[1], f[2]);
    if (!vae) return vs_error_set(err, VS_ERR_ARG, "attributes: %s: a latent attribute needs the VAE", at->name);
    return VS_OK;
}

vs_status vs_cem_attrs_parse(const char *spec, vs_module *vae, int64_t latent, vs_cem_attrs *a, vs_error *err)
{
    memset(a, 0, sizeof *a);
    a->vae = vae;
    if (!spec || !*spec) return VS_OK;
    char *copy = strdup(spec);
    if (!copy) return vs_error_set(err, VS_ERR_NOMEM, "attributes: out of memory");
    vs_status st = VS_OK;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && st == VS_OK; t = strtok_r(NULL, ",", &save)) {
        if (a->n == VS_CEM_MAX_ATTRS) {
            st = vs_error_set(err, VS_ERR_ARG, "attributes: at most %d", VS_CEM_MAX_ATTRS);
            break;
        }
        st = parse_item(t, vae, latent, &a->a[a->n], err);
        if (st == VS_OK || a->a[a->n].owned) a->n++;
    }
    free(copy);
    if (st != VS_OK) vs_cem_attrs_clear(a);
    return st;
}

void vs_cem_attrs_clear(vs_cem_attrs *a)
{
    if (!a) return;
    for (int i = 0; i < a->n; i++)
        if (a->a[i].owned) vs_module_free(a->a[i].classifier);
    memset(a, 0, sizeof *a);
}

vs_tensor *vs_cem_attrs_eval(const vs_cem_attrs *a, vs_tensor *x, vs_tensor *z, vs_error *err)
{
    vs_tensor *mu = z, *cols[VS_CEM_MAX_ATTRS];
    for (int i = 0; i < a->n; i++) {
        const vs_cem_attr *at = &a->a[i];
        vs_tensor *g;
        if (at->kind == VS_CEM_ATTR_LATENT) {
            if (!mu && !(mu = vs_vae_encode(a->vae, x, err))) return NULL;
            if (at->dim >= mu->shape[1]) {
                vs_error_set(err, VS_ERR_ARG, "attributes: %s: latent %lld of a %lld-dimensional code", at->name, (long long)at->dim,
                             (long long)mu->shape[1]);
                return NULL;
            }
            g = vs_mul_scalar(vs_clamp(vs_slice(mu, 1, at->dim, at->dim + 1), at->lo, at->hi), at->sign);
        } else {
            vs_tensor *out = vs_module_forward(at->classifier, x, &(vs_forward_ctx){0});
            if (!out || out->ndim != 2 || out->shape[1] > 2) {
                vs_error_set(err, VS_ERR_SHAPE, "attributes: %s: the classifier must give [n,1] or [n,2] outputs%s%s", at->name,
                             out ? "" : ": ", out ? "" : vs_last_error()->msg);
                return NULL;
            }
            g = out->shape[1] == 1 ? out : vs_sub(vs_slice(out, 1, 1, 2), vs_slice(out, 1, 0, 1));
        }
        cols[i] = g;
    }
    vs_tensor *g = a->n > 0 ? vs_concat(a->n, cols, 1) : vs_tensor_zeros(VS_SHAPE(x->shape[0], 0));
    if (!g) vs_error_set(err, vs_last_error()->code, "attributes: %s", vs_last_error()->msg);
    return g;
}

void vs_cem_pn_text(const vs_cem_attrs *a, const vs_cem_pn *p, float attr_tol, char *buf, size_t n)
{
    int used[VS_CEM_MAX_ATTRS] = {0};
    size_t k = 0;
    buf[0] = 0;
    for (int r = 0; r < a->n && r < p->n_attrs; r++) {
        int best = -1;
        float bd = 0;
        for (int i = 0; i < a->n && i < p->n_attrs; i++) {
            float d = p->g[i] - p->g0[i];
            if (!used[i] && fabsf(d) > attr_tol && fabsf(d) > bd) bd = fabsf(d), best = i;
        }
        if (best < 0) break;
        used[best] = 1;
        int w = snprintf(buf + k, k < n ? n - k : 0, "%s%c%s", k ? " " : "", p->g[best] > p->g0[best] ? '+' : '-', a->a[best].name);
        if (w > 0) k += (size_t)w;
        if (k >= n) break;
    }
    if (!buf[0]) snprintf(buf, n, "%s", p->found ? "(no attribute changed)" : "(no PN found)");
}
