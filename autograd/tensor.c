/* tensor.c - tensor storage, reference counts, ownership scopes and creation functions.
 * Differentiation lives in graph.c; the ops in ops_*.c. */
#include "autograd/internal.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_llong live_tensors;

int64_t vs_live_tensors(void) { return (int64_t)atomic_load(&live_tensors); }

/* ---- errors --------------------------------------------------------------------------------- */

vs_tensor *vs_op_error(const char *op, const char *fmt, ...)
{
    char msg[VS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_set_last_error(VS_ERR_SHAPE, "%s: %s", op, msg);
    return NULL;
}

vs_tensor *vs_op_nomem(const char *op, const char *what)
{
    vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for %s", op, what);
    return NULL;
}

int vs_norm_axis(const char *op, int axis, int ndim)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        vs_op_error(op, "axis %d out of range for a %d-d tensor", axis, ndim);
        return -1;
    }
    return a;
}

/* ---- scopes --------------------------------------------------------------------------------- */

#define VS_MAX_SCOPES 64

typedef struct scope_list {
    vs_tensor **items;
    int64_t n, cap;
} scope_list;

static _Thread_local scope_list scopes[VS_MAX_SCOPES];
static _Thread_local int scope_depth;

int vs_scope_depth(void) { return scope_depth; }

/* Give t to scope `depth`; false when its list cannot grow (t is then nobody's). */
static bool scope_push(int depth, vs_tensor *t)
{
    scope_list *s = &scopes[depth - 1];
    if (s->n == s->cap) {
        int64_t cap = s->cap ? s->cap * 2 : 256;
        vs_tensor **items = vs_realloc(s->items, (size_t)cap * sizeof *items);
        if (!items) {
            t->scope_depth = 0;
            return false;
        }
        s->items = items;
        s->cap = cap;
    }
    t->scope_depth = depth;
    t->scope_slot = s->n;
    s->items[s->n++] = t;
    return true;
}

static void scope_remove(vs_tensor *t)
{
    if (t->scope_depth > 0) {
        scope_list *s = &scopes[t->scope_depth - 1];
        if (t->scope_slot < s->n && s->items[t->scope_slot] == t) s->items[t->scope_slot] = NULL;
        t->scope_depth = 0;
    }
}

void vs_scope_begin(void)
{
    if (scope_depth == VS_MAX_SCOPES) {
        vs_set_last_error(VS_ERR_STATE, "vs_scope_begin: more than %d nested scopes", VS_MAX_SCOPES);
        scope_depth++; /* keep begin/end balanced; tensors go to the deepest real scope */
        return;
    }
    scope_depth++;
    scopes[scope_depth - 1].n = 0;
}

void vs_scope_end(void)
{
    if (scope_depth == 0) return;
    if (scope_depth > VS_MAX_SCOPES) {
        scope_depth--;
        return;
    }
    scope_list *s = &scopes[scope_depth - 1];
    /* Releasing may create nothing new, but keep the index stable while we walk. */
    for (int64_t k = 0; k < s->n; k++) {
        vs_tensor *t = s->items[k];
        if (t) {
            s->items[k] = NULL;
            t->scope_depth = 0;
            vs_release(t);
        }
    }
    s->n = 0;
    scope_depth--;
    if (scope_depth == 0) {
        /* Give memory back when the outermost scope closes; inner scopes keep their lists warm. */
        for (int i = 0; i < VS_MAX_SCOPES && scopes[i].cap; i++) {
            free(scopes[i].items);
            scopes[i].items = NULL;
            scopes[i].cap = 0;
        }
    }
}

vs_tensor *vs_keep(vs_tensor *t)
{
    if (!t || t->scope_depth == 0) return t;
    const int d = t->scope_depth;
    const int64_t slot = t->scope_slot;
    if (d == 1) {
        scope_remove(t);
        return t;
    }
    if (!scope_push(d - 1, t)) {
        /* The enclosing scope cannot take it: it stays where it was. */
        t->scope_depth = d;
        t->scope_slot = slot;
        vs_set_last_error(VS_ERR_NOMEM, "vs_keep: out of memory");
        return t;
    }
    scope_list *s = &scopes[d - 1];
    if (slot < s->n && s->items[slot] == t) s->items[slot] = NULL;
    return t;
}

vs_tensor *vs_scope_return(vs_tensor *t)
{
    vs_keep(t);
    vs_scope_end();
    return t;
}

/* Give a new reference to the current owner (the innermost scope, or the caller); false when the
 * scope's list cannot grow. */
