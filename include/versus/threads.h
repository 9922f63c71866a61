/* versus/threads.h - how many threads the library's kernels use.
 *
 * Kernels (matrix products and friends) split their work over one persistent pool of worker
 * threads.  Results never depend on the thread count: every output element is computed by the same
 * sequence of floating-point operations whether 1 or 64 threads run, so a model trained with 2
 * threads is bit-identical to one trained with 1.  The pool is created lazily on first use and
 * joined at program exit (or by vs_threads_shutdown()).
 *
 * Default thread count: the environment variable VERSUS_THREADS when it holds a positive integer,
 * otherwise the number of online processors. */
#ifndef VERSUS_THREADS_H
#define VERSUS_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Threads kernels may use from now on; n <= 0 restores the default.  Call it between kernels, not
 * while another thread is inside one. */
void vs_set_threads(int n);
/* Threads kernels use now (>= 1). */
int vs_get_threads(void);
/* Join and free the worker threads now (they come back lazily when next needed).  Called
 * automatically at exit; useful before fork() or in leak checkers. */
void vs_threads_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif
