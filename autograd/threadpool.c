/* threadpool.c - the thread count, the persistent worker pool behind vs_parallel_for, and the
 * per-thread scratch buffers kernels pack their operands into.
 *
 * One job runs at a time.  The caller publishes it (function, range, chunk size), bumps a
 * generation counter and claims chunks itself; every worker notices the new generation (spinning
 * briefly, then sleeping on a condition variable) and claims chunks too.  The caller returns when
 * every chunk has finished, whether or not each worker got to run at all - on a machine busy with
 * other work a descheduled worker costs nothing.  Chunk boundaries come from n and grain alone,
 * so which thread ran a chunk never shows in the results. */
#include "autograd/alloc.h"
#include "autograd/kernels.h"
#include "versus/threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VS_MAX_THREADS 256
/* How long a worker (or a waiting caller) polls before it sleeps on a condition variable: long
 * enough to bridge the gaps between the back-to-back loops of one matrix product, short enough
 * not to steal a core shared with other work for long (spinning there slows everyone). */
#define VS_SPIN_NS 50000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Polling loops: `while (!(cond) && spinning(&spin)) cpu_relax();` gives up after VS_SPIN_NS. */
typedef struct spin {
    unsigned polls;
    int64_t deadline;
} spin;

static bool spinning(spin *s)
{
    if (s->polls++ % 64 == 0) {
        const int64_t t = now_ns();
        if (s->deadline == 0) s->deadline = t + VS_SPIN_NS;
        else if (t >= s->deadline) return false;
    }
    cpu_relax();
    return true;
}

/* ---- thread count ---- */

static atomic_int requested_threads; /* 0: default */
static atomic_int default_threads;   /* 0: not computed yet */

static int compute_default_threads(void)
{
    const char *env = getenv("VERSUS_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v > 0) return v > VS_MAX_THREADS ? VS_MAX_THREADS : (int)v;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) return 1;
    return cores > VS_MAX_THREADS ? VS_MAX_THREADS : (int)cores;
}

int vs_get_threads(void)
{
    int n = atomic_load(&requested_threads);
    if (n > 0) return n;
    n = atomic_load(&default_threads);
    if (n == 0) {
        n = compute_default_threads();
        atomic_store(&default_threads, n);
    }
    return n;
}

void vs_set_threads(int n)
{
    if (n < 0) n = 0;
    atomic_store(&requested_threads, n > VS_MAX_THREADS ? VS_MAX_THREADS : n);
}

/* ---- the pool ---- */

/* Chunks are claimed through one 64-bit word: the job's generation (low 32 bits) above the next
 * chunk index.  A claim is a compare-and-swap that succeeds only while the word still names the
 * claimer's job, so a worker that wakes late - after its job finished and the next was posted -
 * can never run a chunk of the wrong job, and the caller never waits for a worker that has not
 * started: it waits only for claimed chunks to finish. */
#define CLAIM_GEN_SHIFT 32
#define CLAIM_MAX_CHUNKS ((int64_t)UINT32_MAX - 1) /* UINT32_MAX marks a closed job */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake; /* workers sleep here between jobs */
    pthread_cond_t done; /* the caller sleeps here until every chunk is finished */
    pthread_t tid[VS_MAX_THREADS];
    int nworkers;        /* created and not yet joined; changed only by the pool owner */
    bool stop;           /* under mu: workers exit */
    atomic_flag busy;    /* held by the thread running a job (or resizing the pool) */
    atomic_uint_fast64_t gen; /* bumped when a job is posted */
    uint_fast64_t start_gen;  /* gen when workers were created: a new worker's last job seen */
    atomic_int sleepers;      /* workers waiting on `wake` */
    atomic_uint_fast64_t claim; /* (gen << 32) | next chunk */
    atomic_int_fast64_t finished; /* chunks of the current job done */
    /* the current job: written before `claim` is published, read after a successful claim */
    _Atomic(vs_range_fn) fn;
    _Atomic(void *) ctx;
    atomic_int_fast64_t n, grain, nchunks;
} pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .busy = ATOMIC_FLAG_INIT,
};

