/* games_memo.c - a memo of coalition values for the game estimators (explain/games_internal.h). */
#include "explain/games_internal.h"

#include <stdlib.h>
#include <string.h>

vs_status vs_game_memo_init(vs_game_memo *m, vs_game *g, int64_t cap, vs_error *err)
{
    memset(m, 0, sizeof *m);
    m->g = g;
    m->n = g->n;
    m->cap = cap > 0 ? cap : 1;
    m->tcap = 16;
    while (m->tcap < 2 * m->cap) m->tcap *= 2;
    size_t zb;
    if (!vs_size_mul((size_t)m->cap, (size_t)m->n, &zb)) return vs_error_set(err, VS_ERR_NOMEM, "games: too many coalitions");
    m->z = malloc(zb);
    m->v = malloc((size_t)m->cap * sizeof *m->v);
    m->table = malloc((size_t)m->tcap * sizeof *m->table);
    if (!m->z || !m->v || !m->table) {
        vs_game_memo_free(m);
        return vs_error_set(err, VS_ERR_NOMEM, "games: out of memory for %lld coalitions", (long long)cap);
    }
    for (int64_t t = 0; t < m->tcap; t++) m->table[t] = -1;
    return VS_OK;
}

void vs_game_memo_free(vs_game_memo *m)
{
    free(m->z);
    free(m->v);
    free(m->table);
    m->z = NULL;
    m->v = NULL;
    m->table = NULL;
}

static uint64_t hash_bytes(const uint8_t *z, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325u, bits = 0;
    for (int64_t i = 0; i < n; i++) {
        bits = bits << 1 | (z[i] != 0);
        if ((i & 63) == 63 || i == n - 1) {
            h ^= bits + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
            h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
            h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
            bits = 0;
        }
    }
    return h ^ (h >> 31);
}

static bool same(const uint8_t *a, const uint8_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if ((a[i] != 0) != (b[i] != 0)) return false;
    return true;
}

static int64_t slot(const vs_game_memo *m, const uint8_t *z)
{
    uint64_t t = hash_bytes(z, m->n) & (uint64_t)(m->tcap - 1);
    while (m->table[t] >= 0 && !same(m->z + m->table[t] * m->n, z, m->n)) t = (t + 1) & (uint64_t)(m->tcap - 1);
    return (int64_t)t;
}

int64_t vs_game_memo_add(vs_game_memo *m, const uint8_t *z, bool *added)
{
    int64_t t = slot(m, z);
    if (added) *added = false;
    if (m->table[t] >= 0) return m->table[t];
    if (m->count == m->cap) return -1;
    for (int64_t i = 0; i < m->n; i++) m->z[m->count * m->n + i] = z[i] != 0;
    m->table[t] = m->count;
    if (added) *added = true;
    return m->count++;
}

vs_status vs_game_memo_eval(vs_game_memo *m, vs_error *err)
{
    int64_t B = m->g->batch > 0 ? m->g->batch : 256;
    vs_status st = VS_OK;
    while (m->done < m->count && st == VS_OK) {
        int64_t k = m->count - m->done < B ? m->count - m->done : B;
        st = m->g->values(m->g->ctx, k, m->z + m->done * m->n, m->v + m->done, err);
        m->g->evaluations += k;
        m->done += k;
    }
    return st;
}
