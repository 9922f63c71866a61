/* train_ckpt.c - training checkpoints: one safetensors file (replaced atomically) holding every
 * model ("model.<name>"), every optimiser's state ("optim.<optimiser>.<name>") and, in its metadata,
 * the loop's state as a small JSON object: counters, every random stream, the loss terms' sums and
 * history, and the options a resumed run must share (see versus/train.h). */
#include "datasets/io/io_util.h"
#include "nn/train_internal.h"
#include "versus/data_io.h"
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
    if (errno || end == s || *end != '\0' || isinf(*out))
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state value \"%s\" is not a hex float or nan", path, s);
    return VS_OK;
}

static const char *optim_name(vs_optim_kind k) { return k == VS_OPTIM_SGD ? "sgd" : k == VS_OPTIM_ADAM ? "adam" : "adamw"; }
static const char *schedule_name(vs_lr_kind k) { return k == VS_LR_STEP ? "step" : k == VS_LR_COSINE ? "cosine" : "constant"; }

static vs_json *optim_json(const vs_train_optim *c)
{
    const vs_optim_opts *o = &c->optim;
    vs_json *j = vs_json_new_object();
    bool ok = j && vs_json_set(j, "optimizer", vs_json_new_string(optim_name(o->kind))) == VS_OK;
    ok = ok && vs_json_set(j, "lr", vs_json_new_number(o->lr)) == VS_OK;
    ok = ok && vs_json_set(j, "weight_decay", vs_json_new_number(o->weight_decay)) == VS_OK;
    ok = ok && vs_json_set(j, "momentum", vs_json_new_number(o->momentum)) == VS_OK;
    char b[64];
    snprintf(b, sizeof b, "%.9g,%.9g,%.9g", (double)o->beta1, (double)o->beta2, (double)o->eps);
    ok = ok && vs_json_set(j, "betas", vs_json_new_string(b)) == VS_OK;
    ok = ok && vs_json_set(j, "clip", vs_json_new_number(c->clip_norm)) == VS_OK;
    snprintf(b, sizeof b, "%s,%lld,%.9g,%lld,%.9g", schedule_name(c->schedule.kind), (long long)c->schedule.step_size,
             (double)c->schedule.gamma, (long long)c->schedule.t_max, (double)c->schedule.eta_min);
    ok = ok && vs_json_set(j, "schedule", vs_json_new_string(b)) == VS_OK;
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

/* The options a resumed run must share with the checkpoint's run (else the bits differ). */
static vs_json *options_json(const vs_trainer *t)
{
    const vs_train_opts *o = t->o;
    vs_json *j = vs_json_new_object(), *opts = vs_json_new_object(), *optims = vs_json_new_object();
    bool ok = j && opts && optims;
    for (int i = 0; ok && i < t->n_opts; i++) ok = vs_json_set(opts, t->task->opts[i].name, vs_json_new_number(t->run.opt[i])) == VS_OK;
    for (int i = 0; ok && i < t->n_optims; i++) ok = vs_json_set(optims, t->task->optims[i], optim_json(&t->optcfg[i])) == VS_OK;
    if (!ok) {
        vs_json_free(opts);
        vs_json_free(optims);
        vs_json_free(j);
        return NULL;
    }
    ok = vs_json_set(j, "task", vs_json_new_string(t->task->name)) == VS_OK;
    ok = ok && vs_json_set(j, "task_options", opts) == VS_OK;
    ok = ok && vs_json_set(j, "optimizers", optims) == VS_OK;
    ok = ok && vs_json_set(j, "seed", hex_u64(o->seed)) == VS_OK;
    ok = ok && vs_json_set(j, "batch_size", vs_json_new_int(o->batch_size)) == VS_OK;
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

static vs_json *doubles_json(const double *v, int64_t n)
{
    vs_json *a = vs_json_new_array();
    for (int64_t i = 0; a && i < n; i++)
        if (vs_json_push(a, exact_double(v[i])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

static vs_json *ints_json(const int64_t *v, int64_t n)
{
    vs_json *a = vs_json_new_array();
    for (int64_t i = 0; a && i < n; i++)
        if (vs_json_push(a, vs_json_new_int(v[i])) != VS_OK) {
            vs_json_free(a);
            return NULL;
        }
    return a;
}

static vs_json *rngs_json(const vs_trainer *t)
{
    vs_json *j = vs_json_new_object();
    bool ok = j && vs_json_set(j, "order", rng_json(&t->order_at_epoch)) == VS_OK;
    ok = ok && vs_json_set(j, "forward", rng_json(&t->forward)) == VS_OK;
    for (int i = 0; ok && i < t->n_streams; i++) ok = vs_json_set(j, t->task->streams[i], rng_json(&t->run.streams[i])) == VS_OK;
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

static vs_json *state_json(const vs_trainer *t)
{
    vs_json *j = vs_json_new_object();
    bool ok = j && vs_json_set(j, "epoch", vs_json_new_int(t->epoch)) == VS_OK;
    ok = ok && vs_json_set(j, "step", vs_json_new_int(t->step)) == VS_OK;
    ok = ok && vs_json_set(j, "global_step", vs_json_new_int(t->global_step)) == VS_OK;
    ok = ok && vs_json_set(j, "rngs", rngs_json(t)) == VS_OK;
    ok = ok && vs_json_set(j, "term_sums", doubles_json(t->term_sum, t->n_terms)) == VS_OK;
    ok = ok && vs_json_set(j, "term_counts", ints_json(t->term_count, t->n_terms)) == VS_OK;
    ok = ok && vs_json_set(j, "history", doubles_json(t->history, t->epoch * t->n_terms)) == VS_OK;
    ok = ok && vs_json_set(j, "seconds", vs_json_new_number(t->seconds)) == VS_OK;
    ok = ok && vs_json_set(j, "options", options_json(t)) == VS_OK;
    if (!ok) {
        vs_json_free(j);
        return NULL;
    }
    return j;
}

/* ---- writing ---------------------------------------------------------------------------------------- */

static char *prefixed3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

static char *prefixed(const char *prefix, const char *name) { return prefixed3(prefix, name, ""); }

/* "optim.<optimiser>." */
static char *optim_prefix(const vs_trainer *t, int k)
{
    return prefixed3("optim.", t->task->optims[k], ".");
}

/* CRC-32 of the state text xor each tensor's CRC-32 of its name and values (in any order: the file
 * keeps them sorted by name): a checkpoint cut or altered by accident is refused on resume (a forged
 * one is caught by the checks of its values). */
static uint32_t checkpoint_crc(const char *state, const vs_safetensors_item *items, int64_t n)
{
    uint32_t c = vs_crc32(0, state, strlen(state));
    for (int64_t i = 0; i < n; i++) {
        uint32_t t = vs_crc32(0, items[i].name, strlen(items[i].name) + 1);
        c ^= vs_crc32(t, items[i].tensor->data, (size_t)items[i].tensor->size * sizeof(float));
    }
    return c;
}

vs_status vs_train_checkpoint_write(const vs_trainer *t, vs_error *err)
{
    const char *path = t->o->checkpoint;
    vs_named_tensors all = {0};
    vs_safetensors_item *items = NULL;
    char **names = NULL, *state = NULL;
    int64_t n_named = 0;
    vs_status st = VS_OK;
    vs_json *j = state_json(t);
    size_t len;
    /* the model's tensors then each optimiser's, each list entry renamed with its prefix */
    bool ok = j && vs_module_named_tensors(t->m, VS_STATE_ALL, &all) == VS_OK;
    int64_t n_model = all.n, starts[VS_TASK_MAX_OPTIMS + 1];
    for (int k = 0; ok && k < t->n_optims; k++) {
        starts[k] = all.n;
        ok = vs_optim_state(t->opt[k], &all) == VS_OK;
    }
    starts[t->n_optims] = all.n;
    ok = ok && vs_json_write(j, 0, &state, &len, err) == VS_OK;
    if (ok) {
        items = calloc((size_t)(all.n ? all.n : 1), sizeof *items);
        names = calloc((size_t)(all.n ? all.n : 1), sizeof *names);
        ok = items && names;
    }
    for (int64_t i = 0; ok && i < all.n; i++, n_named++) {
        int k = 0;
        while (i >= n_model && k < t->n_optims && i >= starts[k + 1]) k++;
        char *pre = i < n_model ? NULL : optim_prefix(t, k);
        names[i] = i < n_model ? prefixed("model.", all.items[i].name) : pre ? prefixed(pre, all.items[i].name) : NULL;
        free(pre);
        ok = names[i] != NULL;
        if (ok) items[i] = (vs_safetensors_item){names[i], all.items[i].tensor};
    }
    /* a model that is no longer finite is not saved: the last finite checkpoint stays */
    for (int64_t i = 0; ok && i < all.n && st == VS_OK; i++)
        if (vs_first_nonfinite(items[i].tensor->data, (size_t)items[i].tensor->size) != (size_t)items[i].tensor->size)
            st = vs_error_set(err, VS_ERR_NUMERIC, "training diverged: \"%s\" is no longer finite at epoch %lld, step %lld (%s keeps the last "
                                                   "finite state; a smaller learning rate may help)",
                              items[i].name, (long long)t->epoch + 1, (long long)t->step, path);
    char sum[16];
    if (ok) snprintf(sum, sizeof sum, "%08x", checkpoint_crc(state, items, all.n));
    if (!ok) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory preparing the checkpoint", path);
    } else if (st == VS_OK) {
        const char *meta[6] = {"format", VS_TRAIN_CHECKPOINT_FORMAT, "state", state, "crc32", sum};
        st = vs_safetensors_write(path, items, all.n, meta, 3, err);
    }
    for (int64_t i = 0; names && i < n_named; i++) free(names[i]);
    free(names);
    free(items);
    free(state);
    vs_json_free(j);
    vs_named_tensors_clear(&all);
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
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) /* xoshiro's fixed point: every draw would be 0 */
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"%s\" is all zeros, which no generator reaches", path, key);
    return VS_OK;
}

/* Checkpoints written before the pairing was called "fixed" record it as "snx" (an alias). */
static bool same_pairing(const vs_json *rec, const vs_json *mine)
{
    vs_pairing a, b;
    return rec->type == VS_JSON_STRING && mine->type == VS_JSON_STRING && vs_pairing_from_name(rec->string, &a) &&
           vs_pairing_from_name(mine->string, &b) && a == b;
}

/* Each of this run's options (mine, an object) against the recorded ones, objects member by member;
 * the message names the option by its path ("optimizers.generator.lr") and both values. */
static vs_status same_options(const vs_json *rec, const vs_json *mine, const char *prefix, const char *path, vs_error *err)
{
    vs_status st = VS_OK;
    for (size_t i = 0; i < mine->n && st == VS_OK; i++) {
        const char *key = mine->members[i].key;
        const vs_json *m = mine->members[i].value, *v = vs_json_get(rec, key);
        char name[128], *a = NULL, *b = NULL;
        size_t la, lb;
        snprintf(name, sizeof name, "%s%s", prefix, key);
        if (!v) {
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: the checkpoint does not record option \"%s\"", path, name);
        } else if (strcmp(key, "pairing") == 0 && same_pairing(v, m)) {
            continue;
        } else if (m->type == VS_JSON_OBJECT && v->type == VS_JSON_OBJECT) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s.", name);
            st = same_options(v, m, sub, path, err);
        } else if (vs_json_write(v, 0, &a, &la, NULL) != VS_OK || vs_json_write(m, 0, &b, &lb, NULL) != VS_OK) {
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
        } else if (la != lb || memcmp(a, b, la) != 0) {
            st = vs_error_set(err, VS_ERR_ARG, "%s: the checkpoint was written with %s %s, this run has %s; resume with the same options",
                              path, name, a, b);
        }
        free(a);
        free(b);
    }
    return st;
}

static vs_status check_options(const vs_trainer *t, const vs_json *state, const char *path, vs_error *err)
{
    const vs_json *rec = vs_json_get_typed(state, "options", VS_JSON_OBJECT, err);
    if (!rec) return err ? err->code : VS_ERR_FORMAT;
    vs_json *mine = options_json(t);
    if (!mine) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_status st = same_options(rec, mine, "", path, err);
    vs_json_free(mine);
    return st;
}

/* n hex floats (or nan) from the array state[key] into out. */
static vs_status read_doubles(const vs_json *s, const char *key, double *out, int64_t n, const char *path, vs_error *err)
{
    const vs_json *a = vs_json_get_typed(s, key, VS_JSON_ARRAY, err);
    if (!a) return err ? err->code : VS_ERR_FORMAT;
    if ((int64_t)a->n != n)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"%s\" holds %zu values, expected %lld", path, key, a->n, (long long)n);
    vs_status st = VS_OK;
    for (size_t i = 0; i < a->n && st == VS_OK; i++) st = read_exact_double(a->items[i], &out[i], path, err);
    return st;
}

