/* train_ckpt.c - training checkpoints: one safetensors file (replaced atomically) holding the model
 * ("model.<name>"), the optimiser state ("optim.<name>") and, in its metadata, the loop's state as a
 * small JSON object (see versus/train.h). */
#include "nn/io_util.h"
#include "nn/train_internal.h"
#include "versus/json.h"
#include "versus/safetensors.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the JSON state -------------------------------------------------------------------------------- */

static vs_json *hex_u64(uint64_t v)
{
    char buf[20];
    snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return vs_json_new_string(buf);
}

static vs_json *rng_json(const vs_rng *r)
{
    vs_json *a = vs_json_new_array();
    for (int i = 0; a && i < 4; i++)
        if (vs_json_push(a, hex_u64(r->s[i])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

/* Doubles the loop sums are stored bit-exactly as C99 hex floats ("0x1.3f9042db6db6ep+0"): the JSON
 * writer prints a float32-representable double with float32's shortest digits. */
static vs_json *exact_double(double v)
{
    char buf[40];
    locale_t prev = vs_io_c_locale_begin();
    snprintf(buf, sizeof buf, "%a", v);
    vs_io_c_locale_end(prev);
    return vs_json_new_string(buf);
}

static vs_status read_exact_double(const vs_json *node, double *out, const char *path, vs_error *err)
{
    const char *s;
    if (vs_json_str(node, &s, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
    char *end;
    errno = 0;
    locale_t prev = vs_io_c_locale_begin();
    *out = strtod(s, &end);
    vs_io_c_locale_end(prev);
    if (errno || end == s || *end != '\0' || !isfinite(*out))
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state value \"%s\" is not a finite hex float", path, s);
    return VS_OK;
}

static const char *optim_name(vs_optim_kind k) { return k == VS_OPTIM_SGD ? "sgd" : k == VS_OPTIM_ADAM ? "adam" : "adamw"; }

/* The options a resumed run must share with the checkpoint's run (else the bits differ). */
static vs_json *options_json(const vs_trainer *t)
{
    const vs_train_opts *o = t->o;
    vs_json *j = vs_json_new_object();
    bool ok = j && vs_json_set(j, "seed", hex_u64(o->seed)) == VS_OK;
    ok = ok && vs_json_set(j, "batch_size", vs_json_new_int(o->batch_size)) == VS_OK;
    ok = ok && vs_json_set(j, "optimizer", vs_json_new_string(optim_name(o->optim.kind))) == VS_OK;
    ok = ok && vs_json_set(j, "lr", vs_json_new_number(o->optim.lr)) == VS_OK;
    ok = ok && vs_json_set(j, "weight_decay", vs_json_new_number(o->optim.weight_decay)) == VS_OK;
    ok = ok && vs_json_set(j, "momentum", vs_json_new_number(o->optim.momentum)) == VS_OK;
    ok = ok && vs_json_set(j, "pairing", vs_json_new_string(vs_pairing_name(o->pairing))) == VS_OK;
    ok = ok && vs_json_set(j, "siamese_scale", vs_json_new_number(o->siamese_scale)) == VS_OK;
    ok = ok && vs_json_set(j, "train_frac", vs_json_new_number(o->test ? 1.0 : o->train_frac)) == VS_OK;
    ok = ok && vs_json_set(j, "n_train", vs_json_new_int(t->split.n_train)) == VS_OK;
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

static vs_json *state_json(const vs_trainer *t)
{
    vs_json *j = vs_json_new_object(), *h = vs_json_new_array();
    bool ok = j && h;
    for (int64_t e = 0; ok && e < t->epoch; e++) ok = vs_json_push(h, exact_double(t->history[e])) == VS_OK;
    if (!ok) {
        vs_json_free(h);
        vs_json_free(j);
        return NULL;
    }
    ok = vs_json_set(j, "epoch", vs_json_new_int(t->epoch)) == VS_OK;
    ok = ok && vs_json_set(j, "step", vs_json_new_int(t->step)) == VS_OK;
    ok = ok && vs_json_set(j, "global_step", vs_json_new_int(t->global_step)) == VS_OK;
    ok = ok && vs_json_set(j, "order_rng", rng_json(&t->order_at_epoch)) == VS_OK;
    ok = ok && vs_json_set(j, "dropout_rng", rng_json(&t->dropout)) == VS_OK;
    ok = ok && vs_json_set(j, "loss_sum", exact_double(t->loss_sum)) == VS_OK;
    ok = ok && vs_json_set(j, "loss_count", vs_json_new_int(t->loss_count)) == VS_OK;
    ok = ok && vs_json_set(j, "history", h) == VS_OK;
    ok = ok && vs_json_set(j, "seconds", vs_json_new_number(t->seconds)) == VS_OK;
    ok = ok && vs_json_set(j, "options", options_json(t)) == VS_OK;
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

/* ---- writing ---------------------------------------------------------------------------------------- */

static char *prefixed(const char *prefix, const char *name)
{
    size_t n = strlen(prefix) + strlen(name) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", prefix, name);
    return s;
}

vs_status vs_train_checkpoint_write(const vs_trainer *t, vs_error *err)
{
    const char *path = t->o->checkpoint;
    vs_named_tensors model = {0}, optim = {0};
    vs_safetensors_item *items = NULL;
    char **names = NULL, *state = NULL;
    int64_t n = 0;
    vs_status st = VS_OK;
    vs_json *j = state_json(t);
    size_t len;
    if (!j || vs_module_named_tensors(t->m, VS_STATE_ALL, &model) != VS_OK || vs_optim_state(t->opt, &optim) != VS_OK ||
        vs_json_write(j, 0, &state, &len, err) != VS_OK) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory preparing the checkpoint", path);
        goto done;
    }
    int64_t total = model.n + optim.n;
    items = calloc((size_t)(total ? total : 1), sizeof *items);
    names = calloc((size_t)(total ? total : 1), sizeof *names);
    if (!items || !names) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory preparing the checkpoint", path);
        goto done;
    }
    for (int64_t i = 0; i < total; i++, n++) {
        const vs_named_tensor *nt = i < model.n ? &model.items[i] : &optim.items[i - model.n];
        if (!(names[i] = prefixed(i < model.n ? "model." : "optim.", nt->name))) {
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory preparing the checkpoint", path);
            goto done;
        }
        items[i] = (vs_safetensors_item){names[i], nt->tensor};
    }
    const char *meta[4] = {"format", VS_TRAIN_CHECKPOINT_FORMAT, "state", state};
    st = vs_safetensors_write(path, items, total, meta, 2, err);
done:
    for (int64_t i = 0; i < n; i++) free(names[i]);
    free(names);
    free(items);
    free(state);
    vs_json_free(j);
    vs_named_tensors_clear(&model);
    vs_named_tensors_clear(&optim);
    return st;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

static vs_status read_rng(const vs_json *state, const char *key, vs_rng *r, const char *path, vs_error *err)
{
    const vs_json *a = vs_json_get_typed(state, key, VS_JSON_ARRAY, err);
    if (!a) return err ? err->code : VS_ERR_FORMAT;
    if (a->n != 4) return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"%s\" must hold 4 hex strings", path, key);
    for (size_t i = 0; i < 4; i++) {
        const char *s;
        if (vs_json_str(a->items[i], &s, err) != VS_OK) return err ? err->code : VS_ERR_FORMAT;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 16);
        if (errno || strlen(s) != 16 || *end != '\0')
            return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"%s\"[%zu] = \"%s\" is not 16 hex digits", path, key, i, s);
        r->s[i] = (uint64_t)v;
    }
    return VS_OK;
}

/* One recorded option against this run's value; the message names both. */
static vs_status same_option(const vs_json *opts, const char *key, const vs_json *mine, const char *path, vs_error *err)
{
    const vs_json *v = vs_json_get(opts, key);
    char *a = NULL, *b = NULL;
    size_t la, lb;
    vs_status st = VS_OK;
    if (!v) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: the checkpoint does not record option \"%s\"", path, key);
    } else if (vs_json_write(v, 0, &a, &la, NULL) != VS_OK || vs_json_write(mine, 0, &b, &lb, NULL) != VS_OK) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    } else if (la != lb || memcmp(a, b, la) != 0) {
        st = vs_error_set(err, VS_ERR_ARG, "%s: the checkpoint was written with %s %s, this run has %s; resume with the same options",
                          path, key, a, b);
    }
    free(a);
    free(b);
    return st;
}