static bool adopt(vs_tensor *t)
{
    int d = scope_depth > VS_MAX_SCOPES ? VS_MAX_SCOPES : scope_depth;
    if (d > 0) return scope_push(d, t);
    t->scope_depth = 0;
    return true;
}

/* ---- storage and lifetime --------------------------------------------------------------------- */

/* Freed data blocks are kept in a small cache keyed by their exact (64-byte rounded) size: a
 * training step or an explainer batch allocates the same sizes every iteration, and reusing a
 * block skips malloc's mmap/munmap and the page faults of fresh memory (about 5% of a GANMEX
 * step).  Blocks under CACHE_MIN_BYTES go straight back to malloc, which is fast for them; at most
 * CACHE_SLOTS blocks and CACHE_MAX_BYTES bytes are kept, the oldest given back first.  One mutex
 * guards it (tensors are freed on whichever thread drops the last reference).  Contents of a
 * reused block are whatever was there: vs_alloc promises uninitialised memory only. */
#define CACHE_SLOTS 256
#define CACHE_MIN_BYTES ((size_t)64 << 10)
#define CACHE_MAX_BYTES ((size_t)128 << 20)

typedef struct sized_buffer {
    vs_buffer b;
    size_t bytes; /* allocated size of b.data */
} sized_buffer;

static struct {
    size_t bytes;
    float *data;
} cache[CACHE_SLOTS];
static int cache_n;
static size_t cache_total;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* A cached block of exactly `bytes`, most recently freed first, or NULL. */
static float *cache_take(size_t bytes)
{
    if (bytes < CACHE_MIN_BYTES) return NULL;
    float *data = NULL;
    pthread_mutex_lock(&cache_lock);
    for (int i = cache_n - 1; i >= 0; i--)
        if (cache[i].bytes == bytes) {
            data = cache[i].data;
            cache_total -= bytes;
            memmove(&cache[i], &cache[i + 1], (size_t)(cache_n - 1 - i) * sizeof cache[0]);
            cache_n--;
            break;
        }
    pthread_mutex_unlock(&cache_lock);
    return data;
}

/* Keep data for reuse, or free it (too small, too large); evicts the oldest blocks to make room. */
static void cache_put(float *data, size_t bytes)
{
    if (bytes < CACHE_MIN_BYTES || bytes > CACHE_MAX_BYTES / 4) {
        free(data);
        return;
    }
    float *evict[CACHE_SLOTS];
    int n_evict = 0;
    pthread_mutex_lock(&cache_lock);
    while (cache_n > 0 && (cache_n == CACHE_SLOTS || cache_total + bytes > CACHE_MAX_BYTES)) {
        evict[n_evict++] = cache[0].data;
        cache_total -= cache[0].bytes;
        memmove(&cache[0], &cache[1], (size_t)(cache_n - 1) * sizeof cache[0]);
        cache_n--;
    }
    cache[cache_n].bytes = bytes;
    cache[cache_n].data = data;
    cache_n++;
    cache_total += bytes;
    pthread_mutex_unlock(&cache_lock);
    for (int i = 0; i < n_evict; i++) free(evict[i]);
}

/* Give every cached block back to malloc (out of memory, and at exit so leak checkers see none). */
static void cache_drain(void)
{
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < cache_n; i++) free(cache[i].data);
    cache_n = 0;
    cache_total = 0;
    pthread_mutex_unlock(&cache_lock);
}

__attribute__((destructor)) static void cache_at_exit(void) { cache_drain(); }

static vs_buffer *buffer_new(size_t n)
{
    sized_buffer *b = vs_malloc(sizeof *b);
    if (!b) return NULL;
    size_t bytes;
    if (!vs_size_mul(n ? n : 1, sizeof(float), &bytes) || bytes > SIZE_MAX - 64) {
        free(b);
        return NULL;
    }
    bytes = (bytes + 63) & ~(size_t)63; /* aligned_alloc wants a multiple of the alignment */
    b->bytes = bytes;
    b->b.data = cache_take(bytes);
    if (!b->b.data) b->b.data = vs_aligned_alloc(64, bytes);
    if (!b->b.data) {
        cache_drain();
        b->b.data = vs_aligned_alloc(64, bytes);
    }
    if (!b->b.data) {
        free(b);
        return NULL;
    }
    b->b.refs = 1;
    return &b->b;
}

static void buffer_release(vs_buffer *b)
{
    if (b && --b->refs == 0) {
        sized_buffer *sb = (sized_buffer *)b; /* every buffer comes from buffer_new */
        cache_put(b->data, sb->bytes);
        free(sb);
    }
}

