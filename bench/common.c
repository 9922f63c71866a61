/* bench/common.c - how every paper bench runs (vs_bench_main): flags, OUT, data sets, the journal
 * of a bench with items (--shard, --resume), the run, then its report written to OUT and printed,
 * once for all of them; and what they share: the command line stamped into a report and the default
 * report directory. */
#include "bench/bench.h"
#include "versus/json.h"
#include "versus/report.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command line, each word shell-quoted when needed; --shard, --resume and --threads, which change
 * no result, are left out (a merged or resumed run stamps the command of a single run). */
char *vs_bench_command_line(int argc, char **argv)
{
    size_t n = 32;
    for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "versus bench");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--resume") || !strncmp(argv[i], "--shard=", 8) || !strncmp(argv[i], "--threads=", 10)) continue;
        if (!strcmp(argv[i], "--shard") || !strcmp(argv[i], "--threads")) {
            i++;
            continue;
        }
        bool plain = argv[i][0] != 0;
        for (const char *c = argv[i]; *c; c++) plain &= strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+@%", *c) != NULL;
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", argv[i]);
            continue;
        }
        *p++ = '\'';
        for (const char *c = argv[i]; *c; c++) p += *c == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *c);
        *p++ = '\'';
        *p = 0;
    }
    return s;
}

/* Default OUT: versus-results/<bench>-<data>, the SPEC with anything but [A-Za-z0-9._-] turned into '-'.  Never
 * bench/results/: in a source checkout those are the committed results, replaced only when --out names them. */
void vs_bench_default_out(const char *bench, const char *spec, char *out, size_t n)
{
    int k = snprintf(out, n, "versus-results/%s-", bench);
    for (const char *c = spec; *c && (size_t)k + 1 < n; c++)
        out[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("._-", *c) ? *c : '-');
    out[k] = 0;
}

/* The stamps that were flags: the commit measured is the one compiled in (vs_build_commit). */
static int removed_flags(int argc, char **argv)
{
    static const char *const removed[] = {"commit", "tag"};
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof removed / sizeof *removed; k++) {
            size_t len = strlen(removed[k]);
            if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, removed[k], len) == 0 && (!argv[i][2 + len] || argv[i][2 + len] == '='))
                return vs_usage_error("bench", "--%s was removed: the commit comes from the build (versus --version prints it)", removed[k]);
        }
    return 0;
}

static int publish(const vs_report *r, const char *out, const char *what)
{
    vs_error err;
    if (vs_report_write_dir(r, out, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (vs_report_markdown(r, stdout, &err) != VS_OK) return vs_fail("%s", err.msg);
    printf("\nwrote %s/%s\n", out, what);
    return 0;
}

/* The run of b with its options and plan made: OUT, the journal's options, the data sets, the run,
 * its report published, the journal finished; rc. */
static int run_planned(const vs_bench *b, const vs_args *a, void *options, const vs_bench_plan *plan, const char *budget, int argc,
                       char **argv)
{
    int rc;
    char out[VS_BENCH_PATH_MAX];
    const char *dir = vs_args_get(a, "out");
    if (dir && strlen(dir) >= sizeof out - 1) return vs_usage_error("bench", "--out: path longer than %zu characters", sizeof out - 2);
    snprintf(out, sizeof out, "%s", dir ? dir : plan->out);
    vs_data_flags df;
    if ((plan->data[0] || plan->data[1]) && (rc = vs_cli_data_flags(a, &df))) return rc;
    vs_cli_run cr;
    if (b->items && vs_args_has(a, "shard") && !dir) return vs_usage_error("bench", "--shard K/N writes a part file: give it with --out PART");
    if (b->items && (rc = vs_cli_run_opts(a, out, plan->seed, b->items, argc, argv, &cr))) return rc;
    vs_run *journal = NULL;
    vs_bench_call c = {a, out, {NULL, NULL}, NULL, stderr, b->items ? &cr.o : NULL, b->items ? &journal : NULL};
    vs_report *r = NULL;
    vs_error err;
    char *cmd = vs_bench_command_line(argc, argv);
    c.command = cmd;
    rc = cmd ? 0 : vs_fail("out of memory");
    for (int i = 0; i < 2 && !rc; i++)
        if (plan->data[i] && vs_load_spec(plan->data[i], &df, &c.data[i], &err) != VS_OK) rc = vs_fail("%s", err.msg);
    if (!rc && b->run(options, &c, &r, &err) != VS_OK) {
        rc = err.code == VS_ERR_ARG ? vs_usage_error("bench", "%s", err.msg) : vs_fail("%s", err.msg);
    } else if (!rc && !r) {
        assert(c.run && c.run->sharded); /* only a shard's run ends without a report: its journal is the result */
        printf("wrote the %s of shard %s to %s (versus merge joins the shards)\n", b->items, vs_args_get(a, "shard"), out);
    } else if (!rc) {
        if (r->data && vs_json_set(r->data, "budget", vs_json_new_string(budget)) != VS_OK) r->oom = true;
        rc = publish(r, out, b->writes);
    }
    /* the report is on disk: the journal of the items is done with */
    if (rc == 0 && journal && vs_run_finish(journal, &err) != VS_OK) rc = vs_fail("%s", err.msg);
    vs_run_free(journal);
    vs_report_free(r);
    vs_dataset_free(c.data[0]);
    vs_dataset_free(c.data[1]);
    free(cmd);
    return rc;
}

const vs_cli_opt vs_bench_budget_flag = {"budget", 1, "a named set of flags (listed below), given before yours: yours win"};

const vs_bench_budget *vs_bench_budget_find(const vs_bench *b, const char *name)
{
    for (const vs_bench_budget *g = b->budgets; g && g->name; g++)
        if (strcmp(g->name, name) == 0) return g;
    return NULL;
}

/* Whether argv[1..argc) gives the flag that word ("--ig-steps", or "--ig-steps=200") names. */
static bool user_gives(int argc, char **argv, const char *word)
{
    size_t len = strcspn(word, "=");
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], word, len) == 0 && (argv[i][len] == 0 || argv[i][len] == '=')) return true;
    return false;
}

