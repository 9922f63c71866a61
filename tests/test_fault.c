/* test_fault.c - out of memory anywhere in the engine fails loudly: an op returns NULL with
 * VS_ERR_NOMEM ("out of memory"), vs_grad / vs_backward report it, and no failure ever turns into
 * a result with missing (zero) gradients.  Uses the allocation-failure hook of autograd/alloc.h. */
#include "vs_check.h"
#include "autograd/alloc.h"
#include "versus/versus.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NP 6

/* Parameters of the test expressions, made outside any scope and freed by the caller. */
static void make_params(vs_tensor **p)
{
    vs_rng r;
    vs_rng_seed(&r, 11);
    p[0] = vs_tensor_randn(VS_SHAPE(2, 3, 6, 6), &r, 0, 1);  /* x */
    p[1] = vs_tensor_randn(VS_SHAPE(4, 3, 3, 3), &r, 0, 0.3f); /* conv weight */
    p[2] = vs_tensor_randn(VS_SHAPE(4), &r, 0, 0.1f);           /* conv bias */
    p[3] = vs_tensor_randn(VS_SHAPE(4), &r, 1, 0.1f);           /* batch norm gamma */
    p[4] = vs_tensor_randn(VS_SHAPE(5, 36), &r, 0, 0.2f);       /* linear weight */
    p[5] = vs_tensor_randn(VS_SHAPE(2, 5), &r, 0, 1);           /* second operand */
    for (int i = 0; i < NP; i++) vs_set_requires_grad(p[i], true);
}

/* A scalar through many kinds of node: conv, norm, pooling, linear, softmax, index, reductions,
 * shape ops, elementwise maps. */
static vs_tensor *net(vs_tensor *const *p)
{
    vs_tensor *h = vs_conv2d(p[0], p[1], p[2], &(vs_conv_opts){.padding = {1, 1}});
    h = vs_batch_norm(h, p[3], NULL, NULL, NULL, true, 0.1f, 1e-5f);
    h = vs_max_pool2d(vs_leaky_relu(h, 0.1f), 2, 2, 0);
    h = vs_linear(vs_flatten(h), p[4], NULL);
    vs_tensor *ls = vs_log_softmax(vs_add(h, vs_tanh(p[5])), 1);
    const int64_t idx[2] = {4, 1};
    vs_tensor *sel = vs_index_select(ls, 1, idx, 2);
    vs_tensor *m = vs_max(vs_mul(h, p[5]), VS_AXIS(1), false);
    vs_tensor *pd = vs_slice(vs_pad(vs_transpose(sel, 0, 1), (int64_t[]){1, 0, 0, 2}, 0.5f), 1, 1, 3);
    vs_tensor *mn = vs_minimum(vs_mean(pd, VS_ALL_AXES, false), vs_sum(vs_pow_scalar(m, 2.0f), VS_ALL_AXES, false));
    return vs_add(mn, vs_sum(vs_mul_scalar(sel, -0.5f), VS_ALL_AXES, false));
}

/* Second order: the gradient penalty of WGAN-GP on a small net, differentiated again. */
static vs_tensor *penalty(vs_tensor *const *p)
{
    vs_tensor *h = vs_linear(vs_flatten(p[0]), vs_concat(3, (vs_tensor *[]){p[4], vs_elu(p[4], 0.5f), p[4]}, 1), NULL);
    vs_tensor *out = vs_sum(vs_softplus(h), VS_ALL_AXES, false);
    vs_tensor *g;
    if (vs_grad(1, &out, NULL, 1, &p[0], &g, true) != VS_OK) return NULL;
    return vs_mean(vs_pow_scalar(vs_add_scalar(vs_sqrt(vs_sum(vs_mul(g, g), VS_ALL_AXES, false)), -1.0f), 2.0f), VS_ALL_AXES, false);
}

typedef vs_tensor *(*expr_fn)(vs_tensor *const *p);

/* loss and its gradients with respect to every parameter, inside a scope; grads copied out (NULL
 * entries when the gradient call failed).  Returns the status of the whole run: the op's error
 * when the expression gave NULL, else vs_grad's. */
