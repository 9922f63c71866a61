/* model_io.c - model.json <-> model specs and modules, and model directories (model.json plus
 * model.safetensors).  The JSON layer only maps keys to spec fields; every check of values and
 * shapes is the spec builder's, so code and files share one set of rules. */
#include "nn/composite_internal.h"
#include "versus/model.h"
#include "versus/safetensors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_NESTING 16

static vs_status at(vs_error *err, vs_status code, const vs_json *node, const char *fmt, const char *a, const char *b)
{
    char where[256];
    vs_json_where(node, where, sizeof where);
    return vs_error_set(err, code, "%s: %s%s%s", where, fmt, a ? a : "", b ? b : "");
}

static vs_status layers_from_json(const vs_json *arr, vs_layer_spec **out, int64_t *n, int depth, vs_error *err);

static bool skipped(const char *key, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(key, *skip) == 0) return true;
    return false;
}

static vs_status layer_from_json(const vs_json *o, vs_layer_spec *s, const char *const *skip, int depth, vs_error *err)
{
    if (o->type != VS_JSON_OBJECT) return at(err, VS_ERR_FORMAT, o, "a layer must be an object", NULL, NULL);
    const char *op;
    if (vs_json_get_str(o, "op", &op, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
    vs_module_kind kind;
    if (!vs_module_kind_from_name(op, &kind))
        return at(err, VS_ERR_FORMAT, vs_json_get(o, "op"), "unknown op \"", op, "\"");
    vs_layer_spec_init(s, kind);
    for (size_t i = 0; i < o->n; i++) {
        const vs_json_member *mb = &o->members[i];
        const vs_json *v = mb->value;
        if (strcmp(mb->key, "op") == 0 || skipped(mb->key, skip)) continue;
        if (strcmp(mb->key, "sequential") == 0) {
            if (kind != VS_MODULE_RESIDUAL) return at(err, VS_ERR_FORMAT, v, "only a residual layer holds a \"sequential\"", NULL, NULL);
            if (depth >= MAX_NESTING) return at(err, VS_ERR_FORMAT, v, "residual blocks nested too deeply", NULL, NULL);
            vs_status st = layers_from_json(v, &s->block, &s->n_block, depth + 1, err);
            if (st != VS_OK) return st;
            continue;
        }
        if (strcmp(mb->key, "name") == 0) {
            const char *name;
            if (kind != VS_MODULE_RESIDUAL) return at(err, VS_ERR_FORMAT, v, "field \"name\" does not apply to ", op, "");
            if (vs_json_str(v, &name, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
            if (!vs_is_identifier(name))
                return at(err, VS_ERR_FORMAT, v, "\"name\" must be a name of letters, digits and _ (a PyTorch attribute), got \"", name, "\"");
            snprintf(s->name, sizeof s->name, "%s", name);
            continue;
        }
        double value;
        if (v->type == VS_JSON_NUMBER)
            value = v->is_int ? (double)v->integer : v->number;
        else if (v->type == VS_JSON_BOOL && vs_spec_field_is_flag(mb->key))
            value = v->boolean;
        else
            return at(err, VS_ERR_FORMAT, v, "expected a number for \"", mb->key, "\"");
        vs_error e;
        vs_error_clear(&e);
        if (vs_layer_spec_set(s, mb->key, value, &e) != VS_OK) return at(err, e.code, v, e.msg, NULL, NULL);
    }
    if (kind == VS_MODULE_RESIDUAL && !s->n_block)
        return at(err, VS_ERR_FORMAT, o, "a residual layer needs \"sequential\": [layers]", NULL, NULL);
    return VS_OK;
}

vs_status vs_layer_spec_from_json(const vs_json *o, vs_layer_spec *s, const char *const *skip, vs_error *err)
{
    return layer_from_json(o, s, skip, 0, err);
}

static vs_status layers_from_json(const vs_json *arr, vs_layer_spec **out, int64_t *n, int depth, vs_error *err)
{
    if (arr->type != VS_JSON_ARRAY || arr->n == 0)
        return at(err, VS_ERR_FORMAT, arr, "\"sequential\" must be a non-empty array of layers", NULL, NULL);
    vs_layer_spec *l = calloc(arr->n, sizeof *l);
    if (!l) return vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
    *out = l;
    for (size_t i = 0; i < arr->n; i++) {
        vs_status st = layer_from_json(arr->items[i], &l[i], NULL, depth, err);
        *n = (int64_t)i + 1; /* the caller's clear frees what was read so far */
        if (st != VS_OK) return st;
    }
    return VS_OK;
}

/* The first input's shape of a composite object as the spec's "input" (left out when unknown). */
static void composite_input(const vs_json *comp, vs_model_spec *out)
{
    const vs_json *inputs = vs_json_get(comp, "inputs");
    const vs_json *first = inputs && inputs->type == VS_JSON_OBJECT && inputs->n ? inputs->members[0].value : NULL;
    if (!first || first->type != VS_JSON_ARRAY || first->n > VS_MAX_DIMS - 1) return;
    for (size_t i = 0; i < first->n; i++)
        if (vs_json_int(first->items[i], 1, (int64_t)1 << 31, &out->input[i], NULL) != VS_OK) return;
    out->input_ndim = (int)first->n;
}

vs_status vs_model_body_from_json(const vs_json *obj, vs_model_spec *out, bool strict, vs_error *err)
{
    const vs_json *seq = vs_json_get(obj, "sequential"), *siam = vs_json_get(obj, "siamese"), *comp = vs_json_get(obj, "composite");
    if ((seq != NULL) + (siam != NULL) + (comp != NULL) != 1)
        return at(err, VS_ERR_FORMAT, obj, "a model needs exactly one of \"sequential\", \"siamese\" and \"composite\"", NULL, NULL);
    for (size_t i = 0; strict && i < obj->n; i++) {
        const char *k = obj->members[i].key;
        if (strcmp(k, "sequential") != 0 && strcmp(k, "siamese") != 0 && strcmp(k, "composite") != 0)
            return at(err, VS_ERR_FORMAT, obj->members[i].value, "unknown key \"", k, "\" in a model (expected one of \"sequential\", \"siamese\", \"composite\" or a layer's \"op\")");
    }
    if (comp) {
        if (comp->type != VS_JSON_OBJECT) return at(err, VS_ERR_FORMAT, comp, "\"composite\" must be an object", NULL, NULL);
        if (!(out->composite = vs_composite_json_copy(comp))) return vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        composite_input(comp, out);
        return VS_OK;
    }
    if (siam) {
        if (siam->type != VS_JSON_OBJECT) return at(err, VS_ERR_FORMAT, siam, "\"siamese\" must be an object", NULL, NULL);
        const vs_json *enc = vs_json_get_typed(siam, "encoder", VS_JSON_OBJECT, err);
        if (!enc) return err ? err->code : VS_ERR_FORMAT;
        seq = vs_json_get_typed(enc, "sequential", VS_JSON_ARRAY, err);
        if (!seq) return err ? err->code : VS_ERR_FORMAT;
        const char *sim;
        if (vs_json_opt_str(siam, "similarity", "cosine", &sim, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
        if (!vs_similarity_from_name(sim, &out->similarity))
            return at(err, VS_ERR_FORMAT, vs_json_get(siam, "similarity"), "unknown similarity \"", sim, "\" (known: cosine)");
        out->siamese = true;
    }
    return layers_from_json(seq, &out->layers, &out->n_layers, 0, err);
}

vs_status vs_model_spec_from_json(const vs_json *root, vs_model_spec *out, vs_error *err)
{
    *out = (vs_model_spec){0};
    if (root->type != VS_JSON_OBJECT) return at(err, VS_ERR_FORMAT, root, "a model must be a JSON object", NULL, NULL);
    const char *format;
    if (vs_json_get_str(root, "format", &format, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
    if (strcmp(format, VS_MODEL_FORMAT) != 0)
        return at(err, VS_ERR_FORMAT, vs_json_get(root, "format"), "unsupported format \"", format, "\", expected \"" VS_MODEL_FORMAT "\"");
    const vs_json *input = vs_json_get(root, "input");
    if (input && vs_json_get(root, "composite"))
        return at(err, VS_ERR_FORMAT, input, "\"input\" does not apply to a composite (its shapes are in \"composite\": {\"inputs\": ...})", NULL, NULL);
    if (input) {
        if (input->type != VS_JSON_ARRAY || input->n < 1 || input->n > VS_MAX_DIMS - 1)
            return at(err, VS_ERR_FORMAT, input, "\"input\" must be an array of 1 to 7 sizes", NULL, NULL);
        for (size_t i = 0; i < input->n; i++)
            if (vs_json_int(input->items[i], 1, (int64_t)1 << 31, &out->input[i], err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
        out->input_ndim = (int)input->n;
    }
    return vs_model_body_from_json(root, out, false, err);
}

/* ---- writing ----------------------------------------------------------------------------------------- */

static vs_json *layers_to_json(const vs_module *seq, vs_error *err);

vs_json *vs_layer_to_json(const vs_module *m, vs_error *err)
{
    vs_json *o = vs_json_new_object();
    bool ok = o && vs_json_set(o, "op", vs_json_new_string(vs_module_kind_name(m->kind))) == VS_OK;
    for (int f = 0; ok && f < VS_SPEC_N_FIELDS; f++) {
        const char *name = vs_spec_field_name(f);
        double v;
        if (!vs_layer_spec_get(&m->spec, name, &v)) continue;
        /* PyTorch's defaults of the later fields are left out: model.json files stay as they were */
        if ((strcmp(name, "dilation") == 0 && v == 1) || (strcmp(name, "ceil_mode") == 0 && v == 0) ||
            (strcmp(name, "groups") == 0 && v == 1))
            continue;
        vs_json *val = vs_spec_field_is_flag(name)                        ? vs_json_new_bool(v != 0)
                       : fabs(v) < 9.0e15 && v == (double)(int64_t)v ? vs_json_new_int((int64_t)v)
                                                                     : vs_json_new_number(v);
        ok = vs_json_set(o, name, val) == VS_OK;
    }
    if (ok && m->kind == VS_MODULE_RESIDUAL) {
        if (m->spec.name[0]) ok = vs_json_set(o, "name", vs_json_new_string(m->spec.name)) == VS_OK;
        vs_json *block = ok ? layers_to_json(m->children[0], err) : NULL;
        if (ok && !block) {
            vs_json_free(o);
            return NULL;
        }
        ok = ok && vs_json_set(o, "sequential", block) == VS_OK;
    }
    if (!ok) {
        vs_json_free(o);
        vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        return NULL;
    }
    return o;
}

static vs_json *layers_to_json(const vs_module *seq, vs_error *err)
{
    if (seq->kind != VS_MODULE_SEQUENTIAL) {
        vs_error_set(err, VS_ERR_ARG, "model.json: a %s cannot stand where a sequential is expected", vs_module_kind_name(seq->kind));
        return NULL;
    }
    vs_json *a = vs_json_new_array();
    if (!a) {
        vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < seq->n_children; i++) {
        vs_json *l = vs_layer_to_json(seq->children[i], err);
        if (!l || vs_json_push(a, l) != VS_OK) {
            if (l) vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
            vs_json_free(a);
            return NULL;
        }
    }
    return a;
}

vs_status vs_model_body_to_json(const vs_module *m, vs_json *obj, vs_error *err)
{
    if (m->kind == VS_MODULE_COMPOSITE) {
        vs_json *c = vs_composite_to_json(m, err);
        if (!c) return err ? err->code : VS_ERR_NOMEM;
        return vs_json_set(obj, "composite", c) == VS_OK ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
    }
    const vs_module *seq = m->kind == VS_MODULE_SIAMESE ? m->children[0] : m;
    vs_json *layers = layers_to_json(seq, err);
    if (!layers) return err ? err->code : VS_ERR_ARG;
    if (m->kind != VS_MODULE_SIAMESE)
        return vs_json_set(obj, "sequential", layers) == VS_OK ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
    vs_json *siam = vs_json_new_object(), *enc = vs_json_new_object();
    if (!siam || !enc) {
        vs_json_free(siam);
        vs_json_free(enc);
        vs_json_free(layers);
        return vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
    }
    /* each set takes its value even when it fails, so every one is called */
    bool ok = vs_json_set(enc, "sequential", layers) == VS_OK;
    ok = vs_json_set(siam, "encoder", enc) == VS_OK && ok;
    ok = vs_json_set(siam, "similarity", vs_json_new_string(vs_similarity_name(m->similarity))) == VS_OK && ok;
    ok = vs_json_set(obj, "siamese", siam) == VS_OK && ok;
    return ok ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
}

vs_status vs_model_to_json(const vs_module *m, int input_ndim, const int64_t *input, vs_json **out, vs_error *err)
{
    *out = NULL;
    vs_json *root = vs_json_new_object();
    bool ok = root && vs_json_set(root, "format", vs_json_new_string(VS_MODEL_FORMAT)) == VS_OK;
    if (ok && input_ndim > 0 && m->kind != VS_MODULE_COMPOSITE) { /* a composite holds its input shapes */
        vs_json *in = vs_json_new_array();
        bool filled = in != NULL;
        for (int i = 0; filled && i < input_ndim; i++) filled = vs_json_push(in, vs_json_new_int(input[i])) == VS_OK;
        if (filled)
            ok = vs_json_set(root, "input", in) == VS_OK; /* takes in either way */
        else
            vs_json_free(in), ok = false;
    }
    if (!ok) {
        vs_json_free(root);
        return vs_error_set(err, VS_ERR_NOMEM, "model.json: out of memory");
    }
    vs_status st = vs_model_body_to_json(m, root, err);
    if (st != VS_OK) {
        vs_json_free(root);
        return st;
    }
    *out = root;
    return VS_OK;
}

/* ---- directories ------------------------------------------------------------------------------------ */

static char *join_path(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, file);
    return p;
}

vs_module *vs_model_load(const char *dir, vs_model_spec *spec_out, vs_error *err)
{
    char *jpath = join_path(dir, "model.json"), *wpath = join_path(dir, "model.safetensors");
    vs_json *doc = NULL;
    vs_model_spec spec = {0};
    vs_safetensors *st = NULL;
    vs_module *m = NULL;
    vs_named_tensors named = {0};
    bool onnx = vs_model_path_is_onnx(dir);
    if (!jpath || !wpath) {
        vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", dir);
        goto done;
    }
    struct stat sb;
    if (onnx) { /* the file is the model: its document and weights come from the import */
        free(jpath);
        if (!(jpath = strdup(dir))) {
            vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", dir);
            goto done;
        }
        if (vs_onnx_import(dir, &doc, &named, err) != VS_OK || vs_model_spec_from_json(doc, &spec, err) != VS_OK) goto done;
    } else if (stat(dir, &sb) == 0 && S_ISREG(sb.st_mode)) {
        vs_error_set(err, VS_ERR_ARG, "%s is a file; a model is a directory of model.json and model.safetensors, or an .onnx "
                                      "file (from PyTorch: torch.onnx.export, or torch_to_versus.py in share/versus/)", dir);
        goto done;
    } else if (vs_json_parse_file(jpath, NULL, &doc, err) != VS_OK || vs_model_spec_from_json(doc, &spec, err) != VS_OK)
        goto done;
    /* the weights replace the initial values; a fixed stream keeps loading deterministic */
    vs_rng r;
    vs_rng_seed(&r, 0);
    vs_error e;
    vs_error_clear(&e);
    m = vs_model_from_spec(&spec, &r, &e);
    if (!m) {
        vs_error_set(err, e.code, "%s: %s", jpath, e.msg);
        goto done;
    }
    if (!onnx && vs_safetensors_read(wpath, &st, err) != VS_OK) goto fail;
    for (int64_t i = 0; !onnx && i < st->n; i++)
        if (vs_named_tensors_push(&named, st->entries[i].name, st->entries[i].tensor, false) != VS_OK) {
            vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", wpath);
            goto fail;
        }
    if (vs_module_load_state(m, &named, &e) != VS_OK) {
        vs_error_set(err, e.code, "%s: %s", onnx ? dir : wpath, e.msg);
        goto fail;
    }
    vs_module_train(m, false);
    goto done;
fail:
    vs_module_free(m);
    m = NULL;
done:
    if (m && spec_out)
        *spec_out = spec;
    else
        vs_model_spec_clear(&spec);
    for (int64_t i = 0; onnx && i < named.n; i++) vs_tensor_free(named.items[i].tensor);
    vs_named_tensors_clear(&named);
    vs_safetensors_free(st);
    vs_json_free(doc);
    free(jpath);
    free(wpath);
    return m;
}

vs_status vs_model_save(const vs_module *m, int input_ndim, const int64_t *input, const char *dir, vs_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return vs_error_set(err, VS_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
    vs_json *doc = NULL;
    vs_status st = vs_model_to_json(m, input_ndim, input, &doc, err);
    if (st != VS_OK) return st;
    char *jpath = join_path(dir, "model.json"), *wpath = join_path(dir, "model.safetensors");
    vs_named_tensors named = {0};
    vs_safetensors_item *items = NULL;
    if (!jpath || !wpath || vs_module_named_tensors(m, VS_STATE_ALL, &named) != VS_OK ||
        !(items = malloc((size_t)(named.n ? named.n : 1) * sizeof *items))) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", dir);
    } else {
        for (int64_t i = 0; i < named.n; i++) items[i] = (vs_safetensors_item){named.items[i].name, named.items[i].tensor};
        /* weights first: a model.json never points at weights that failed to be written */
        st = vs_safetensors_write(wpath, items, named.n, NULL, 0, err);
        if (st == VS_OK) st = vs_json_write_file(jpath, doc, err);
    }
    free(items);
    vs_named_tensors_clear(&named);
    vs_json_free(doc);
    free(jpath);
    free(wpath);
    return st;
}
