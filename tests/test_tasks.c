/* test_tasks.c - the vae and gan tasks on the shared loop: they learn (the ELBO rises, the critic
 * tells real from generated), a run stopped at any step and resumed ends with the bits of an
 * uninterrupted one, the gradient penalty is the double-backward value (|w| - 1)^2 for a linear
 * critic, DIP-VAE's penalty matches a direct computation, task options and optimiser overrides are
 * checked, the learning-rate schedule and per-optimiser rates reach the optimisers. */
#include "nn/train_internal.h"
#include "versus/arch.h"
#include "versus/composite.h"
#include "versus/nn.h"
#include "versus/ops.h"
#include "versus/safetensors.h"
#include "versus/synth.h"
#include "versus/train.h"
#include "versus/zoo.h"
#include "vs_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static vs_dataset *shapes(int64_t n)
{
    vs_synth_shapes_opts o;
    vs_synth_shapes_defaults(&o);
    o.n = n, o.size = 12;
    vs_dataset *d;
    vs_error err;
    ck_assert_msg(vs_synth_shapes(&o, &d, &err) == VS_OK, "%s", err.msg);
    return d;
}

static vs_module *zoo_model(const char *name, const vs_dataset *d, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    vs_module *m = vs_zoo_build(vs_zoo_find(name), d, &r, &err);
    ck_assert_msg(m != NULL, "%s: %s", name, err.msg);
    return m;
}

static vs_module *small_vae(const vs_dataset *d, uint64_t seed)
{
    vs_rng r;
    vs_rng_seed(&r, seed);
    vs_error err;
    int64_t in[3] = {d->shape[0], d->shape[1], d->shape[2]};
    vs_module *m = vs_arch_vae_mlp(3, in, 32, 4, &r, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

static vs_train_opts opts_for(int64_t epochs, int64_t batch)
{
    vs_train_opts o;
    vs_train_opts_init(&o);
    o.epochs = epochs, o.batch_size = batch, o.seed = 3;
    return o;
}

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/vs_test_tasks_%ld_%s", vs_test_tmpdir(), (long)getpid(), name);
}

/* every parameter and buffer of a and b equal bit for bit */
static void same_weights(vs_module *a, vs_module *b)
{
    vs_named_tensors ta = {0}, tb = {0};
    ck_assert(vs_module_named_tensors(a, VS_STATE_ALL, &ta) == VS_OK && vs_module_named_tensors(b, VS_STATE_ALL, &tb) == VS_OK);
    ck_assert_int_eq(ta.n, tb.n);
    for (int64_t i = 0; i < ta.n; i++) {
        ck_assert_str_eq(ta.items[i].name, tb.items[i].name);
        ck_assert_msg(memcmp(ta.items[i].tensor->data, tb.items[i].tensor->data, (size_t)ta.items[i].tensor->size * sizeof(float)) == 0,
                      "%s differs", ta.items[i].name);
    }
    vs_named_tensors_clear(&ta);
    vs_named_tensors_clear(&tb);
}

START_TEST(test_vae_learns)
{
    int64_t live = vs_live_tensors();
    vs_dataset *d = shapes(300);
    vs_module *m = small_vae(d, 1), *m0 = small_vae(d, 1);
    vs_train_opts o = opts_for(0, 32);
    vs_train_result r0, r;
    vs_error err;
    ck_assert_msg(vs_train(m0, d, &o, &r0, &err) == VS_OK, "%s", err.msg); /* 0 epochs: the initial ELBO */
    o.epochs = 8;
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(r.task, "vae");
    ck_assert_int_eq(r.n_terms, 4);
    double e0 = vs_train_result_get(&r0, "test_elbo"), e = vs_train_result_get(&r, "test_elbo");
    ck_assert_msg(e > e0 + 20, "test ELBO %g after training, %g before", e, e0);
    ck_assert(fabs(e + vs_train_result_get(&r, "test_recon") + vs_train_result_get(&r, "test_kl")) < 1e-6 * fabs(e));
    ck_assert(r.loss_history[7 * 4] < r.loss_history[0]);
    ck_assert(r.loss_history[3] == 0); /* no DIP penalty by default */
    vs_train_result_clear(&r0);
    vs_train_result_clear(&r);
    vs_module_free(m);
    vs_module_free(m0);
    vs_dataset_free(d);
    ck_assert_int_eq(vs_live_tensors(), live);
}
END_TEST

START_TEST(test_dip_penalty_value)
{
    /* mu, logvar [4,2]: the penalty by hand in double */
    const float mu[8] = {0.5f, -1, 1.5f, 0.25f, -0.5f, 2, 1, -0.75f}, lv[8] = {0, -1, 0.5f, 0.2f, -0.3f, 0, 1, -2};
    double mean[2] = {0}, cov[2][2] = {{0}}, ev[2] = {0};
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 2; a++) mean[a] += mu[i * 2 + a] / 4.0, ev[a] += exp(lv[i * 2 + a]) / 4.0;
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) cov[a][b] += (mu[i * 2 + a] - mean[a]) * (mu[i * 2 + b] - mean[b]) / 4.0;
    for (int ii = 0; ii < 2; ii++) {
        double c00 = cov[0][0] + (ii ? ev[0] : 0), c11 = cov[1][1] + (ii ? ev[1] : 0);
        double want = 3.0 * 2 * cov[0][1] * cov[0][1] + 7.0 * ((c00 - 1) * (c00 - 1) + (c11 - 1) * (c11 - 1));
        vs_scope_begin();
        vs_tensor *p = vs_train_dip_penalty(vs_tensor_from(VS_SHAPE(4, 2), mu), vs_tensor_from(VS_SHAPE(4, 2), lv), ii, 3, 7);
        ck_assert_ptr_nonnull(p);
        ck_assert_msg(fabs(vs_item(p) - want) < 1e-5 * want, "DIP-VAE-%s: %g, by hand %g", ii ? "ii" : "i", vs_item(p), want);
        vs_scope_end();
    }
}
END_TEST