static vs_status run(expr_fn f, vs_tensor *const *p, float *loss, float **grads)
{
    vs_clear_last_error();
    vs_scope_begin();
    vs_tensor *y = f(p);
    vs_status st = y ? VS_OK : vs_last_error()->code;
    vs_tensor *g[NP] = {0};
    if (y) st = vs_grad(1, &y, NULL, NP, p, g, false);
    if (st == VS_OK) {
        *loss = vs_item(y);
        for (int i = 0; i < NP; i++) memcpy(grads[i], g[i]->data, (size_t)p[i]->size * sizeof(float));
    } else {
        for (int i = 0; i < NP; i++) ck_assert_msg(g[i] == NULL, "a failed vs_grad handed out gradient %d", i);
    }
    vs_scope_end();
    return st;
}

/* For every allocation the expression and its gradient make, fail that one: the run either fails
 * with VS_ERR_NOMEM and "out of memory" in the message, or - where the engine absorbs the failure
 * (a retry, a kernel's unpacked path) - gives exactly the undisturbed result.  Never anything else. */
static void sweep(expr_fn f)
{
    vs_set_threads(1); /* one thread: the count of allocations is the same on every run */
    vs_tensor *p[NP];
    make_params(p);
    float *ref[NP], *got[NP], ref_loss, loss;
    for (int i = 0; i < NP; i++) {
        ref[i] = malloc((size_t)p[i]->size * sizeof(float));
        got[i] = malloc((size_t)p[i]->size * sizeof(float));
    }
    ck_assert_int_eq(run(f, p, &ref_loss, ref), VS_OK); /* warm-up: per-thread scratch exists afterwards */
    const int64_t big = INT64_C(1) << 40;
    vs_fault_alloc_at(big);
    ck_assert_int_eq(run(f, p, &ref_loss, ref), VS_OK);
    const int64_t count = big - vs_fault_alloc_at(0);
    ck_assert_int_gt(count, 20);
    int64_t live = vs_live_tensors(), failed = 0;
    for (int64_t k = 1; k <= count; k++) {
        vs_fault_alloc_at(k);
        vs_status st = run(f, p, &loss, got);
        const int64_t left = vs_fault_alloc_at(0);
        ck_assert_msg(left == 0, "allocation %lld was not made (%lld to go)", (long long)k, (long long)left);
        if (st == VS_OK) {
            ck_assert(memcmp(&loss, &ref_loss, sizeof loss) == 0);
            for (int i = 0; i < NP; i++)
                ck_assert_msg(memcmp(got[i], ref[i], (size_t)p[i]->size * sizeof(float)) == 0,
                              "allocation %lld failed silently: gradient %d differs", (long long)k, i);
        } else {
            failed++;
            ck_assert_msg(st == VS_ERR_NOMEM, "allocation %lld: status %s (%s)", (long long)k, vs_status_name(st), vs_last_error()->msg);
            ck_assert_msg(strstr(vs_last_error()->msg, "out of memory") != NULL, "allocation %lld: message '%s'", (long long)k,
                          vs_last_error()->msg);
        }
        ck_assert_int_eq(vs_live_tensors(), live);
    }
    ck_assert_int_gt(failed, count / 2);
    for (int i = 0; i < NP; i++) {
        vs_tensor_free(p[i]);
        free(ref[i]);
        free(got[i]);
    }
    vs_set_threads(0);
}

START_TEST(test_sweep_first_order) { sweep(net); }
END_TEST

START_TEST(test_sweep_second_order) { sweep(penalty); }
END_TEST

/* The allocation of a node itself: the op fails, and the loss built on it has no gradient to give -
 * before, the result came back without its node and the gradient was silently zero. */
