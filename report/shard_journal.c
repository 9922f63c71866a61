/* shard_journal.c - the journal file: framing and checking records, the header as JSON, reading a
 * journal back, and comparing the commands two journals belong to (format in shard_internal.h). */
#include "report/shard_internal.h"
#include "datasets/io/io_util.h"
#include "versus/json.h"

#include <stdlib.h>
#include <string.h>

#define JOURNAL_MAX_BYTES ((size_t)1 << 40)

static uint64_t fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t checksum(const unsigned char *head16, const unsigned char *payload, size_t len)
{
    return fnv1a(fnv1a(0xcbf29ce484222325ull, head16, 16), payload, len);
}

unsigned char *journal_record(int64_t item, const unsigned char *payload, size_t len, size_t *out_len)
{
    if (len > JOURNAL_MAX_BYTES) return NULL;
    unsigned char *r = malloc(len + JOURNAL_FRAME);
    if (!r) return NULL;
    memcpy(r, JOURNAL_MAGIC, 4);
    vs_put_le64(r + 4, (uint64_t)item);
    vs_put_le64(r + 12, (uint64_t)len);
    if (len) memcpy(r + 20, payload, len);
    vs_put_le64(r + 20 + len, checksum(r + 4, payload, len));
    *out_len = len + JOURNAL_FRAME;
    return r;
}

void vs_run_header_clear(vs_run_header *h)
{
    if (!h) return;
    free(h->verb);
    for (int i = 0; i < h->argc; i++) free(h->argv[i]);
    free(h->argv);
    free(h->version);
    memset(h, 0, sizeof *h);
}

/* Words that change nothing in the results: the shard, resuming, the thread count. */
static int ignored_words(const char *w)
{
    if (!strcmp(w, "--resume")) return 1;
    if (!strcmp(w, "--shard") || !strcmp(w, "--threads")) return 2;
    if (!strncmp(w, "--shard=", 8) || !strncmp(w, "--threads=", 10)) return 1;
    return 0;
}

vs_status journal_set_argv(vs_run_header *h, int argc, char *const *argv, vs_error *err)
{
    h->argv = calloc((size_t)(argc > 0 ? argc : 1), sizeof *h->argv);
    if (!h->argv) return vs_error_set(err, VS_ERR_NOMEM, "journal: out of memory");
    h->argc = 0;
    for (int i = 0; i < argc;) {
        int skip = ignored_words(argv[i]);
        if (skip) {
            i += skip;
            continue;
        }
        if (!(h->argv[h->argc++] = strdup(argv[i++]))) return vs_error_set(err, VS_ERR_NOMEM, "journal: out of memory");
    }
    return VS_OK;
}

char *journal_header_text(const vs_run_header *h)
{
    vs_json *o = vs_json_new_object(), *words = vs_json_new_array(), *shard = vs_json_new_array();
    bool ok = o && words && shard;
    for (int i = 0; ok && i < h->argc; i++) ok = vs_json_push(words, vs_json_new_string(h->argv[i])) == VS_OK;
    ok = ok && vs_json_push(shard, vs_json_new_int(h->shard.k)) == VS_OK && vs_json_push(shard, vs_json_new_int(h->shard.n)) == VS_OK;
    ok = ok && vs_json_set(o, "format", vs_json_new_string(JOURNAL_FORMAT)) == VS_OK;
    ok = ok && vs_json_set(o, "verb", vs_json_new_string(h->verb)) == VS_OK;
    ok = ok && vs_json_set(o, "argv", words) == VS_OK;
    words = NULL;
    /* the seed as a string: JSON integers stop at 2^63 */
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)h->seed);
    ok = ok && vs_json_set(o, "seed", vs_json_new_string(seed)) == VS_OK;
    ok = ok && vs_json_set(o, "version", vs_json_new_string(h->version)) == VS_OK;
    ok = ok && vs_json_set(o, "items", vs_json_new_int(h->items)) == VS_OK;
    ok = ok && vs_json_set(o, "shard", shard) == VS_OK;
    shard = NULL;
    char *text = NULL;
    size_t len;
    vs_error err;
    if (ok && vs_json_write(o, 0, &text, &len, &err) != VS_OK) text = NULL;
    vs_json_free(o);
    vs_json_free(words);
    vs_json_free(shard);
    return text;
}

/* The header's fields from its JSON text; errors name path. */
static vs_status parse_header(const char *path, const unsigned char *text, size_t len, vs_run_header *h, vs_error *err)
{
    vs_json *o = NULL;
    vs_status st = vs_json_parse((const char *)text, len, path, NULL, &o, err);
    if (st != VS_OK) return st;
    const char *format = NULL, *verb = NULL, *version = NULL, *seed = NULL;
    const vs_json *argv = NULL, *shard = NULL;
    int64_t k = 0, n = 0;
    if (vs_json_get_str(o, "format", &format, err) != VS_OK || strcmp(format, JOURNAL_FORMAT) != 0)
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: not a %s header", path, JOURNAL_FORMAT);
    if (st == VS_OK) st = vs_json_get_str(o, "verb", &verb, err);
    if (st == VS_OK) st = vs_json_get_str(o, "version", &version, err);
    if (st == VS_OK) st = vs_json_get_str(o, "seed", &seed, err);
    if (st == VS_OK) st = vs_json_get_int(o, "items", 0, INT64_MAX / 2, &h->items, err);
    if (st == VS_OK && !(argv = vs_json_get_typed(o, "argv", VS_JSON_ARRAY, err))) st = VS_ERR_FORMAT;
    if (st == VS_OK && !(shard = vs_json_get_typed(o, "shard", VS_JSON_ARRAY, err))) st = VS_ERR_FORMAT;
    if (st == VS_OK && (vs_json_int(vs_json_at(shard, 0), 1, 1000000, &k, err) != VS_OK ||
                        vs_json_int(vs_json_at(shard, 1), k, 1000000, &n, err) != VS_OK))
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: \"shard\" must be [K, N] with 1 <= K <= N", path);
    char *end = NULL;
    if (st == VS_OK) {
        h->seed = strtoull(seed, &end, 10);
        if (!*seed || *end) st = vs_error_set(err, VS_ERR_FORMAT, "%s: \"seed\" must be a decimal integer", path);
    }
    size_t words = 0;
    while (st == VS_OK && vs_json_at(argv, words)) words++;
    if (st == VS_OK && (!(h->verb = strdup(verb)) || !(h->version = strdup(version)) ||
                        !(h->argv = calloc(words ? words : 1, sizeof *h->argv))))
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    for (size_t i = 0; st == VS_OK && i < words; i++) {
        const char *w;
        if (vs_json_str(vs_json_at(argv, i), &w, err) != VS_OK) st = vs_error_set(err, VS_ERR_FORMAT, "%s: \"argv\" holds strings", path);
        else if (!(h->argv[h->argc++] = strdup(w))) st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    }
    h->shard = (vs_shard){k, n};
    vs_json_free(o);
    return st;
}

