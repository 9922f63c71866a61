/* search_model.c - search models split into feature maps and a head, player maps (patches,
 * feature-map cells), the masked pair game behind v1 and v2, and pairs with their feature maps
 * (versus/search.h). */
#include "versus/search.h"

#include <stdlib.h>
#include <string.h>

vs_tensor *vs_search_features(const vs_search_model *m, vs_tensor *x)
{
    vs_forward_ctx fc = {0};
    return vs_sequential_forward_range(m->encoder, x, &fc, 0, m->split, NULL);
}

vs_tensor *vs_search_head(const vs_search_model *m, vs_tensor *fx, vs_tensor *fy)
{
    if (m->head) return m->head(m->head_ctx, fx, fy);
    vs_forward_ctx fc = {0};
    vs_scope_begin();
    int64_t end = m->end > 0 ? m->end : m->encoder->n_children;
    vs_tensor *ex = vs_sequential_forward_range(m->encoder, fx, &fc, m->split, end, NULL);
    vs_tensor *ey = vs_sequential_forward_range(m->encoder, fy, &fc, m->split, end, NULL);
    if (ex && ex->ndim != 2) ex = vs_flatten(ex);
    if (ey && ey->ndim != 2) ey = vs_flatten(ey);
    vs_tensor *d = m->similarity == VS_SEARCH_COSINE ? vs_cosine_similarity(ex, ey, 1, 1e-8f) : vs_sum(vs_mul(ex, ey), VS_AXIS(1), false);
    return vs_scope_return(d);
}

vs_tensor *vs_search_similarity_of(const vs_search_model *m, vs_tensor *x, vs_tensor *y)
{
    vs_scope_begin();
    return vs_scope_return(vs_search_head(m, vs_search_features(m, x), vs_search_features(m, y)));
}

static vs_tensor *model_forward(void *ctx, vs_tensor *x)
{
    (void)ctx;
    (void)x;
    vs_set_last_error(VS_ERR_ARG, "a search model compares pairs: explain it with a reference");
    return NULL;
}

static vs_tensor *model_forward_pair(void *ctx, vs_tensor *x, vs_tensor *r) { return vs_search_similarity_of(ctx, x, r); }

vs_model_fn vs_search_model_fn(vs_search_model *m)
{
    return (vs_model_fn){.forward = model_forward, .forward_pair = model_forward_pair, .ctx = m};
}

/* ---- players -------------------------------------------------------------------------------------- */

int64_t vs_players_patches(int h, int w, int patch, int32_t *map)
{
    int ph = (h + patch - 1) / patch, pw = (w + patch - 1) / patch;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) map[y * w + x] = (int32_t)((y / patch) * pw + x / patch);
    return (int64_t)ph * pw;
}

int64_t vs_players_feature_cells(int h, int w, int fh, int fw, int32_t *map)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) map[y * w + x] = (int32_t)((int64_t)y * fh / h * fw + (int64_t)x * fw / w);
    return (int64_t)fh * fw;
}

/* ---- the masked pair game -------------------------------------------------------------------------- */

/* Rows of one side for m coalitions: element e keeps the input when its player is present. */
static void compose(const vs_tensor *x, const vs_tensor *b, const int32_t *pl, const uint8_t *z, int64_t n, int64_t m, float *rows)
{
    const int64_t d = x->size;
    for (int64_t r = 0; r < m; r++) {
        const uint8_t *zr = z + r * n;
        float *row = rows + r * d;
        if (!pl) {
            memcpy(row, x->data, (size_t)d * sizeof *row);
            continue;
        }
        for (int64_t e = 0; e < d; e++) row[e] = pl[e] < 0 || zr[pl[e]] ? x->data[e] : b->data[e];
    }
}