static vs_status read_counts(const vs_json *s, const char *key, int64_t *out, int64_t n, const char *path, vs_error *err)
{
    const vs_json *a = vs_json_get_typed(s, key, VS_JSON_ARRAY, err);
    if (!a) return err ? err->code : VS_ERR_FORMAT;
    if ((int64_t)a->n != n)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: state \"%s\" holds %zu values, expected %lld", path, key, a->n, (long long)n);
    vs_status st = VS_OK;
    for (size_t i = 0; i < a->n && st == VS_OK; i++) st = vs_json_int(a->items[i], 0, INT64_MAX / 2, &out[i], err);
    return st;
}

static vs_status read_state(vs_trainer *t, const vs_json *s, const char *path, vs_error *err)
{
    vs_status st = check_options(t, s, path, err);
    int64_t epoch, step, gstep;
    double seconds;
    if (st == VS_OK) st = vs_json_get_int(s, "epoch", 0, INT64_MAX / 2, &epoch, err);
    if (st == VS_OK) st = vs_json_get_int(s, "step", 0, INT64_MAX / 2, &step, err);
    if (st == VS_OK) st = vs_json_get_int(s, "global_step", 0, INT64_MAX / 2, &gstep, err);
    if (st == VS_OK) st = vs_json_get_double(s, "seconds", 0, HUGE_VAL, &seconds, err);
    const vs_json *rngs = st == VS_OK ? vs_json_get_typed(s, "rngs", VS_JSON_OBJECT, err) : NULL;
    if (st == VS_OK && !rngs) st = err ? err->code : VS_ERR_FORMAT;
    if (st == VS_OK) st = read_rng(rngs, "order", &t->order, path, err);
    if (st == VS_OK) st = read_rng(rngs, "forward", &t->forward, path, err);
    for (int i = 0; st == VS_OK && i < t->n_streams; i++) st = read_rng(rngs, t->task->streams[i], &t->run.streams[i], path, err);
    if (st == VS_OK) st = read_doubles(s, "term_sums", t->term_sum, t->n_terms, path, err);
    if (st == VS_OK) st = read_counts(s, "term_counts", t->term_count, t->n_terms, path, err);
    if (st != VS_OK) return st;
    if (epoch > t->o->epochs || (epoch == t->o->epochs && step > 0))
        return vs_error_set(err, VS_ERR_ARG, "%s: the checkpoint has %lld epochs done, more than the %lld asked for", path,
                            (long long)epoch, (long long)t->o->epochs);
    if ((st = read_doubles(s, "history", t->history, epoch * t->n_terms, path, err)) != VS_OK) return st;
    t->epoch = epoch, t->step = step, t->global_step = gstep, t->seconds = seconds;
    return VS_OK;
}

