/* cmd_merge.c - `versus merge PART... --out OUT`: the partial results of a sharded run (versus/shard.h)
 * checked and joined into the journal of the whole run, which the command then resumes: every item
 * is done, so it writes exactly the files a single run writes. */
#include "bench/bench.h"
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt merge_opts[] = {
    {"out", 1, "where the whole run's files go (the --out a single run would be given)"},
    {NULL, 0, NULL},
};

/* A part is data from wherever it came from, so the command it records is checked before it runs:
 * only the verbs that write parts (attribute, evaluate, explain snx, and bench NAME for every bench
 * with items: bench/bench.h), only the options that verb (or that bench) takes, and no output but
 * OUT: a file option (--report, --heatmaps, --curves) is written beside OUT under its own file name.
 * Runs before the merged journal is written (which records the rewritten command); a refusal names
 * the part and the word. */
static const char *const merge_verbs[][2] = {{"attribute", NULL}, {"evaluate", NULL}, {"explain", "snx"}};
static const char *const merge_outputs[] = {"report", "heatmaps", "curves"};

/* "attribute, evaluate, explain snx and bench snx": what writes parts, for a refusal. */
static void part_writers(char *s, size_t n)
{
    int last = -1;
    for (int i = 0; i < vs_bench_count(); i++)
        if (vs_bench_at(i)->items) last = i;
    snprintf(s, n, "attribute, evaluate%s explain snx", last < 0 ? " and" : ",");
    for (int i = 0; i <= last; i++)
        if (vs_bench_at(i)->items) snprintf(s + strlen(s), n - strlen(s), "%s bench %s", i == last ? " and" : ",", vs_bench_at(i)->name);
}

static const vs_cli_opt *verb_opt(const vs_cli_opt *table, const char *w, size_t len)
{
    for (const vs_cli_opt *o = table; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, w, len) == 0) return o;
    return NULL;
}

/* value's file name beside out (out's directory); NULL when value has no file name. */
static char *beside_out(const char *out, const char *value)
{
    const char *slash = strrchr(value, '/'), *name = slash ? slash + 1 : value;
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) return NULL;
    const char *os = strrchr(out, '/');
    int dir = os ? (int)(os - out) + 1 : 0;
    char *w = malloc((size_t)dir + strlen(name) + 1);
    if (w) sprintf(w, "%.*s%s", dir, out, name);
    return w;
}

typedef struct merge_ctx {
    const char *part, *out;
} merge_ctx;

static vs_status check_command(void *ctx, vs_run_header *h, vs_error *err)
{
    const char *part = ((const merge_ctx *)ctx)->part, *out = ((const merge_ctx *)ctx)->out;
    const vs_verb *v = vs_find_verb(h->verb);
    size_t k = 0, nv = sizeof merge_verbs / sizeof *merge_verbs;
    while (k < nv && strcmp(merge_verbs[k][0], h->verb) != 0) k++;
    const char *sub = k < nv ? merge_verbs[k][1] : NULL;
    /* a bench writes parts when it has items; its flags are its own (bench/NAME/cli.c), not the bench verb's */
    const vs_bench *bench = strcmp(h->verb, "bench") == 0 && h->argc > 0 ? vs_bench_find(h->argv[0]) : NULL;
    if (bench && bench->items) sub = bench->name;
    else if (k == nv || !v || (sub && (h->argc < 1 || strcmp(h->argv[0], sub) != 0))) {
        char writers[256];
        part_writers(writers, sizeof writers);
        return vs_error_set(err, VS_ERR_ARG, "%s: the part records the command '%s%s%s', which writes no parts (merge runs %s)", part, h->verb,
                            h->argc > 0 ? " " : "", h->argc > 0 ? h->argv[0] : "", writers);
    }
    const vs_cli_opt *table = bench ? bench->opts : v->opts;
    for (int i = sub ? 1 : 0; i < h->argc; i++) {
        const char *w = h->argv[i], *eq = strchr(w, '=');
        if (strncmp(w, "--", 2) != 0) return vs_error_set(err, VS_ERR_ARG, "%s: the part's command has the stray word '%s'", part, w);
        size_t len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
        const vs_cli_opt *o = verb_opt(table, w + 2, len);
        if (!o && bench && bench->budgets && len == 6 && strncmp(w + 2, "budget", 6) == 0) o = &vs_bench_budget_flag;
        if (!o || !strcmp(o->name, "shard") || !strcmp(o->name, "resume"))
            return vs_error_set(err, VS_ERR_ARG, "%s: the part's command has '%.*s', which '%s' does not record", part, (int)len + 2, w, h->verb);
        if (!o->has_arg) {
            if (eq) return vs_error_set(err, VS_ERR_ARG, "%s: the part's command gives a value to '--%s'", part, o->name);
            continue;
        }
        int vi = eq ? i : i + 1;
        if (vi >= h->argc) return vs_error_set(err, VS_ERR_ARG, "%s: the part's command has '--%s' without its value", part, o->name);
        bool is_output = false;
        for (size_t q = 0; q < sizeof merge_outputs / sizeof *merge_outputs; q++) is_output |= !strcmp(o->name, merge_outputs[q]);
        if (is_output) {
            const char *value = eq ? eq + 1 : h->argv[vi];
            char *place = beside_out(out, value), *word = NULL;
            if (!place) return vs_error_set(err, VS_ERR_ARG, "%s: the part's '--%s %s' names no file", part, o->name, value);
            if (eq && place && (word = malloc(strlen(o->name) + strlen(place) + 4))) sprintf(word, "--%s=%s", o->name, place);
            if (strcmp(place, value) != 0) fprintf(stderr, "versus: merge writes the part's --%s %s as %s (beside --out)\n", o->name, value, place);
            if (eq) free(place);
            else word = place;
            if (!word) return vs_error_set(err, VS_ERR_NOMEM, "merge: out of memory");
            free(h->argv[vi]);
            h->argv[vi] = word;
        }
        i = vi;
    }
    return VS_OK;
}