bool vs_shape_count(const char *op, int ndim, const int64_t *shape, bool allow_infer, int64_t *count)
{
    if (ndim < 0 || ndim > VS_MAX_DIMS) {
        vs_op_error(op, "%d dimensions (at most %d supported)", ndim, VS_MAX_DIMS);
        return false;
    }
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (allow_infer && shape[i] == -1) continue;
        if (shape[i] < 0) {
            vs_op_error(op, "negative size %lld in dimension %d", (long long)shape[i], i);
            return false;
        }
        if (!vs_size_mul(n, (size_t)shape[i], &n) || n > (size_t)INT64_MAX / 4) {
            vs_set_last_error(VS_ERR_NOMEM, "%s: shape too large (the product of its sizes overflows)", op);
            return false;
        }
    }
    *count = (int64_t)n;
    return true;
}

static bool shape_size(const char *op, int ndim, const int64_t *shape, int64_t *size)
{
    int64_t c;
    if (!vs_shape_count(op, ndim, shape, false, &c)) return false;
    size_t n = (size_t)c;
    if (n > vs_mem_budget() / sizeof(float)) { /* sizes from input (model.json widths) must not exhaust the machine */
        char need[32], have[32];
        vs_set_last_error(VS_ERR_NOMEM, "%s: a tensor of %zu floats needs %s, more than the memory budget of %s (--max-memory)", op,
                          n, vs_mem_size_str(n * sizeof(float), need, sizeof need), vs_mem_size_str(vs_mem_budget(), have, sizeof have));
        return false;
    }
    *size = c;
    return true;
}

static vs_tensor *tensor_shell(int ndim, const int64_t *shape, int64_t size)
{
    vs_tensor *t = vs_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->size = size;
    t->refs = 1;
    atomic_fetch_add(&live_tensors, 1);
    return t;
}

vs_tensor *vs_alloc(const char *op, int ndim, const int64_t *shape)
{
    int64_t size;
    if (!shape_size(op, ndim, shape, &size)) return NULL;
    vs_tensor *t = tensor_shell(ndim, shape, size);
    if (!t) return vs_op_nomem(op, "the tensor");
    t->buf = buffer_new((size_t)size);
    if (!t->buf) {
        free(t);
        atomic_fetch_sub(&live_tensors, 1);
        vs_set_last_error(VS_ERR_NOMEM, "%s: out of memory for %lld floats", op, (long long)size);
        return NULL;
    }
    t->data = t->buf->data;
    if (!adopt(t)) {
        vs_release(t);
        return vs_op_nomem(op, "its scope entry");
    }
    return t;
}

vs_tensor *vs_view(vs_tensor *src, int ndim, const int64_t *shape)
{
    int64_t size;
    if (!shape_size("view", ndim, shape, &size)) return NULL;
    if (size != src->size) return vs_op_error("view", "size %lld does not match %lld", (long long)size, (long long)src->size);
    vs_tensor *t = tensor_shell(ndim, shape, size);
    if (!t) return vs_op_nomem("view", "the tensor");
    t->buf = src->buf;
    t->buf->refs++;
    t->data = src->data;
    if (!adopt(t)) {
        vs_release(t);
        return vs_op_nomem("view", "its scope entry");
    }
    return t;
}

void vs_retain(vs_tensor *t)
{
    if (t) t->refs++;
}

#define VS_RELEASE_LOCAL 64

static void push_release(vs_tensor *t, vs_tensor ***stack, int64_t *sn, int64_t *scap)
{
    if (!t) return;
    if (*sn == *scap) {
        int64_t cap = *scap * 2;
        vs_tensor **ns = vs_malloc((size_t)cap * sizeof *ns);
        if (!ns) {
            vs_release(t); /* fall back to recursion rather than leak */
            return;
        }
        memcpy(ns, *stack, (size_t)*sn * sizeof *ns);
        if (*scap > VS_RELEASE_LOCAL) free(*stack); /* the first array is on the caller's stack */
        *stack = ns;
        *scap = cap;
    }
    (*stack)[(*sn)++] = t;
}

static void node_free_into(vs_node *n, vs_tensor ***stack, int64_t *sn, int64_t *scap)
{
    for (int i = 0; i < n->n_in; i++) push_release(n->in[i], stack, sn, scap);
    push_release(n->saved, stack, sn, scap);
    if (n->in != n->inline_in) free(n->in);
    free(n->extra);
    free(n);
}