/* argv with --budget NAME taken out and the budget's flags put first, those the user gives left out:
 * *words (one buffer) and *out (argv[0], then the words) are the caller's to free; *budget is NAME or
 * "default".  0, or 2 after a usage message. */
static int expand_budget(const vs_bench *b, int argc, char **argv, char **words, char ***out, int *n_out, const char **budget)
{
    *words = NULL, *budget = "default";
    const char *name = NULL;
    int at = -1;
    for (int i = 1; i < argc && at < 0; i++)
        if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) name = argv[i + 1], at = i;
        else if (strncmp(argv[i], "--budget=", 9) == 0) name = argv[i] + 9, at = i;
        else if (strcmp(argv[i], "--budget") == 0) return vs_usage_error("bench", "option '--budget' needs a value");
    const vs_bench_budget *g = name ? vs_bench_budget_find(b, name) : NULL;
    if (name && !g) {
        char names[256] = "";
        for (const vs_bench_budget *q = b->budgets; q && q->name; q++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", q == b->budgets ? "" : ", ", q->name);
        return vs_usage_error("bench", "bench %s has no budget '%s' (%s)", b->name, name, names[0] ? names : "it has none");
    }
    if (!(*out = calloc((size_t)argc + (g ? strlen(g->flags) / 2 + 2 : 1), sizeof **out)) || (g && !(*words = strdup(g->flags)))) {
        free(*out);
        return vs_fail("out of memory");
    }
    int n = 0;
    (*out)[n++] = argv[0];
    for (char *w = g ? strtok(*words, " ") : NULL; w; w = strtok(NULL, " ")) (*out)[n++] = w;
    /* each budget flag with its value (the words up to the next flag) goes unless the user gives it */
    int kept = 1;
    for (int i = 1; i < n;) {
        int end = i + 1;
        while (end < n && strncmp((*out)[end], "--", 2) != 0) end++;
        if (!user_gives(argc, argv, (*out)[i]))
            for (int k = i; k < end; k++) (*out)[kept++] = (*out)[k];
        i = end;
    }
    n = kept;
    for (int i = 1; i < argc; i++)
        if (i != at && !(i == at + 1 && strcmp(argv[at], "--budget") == 0)) (*out)[n++] = argv[i];
    *n_out = n;
    if (g) *budget = g->name;
    return 0;
}

int vs_bench_main(const vs_bench *b, int argc, char **argv)
{
    if (b->main) return b->main(argc, argv);
    int rc = removed_flags(argc, argv), n = 0;
    char *words = NULL, **full = NULL;
    const char *budget;
    if (rc || (rc = expand_budget(b, argc, argv, &words, &full, &n, &budget))) return rc;
    vs_args a;
    void *options = NULL;
    vs_bench_plan plan = {.seed = 1};
    if ((rc = vs_args_parse("bench", b->opts, n - 1, full + 1, &a))) goto done;
    if (a.n_pos) {
        rc = vs_usage_error("bench", "unexpected argument '%s'", a.pos[0]);
        goto done;
    }
    if (!(options = calloc(1, b->options_size))) {
        rc = vs_fail("out of memory");
        goto done;
    }
    rc = b->flags(&a, options, &plan);
    if (!rc) rc = run_planned(b, &a, options, &plan, budget, argc, argv);
done:
    free(options);
    free(full);
    free(words);
    return rc;
}