static int run_merge(int argc, char **argv)
{
    vs_args a;
    int rc = vs_args_parse("merge", merge_opts, argc, argv, &a);
    if (rc) return rc;
    const char *out = vs_args_get(&a, "out");
    if (!out) return vs_usage_error("merge", "--out OUT is required");
    if (a.n_pos < 1) return vs_usage_error("merge", "expected the partial results: versus merge PART... --out OUT");
    char journal[4096];
    if (snprintf(journal, sizeof journal, "%s.journal", out) >= (int)sizeof journal) return vs_usage_error("merge", "--out: path too long");
    vs_run_header h;
    vs_error err;
    merge_ctx mc = {a.pos[0], out};
    if (vs_run_merge_checked(a.pos, a.n_pos, out, journal, check_command, &mc, &h, &err) != VS_OK) return vs_fail("%s", err.msg);
    const vs_verb *v = vs_find_verb(h.verb);
    char **words = malloc((size_t)(h.argc + 1) * sizeof *words);
    if (!words) {
        rc = vs_fail("out of memory");
    } else {
        /* the command of the parts, checked and resumed: every item is in the journal */
        fprintf(stderr, "versus: merge resumes 'versus %s", h.verb);
        for (int i = 0; i < h.argc; i++) fprintf(stderr, " %s", h.argv[i]);
        fprintf(stderr, "'\n");
        for (int i = 0; i < h.argc; i++) words[i] = h.argv[i];
        words[h.argc] = "--resume";
        rc = v->run(h.argc + 1, words);
    }
    free(words);
    vs_run_header_clear(&h);
    return rc;
}

const vs_verb vs_verb_merge = {
    "merge",
    "join the partial results of a sharded run (--shard K/N) into the files of a single run",
    "usage: versus merge PART... --out OUT\n\n"
    "PART are the files written by the shards of one command (`--shard K/N --out PART`, K = 1..N).\n"
    "Merge checks that they come from the same command (the same words but for --shard, --out, --resume\n"
    "and --threads), seed and version of versus, that every shard 1..N is there once and that each is\n"
    "complete, and refuses any other set with a message naming the parts.  It then writes the whole run's\n"
    "journal to OUT.journal and resumes the command with --out OUT: every item is done, so only what\n"
    "follows the items runs (the verb's setup, summaries, tables and figures), and the files are exactly\n"
    "those of a single run of the command, bit for bit.  A part is untrusted data: merge runs only the\n"
    "commands that write parts (attribute, evaluate, explain snx, bench snx) with options their verb takes,\n"
    "prints the command it resumes, writes a recorded --report, --heatmaps or --curves beside OUT under its\n"
    "own file name, and refuses anything else naming the part and the word (docs/THREAT_MODEL.md).\n"
    "docs/CLUSTER.md has recipes for Slurm arrays and\n"
    "GNU parallel.",
    merge_opts,
    run_merge,
    NULL,
};
