/* cmd_merge.c - `versus merge PART... --out OUT`: the partial results of a sharded run (versus/shard.h)
 * checked and joined into the journal of the whole run, which the command then resumes: every item
 * is done, so it writes exactly the files a single run writes. */
#include "cli/cli.h"
#include "versus/versus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vs_cli_opt merge_opts[] = {
    {"out", 1, "where the whole run's files go (the --out a single run would be given)"},
    {NULL, 0, NULL},
};

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
    if (vs_run_merge(a.pos, a.n_pos, out, journal, &h, &err) != VS_OK) return vs_fail("%s", err.msg);
    const vs_verb *v = vs_find_verb(h.verb);
    char **words = malloc((size_t)(h.argc + 1) * sizeof *words);
    if (!v || v == &vs_verb_merge || !words) {
        rc = words ? vs_fail("%s: the parts name the verb '%s', which does not take --shard", a.pos[0], h.verb) : vs_fail("out of memory");
    } else {
        /* the command of the parts, resumed: every item is in the journal */
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
    "those of a single run of the command, bit for bit.  docs/CLUSTER.md has recipes for Slurm arrays and\n"
    "GNU parallel.",
    merge_opts,
    run_merge,
    NULL,
};
