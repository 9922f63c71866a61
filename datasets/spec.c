/* spec.c - resolve a data SPEC (preset name or typed path) to a loaded vs_dataset. */
#include "versus/data_spec.h"
#include "versus/data_io.h"
#include "versus/synth.h"
#include "versus/tabular.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vs_data_spec_help(void)
{
    return "  adult | adult-all | bank | compas | credit   shared tabular sets (--path FOLDER or $VERSUS_DATA)\n"
           "  iris | wine | breast-cancer | digits        scikit-learn's small sets ($VERSUS_DATA/sklearn_small)\n"
           "  mutag                                       TU graphs (--path FOLDER or $VERSUS_DATA/mutag)\n"
           "  mnist | mnist-train                         MNIST test / first 10k train (--path FOLDER or $VERSUS_DATA/mnist)\n"
           "  fashion-mnist | fashion-mnist-train         Fashion-MNIST (--path or /usr/share/datasets/fashion-mnist)\n"
           "  synthetic-tabular | synthetic-graph | synthetic-shapes   planted ground truth (--seed, --n)\n"
           "  colored-mnist                               MNIST test, each image one of three colours (--seed)\n"
           "  csv:FILE | tu:DIR/PREFIX | idx:IMAGES,LABELS any file in those formats\n"
           "  graphs:DIR                                  graphs from 'versus data export', or a folder with one TU set\n";
}

/* $VERSUS_DATA/<sub> into buf, or NULL with an error when neither it nor --path is set. */
static const char *data_dir(const vs_data_flags *f, const char *sub, char *buf, size_t n, const char *spec, vs_error *err)
{
    if (f && f->path) return f->path;
    const char *root = getenv("VERSUS_DATA");
    if (!root || !*root) {
        vs_error_set(err, VS_ERR_ARG, "%s: give the data folder with --path (or set VERSUS_DATA to the shared datasets folder)", spec);
        return NULL;
    }
    snprintf(buf, n, "%s/%s", root, sub);
    return buf;
}

/* Split "a,b,c" into a NULL-terminated list (one allocation; free the returned pointer). */
static const char **split_list(const char *s)
{
    if (!s) return NULL;
    size_t n = 1, len = strlen(s);
    for (size_t i = 0; i < len; i++) n += s[i] == ',';
    char **v = malloc((n + 1) * sizeof *v + len + 1);
    if (!v) return NULL;
    char *copy = (char *)(v + n + 1);
    memcpy(copy, s, len + 1);
    size_t k = 0;
    for (char *tok = copy, *end; tok; tok = end) {
        end = strchr(tok, ',');
        if (end) *end++ = '\0';
        v[k++] = tok;
    }
    v[k] = NULL;
    return (const char **)v;
}

static vs_status load_csv_spec(const char *file, const vs_data_flags *f, vs_dataset **out, vs_error *err)
{
    vs_csv_opts o = vs_csv_opts_defaults();
    const char **drop = NULL, **cat = NULL;
    const char *missing[2] = {NULL, NULL};
    if (f) {
        o.delimiter = f->delimiter;
        o.no_header = f->no_header;
        if (f->label) {
            char *end;
            long idx = strtol(f->label, &end, 10);
            if (*f->label && *end == '\0')
                o.label_index = idx;
            else
                o.label = f->label;
        }
        drop = split_list(f->drop);
        cat = split_list(f->categorical);
        if ((f->drop && !drop) || (f->categorical && !cat)) {
            free(drop);
            free(cat);
            return vs_error_set(err, VS_ERR_NOMEM, "out of memory");
        }
        o.drop = drop;
        o.categorical = cat;
        o.bins = f->bins;
        if (f->missing) {
            missing[0] = f->missing;
            o.missing = missing;
        }
    }
    vs_status st = vs_load_csv(file, &o, out, err);
    free(drop);
    free(cat);
    return st;
}

static vs_status load_tu_spec(const char *dir_prefix, vs_dataset **out, vs_error *err)
{
    const char *slash = strrchr(dir_prefix, '/');
    char dir[4096];
    if (!slash) return vs_load_tu(".", dir_prefix, out, err);
    size_t n = (size_t)(slash - dir_prefix);
    if (n >= sizeof dir) return vs_error_set(err, VS_ERR_ARG, "tu:%s: path too long", dir_prefix);
    memcpy(dir, dir_prefix, n);
    dir[n] = '\0';
    return vs_load_tu(n ? dir : "/", slash + 1, out, err);
}