static vs_status check_options(const vs_trainer *t, const vs_json *state, const char *path, vs_error *err)
{
    const vs_json *rec = vs_json_get_typed(state, "options", VS_JSON_OBJECT, err);
    if (!rec) return err ? err->code : VS_ERR_FORMAT;
    vs_json *mine = options_json(t);
    if (!mine) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_status st = VS_OK;
    for (size_t i = 0; i < mine->n && st == VS_OK; i++) st = same_option(rec, mine->members[i].key, mine->members[i].value, path, err);
    vs_json_free(mine);
    return st;
}

static vs_status read_state(vs_trainer *t, const vs_json *s, const char *path, vs_error *err)
{
    vs_status st = check_options(t, s, path, err);
    int64_t epoch, step, gstep, count;
    double loss_sum, seconds;
    if (st == VS_OK) st = vs_json_get_int(s, "epoch", 0, INT64_MAX / 2, &epoch, err);
    if (st == VS_OK) st = vs_json_get_int(s, "step", 0, INT64_MAX / 2, &step, err);
    if (st == VS_OK) st = vs_json_get_int(s, "global_step", 0, INT64_MAX / 2, &gstep, err);
    if (st == VS_OK) st = vs_json_get_int(s, "loss_count", 0, INT64_MAX / 2, &count, err);
    const vs_json *ls = vs_json_get(s, "loss_sum");
    if (st == VS_OK && !ls) st = vs_error_set(err, VS_ERR_FORMAT, "%s: the state has no \"loss_sum\"", path);
    if (st == VS_OK) st = read_exact_double(ls, &loss_sum, path, err);
    if (st == VS_OK) st = vs_json_get_double(s, "seconds", 0, HUGE_VAL, &seconds, err);
    if (st == VS_OK) st = read_rng(s, "order_rng", &t->order, path, err);
    if (st == VS_OK) st = read_rng(s, "dropout_rng", &t->dropout, path, err);
    if (st != VS_OK) return st;
    if (epoch > t->o->epochs || (epoch == t->o->epochs && step > 0))
        return vs_error_set(err, VS_ERR_ARG, "%s: the checkpoint has %lld epochs done, more than the %lld asked for", path,
                            (long long)epoch, (long long)t->o->epochs);
    const vs_json *h = vs_json_get_typed(s, "history", VS_JSON_ARRAY, err);
    if (!h) return err ? err->code : VS_ERR_FORMAT;
    if ((int64_t)h->n != epoch)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"history\" holds %zu epochs, \"epoch\" says %lld", path, h->n, (long long)epoch);
    for (size_t e = 0; e < h->n; e++)
        if ((st = read_exact_double(h->items[e], &t->history[e], path, err)) != VS_OK) return st;
    t->epoch = epoch, t->step = step, t->global_step = gstep;
    t->loss_count = count, t->loss_sum = loss_sum, t->seconds = seconds;
    return VS_OK;
}

