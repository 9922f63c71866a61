/* registry.c - the list of explanation methods (one entry per method file) and the options every
 * method declares: defaults, parsing of name=value with messages naming the option, formatting. */
#include "explain/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const vs_method vs_method_saliency, vs_method_input_x_gradient, vs_method_integrated_gradients, vs_method_smoothgrad,
    vs_method_expected_gradients, vs_method_gradient_shap, vs_method_deeplift, vs_method_deepshap, vs_method_occlusion, vs_method_gradcam,
    vs_method_lime, vs_method_kernel_shap, vs_method_shapley_exact, vs_method_integrated_hessians;
extern const vs_method vs_method_guided_backprop, vs_method_deconvolution, vs_method_guided_gradcam, vs_method_lrp,
    vs_method_feature_ablation, vs_method_feature_permutation, vs_method_shapley_value_sampling, vs_method_noise_tunnel,
    vs_method_layer_activation, vs_method_layer_gradient_x_activation, vs_method_layer_integrated_gradients, vs_method_layer_conductance,
    vs_method_neuron_integrated_gradients, vs_method_neuron_conductance;
extern const vs_method vs_method_shapley_taylor;
extern const vs_method vs_method_cem_pn, vs_method_cem_pp;
extern const vs_method vs_method_pick_all, vs_method_snx_random, vs_method_des, vs_method_snx_global, vs_method_sm, vs_method_snx_uc,
    vs_method_snx_kl, vs_method_snx_des, vs_method_snx_inter, vs_method_snx_union, vs_method_snx, vs_method_gnnexplainer,
    vs_method_pgexplainer;

/* The registry: adding a method is its file plus one line here. */
static const vs_method *const registry[] = {
    &vs_method_saliency,    &vs_method_input_x_gradient, &vs_method_integrated_gradients, &vs_method_smoothgrad,
    &vs_method_expected_gradients, &vs_method_gradient_shap, &vs_method_deeplift,  &vs_method_deepshap,  &vs_method_occlusion,
    &vs_method_gradcam,     &vs_method_lime,             &vs_method_kernel_shap,          &vs_method_shapley_exact,
    &vs_method_integrated_hessians,
    &vs_method_guided_backprop,
    &vs_method_deconvolution,
    &vs_method_guided_gradcam,
    &vs_method_lrp,
    &vs_method_feature_ablation,
    &vs_method_feature_permutation,
    &vs_method_shapley_value_sampling,
    &vs_method_noise_tunnel,
    &vs_method_layer_activation,
    &vs_method_layer_gradient_x_activation,
    &vs_method_layer_integrated_gradients,
    &vs_method_layer_conductance,
    &vs_method_neuron_integrated_gradients,
    &vs_method_neuron_conductance,
    &vs_method_shapley_taylor,
    &vs_method_cem_pn,      &vs_method_cem_pp,
    /* SNX (explain/snx_methods.c), in the order of the paper's Table II */
    &vs_method_pick_all,    &vs_method_snx_random,       &vs_method_des,                  &vs_method_snx_global,
    &vs_method_sm,          &vs_method_snx_uc,           &vs_method_snx_kl,               &vs_method_snx_des,
    &vs_method_snx_inter,   &vs_method_snx_union,        &vs_method_snx,                  &vs_method_gnnexplainer,
    &vs_method_pgexplainer,
};

#define N_METHODS ((int)(sizeof registry / sizeof registry[0]))

int vs_method_family_count(vs_method_family f)
{
    int n = 0;
    for (int i = 0; i < N_METHODS; i++) n += registry[i]->family == f;
    return n;
}

const vs_method *vs_method_family_at(vs_method_family f, int k)
{
    for (int i = 0; k >= 0 && i < N_METHODS; i++)
        if (registry[i]->family == f && k-- == 0) return registry[i];
    return NULL;
}

int vs_method_count(void) { return vs_method_family_count(VS_METHOD_ATTRIBUTION); }

const vs_method *vs_method_at(int i) { return vs_method_family_at(VS_METHOD_ATTRIBUTION, i); }

const vs_method *vs_method_find(const char *name)
{
    for (int i = 0; name && i < N_METHODS; i++)
        if (strcmp(registry[i]->name, name) == 0 || (registry[i]->alias && strcmp(registry[i]->alias, name) == 0)) return registry[i];
    return NULL;
}

