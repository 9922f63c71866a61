/* bench_common.c - what the paper benchmarks share: the command line stamped into a report and the
 * default report directory. */
#include "bench/bench.h"
#include "versus/report.h"

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

int vs_bench_out(const vs_args *a, const char *bench, const char *spec, char *out, size_t n)
{
    const char *dir = vs_args_get(a, "out");
    if (dir && strlen(dir) >= n - 1) return vs_usage_error("bench", "--out: path longer than %zu characters", n - 2);
    if (dir) snprintf(out, n, "%s", dir);
    else vs_bench_default_out(bench, spec, out, n);
    return 0;
}

int vs_bench_publish(const vs_report *r, const char *out, const char *what)
{
    vs_error err;
    if (vs_report_write_dir(r, out, &err) != VS_OK) return vs_fail("%s", err.msg);
    if (vs_report_markdown(r, stdout, &err) != VS_OK) return vs_fail("%s", err.msg);
    printf("\nwrote %s/%s\n", out, what);
    return 0;
}