/* Copy every optimiser's state tensor from "optim.<optimiser>.<name>"; the file must hold exactly those. */
static vs_status read_optim(vs_trainer *t, const vs_safetensors *f, const char *path, vs_error *err)
{
    vs_named_tensors l = {0};
    int64_t starts[VS_TASK_MAX_OPTIMS + 1];
    bool ok = true;
    for (int k = 0; ok && k < t->n_optims; k++) {
        starts[k] = l.n;
        ok = vs_optim_state(t->opt[k], &l) == VS_OK;
    }
    starts[t->n_optims] = l.n;
    if (!ok) {
        vs_named_tensors_clear(&l);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    }
    vs_status st = VS_OK;
    int64_t in_file = 0;
    for (int64_t i = 0; i < f->n; i++) in_file += strncmp(f->entries[i].name, "optim.", 6) == 0;
    for (int k = 0; k < t->n_optims && st == VS_OK; k++) {
        char *pre = optim_prefix(t, k);
        for (int64_t i = starts[k]; i < starts[k + 1] && st == VS_OK; i++) {
            char *name = pre ? prefixed(pre, l.items[i].name) : NULL;
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
        free(pre);
    }
    if (st == VS_OK && in_file != l.n)
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: %lld optimizer tensors, this run's optimizers have %lld", path,
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

/* The file's checksum, and every tensor finite (NaN optimizer state would poison the resumed run). */
static vs_status check_file(const vs_safetensors *f, const char *state, const char *path, vs_error *err)
{
    const char *want = vs_safetensors_meta_get(f, "crc32");
    vs_safetensors_item *items = calloc((size_t)(f->n ? f->n : 1), sizeof *items);
    if (!items) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    vs_status st = VS_OK;
    for (int64_t i = 0; i < f->n && st == VS_OK; i++) {
        items[i] = (vs_safetensors_item){f->entries[i].name, f->entries[i].tensor};
        size_t n = (size_t)f->entries[i].tensor->size, k = vs_first_nonfinite(f->entries[i].tensor->data, n);
        if (k != n) st = vs_error_set(err, VS_ERR_NUMERIC, "%s: tensor \"%s\" holds a non-finite value (element %zu)", path, f->entries[i].name, k);
    }
    char sum[16];
    if (st == VS_OK) snprintf(sum, sizeof sum, "%08x", checkpoint_crc(state, items, f->n));
    if (st == VS_OK && (!want || strcmp(want, sum) != 0))
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: checksum %s, the contents give %s (the checkpoint was cut or altered)", path,
                          want ? want : "missing", sum);
    free(items);
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
    if (st == VS_OK) st = check_file(f, s, path, err);
    if (st == VS_OK) st = vs_json_parse(s, strlen(s), path, NULL, &state, err);
    if (st == VS_OK && state->type != VS_JSON_OBJECT) st = vs_error_set(err, VS_ERR_FORMAT, "%s: the state is not a JSON object", path);
    if (st == VS_OK) st = read_state(t, state, path, err);
    if (st == VS_OK) st = read_model(t, f, path, err);
    if (st == VS_OK) st = read_optim(t, f, path, err);
    vs_json_free(state);
    vs_safetensors_free(f);
    return st;
}