/* Edit distance between a and b, case and '_' / '-' ignored (GradientShap = gradient-shap), capped. */
static int name_distance(const char *a, const char *b)
{
    char s[64], t[64];
    int n = 0, m = 0;
    for (; *a && n < 63; a++)
        if (*a != '_' && *a != '-') s[n++] = (char)tolower((unsigned char)*a);
    for (; *b && m < 63; b++)
        if (*b != '_' && *b != '-') t[m++] = (char)tolower((unsigned char)*b);
    int row[64];
    for (int j = 0; j <= m; j++) row[j] = j;
    for (int i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= m; j++) {
            int up = row[j], best = diag + (s[i - 1] != t[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

const vs_method *vs_method_nearest(const char *name) { return vs_method_family_nearest(VS_METHOD_ATTRIBUTION, name); }

const vs_method *vs_method_family_nearest(vs_method_family f, const char *name)
{
    const vs_method *best = NULL;
    int bd = 0;
    for (int i = 0; name && i < N_METHODS; i++) {
        if (registry[i]->family != f) continue;
        int d = name_distance(name, registry[i]->name), len = (int)strlen(registry[i]->name);
        if (d <= (len < 9 ? 2 : len / 3) && (!best || d < bd)) best = registry[i], bd = d;
    }
    return best;
}

const vs_method_param *vs_method_param_find(const vs_method *m, const char *name)
{
    for (const vs_method_param *p = m->params; p && p->name; p++)
        if (strcmp(p->name, name) == 0) return p;
    return NULL;
}

const char *vs_method_output_name(vs_method_output o)
{
    static const char *const names[] = {"features", "interactions", "mask", "contrastive", "layer"};
    return (unsigned)o < 5 ? names[o] : NULL;
}

static const char *const side_names[] = {"query", "reference", "both"};

const char *vs_side_name(vs_side s) { return (unsigned)s < 3 ? side_names[s] : NULL; }

int vs_side_from_name(const char *name)
{
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, side_names[i]) == 0) return i;
    return -1;
}

/* ---- options ------------------------------------------------------------------------------------- */

struct vs_method_opts {
    const vs_method *m;
    unsigned char *data;   /* [opts_size] the method's options struct */
};

vs_method_opts *vs_method_opts_new(const vs_method *m)
{
    vs_method_opts *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->m = m;
    o->data = calloc(m->opts_size ? m->opts_size : 1, 1);
    if (!o->data) {
        free(o);
        return NULL;
    }
    if (m->defaults) m->defaults(o->data);
    return o;
}

void vs_method_opts_free(vs_method_opts *o)
{
    if (!o) return;
    free(o->data);
    free(o);
}

const vs_method *vs_method_opts_method(const vs_method_opts *o) { return o->m; }

const void *vs_method_opts_data(const vs_method_opts *o) { return o->data; }

/* The index of word w in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *w)
{
    size_t n = strlen(w);
    int k = 0;
    for (const char *p = choices; *p; k++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0) return k;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static bool parse_long(const char *s, double lo, double hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

vs_status vs_method_opts_set(vs_method_opts *o, const char *name, const char *value, vs_error *err)
{
    const vs_method *m = o->m;
    const vs_method_param *p = vs_method_param_find(m, name);
    if (!p) return vs_error_set(err, VS_ERR_ARG, "%s has no option --%s", m->name, name);
    unsigned char *at = o->data + p->offset;
    if (p->kind == VS_PARAM_SWITCH) {
        bool v = !value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0;
        if (value && !v && strcmp(value, "false") != 0 && strcmp(value, "0") != 0)
            return vs_error_set(err, VS_ERR_ARG, "%s: option --%s is a switch (true or false), got '%s'", m->name, name, value);
        memcpy(at, &v, sizeof v);
        return VS_OK;
    }
    if (!value) return vs_error_set(err, VS_ERR_ARG, "%s: option --%s needs a value", m->name, name);
    switch (p->kind) {
    case VS_PARAM_INT: {
        long v;
        if (!parse_long(value, p->lo, p->hi, &v))
            return vs_error_set(err, VS_ERR_ARG, "%s: option --%s expects an integer in [%g, %g], got '%s'", m->name, name, p->lo, p->hi,
                                value);
        int iv = (int)v;
        memcpy(at, &iv, sizeof iv);
        return VS_OK;
    }
    case VS_PARAM_FLOAT: {
        char *end;
        double v = strtod(value, &end);
        if (end == value || *end || !isfinite(v) || v < p->lo || v > p->hi)
            return vs_error_set(err, VS_ERR_ARG, "%s: option --%s expects a number in [%g, %g], got '%s'", m->name, name, p->lo, p->hi,
                                value);
        float fv = (float)v;
        memcpy(at, &fv, sizeof fv);
        return VS_OK;
    }
    case VS_PARAM_CHOICE: {
        int k = choice_index(p->choices, value);
        if (k < 0) return vs_error_set(err, VS_ERR_ARG, "%s: option --%s expects one of %s, got '%s'", m->name, name, p->choices, value);
        memcpy(at, &k, sizeof k);
        return VS_OK;
    }
    case VS_PARAM_INT3: {
        int v3[3] = {0, 0, 0}, n = 0;
        char buf[96];
        snprintf(buf, sizeof buf, "%s", value);
        bool ok = strlen(value) < sizeof buf && *buf;
        for (char *save = NULL, *t = ok ? strtok_r(buf, ",", &save) : NULL; t && ok; t = strtok_r(NULL, ",", &save)) {
            long v;
            ok = n < 3 && parse_long(t, p->lo, p->hi, &v);
            if (ok) v3[n++] = (int)v;
        }
        if (!ok || n == 0 || value[strlen(value) - 1] == ',' || value[0] == ',' || strstr(value, ",,"))
            return vs_error_set(err, VS_ERR_ARG, "%s: option --%s expects one to three integers in [%g, %g] as C,H,W, got '%s'", m->name,
                                name, p->lo, p->hi, value);
        memcpy(at, v3, sizeof v3);
        return VS_OK;
    }
    case VS_PARAM_PATH: {
        size_t len = strcmp(value, "auto") == 0 ? 0 : strlen(value); /* "auto": the method's default */
        if (len == 0) {
            *at = '\0';
            return VS_OK;
        }
        bool ok = len > 0 && len < VS_PARAM_PATH_MAX && value[0] != '.' && value[len - 1] != '.' && !strstr(value, "..");
        for (size_t i = 0; ok && i < len; i++) ok = isalnum((unsigned char)value[i]) || strchr("_./:-", value[i]);
        if (!ok)
            return vs_error_set(err, VS_ERR_ARG, "%s: option --%s expects a module path (names of letters, digits and _ joined by dots, "
                                "at most %d characters, e.g. 3 or encoder.3, or an ONNX node or tensor name of letters, digits and _ . / : -), "
                                "got '%s'", m->name, name, VS_PARAM_PATH_MAX - 1, value);
        memcpy(at, value, len + 1);
        return VS_OK;
    }
    default: return vs_error_set(err, VS_ERR_ARG, "%s: option --%s has an unknown kind", m->name, name);
    }
}