static vs_status masked_values(void *ctx, int64_t m, const uint8_t *z, double *v, vs_error *err)
{
    const vs_masked_pair *p = ctx;
    int64_t sa[VS_MAX_DIMS], sb[VS_MAX_DIMS];
    memcpy(sa, p->x->shape, sizeof sa);
    memcpy(sb, p->y->shape, sizeof sb);
    sa[0] = sb[0] = m;
    bool was = vs_set_grad_enabled(false);
    vs_scope_begin();
    vs_tensor *a = vs_tensor_zeros(p->x->ndim, sa), *b = vs_tensor_zeros(p->y->ndim, sb);
    vs_status st = VS_OK;
    if (!a || !b) {
        st = vs_error_set(err, VS_ERR_NOMEM, "masked pair: out of memory");
    } else {
        compose(p->x, p->bx, p->qx, z, p->n, m, a->data);
        compose(p->y, p->by, p->ry, z, p->n, m, b->data);
        vs_tensor *s = p->score(p->ctx, a, b);
        if (!s) st = vs_error_set(err, vs_last_error()->code, "masked pair: the score failed: %s", vs_last_error()->msg);
        else if (s->size != m) st = vs_error_set(err, VS_ERR_SHAPE, "masked pair: the score gives %lld values for %lld rows", (long long)s->size, (long long)m);
        for (int64_t r = 0; st == VS_OK && r < m; r++) v[r] = s->data[r];
    }
    vs_scope_end();
    vs_set_grad_enabled(was);
    return st;
}

vs_game vs_masked_pair_game(vs_masked_pair *p) { return (vs_game){.n = p->n, .values = masked_values, .ctx = p, .batch = 64}; }

/* ---- pairs with feature maps --------------------------------------------------------------------- */

vs_status vs_search_pair_prepare(vs_search_pair *p, vs_error *err)
{
    p->fx = p->fy = p->fbx = p->fby = NULL;
    p->loc = p->loc_r = NULL;
    bool was = vs_set_grad_enabled(false);
    vs_tensor **f[4] = {&p->fx, &p->fy, &p->fbx, &p->fby};
    vs_tensor *in[4] = {p->x, p->y, p->bx, p->by};
    vs_status st = VS_OK;
    for (int k = 0; k < 4 && st == VS_OK; k++) {
        vs_scope_begin();
        vs_tensor *t = vs_search_features(p->model, in[k]);
        if (!t) st = vs_error_set(err, vs_last_error()->code, "search: feature maps: %s", vs_last_error()->msg);
        else if (t->ndim != 4 || t->shape[0] != 1) st = vs_error_set(err, VS_ERR_SHAPE, "search: the feature maps must be [1, C, h, w]");
        else *f[k] = vs_keep(vs_tensor_from(t->ndim, t->shape, t->data));
        vs_scope_end();
    }
    vs_set_grad_enabled(was);
    if (st == VS_OK) {
        int64_t size = p->fx->size, hw = p->fx->shape[2] * p->fx->shape[3];
        p->loc = malloc((size_t)size * sizeof *p->loc);
        p->loc_r = malloc((size_t)size * sizeof *p->loc_r);
        if (!p->loc || !p->loc_r) st = vs_error_set(err, VS_ERR_NOMEM, "search: out of memory");
        for (int64_t e = 0; st == VS_OK && e < size; e++) {
            p->loc[e] = (int32_t)(e % hw);
            p->loc_r[e] = (int32_t)(e % hw + hw);
        }
    }
    if (st != VS_OK) vs_search_pair_release(p);
    return st;
}

void vs_search_pair_release(vs_search_pair *p)
{
    vs_tensor_free(p->fx);
    vs_tensor_free(p->fy);
    vs_tensor_free(p->fbx);
    vs_tensor_free(p->fby);
    free(p->loc);
    free(p->loc_r);
    p->fx = p->fy = p->fbx = p->fby = NULL;
    p->loc = p->loc_r = NULL;
}

int64_t vs_search_locations(const vs_search_pair *p) { return p->fx->shape[2] * p->fx->shape[3]; }

static vs_tensor *head_score(void *ctx, vs_tensor *a, vs_tensor *b) { return vs_search_head(ctx, a, b); }

vs_game vs_search_game_v1(vs_search_pair *p, vs_masked_pair *mp)
{
    *mp = (vs_masked_pair){head_score, (void *)p->model, p->fx, p->fy, p->fbx, p->fby, NULL, p->loc, vs_search_locations(p)};
    return vs_masked_pair_game(mp);
}

vs_game vs_search_game_v2(vs_search_pair *p, vs_masked_pair *mp)
{
    *mp = (vs_masked_pair){head_score, (void *)p->model, p->fx, p->fy, p->fbx, p->fby, p->loc, p->loc_r, 2 * vs_search_locations(p)};
    return vs_masked_pair_game(mp);
}