/* Iterative release: dropping the last reference to a long graph must not recurse once per node. */
void vs_release(vs_tensor *t)
{
    if (!t) return;
    vs_tensor *local[VS_RELEASE_LOCAL];
    vs_tensor **stack = local;
    int64_t sn = 0, scap = VS_RELEASE_LOCAL;
    stack[sn++] = t;
    while (sn > 0) {
        vs_tensor *x = stack[--sn];
        if (--x->refs > 0) continue;
        if (x->node) node_free_into(x->node, &stack, &sn, &scap);
        push_release(x->grad, &stack, &sn, &scap);
        push_release(x->acc, &stack, &sn, &scap);
        buffer_release(x->buf);
        free(x);
        atomic_fetch_sub(&live_tensors, 1);
    }
    if (scap > VS_RELEASE_LOCAL) free(stack);
}

void vs_tensor_free(vs_tensor *t)
{
    if (!t) return;
    scope_remove(t);
    vs_release(t);
}

/* ---- creation ------------------------------------------------------------------------------- */

vs_tensor *vs_tensor_new(int ndim, const int64_t *shape) { return vs_alloc("vs_tensor_new", ndim, shape); }

vs_tensor *vs_tensor_full(int ndim, const int64_t *shape, float v)
{
    vs_tensor *t = vs_alloc("vs_tensor_full", ndim, shape);
    if (t)
        for (int64_t i = 0; i < t->size; i++) t->data[i] = v;
    return t;
}

vs_tensor *vs_tensor_zeros(int ndim, const int64_t *shape)
{
    vs_tensor *t = vs_alloc("vs_tensor_zeros", ndim, shape);
    if (t) memset(t->data, 0, (size_t)t->size * sizeof(float));
    return t;
}

vs_tensor *vs_tensor_from(int ndim, const int64_t *shape, const float *data)
{
    vs_tensor *t = vs_alloc("vs_tensor_from", ndim, shape);
    if (t && t->size) memcpy(t->data, data, (size_t)t->size * sizeof(float));
    return t;
}

vs_tensor *vs_scalar(float v) { return vs_tensor_full(0, NULL, v); }

vs_tensor *vs_tensor_rand(int ndim, const int64_t *shape, vs_rng *r, float lo, float hi)
{
    vs_tensor *t = vs_alloc("vs_tensor_rand", ndim, shape);
    if (t) vs_rng_fill_uniformf(r, t->data, t->size, lo, hi);
    return t;
}

vs_tensor *vs_tensor_randn(int ndim, const int64_t *shape, vs_rng *r, float mean, float std)
{
    vs_tensor *t = vs_alloc("vs_tensor_randn", ndim, shape);
    if (t) vs_rng_fill_normalf(r, t->data, t->size, mean, std);
    return t;
}

vs_tensor *vs_zeros_like(const vs_tensor *t) { return t ? vs_tensor_zeros(t->ndim, t->shape) : NULL; }

vs_tensor *vs_ones_like(const vs_tensor *t) { return t ? vs_tensor_full(t->ndim, t->shape, 1.0f) : NULL; }

vs_tensor *vs_copy(const vs_tensor *t) { return t ? vs_tensor_from(t->ndim, t->shape, t->data) : NULL; }

vs_tensor *vs_detach(vs_tensor *t) { return t ? vs_view(t, t->ndim, t->shape) : NULL; }

/* ---- helpers ---------------------------------------------------------------------------------- */

bool vs_same_shape(const vs_tensor *a, const vs_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

int vs_shape_str(const vs_tensor *t, char *buf, int n)
{
    int k = snprintf(buf, (size_t)n, "[");
    for (int i = 0; i < t->ndim && k < n; i++) k += snprintf(buf + k, (size_t)(n - k), i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (k < n) k += snprintf(buf + k, (size_t)(n - k), "]");
    return k;
}

float vs_item(const vs_tensor *t)
{
    if (!t || t->size != 1) {
        vs_set_last_error(VS_ERR_SHAPE, "vs_item: tensor has %lld elements, expected 1", t ? (long long)t->size : 0LL);
        return 0.0f / 0.0f;
    }
    return t->data[0];
}

bool vs_broadcast_shape(const char *op, const vs_tensor *a, const vs_tensor *b, int *ndim, int64_t *shape)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            vs_shape_str(a, sa, sizeof sa);
            vs_shape_str(b, sb, sizeof sb);
            vs_op_error(op, "shapes %s and %s do not broadcast", sa, sb);
            return false;
        }
        shape[i] = da == 1 ? db : da;
    }
    *ndim = n;
    return true;
}

size_t vs_first_nonfinite(const float *x, size_t n)
{
    size_t i = 0;
    while (i < n && isfinite(x[i])) i++;
    return i;
}