vs_method_opts *vs_method_opts_parse(const vs_method *m, const char *settings, vs_error *err)
{
    if (!m) {
        vs_error_set(err, VS_ERR_ARG, "explain: no method");
        return NULL;
    }
    vs_method_opts *o = vs_method_opts_new(m);
    if (!o) {
        vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for its options", m->name);
        return NULL;
    }
    for (const char *s = settings ? settings : ""; *s;) {
        while (*s == ' ') s++;
        size_t len = strcspn(s, " ");
        if (!len) break;
        char word[128];
        if (len >= sizeof word) {
            vs_error_set(err, VS_ERR_ARG, "%s: setting '%.*s...' is too long", m->name, 32, s);
            vs_method_opts_free(o);
            return NULL;
        }
        memcpy(word, s, len);
        word[len] = '\0';
        s += len;
        char *eq = strchr(word, '=');
        if (eq) *eq = '\0';
        if (vs_method_opts_set(o, word, eq ? eq + 1 : NULL, err) != VS_OK) {
            vs_method_opts_free(o);
            return NULL;
        }
    }
    return o;
}

void vs_method_opts_format(const vs_method_opts *o, const vs_method_param *p, char *buf, size_t n)
{
    const unsigned char *at = o->data + p->offset;
    int iv, v3[3];
    float fv;
    bool bv;
    switch (p->kind) {
    case VS_PARAM_INT: memcpy(&iv, at, sizeof iv); snprintf(buf, n, "%d", iv); break;
    case VS_PARAM_FLOAT: memcpy(&fv, at, sizeof fv); snprintf(buf, n, "%g", (double)fv); break;
    case VS_PARAM_SWITCH: memcpy(&bv, at, sizeof bv); snprintf(buf, n, "%s", bv ? "true" : "false"); break;
    case VS_PARAM_CHOICE: {
        memcpy(&iv, at, sizeof iv);
        const char *p0 = p->choices;
        for (int k = 0; k < iv && p0 && strchr(p0, '|'); k++) p0 = strchr(p0, '|') + 1;
        size_t len = strchr(p0, '|') ? (size_t)(strchr(p0, '|') - p0) : strlen(p0);
        snprintf(buf, n, "%.*s", (int)len, p0);
        break;
    }
    case VS_PARAM_INT3:
        memcpy(v3, at, sizeof v3);
        snprintf(buf, n, "%d,%d,%d", v3[0] ? v3[0] : 1, v3[1] ? v3[1] : 1, v3[2] ? v3[2] : 1);
        break;
    case VS_PARAM_PATH: snprintf(buf, n, "%s", *at ? (const char *)at : "auto"); break;
    default: snprintf(buf, n, "?");
    }
}