static vs_status load_idx_spec(const char *pair, vs_dataset **out, vs_error *err)
{
    const char *comma = strchr(pair, ',');
    if (!comma || comma == pair || !comma[1])
        return vs_error_set(err, VS_ERR_ARG, "idx:%s: expected idx:IMAGES_FILE,LABELS_FILE", pair);
    char images[4096];
    size_t n = (size_t)(comma - pair);
    if (n >= sizeof images) return vs_error_set(err, VS_ERR_ARG, "idx: path too long");
    memcpy(images, pair, n);
    images[n] = '\0';
    return vs_load_idx(images, comma + 1, "idx", out, err);
}

/* A generator's failure prefixed with the SPEC and its size: "synthetic-tabular --n 100000000: ...". */
static vs_status synth_named(const char *spec, const vs_data_flags *f, vs_status st, vs_error *err)
{
    if (st != VS_OK && err) {
        char msg[VS_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        if (f && f->n) vs_error_set(err, st, "%s --n %lld: %s", spec, (long long)f->n, msg);
        else vs_error_set(err, st, "%s: %s", spec, msg);
    }
    return st;
}

vs_status vs_load_spec(const char *spec, const vs_data_flags *f, vs_dataset **out, vs_error *err)
{
    *out = NULL;
    char buf[4096];
    const char *dir;
    if (!spec || !*spec) return vs_error_set(err, VS_ERR_ARG, "no data SPEC given");
    if (strncmp(spec, "csv:", 4) == 0) return load_csv_spec(spec + 4, f, out, err);
    if (strncmp(spec, "tu:", 3) == 0) return load_tu_spec(spec + 3, out, err);
    if (strncmp(spec, "idx:", 4) == 0) return load_idx_spec(spec + 4, out, err);
    if (strncmp(spec, "graphs:", 7) == 0) return vs_load_graph_dir(spec + 7, out, err);
    for (const char *const *p = vs_tabular_preset_names(); *p; p++)
        if (strcmp(spec, *p) == 0) return vs_load_preset_tabular(spec, f ? f->path : NULL, out, err);
    if (strcmp(spec, "mutag") == 0) {
        if (!(dir = data_dir(f, "mutag", buf, sizeof buf, spec, err))) return err ? err->code : VS_ERR_ARG;
        return vs_load_tu(dir, "MUTAG", out, err);
    }
    if (strcmp(spec, "mnist") == 0 || strcmp(spec, "mnist-train") == 0 || strcmp(spec, "colored-mnist") == 0) {
        if (!(dir = data_dir(f, "mnist", buf, sizeof buf, spec, err))) return err ? err->code : VS_ERR_ARG;
        vs_status st = vs_load_mnist(dir, strcmp(spec, "mnist-train") == 0, out, err);
        if (st != VS_OK || strcmp(spec, "colored-mnist") != 0) return st;
        vs_dataset *colored = NULL;
        vs_rng r;
        vs_rng_seed(&r, f ? f->seed : 0);
        st = vs_synth_colorize(*out, &r, &colored, NULL, err);
        vs_dataset_free(*out);
        *out = colored;
        return st;
    }
    if (strcmp(spec, "fashion-mnist") == 0 || strcmp(spec, "fashion-mnist-train") == 0)
        return vs_load_fashion_mnist(f ? f->path : NULL, strcmp(spec, "fashion-mnist-train") == 0, out, err);
    if (strcmp(spec, "synthetic-tabular") == 0) {
        vs_synth_tabular_opts o;
        vs_synth_tabular_defaults(&o);
        if (f) {
            o.seed = f->seed;
            if (f->n) o.n = f->n;
        }
        return synth_named(spec, f, vs_synth_tabular(&o, out, err), err);
    }
    if (strcmp(spec, "synthetic-graph") == 0) {
        vs_synth_graph_opts o;
        vs_synth_graph_defaults(&o);
        if (f) {
            o.seed = f->seed;
            if (f->n) o.n = f->n;
        }
        return synth_named(spec, f, vs_synth_graphs(&o, out, err), err);
    }
    if (strcmp(spec, "synthetic-shapes") == 0) {
        vs_synth_shapes_opts o;
        vs_synth_shapes_defaults(&o);
        if (f) {
            o.seed = f->seed;
            if (f->n) o.n = f->n;
        }
        return synth_named(spec, f, vs_synth_shapes(&o, out, err), err);
    }
    return vs_error_set(err, VS_ERR_ARG, "unknown data SPEC '%s' (expected a preset name or csv:FILE, tu:DIR/PREFIX, idx:IMAGES,LABELS)", spec);
}
