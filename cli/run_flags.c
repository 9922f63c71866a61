/* run_flags.c - the --shard K/N and --resume flags of the verbs that loop over items, and the
 * journal they imply (versus/shard.h): with --shard, --out names the part (the journal itself);
 * without, the journal is OUT.journal beside the outputs and goes away once they are written. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

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
    return 0;
}