/* Copy every optimiser state tensor from "optim.<name>"; the file must hold exactly those. */
static vs_status read_optim(vs_trainer *t, const vs_safetensors *f, const char *path, vs_error *err)
{
    vs_named_tensors l = {0};
    if (vs_optim_state(t->opt, &l) != VS_OK) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_status st = VS_OK;
    int64_t in_file = 0;
    for (int64_t i = 0; i < f->n; i++) in_file += strncmp(f->entries[i].name, "optim.", 6) == 0;
    for (int64_t i = 0; i < l.n && st == VS_OK; i++) {
        char *name = prefixed("optim.", l.items[i].name);
        const vs_tensor *src = name ? vs_safetensors_get(f, name) : NULL;
        vs_tensor *dst = l.items[i].tensor;
        if (!name)
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
        else if (!src)
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: no tensor \"%s\" (was it written with another optimizer?)", path, name);
        else if (!vs_same_shape(src, dst))
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: tensor \"%s\" has the wrong shape for this model", path, name);
        else
            memcpy(dst->data, src->data, (size_t)dst->size * sizeof *dst->data);
        free(name);
    }
    if (st == VS_OK && in_file != l.n)
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: %lld optimizer tensors, this run's optimizer has %lld", path,
                          (long long)in_file, (long long)l.n);
    vs_named_tensors_clear(&l);
    return st;
}

/* Load "model.<name>" into every parameter and buffer (names and shapes checked by the module). */
static vs_status read_model(vs_trainer *t, const vs_safetensors *f, const char *path, vs_error *err)
{
    vs_named_tensors l = {0};
    vs_status st = VS_OK;
    for (int64_t i = 0; i < f->n && st == VS_OK; i++)
        if (strncmp(f->entries[i].name, "model.", 6) == 0 &&
            vs_named_tensors_push(&l, f->entries[i].name + 6, f->entries[i].tensor, false) != VS_OK)
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_error e;
    vs_error_clear(&e);
    if (st == VS_OK && vs_module_load_state(t->m, &l, &e) != VS_OK) st = vs_error_set(err, e.code, "%s: %s", path, e.msg);
    vs_named_tensors_clear(&l);
    return st;
}

vs_status vs_train_checkpoint_read(vs_trainer *t, vs_error *err)
{
    const char *path = t->o->checkpoint;
    vs_safetensors *f = NULL;
    vs_json *state = NULL;
    vs_status st = vs_safetensors_read(path, &f, err);
    if (st != VS_OK) return st;
    const char *format = vs_safetensors_meta_get(f, "format"), *s = vs_safetensors_meta_get(f, "state");
    if (!format || strcmp(format, VS_TRAIN_CHECKPOINT_FORMAT) != 0 || !s)
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: not a versus checkpoint (its metadata has no format \"%s\" and state)", path,
                          VS_TRAIN_CHECKPOINT_FORMAT);
    if (st == VS_OK) st = vs_json_parse(s, strlen(s), path, NULL, &state, err);
    if (st == VS_OK && state->type != VS_JSON_OBJECT) st = vs_error_set(err, VS_ERR_FORMAT, "%s: the state is not a JSON object", path);
    if (st == VS_OK) st = read_state(t, state, path, err);
    if (st == VS_OK) st = read_model(t, f, path, err);
    if (st == VS_OK) st = read_optim(t, f, path, err);
    vs_json_free(state);
    vs_safetensors_free(f);
    return st;
}