START_TEST(test_node_allocation)
{
    vs_tensor *x = vs_tensor_full(VS_SHAPE(3), 2.0f);
    vs_set_requires_grad(x, true);
    vs_scope_begin();
    /* count what one mul_scalar allocates (after a first one has grown the scope's list); its node
     * is the last of it */
    vs_mul_scalar(x, 3.0f);
    vs_fault_alloc_at(1000);
    vs_mul_scalar(x, 3.0f);
    const int64_t n = 1000 - vs_fault_alloc_at(0);
    ck_assert_int_ge(n, 2);
    vs_fault_alloc_at(n);
    vs_clear_last_error();
    vs_tensor *y = vs_mul_scalar(x, 3.0f);
    ck_assert_int_eq(vs_fault_alloc_left(), 0);
    ck_assert_ptr_null(y);
    ck_assert_int_eq(vs_last_error()->code, VS_ERR_NOMEM);
    ck_assert_msg(strstr(vs_last_error()->msg, "mul_scalar: out of memory") != NULL, "%s", vs_last_error()->msg);
    /* whatever is built on the failed op fails too: no zero gradient comes back */
    vs_tensor *loss = vs_sum(y, VS_ALL_AXES, false), *g = NULL;
    ck_assert_ptr_null(loss);
    ck_assert_int_ne(vs_grad(1, &loss, NULL, 1, &x, &g, false), VS_OK);
    ck_assert_ptr_null(g);
    ck_assert_int_ne(vs_backward(loss, NULL, false), VS_OK);
    ck_assert_ptr_null(x->grad);
    vs_scope_end();
    vs_tensor_free(x);
}
END_TEST

/* vs_backward: a failure inside the walk leaves every leaf's ->grad as it was. */
START_TEST(test_backward_all_or_nothing)
{
    vs_set_threads(1);
    vs_tensor *p[NP];
    make_params(p);
    vs_scope_begin();
    vs_tensor *y = net(p);
    ck_assert_int_eq(vs_backward(y, NULL, false), VS_OK); /* ->grad of each parameter: g */
    float *before = malloc((size_t)p[4]->size * sizeof(float));
    memcpy(before, p[4]->grad->data, (size_t)p[4]->size * sizeof(float));
    vs_tensor *first = p[4]->grad;
    int failures = 0;
    for (int64_t k = 1; k <= 400; k++) {
        vs_fault_alloc_at(k);
        vs_status st = vs_backward(y, NULL, false);
        const bool fired = vs_fault_alloc_at(0) == 0;
        if (st != VS_OK) {
            failures++;
            ck_assert_int_eq(st, VS_ERR_NOMEM);
            ck_assert_ptr_eq(p[4]->grad, first); /* untouched */
            ck_assert(memcmp(p[4]->grad->data, before, (size_t)p[4]->size * sizeof(float)) == 0);
        } else {
            if (!fired) break; /* past the last allocation */
            for (int i = 0; i < NP; i++) vs_zero_grad(p[i]);
            ck_assert_int_eq(vs_backward(y, NULL, false), VS_OK);
            first = p[4]->grad;
        }
    }
    ck_assert_int_gt(failures, 10);
    free(before);
    vs_scope_end();
    for (int i = 0; i < NP; i++) vs_tensor_free(p[i]);
    vs_set_threads(0);
}
END_TEST

/* vs_aligned_alloc honours the alignment asked for, and on Linux puts blocks of 1 MiB or more on
 * 2 MiB boundaries (huge pages); every byte asked for is usable (the sanitizers check the writes). */
START_TEST(test_aligned_blocks)
{
    const size_t sizes[] = {64, 4096, ((size_t)1 << 20) - 64, (size_t)1 << 20, ((size_t)3 << 20) + 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        unsigned char *p = vs_aligned_alloc(64, sizes[i]);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
#if defined(__linux__)
        if (sizes[i] >= (size_t)1 << 20) ck_assert_uint_eq((uintptr_t)p % ((size_t)2 << 20), 0);
#endif
        memset(p, 0xab, sizes[i]);
        ck_assert_uint_eq(p[sizes[i] - 1], 0xab);
        free(p);
    }
}
END_TEST

static Suite *fault_suite(void)
{
    Suite *s = suite_create("fault");
    TCase *tc = vs_tcase(s, "out of memory", 120);
    tcase_add_test(tc, test_node_allocation);
    tcase_add_test(tc, test_sweep_first_order);
    tcase_add_test(tc, test_sweep_second_order);
    tcase_add_test(tc, test_backward_all_or_nothing);
    tcase_add_test(tc, test_aligned_blocks);
    return s;
}

VS_TEST_MAIN(fault_suite)
