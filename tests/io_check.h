/* tests/io_check.h - helpers for the file-format tests: whole-file reads, scratch paths, and a way
 * to make a write fail half-way (RLIMIT_FSIZE) to check that a good file survives it. */
#ifndef VERSUS_TESTS_IO_CHECK_H
#define VERSUS_TESTS_IO_CHECK_H

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vs_check.h"

/* A scratch file name unique to this process: <tmpdir>/vs_<tag>_<pid>.<ext> */
static inline void io_tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "%s/vs_%s_%d", vs_test_tmpdir(), tag, (int)getpid());
}

/* Remove a model directory written by vs_model_save (model.json, model.safetensors, the directory). */
static inline void io_remove_model_dir(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/model.json", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    unlink(p);
    rmdir(dir);
}

/* The bytes of path (malloc'd, *n set), or NULL when it cannot be read. */
static inline unsigned char *io_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    unsigned char *b = malloc(cap);
    for (size_t r; b && (r = fread(b + len, 1, cap - len, f)) > 0;) {
        len += r;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

static inline void io_spit(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* Does the directory of path hold a leftover temporary "<name>.tmp-*"? */
static inline int io_temp_left(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[512], prefix[512];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    snprintf(prefix, sizeof prefix, "%s.tmp-", slash ? slash + 1 : path);
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) found = 1;
    if (d) closedir(d);
    return found;
}

/* Writes of more than limit bytes fail with EFBIG (SIGXFSZ ignored) until io_fsize_unlimit(). */
static inline struct rlimit io_fsize_limit(rlim_t limit)
{
    struct rlimit old, lim;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = limit;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    return old;
}

static inline void io_fsize_unlimit(struct rlimit old)
{
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
}

/* path must still hold exactly want[0..n), with no temporary file beside it. */
static inline void io_assert_file(const char *path, const unsigned char *want, size_t n)
{
    size_t got_n = 0;
    unsigned char *got = io_slurp(path, &got_n);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(got_n, n);
    ck_assert_int_eq(memcmp(got, want, n), 0);
    free(got);
    ck_assert_msg(!io_temp_left(path), "a temporary file was left beside %s", path);
}

#endif