START_TEST(test_dip_vae_trains)
{
    vs_dataset *d = shapes(200);
    vs_module *m = small_vae(d, 2);
    vs_train_opts o = opts_for(2, 32);
    o.task_opts = "dip=ii,lambda_od=5,lambda_d=5,beta=2";
    vs_train_result r;
    vs_error err;
    ck_assert_msg(vs_train(m, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert(r.loss_history[3] > 0 && isfinite(r.loss_history[3])); /* the dip term is reported */
    ck_assert(isfinite(vs_train_result_get(&r, "test_elbo")));
    vs_train_result_clear(&r);
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

/* every gp term the progress reports (the running mean over the epoch; the first step's value is that of step 1) */
static double first_gp = NAN;
static void record_gp(void *user, const vs_train_progress *p)
{
    (void)user;
    if (p->global_step == 1) first_gp = p->term[2];
}

START_TEST(test_gradient_penalty_of_a_linear_critic)
{
    /* D(x) = w . x + b: dD/dx = w for every xh, so gp = (|w| - 1)^2 exactly, through vs_grad(create_graph) */
    vs_dataset *d = shapes(40);
    vs_module *gan = zoo_model("gan-mlp", d, 5);
    vs_module *critic = vs_module_child(gan, "critic");
    vs_module *lin = vs_sequential_new();
    vs_rng r;
    vs_rng_seed(&r, 9);
    ck_assert(vs_sequential_add(lin, vs_flatten_new()) == VS_OK && vs_sequential_add(lin, vs_linear_new(d->dim, 1, true, &r)) == VS_OK);
    /* swap the critic for the linear one */
    for (int64_t i = 0; i < gan->n_children; i++)
        if (gan->children[i] == critic) gan->children[i] = lin;
    vs_module_free(critic);
    const vs_tensor *w = vs_module_child(lin, "1")->params[0];
    double sq = 0;
    for (int64_t k = 0; k < w->size; k++) sq += (double)w->data[k] * w->data[k];
    double want = (sqrt(sq) - 1) * (sqrt(sq) - 1);
    vs_train_opts o = opts_for(1, 8);
    o.on_step = record_gp;
    vs_train_result res;
    vs_error err;
    ck_assert_msg(vs_train(gan, d, &o, &res, &err) == VS_OK, "%s", err.msg);
    ck_assert_msg(fabs(first_gp - want) < 1e-4 * want + 1e-6, "gp %g, (|w| - 1)^2 = %g", first_gp, want);
    vs_train_result_clear(&res);
    vs_module_free(gan);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_gan_learns_and_conditional_runs)
{
    vs_dataset *d = shapes(200);
    vs_module *g = zoo_model("gan-mlp", d, 1);
    vs_train_opts o = opts_for(3, 20);
    vs_train_result r;
    vs_error err;
    ck_assert_msg(vs_train(g, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert_str_eq(r.task, "gan");
    ck_assert_msg(vs_train_result_get(&r, "critic_gap") > 0, "critic gap %g", vs_train_result_get(&r, "critic_gap"));
    ck_assert(isnan(r.loss_history[3])); /* no class terms for an unconditional generator */
    vs_train_result_clear(&r);
    vs_module_free(g);

    /* non-saturating loss, no penalty */
    g = zoo_model("gan-mlp", d, 1);
    o.task_opts = "loss=ns,lambda_gp=0,n_critic=1";
    ck_assert_msg(vs_train(g, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    ck_assert(isnan(r.loss_history[2]) && isfinite(r.loss_history[1]));
    vs_train_result_clear(&r);
    vs_module_free(g);

    /* StarGAN G(x, c) and the two-headed critic */
    vs_module *s = zoo_model("stargan-gen", d, 1);
    o = opts_for(1, 8);
    o.task_opts = "range=tanh,n_critic=2";
    ck_assert_msg(vs_train(s, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    for (int k = 0; k < 6; k++) ck_assert_msg(isfinite(r.loss_history[k]), "term %s", r.terms[k]);
    ck_assert(vs_train_result_get(&r, "cls_accuracy_real") >= 0);
    vs_train_result_clear(&r);
    vs_module_free(s);
    vs_dataset_free(d);
}
END_TEST

/* stop after `at` steps (via opts.stop), resume, and compare with an uninterrupted run */
static volatile sig_atomic_t stop_flag;
static int64_t stop_at;
static void stop_after(void *user, const vs_train_progress *p)
{
    (void)user;
    if (p->global_step == stop_at) stop_flag = 1;
}

static void resume_matches(const char *arch, const char *task_opts, int64_t epochs, int64_t batch, int64_t at)
{
    vs_dataset *d = shapes(60);
    char path[512];
    tmp_path(path, sizeof path, "resume.safetensors");
    unlink(path);
    vs_train_opts o = opts_for(epochs, batch);
    o.task_opts = task_opts;
    vs_train_result ra, rb, rc;
    vs_error err;
    vs_module *a = zoo_model(arch, d, 4);
    ck_assert_msg(vs_train(a, d, &o, &ra, &err) == VS_OK, "%s", err.msg);

    vs_module *b = zoo_model(arch, d, 4);
    o.checkpoint = path, o.stop = &stop_flag, o.on_step = stop_after;
    stop_flag = 0, stop_at = at;
    ck_assert_msg(vs_train(b, d, &o, &rb, &err) == VS_OK, "%s", err.msg);
    ck_assert(rb.interrupted);
    vs_module *c = zoo_model(arch, d, 99); /* other initial weights: the checkpoint must replace them all */
    stop_flag = 0, stop_at = -1;
    o.resume = true;
    ck_assert_msg(vs_train(c, d, &o, &rc, &err) == VS_OK, "%s", err.msg);
    same_weights(a, c);
    ck_assert(memcmp(ra.loss_history, rc.loss_history, (size_t)(epochs * ra.n_terms) * sizeof(double)) == 0 ||
              ra.n_terms == 0);
    for (int i = 0; i < ra.n_metrics; i++)
        ck_assert_msg(ra.metrics[i].value == vs_train_result_get(&rc, ra.metrics[i].name), "%s", ra.metrics[i].name);
    vs_train_result_clear(&ra);
    vs_train_result_clear(&rb);
    vs_train_result_clear(&rc);
    vs_module_free(a);
    vs_module_free(b);
    vs_module_free(c);
    vs_dataset_free(d);
    unlink(path);
}

START_TEST(test_resume_vae) { resume_matches("vae", NULL, 2, 16, 5); }
END_TEST
START_TEST(test_resume_dip_vae) { resume_matches("dip-vae", NULL, 1, 16, 2); }
END_TEST
START_TEST(test_resume_gan) { resume_matches("gan-mlp", "n_critic=3", 2, 8, 7); }
END_TEST
START_TEST(test_resume_stargan) { resume_matches("stargan-gen", "range=tanh,n_critic=2", 1, 8, 3); }
END_TEST

START_TEST(test_options_checked)
{
    vs_dataset *d = shapes(40);
    vs_module *m = small_vae(d, 1);
    vs_train_opts o = opts_for(1, 16);
    vs_train_result r;
    vs_error err;
    o.task_opts = "gamma=2";
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "the vae task has no option 'gamma'; its options are beta, dip, lambda_od, lambda_d"));
    o.task_opts = "dip=iii";
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "dip: 'iii' is not one of its choices"));
    o.task_opts = "beta=-1";
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "beta: '-1', expected a number in [0, 1e+06]"));
    o.task_opts = "beta";
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "'beta' is not name=value"));

    /* optimiser overrides */
    vs_train_optim per[4];
    int n;
    ck_assert(vs_train_parse_optims("generator:lr=1e-4,beta1=0.5,beta2=0.9;critic:lr=4e-4,clip=1", &o, per, 4, &n, &err) == VS_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(per[0].name, "generator");
    ck_assert(per[0].optim.lr == 1e-4f && per[0].optim.beta1 == 0.5f && per[0].optim.beta2 == 0.9f);
    ck_assert(per[1].optim.lr == 4e-4f && per[1].optim.beta1 == 0.9f && per[1].clip_norm == 1);
    ck_assert_int_eq(vs_train_parse_optims("critic:lr=x", &o, per, 4, &n, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "lr = 'x' is not a number"));
    ck_assert_int_eq(vs_train_parse_optims("critic:gamma=1", &o, per, 4, &n, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown key 'gamma'"));
    ck_assert_int_eq(vs_train_parse_optims("critic:beta1=1", &o, per, 4, &n, &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_train_parse_optims("lr=1", &o, per, 4, &n, &err), VS_ERR_ARG);
    ck_assert_int_eq(vs_train_parse_optims("a:lr=1;a:lr=2", &o, per, 4, &n, &err), VS_ERR_ARG);

    /* a task a model cannot serve */
    ck_assert(vs_composite_set_task(m, "gan") == VS_OK);
    o.task_opts = NULL;
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "the gan task trains a model \"generator\""));
    ck_assert(vs_composite_set_task(m, "no-such-task") == VS_OK);
    ck_assert_int_eq(vs_train(m, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "asks for task \"no-such-task\"; the tasks are classifier, siamese, vae, gan"));
    vs_module_free(m);
    vs_dataset_free(d);
}
END_TEST

/* the learning rate of each optimiser at each step */
static float lr_seen[2][8];
static void record_lr(void *user, const vs_train_progress *p)
{
    (void)user;
    if (p->global_step <= 8) lr_seen[0][p->global_step - 1] = p->lr[0], lr_seen[1][p->global_step - 1] = p->lr[1];
}

START_TEST(test_schedule_and_per_optimiser_rates)
{
    /* step decay (x0.5 per epoch) for both, a critic of its own rate: 28 train rows, 2 steps per epoch */
    vs_dataset *d = shapes(40);
    vs_module *g = zoo_model("gan-mlp", d, 1);
    char path[512];
    tmp_path(path, sizeof path, "sched.safetensors");
    unlink(path);
    vs_train_opts o = opts_for(2, 20);
    o.schedule.kind = VS_LR_STEP, o.schedule.step_size = 1, o.schedule.gamma = 0.5f;
    vs_train_optim per[2];
    int n;
    vs_error err;
    ck_assert(vs_train_parse_optims("critic:lr=0.004,beta1=0.5", &o, per, 2, &n, &err) == VS_OK);
    o.per_optim = per, o.n_per_optim = n, o.checkpoint = path, o.on_step = record_lr;
    vs_train_result r;
    ck_assert_msg(vs_train(g, d, &o, &r, &err) == VS_OK, "%s", err.msg);
    vs_train_result_clear(&r);
    ck_assert(lr_seen[0][0] == 1e-3f && lr_seen[0][1] == 1e-3f && lr_seen[0][2] == 5e-4f && lr_seen[0][3] == 5e-4f);
    ck_assert(lr_seen[1][0] == 0.004f && lr_seen[1][2] == 0.002f);
    vs_safetensors *f;
    ck_assert(vs_safetensors_read(path, &f, &err) == VS_OK);
    const char *state = vs_safetensors_meta_get(f, "state");
    ck_assert_ptr_nonnull(strstr(state, "\"critic\":{\"optimizer\":\"adam\",\"lr\":0.004"));
    ck_assert_ptr_nonnull(strstr(state, "\"schedule\":\"step,1,0.5,0,0\""));
    ck_assert_ptr_nonnull(vs_safetensors_get(f, "optim.generator.adam.m.net.0.weight"));
    ck_assert_ptr_nonnull(vs_safetensors_get(f, "optim.critic.adam.v.1.weight"));
    ck_assert_ptr_nonnull(strstr(state, "\"noise\":["));
    vs_safetensors_free(f);
    /* resuming with another critic rate is refused, naming it */
    per[0].optim.lr = 0.002f;
    o.resume = true, o.epochs = 3, o.on_step = NULL;
    vs_module *g2 = zoo_model("gan-mlp", d, 1);
    ck_assert_int_eq(vs_train(g2, d, &o, &r, &err), VS_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "optimizers.critic.lr"));
    unlink(path);
    vs_module_free(g);
    vs_module_free(g2);
    vs_dataset_free(d);
}
END_TEST

static Suite *tasks_suite(void)
{
    Suite *s = suite_create("tasks");
    TCase *tc = vs_tcase(s, "vae", 120);
    tcase_add_test(tc, test_vae_learns);
    tcase_add_test(tc, test_dip_penalty_value);
    tcase_add_test(tc, test_dip_vae_trains);
    tc = vs_tcase(s, "gan", 120);
    tcase_add_test(tc, test_gradient_penalty_of_a_linear_critic);
    tcase_add_test(tc, test_gan_learns_and_conditional_runs);
    tc = vs_tcase(s, "resume", 120);
    tcase_add_test(tc, test_resume_vae);
    tcase_add_test(tc, test_resume_dip_vae);
    tcase_add_test(tc, test_resume_gan);
    tcase_add_test(tc, test_resume_stargan);
    tc = vs_tcase(s, "options", 60);
    tcase_add_test(tc, test_options_checked);
    tcase_add_test(tc, test_schedule_and_per_optimiser_rates);
    return s;
}

VS_TEST_MAIN(tasks_suite)