/* One record at p (avail bytes): its item, payload and size; false when cut short or corrupt. */
static bool next_record(const unsigned char *p, size_t avail, int64_t *item, const unsigned char **payload, size_t *len, size_t *size)
{
    if (avail < JOURNAL_FRAME || memcmp(p, JOURNAL_MAGIC, 4) != 0) return false;
    uint64_t n = vs_le64(p + 12);
    if (n > avail - JOURNAL_FRAME) return false;
    if (vs_le64(p + 20 + n) != checksum(p + 4, p + 20, (size_t)n)) return false;
    *item = (int64_t)vs_le64(p + 4);
    *payload = p + 20;
    *len = (size_t)n;
    *size = (size_t)n + JOURNAL_FRAME;
    return true;
}

void journal_clear(journal *j)
{
    vs_run_header_clear(&j->h);
    free(j->data);
    free(j->len);
    free(j->buf);
    memset(j, 0, sizeof *j);
}

vs_status journal_read(const char *path, journal *j, vs_error *err)
{
    memset(j, 0, sizeof *j);
    size_t size;
    vs_status st = vs_io_read_file(path, JOURNAL_MAX_BYTES, &j->buf, &size, err);
    if (st != VS_OK) return st;
    int64_t item;
    const unsigned char *payload;
    size_t len, rec;
    if (!next_record(j->buf, size, &item, &payload, &len, &rec) || item != -1) {
        journal_clear(j);
        return vs_error_set(err, VS_ERR_FORMAT, "%s: not a versus journal or partial result (no header record)", path);
    }
    if ((st = parse_header(path, payload, len, &j->h, err)) != VS_OK) {
        journal_clear(j);
        return st;
    }
    vs_shard_range(j->h.shard, j->h.items, &j->begin, &j->end);
    size_t n = (size_t)(j->end - j->begin);
    /* the header's item count is data: its index must fit the memory budget before it is allocated */
    char what[4200];
    snprintf(what, sizeof what, "%s: the index of its %lld items", path, (long long)n);
    if ((st = vs_mem_check(n, sizeof *j->data + sizeof *j->len, what, err)) != VS_OK) {
        journal_clear(j);
        return st;
    }
    j->data = calloc(n ? n : 1, sizeof *j->data);
    j->len = calloc(n ? n : 1, sizeof *j->len);
    if (!j->data || !j->len) {
        journal_clear(j);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t pos = rec;
    while (next_record(j->buf + pos, size - pos, &item, &payload, &len, &rec)) {
        if (item < j->begin || item >= j->end) {
            st = vs_error_set(err, VS_ERR_FORMAT, "%s: item %lld lies outside the shard's items %lld..%lld", path, (long long)item,
                              (long long)j->begin, (long long)j->end - 1);
            journal_clear(j);
            return st;
        }
        if (!j->data[item - j->begin]) { /* a repeated record keeps the first */
            j->data[item - j->begin] = payload;
            j->len[item - j->begin] = len;
            j->done++;
        }
        pos += rec;
    }
    j->valid = pos;
    j->torn = pos < size;
    return VS_OK;
}

/* Index of the word that is --out's value in h (or -1), and the prefix length to compare for it. */
static bool is_out_value(const vs_run_header *h, int i, size_t *prefix)
{
    *prefix = 0;
    if (i > 0 && !strcmp(h->argv[i - 1], "--out")) return true;
    if (!strncmp(h->argv[i], "--out=", 6)) {
        *prefix = 6;
        return true;
    }
    return false;
}

bool journal_same_command(const vs_run_header *a, const vs_run_header *b, char *why, size_t n)
{
    if (strcmp(a->verb, b->verb) != 0) {
        snprintf(why, n, "verb '%s' against '%s'", a->verb, b->verb);
        return false;
    }
    for (int i = 0; i < a->argc || i < b->argc; i++) {
        if (i >= a->argc || i >= b->argc) {
            snprintf(why, n, "the command '%s' has %s words", i < a->argc ? a->argv[i] : b->argv[i], i < a->argc ? "more" : "fewer");
            return false;
        }
        size_t pa, pb;
        bool oa = is_out_value(a, i, &pa), ob = is_out_value(b, i, &pb);
        if (oa && ob && pa == pb && strncmp(a->argv[i], b->argv[i], pa) == 0) continue;
        if (strcmp(a->argv[i], b->argv[i]) != 0) {
            snprintf(why, n, "word %d of the command is '%s' against '%s'", i + 1, a->argv[i], b->argv[i]);
            return false;
        }
    }
    return true;
}