/* Set in every worker for good and in the caller while its job runs: nested loops go serial. */
static _Thread_local bool in_parallel;

/* Claim and run chunks of job `gen` until none is left (or the job is no longer current). */
static void run_chunks(uint_fast64_t gen)
{
    const uint_fast64_t tag = (gen & UINT32_MAX) << CLAIM_GEN_SHIFT;
    for (;;) {
        uint_fast64_t v = atomic_load(&pool.claim);
        if ((v & ~(uint_fast64_t)UINT32_MAX) != tag) return;
        const int64_t c = (int64_t)(v & UINT32_MAX), nchunks = atomic_load_explicit(&pool.nchunks, memory_order_relaxed);
        if (c >= nchunks) return;
        if (!atomic_compare_exchange_weak(&pool.claim, &v, v + 1)) continue;
        /* Chunk c is ours, so the job cannot finish (or change) before we report it. */
        const int64_t grain = atomic_load_explicit(&pool.grain, memory_order_relaxed);
        const int64_t n = atomic_load_explicit(&pool.n, memory_order_relaxed);
        const int64_t begin = c * grain, end = n - begin > grain ? begin + grain : n;
        atomic_load_explicit(&pool.fn, memory_order_relaxed)(atomic_load_explicit(&pool.ctx, memory_order_relaxed),
                                                             begin, end);
        if (atomic_fetch_add(&pool.finished, 1) + 1 == nchunks) {
            /* Last chunk: wake the caller if it went to sleep (it rechecks under mu). */
            pthread_mutex_lock(&pool.mu);
            pthread_cond_broadcast(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    in_parallel = true;
    /* Not the current gen: the first job may be posted before this thread gets to run. */
    uint_fast64_t seen = pool.start_gen;
    for (;;) {
        spin sp = {0};
        while (atomic_load(&pool.gen) == seen && spinning(&sp)) continue;
        if (atomic_load(&pool.gen) == seen) {
            pthread_mutex_lock(&pool.mu);
            atomic_fetch_add(&pool.sleepers, 1);
            while (atomic_load(&pool.gen) == seen && !pool.stop) pthread_cond_wait(&pool.wake, &pool.mu);
            atomic_fetch_sub(&pool.sleepers, 1);
            bool stop = pool.stop && atomic_load(&pool.gen) == seen;
            pthread_mutex_unlock(&pool.mu);
            if (stop) break;
        }
        seen = atomic_load(&pool.gen);
        run_chunks(seen);
    }
    return NULL;
}

/* Join every worker.  Caller holds pool.busy. */
static void join_workers(void)
{
    if (pool.nworkers == 0) return;
    pthread_mutex_lock(&pool.mu);
    pool.stop = true;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.nworkers; i++) pthread_join(pool.tid[i], NULL);
    pool.nworkers = 0;
    pool.stop = false;
}

/* Make exactly `want` workers exist (fewer if thread creation fails).  Caller holds pool.busy. */
static void resize_pool(int want)
{
    if (pool.nworkers == want) return;
    if (pool.nworkers > want) join_workers();
    pool.start_gen = atomic_load(&pool.gen);
    while (pool.nworkers < want) {
        if (pthread_create(&pool.tid[pool.nworkers], NULL, worker_main, NULL) != 0) break;
        pool.nworkers++;
    }
}

static void run_serial(int64_t n, int64_t grain, vs_range_fn fn, void *ctx)
{
    for (int64_t begin = 0; begin < n; begin += grain) fn(ctx, begin, n - begin > grain ? begin + grain : n);
}

void vs_parallel_for(int64_t n, int64_t grain, vs_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    const int64_t nchunks = (n - 1) / grain + 1;
    const int threads = vs_get_threads();
    if (nchunks == 1 || nchunks > CLAIM_MAX_CHUNKS || threads == 1 || in_parallel ||
        atomic_flag_test_and_set(&pool.busy)) {
        run_serial(n, grain, fn, ctx);
        return;
    }
    resize_pool(threads - 1);
    if (pool.nworkers == 0) {
        atomic_flag_clear(&pool.busy);
        run_serial(n, grain, fn, ctx);
        return;
    }
    in_parallel = true;
    const uint_fast64_t gen = atomic_load(&pool.gen) + 1, tag = (gen & UINT32_MAX) << CLAIM_GEN_SHIFT;
    /* Close claiming first: a late worker of the previous job may hold that job's claim word and
     * be about to compare-and-swap it; the new word makes that fail while the fields change. */
    atomic_store(&pool.claim, tag | UINT32_MAX);
    atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
    atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&pool.n, n, memory_order_relaxed);
    atomic_store_explicit(&pool.grain, grain, memory_order_relaxed);
    atomic_store_explicit(&pool.nchunks, nchunks, memory_order_relaxed);
    atomic_store(&pool.finished, 0);
    atomic_store(&pool.claim, tag); /* publishes the fields: chunk 0 is claimable */
    atomic_store(&pool.gen, gen);
    if (atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.mu);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.mu);
    }
    run_chunks(gen);
    spin sp = {0};
    while (atomic_load(&pool.finished) != nchunks && spinning(&sp)) continue;
    if (atomic_load(&pool.finished) != nchunks) {
        pthread_mutex_lock(&pool.mu);
        while (atomic_load(&pool.finished) != nchunks) pthread_cond_wait(&pool.done, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
    in_parallel = false;
    atomic_flag_clear(&pool.busy);
}

void vs_threads_shutdown(void)
{
    while (atomic_flag_test_and_set(&pool.busy)) cpu_relax();
    join_workers();
    atomic_flag_clear(&pool.busy);
}

/* ---- per-thread scratch ---- */

typedef struct scratch {
    void *buf[VS_SCRATCH_SLOTS];
    size_t size[VS_SCRATCH_SLOTS];
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;

static void scratch_free(void *p)
{
    scratch *s = p;
    if (!s) return;
    for (int i = 0; i < VS_SCRATCH_SLOTS; i++) free(s->buf[i]);
    free(s);
}

static void scratch_init(void) { scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0; }

void *vs_scratch(vs_scratch_slot slot, size_t bytes)
{
    pthread_once(&scratch_once, scratch_init);
    if (!scratch_key_ok || (int)slot < 0 || slot >= VS_SCRATCH_SLOTS) return NULL;
    scratch *s = pthread_getspecific(scratch_key);
    if (!s) {
        s = vs_calloc(1, sizeof *s);
        if (!s) return NULL;
        if (pthread_setspecific(scratch_key, s) != 0) {
            free(s);
            return NULL;
        }
    }
    if (bytes == 0) bytes = 1;
    if (s->size[slot] >= bytes) return s->buf[slot];
    /* Grow by half again so a slowly rising size does not reallocate every call. */
    size_t want = bytes + bytes / 2;
    if (want < bytes) want = bytes;
    want = (want + 63) & ~(size_t)63;
    if (want < bytes) return NULL;
    free(s->buf[slot]);
    s->buf[slot] = vs_aligned_alloc(64, want);
    s->size[slot] = s->buf[slot] ? want : 0;
    return s->buf[slot];
}

void *vs_scratch_or_own(vs_scratch_slot slot, size_t bytes, void **owned)
{
    *owned = NULL;
    if (bytes <= VS_SCRATCH_KEEP) return vs_scratch(slot, bytes);
    const size_t rounded = (bytes + 63) & ~(size_t)63;
    return rounded < bytes ? NULL : (*owned = vs_aligned_alloc(64, rounded));
}

#if defined(__GNUC__)
/* At exit: join the workers and free the exiting (main) thread's scratch, whose key destructor
 * would not run. */
__attribute__((destructor)) static void threadpool_fini(void)
{
    /* exit() called while another thread runs a job: leave that pool alone rather than wait. */
    if (!atomic_flag_test_and_set(&pool.busy)) {
        join_workers();
        atomic_flag_clear(&pool.busy);
    }
    if (scratch_key_ok) {
        scratch_free(pthread_getspecific(scratch_key));
        pthread_setspecific(scratch_key, NULL);
    }
}
#endif
