/* run_flags.c - the --shard K/N and --resume flags of the verbs that loop over items, and the
 * journal they imply (versus/shard.h): with --shard, --out names the part (the journal itself);
 * without, the journal is OUT.journal beside the outputs and goes away once they are written.
 * SIGINT and SIGTERM end such a run with a line saying where the finished items are and that
 * --resume continues (every journal record is one write: a kill anywhere leaves whole items). */
#include "cli/cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char interrupt_msg[4608];
static size_t interrupt_len;

/* Async-signal-safe: one write of the prepared line, then the default action (status 128 + sig). */
static void on_interrupt(int sig)
{
    ssize_t w = write(STDERR_FILENO, interrupt_msg, interrupt_len);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void hint_on_interrupt(const vs_args *a, const char *journal, const char *unit)
{
    int n = snprintf(interrupt_msg, sizeof interrupt_msg,
                     "\nversus: interrupted; the finished %s are kept in %s: the same command with --resume continues "
                     "(versus help %s)\n", unit ? unit : "items", journal, a->verb);
    interrupt_len = n < 0 ? 0 : (size_t)n < sizeof interrupt_msg ? (size_t)n : sizeof interrupt_msg - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int vs_cli_run_opts(const vs_args *a, const char *out, uint64_t seed, const char *unit, int argc, char **argv, vs_cli_run *r)
{
    memset(r, 0, sizeof *r);
    const char *shard = vs_args_get(a, "shard");
    vs_error err;
    if (shard && vs_shard_parse(shard, &r->o.shard, &err) != VS_OK) return vs_usage_error(a->verb, "%s", err.msg);
    if ((shard || vs_args_has(a, "resume")) && !out) return vs_usage_error(a->verb, "--shard and --resume need --out");
    if (out && snprintf(r->path, sizeof r->path, shard ? "%s" : "%s.journal", out) >= (int)sizeof r->path)
        return vs_usage_error(a->verb, "--out: path too long");
    r->o.path = out ? r->path : NULL;
    r->o.verb = a->verb;
    r->o.argc = argc;
    r->o.argv = argv;
    r->o.seed = seed;
    r->o.sharded = shard != NULL;
    r->o.resume = vs_args_has(a, "resume");
    r->o.unit = unit;
    r->o.progress = stderr;
    if (r->o.path) hint_on_interrupt(a, r->o.path, unit);
    return 0;
}
