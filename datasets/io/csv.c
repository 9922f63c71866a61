/* csv.c - RFC 4180 CSV text to a vs_csv_table of strings: quoting, line endings, delimiter
 * sniffing, missing tokens, unique column names.  Turning strings into features is tabular.c. */
#include "versus/data_io.h"
#include "versus/tabular.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_missing[] = {"?", NULL};

vs_csv_opts vs_csv_opts_defaults(void)
{
    vs_csv_opts o;
    memset(&o, 0, sizeof o);
    o.missing = default_missing;
    o.label_index = -1;
    o.bins = 5;
    o.numeric_min_distinct = 10;
    return o;
}

/* ---- growable arrays ------------------------------------------------------------------------ */

/* Array p (capacity *cap elements of `size` bytes) with room for `need` elements: p itself or its
 * reallocation; NULL on overflow or OOM, p then still valid. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64, bytes;
    while (c < need) {
        if (!vs_size_mul(c, 2, &c)) return NULL;
    }
    if (!vs_size_mul(c, size, &bytes)) return NULL;
    void *q = realloc(p, bytes);
    if (q) *cap = c;
    return q;
}

/* Append a malloc'ed block to the table's storage (taking ownership); 0 on OOM (block freed). */
static int add_block(vs_csv_table *t, char *block)
{
    char **b = realloc(t->blocks, (t->n_blocks + 1) * sizeof *b);
    if (!b) {
        free(block);
        return 0;
    }
    t->blocks = b;
    t->blocks[t->n_blocks++] = block;
    return 1;
}

void vs_csv_table_free(vs_csv_table *t)
{
    if (!t) return;
    if (t->names)
        for (size_t j = 0; j < t->n_cols; j++) free(t->names[j]);
    free(t->names);
    free(t->cells);
    free(t->line);
    free(t->file);
    for (size_t i = 0; i < t->n_blocks; i++) free(t->blocks[i]);
    free(t->blocks);
    free(t);
}

long vs_csv_column(const vs_csv_table *t, const char *name)
{
    if (!t || !name) return -1;
    for (size_t j = 0; j < t->n_cols; j++)
        if (strcmp(t->names[j], name) == 0) return (long)j;
    return -1;
}

const char *vs_csv_cell(const vs_csv_table *t, size_t row, size_t col)
{
    if (!t || row >= t->n_rows || col >= t->n_cols) return NULL;
    return t->cells[row * t->n_cols + col];
}

int vs_csv_number(const char *cell, double *v)
{
    if (!cell || !*cell) return 0;
    /* Fast path for plain integers of up to 15 digits (exact in a double): most cells in practice. */
    const char *d = cell + (*cell == '-' || *cell == '+');
    int64_t acc = 0;
    int nd = 0;
    for (; *d >= '0' && *d <= '9' && nd < 16; d++, nd++) acc = acc * 10 + (*d - '0');
    if (!*d && nd > 0 && nd <= 15) {
        *v = *cell == '-' ? -(double)acc : (double)acc;
        return 1;
    }
    /* Decimal notation only: strtod would also take "inf", "nan" and hex floats. */
    for (const char *s = cell; *s; s++)
        if (!strchr("0123456789+-.eE", *s)) return 0;
    char *end;
    errno = 0;
    double x = strtod(cell, &end);
    if (*end || end == cell || errno == ERANGE || x != x || x - x != 0) return 0;
    *v = x;
    return 1;
}

/* ---- unique column names -------------------------------------------------------------------- */

/* Open-addressing set of strings (borrowed pointers), sized once for at most `n` entries. */
typedef struct name_set {
    const char **slot;
    size_t mask;
} name_set;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int set_init(name_set *s, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2) {
        if (!vs_size_mul(cap, 2, &cap)) return 0;
    }
    s->slot = calloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    return s->slot != NULL;
}

/* Insert name; 1 if it was new, 0 if already present. */
static int set_insert(name_set *s, const char *name)
{
    for (size_t i = hash_str(name) & s->mask;; i = (i + 1) & s->mask) {
        if (!s->slot[i]) {
            s->slot[i] = name;
            return 1;
        }
        if (strcmp(s->slot[i], name) == 0) return 0;
    }
}

static int set_has(const name_set *s, const char *name)
{
    for (size_t i = hash_str(name) & s->mask;; i = (i + 1) & s->mask) {
        if (!s->slot[i]) return 0;
        if (strcmp(s->slot[i], name) == 0) return 1;
    }
}

/* Rename repeated names the pandas way: the k-th repeat of "x" becomes "x.k" (or the next free
 * suffix).  The set holds 2 n entries at most: every original name plus every new one. */
static vs_status make_unique(char **names, size_t n, const char *src, vs_error *err)
{
    name_set set;
    if (!set_init(&set, 2 * n)) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for column names", src);
    size_t *dup = malloc((n ? n : 1) * sizeof *dup), n_dup = 0;
    if (!dup) {
        free(set.slot);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for column names", src);
    }
    for (size_t j = 0; j < n; j++)
        if (!set_insert(&set, names[j])) dup[n_dup++] = j;
    vs_status st = VS_OK;
    for (size_t d = 0; d < n_dup && st == VS_OK; d++) {
        char *base = names[dup[d]], *nn = NULL;
        size_t len = strlen(base) + 24;
        for (size_t k = 1; st == VS_OK; k++) {
            free(nn);
            if (!(nn = malloc(len))) {
                st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for column names", src);
                break;
            }
            snprintf(nn, len, "%s.%zu", base, k);
            if (!set_has(&set, nn)) break;
        }
        if (st != VS_OK) break;
        free(base);
        names[dup[d]] = nn;
        set_insert(&set, nn);
    }
    free(dup);
    free(set.slot);
    return st;
}

/* ---- delimiter sniffing --------------------------------------------------------------------- */

/* Pick the delimiter among , ; TAB | that occurs (outside quotes) the same nonzero number of times
 * in each of the first 20 records, preferring the most frequent; else whitespace (VS_CSV_WHITESPACE)
 * when every one of those records has the same number > 0 of blank runs between fields (UCI *.data,
 * fixed-width numbers); else the candidate most frequent on the first record; else ','. */
static char sniff_delimiter(const char *p, const char *end)
{
    static const char cand[4] = {',', ';', '\t', '|'};
    size_t cnt[4] = {0}, first[4] = {0}, runs = 0, first_runs = 0;
    int consistent[4] = {1, 1, 1, 1}, runs_consistent = 1, in_quote = 0, content = 0, n_rec = 0, in_run = 0;
    for (;; p++) {
        int eor = p == end || (!in_quote && (*p == '\n' || *p == '\r'));
        if (eor) {
            if (content) {
                for (int k = 0; k < 4; k++) {
                    if (n_rec == 0) first[k] = cnt[k];
                    else if (cnt[k] != first[k]) consistent[k] = 0;
                }
                if (n_rec == 0) first_runs = runs;
                else if (runs != first_runs) runs_consistent = 0;
                n_rec++;
            }
            memset(cnt, 0, sizeof cnt);
            content = runs = 0;
            in_run = 0;
            if (p == end || n_rec == 20) break;
            continue;
        }
        int blank = *p == ' ' || *p == '\t';
        if (!in_quote) { /* a blank run counts once a field follows it: leading and trailing ones separate nothing */
            if (!blank && in_run && content) runs++;
            in_run = blank;
        }
        if (*p == '"') in_quote = !in_quote;
        if (!blank) content = 1;
        if (!in_quote)
            for (int k = 0; k < 4; k++) cnt[k] += *p == cand[k];
    }
    int best = -1;
    for (int k = 0; k < 4; k++)
        if (first[k] > 0 && consistent[k] && (best < 0 || first[k] > first[best])) best = k;
    if (best < 0 && first_runs > 0 && runs_consistent) return VS_CSV_WHITESPACE;
    if (best < 0)
        for (int k = 0; k < 4; k++)
            if (first[k] > 0 && (best < 0 || first[k] > first[best])) best = k;
    return best < 0 ? ',' : cand[best];
}

/* ---- the parser ----------------------------------------------------------------------------- */

typedef struct parser {
    const char *p, *end, *src;
    char delim;
    int64_t line;          /* 1-based line of p */
    char *text;            /* unescaped fields, NUL-terminated, len + 1 bytes */
    size_t w, text_cap;
    char **cells;          /* fields of all records so far (header included until moved) */
    size_t n_cells, cap_cells;
    int64_t *rec_line;
    size_t n_rows, cap_rows;
} parser;

/* Space or tab that is not the delimiter: trimmed around unquoted fields.  In whitespace mode every
 * blank separates. */
static int is_blank(char c, char delim) { return (c == ' ' || c == '\t') && c != delim && delim != VS_CSV_WHITESPACE; }
/* c ends a field: the delimiter, or in whitespace mode a space or tab. */
static int is_delim(char c, char delim) { return c == delim || (delim == VS_CSV_WHITESPACE && c == '\t'); }

/* Step over one line ending (LF, CRLF or a lone CR) at p. */
static const char *skip_eol(const char *p, const char *end)
{
    if (p < end && *p == '\r') {
        p++;
        if (p < end && *p == '\n') p++;
    } else if (p < end && *p == '\n') {
        p++;
    }
    return p;
}

static const char *show_char(char c, char *buf, size_t n)
{
    if (c >= 0x20 && c < 0x7f) snprintf(buf, n, "'%c'", c);
    else snprintf(buf, n, "byte 0x%02x", (unsigned char)c);
    return buf;
}

/* Parse one field starting at ps->p into text and append it to cells. */
static vs_status parse_field(parser *ps, vs_error *err)
{
    const char *p = ps->p, *end = ps->end;
    char d = ps->delim, *out = ps->text;
    size_t w = ps->w, start = w;
    while (p < end && is_blank(*p, d)) p++;
    if (p < end && *p == '"') {
        int64_t open_line = ps->line;
        for (p++;; p++) {
            if (p == end)
                return vs_error_set(err, VS_ERR_FORMAT, "%s:%lld: unterminated quoted field (input ends inside it)",
                                    ps->src, (long long)open_line);
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') p++;
                else break;
            } else if (*p == '\0') {
                return vs_error_set(err, VS_ERR_FORMAT, "%s:%lld: NUL byte inside a quoted field", ps->src,
                                    (long long)ps->line);
            } else if (*p == '\n' || (*p == '\r' && !(p + 1 < end && p[1] == '\n'))) {
                ps->line++;
            }
            out[w++] = *p;
        }
        for (p++; p < end && is_blank(*p, d); p++) {}
        if (p < end && !is_delim(*p, d) && *p != '\n' && *p != '\r') {
            char buf[16];
            return vs_error_set(err, VS_ERR_FORMAT,
                                "%s:%lld: unexpected %s after a closing quote (expected the delimiter or end of line)", ps->src,
                                (long long)ps->line, show_char(*p, buf, sizeof buf));
        }
    } else {
        for (; p < end && !is_delim(*p, d) && *p != '\n' && *p != '\r'; p++) {
            if (*p == '\0')
                return vs_error_set(err, VS_ERR_FORMAT, "%s:%lld: NUL byte in a field", ps->src, (long long)ps->line);
            out[w++] = *p;
        }
        while (w > start && is_blank(out[w - 1], d)) w--;
    }
    /* Every byte written consumed an input byte; each NUL but the very last consumes a delimiter or
     * line end, so len + 1 bytes always suffice. */
    if (w >= ps->text_cap) return vs_error_set(err, VS_ERR_STATE, "%s: internal error: field buffer overrun", ps->src);
    out[w++] = '\0';
    char **cells = grow(ps->cells, &ps->cap_cells, ps->n_cells + 1, sizeof *cells);
    if (!cells) return vs_error_set(err, VS_ERR_NOMEM, "%s:%lld: out of memory", ps->src, (long long)ps->line);
    ps->cells = cells;
    ps->cells[ps->n_cells++] = out + start;
    ps->w = w;
    ps->p = p;
    return VS_OK;
}

/* Parse one record; *n_fields = its number of fields. */
static vs_status parse_record(parser *ps, size_t *n_fields, vs_error *err)
{
    size_t nf = 0;
    for (;;) {
        vs_status st = parse_field(ps, err);
        if (st != VS_OK) return st;
        nf++;
        if (ps->p < ps->end && is_delim(*ps->p, ps->delim)) {
            ps->p++;
            if (ps->delim != VS_CSV_WHITESPACE) continue;
            /* a run of blanks is one separator; blanks before the line end separate nothing */
            while (ps->p < ps->end && is_delim(*ps->p, ps->delim)) ps->p++;
            if (ps->p < ps->end && *ps->p != '\n' && *ps->p != '\r') continue;
        }
        break;
    }
    if (ps->p < ps->end) {
        ps->p = skip_eol(ps->p, ps->end);
        ps->line++;
    }
    *n_fields = nf;
    return VS_OK;
}

static int is_missing(const char *s, const char *const *tokens)
{
    if (!*s) return 1;
    for (; tokens && *tokens; tokens++)
        if (strcmp(s, *tokens) == 0) return 1;
    return 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

/* Column names: given ones, the header's, or c0, c1, ...; empty names become c<j>; then unique. */
static vs_status set_names(vs_csv_table *t, char **header, const vs_csv_opts *o, const char *src, vs_error *err)
{
    if (o->column_names) {
        size_t k = 0;
        while (o->column_names[k]) k++;
        if (k != t->n_cols)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: %zu column names given but the file has %zu columns", src, k,
                                t->n_cols);
    }
    if (!(t->names = calloc(t->n_cols, sizeof *t->names)))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", src);
    for (size_t j = 0; j < t->n_cols; j++) {
        const char *given = o->column_names ? o->column_names[j] : header ? header[j] : "";
        char buf[32];
        if (!*given) {
            snprintf(buf, sizeof buf, "c%zu", j);
            given = buf;
        }
        if (!(t->names[j] = dup_str(given))) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", src);
    }
    return make_unique(t->names, t->n_cols, src, err);
}

/* The sniffed header is data when a column holds a number in it and numbers in the (up to 20)
 * records below it: german.data and other UCI files start with a row, not with names. */
static int header_is_data(char *const *header, const parser *ps, size_t n_cols)
{
    size_t rows = ps->n_rows < 20 ? ps->n_rows : 20;
    double v;
    for (size_t j = 0; j < n_cols; j++) {
        if (!vs_csv_number(header[j], &v)) continue;
        size_t numbers = 0, i = 0;
        for (; i < rows; i++) {
            const char *c = ps->cells[i * n_cols + j];
            if (c && !vs_csv_number(c, &v)) break;
            numbers += c != NULL;
        }
        if (i == rows && numbers > 0) return 1;
    }
    return 0;
}

/* Put the first record (header, from line `line`) back in front of the rows. */
static vs_status header_to_row(parser *ps, char **header, size_t n_cols, int64_t line, const char *const *missing,
                               vs_error *err)
{
    char **cells = grow(ps->cells, &ps->cap_cells, ps->n_cells + n_cols, sizeof *cells);
    if (cells) ps->cells = cells;
    int64_t *rl = cells ? grow(ps->rec_line, &ps->cap_rows, ps->n_rows + 1, sizeof *rl) : NULL;
    if (!rl) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", ps->src);
    ps->rec_line = rl;
    memmove(ps->cells + n_cols, ps->cells, ps->n_cells * sizeof *ps->cells);
    for (size_t j = 0; j < n_cols; j++) ps->cells[j] = is_missing(header[j], missing) ? NULL : header[j];
    memmove(rl + 1, rl, ps->n_rows * sizeof *rl);
    rl[0] = line;
    ps->n_cells += n_cols;
    ps->n_rows++;
    return VS_OK;
}

static vs_status parse_all(parser *ps, const vs_csv_opts *o, vs_csv_table *t, vs_error *err)
{
    const char *const *missing = o->missing ? o->missing : default_missing;
    int want_header = o->no_header <= 0;
    int64_t header_line = 0;
    size_t n_cols = 0;
    char **header = NULL;
    vs_status st = VS_OK;

    while (ps->p < ps->end && (!o->max_rows || ps->n_rows < o->max_rows)) {
        const char *q = ps->p;
        while (q < ps->end && (is_blank(*q, ps->delim) || (ps->delim == VS_CSV_WHITESPACE && is_delim(*q, ps->delim)))) q++;
        if (q == ps->end) break;
        if (*q == '\n' || *q == '\r') { /* blank line */
            ps->p = skip_eol(q, ps->end);
            ps->line++;
            continue;
        }
        if (ps->delim == VS_CSV_WHITESPACE) /* leading blanks separate nothing */
            while (ps->p < ps->end && is_delim(*ps->p, ps->delim)) ps->p++;
        int64_t line = ps->line;
        size_t first = ps->n_cells, nf;
        if ((st = parse_record(ps, &nf, err)) != VS_OK) goto done;
        if (!n_cols) {
            n_cols = nf;
            header_line = line;
        } else if (nf != n_cols) {
            st = vs_error_set(err, VS_ERR_FORMAT, "%s:%lld: record has %zu fields, expected %zu as on line %lld",
                              ps->src, (long long)line, nf, n_cols, (long long)header_line);
            goto done;
        }
        if (want_header) {
            want_header = 0;
            if (!(header = malloc(nf * sizeof *header))) {
                st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", ps->src);
                goto done;
            }
            memcpy(header, ps->cells + first, nf * sizeof *header);
            ps->n_cells = first;
            continue;
        }
        for (size_t j = first; j < ps->n_cells; j++)
            if (is_missing(ps->cells[j], missing)) ps->cells[j] = NULL;
        int64_t *rl = grow(ps->rec_line, &ps->cap_rows, ps->n_rows + 1, sizeof *rl);
        if (!rl) {
            st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", ps->src);
            goto done;
        }
        ps->rec_line = rl;
        ps->rec_line[ps->n_rows++] = line;
    }
    if (!n_cols) {
        st = vs_error_set(err, VS_ERR_FORMAT, "%s: no records (the input is empty)", ps->src);
        goto done;
    }
    if (o->no_header == 0 && header && ps->n_rows > 0 && header_is_data(header, ps, n_cols)) {
        if ((st = header_to_row(ps, header, n_cols, header_line, missing, err)) != VS_OK) goto done;
        free(header);
        header = NULL;
    }
    t->n_cols = n_cols;
    t->n_rows = ps->n_rows;
    st = set_names(t, header, o, ps->src, err);
done:
    free(header);
    return st;
}

vs_status vs_csv_parse_mem(const char *data, size_t len, const char *source, const vs_csv_opts *o,
                           vs_csv_table **out, vs_error *err)
{
    vs_csv_opts def = vs_csv_opts_defaults();
    if (!o) o = &def;
    if (!source) source = "<memory>";
    if (!out || (!data && len)) return vs_error_set(err, VS_ERR_ARG, "vs_csv_parse_mem: NULL argument");
    *out = NULL;
    if (o->delimiter && !strchr(",;\t| ", o->delimiter))
        return vs_error_set(err, VS_ERR_ARG, "%s: delimiter %d is not one of , ; TAB | or whitespace", source, o->delimiter);

    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.p = data;
    ps.end = data + len;
    ps.src = source;
    ps.line = 1;
    /* A UTF-8 byte order mark is not part of the first field. */
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) ps.p += 3;
    for (size_t k = 0; k < o->skip_lines && ps.p < ps.end; k++) {
        while (ps.p < ps.end && *ps.p != '\n' && *ps.p != '\r') ps.p++;
        ps.p = skip_eol(ps.p, ps.end);
        ps.line++;
    }
    ps.delim = o->delimiter ? o->delimiter : sniff_delimiter(ps.p, ps.end);

    vs_csv_table *t = calloc(1, sizeof *t);
    char *src_copy = dup_str(source);
    if (!t || !src_copy || !(len + 1 > len) || !(ps.text = malloc(len + 1))) {
        free(t);
        free(src_copy);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu bytes", source, len);
    }
    ps.text_cap = len + 1;
    t->delimiter = ps.delim;
    vs_status st = VS_OK;
    if (!add_block(t, src_copy)) {
        free(ps.text);
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", source);
    } else if (!add_block(t, ps.text)) {
        st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", source);
    }
    t->source = t->blocks ? t->blocks[0] : NULL;
    if (st == VS_OK) st = parse_all(&ps, o, t, err);
    if (st == VS_OK && t->n_rows) {
        t->file = malloc(t->n_rows * sizeof *t->file);
        if (!t->file) st = vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", source);
        else
            for (size_t i = 0; i < t->n_rows; i++) t->file[i] = t->source;
    }
    t->cells = ps.cells;
    t->line = ps.rec_line;
    if (st != VS_OK) {
        vs_csv_table_free(t);
        return st;
    }
    *out = t;
    return VS_OK;
}

/* Read a whole file into memory (any size, pipes too). */
vs_status vs_csv_parse_file(const char *path, const vs_csv_opts *o, vs_csv_table **out, vs_error *err)
{
    if (!path || !out) return vs_error_set(err, VS_ERR_ARG, "vs_csv_parse_file: NULL argument");
    *out = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    vs_status st = vs_read_file_maybe_gz(path, &buf, &len, err); /* .csv.gz read as it is */
    if (st != VS_OK) return st;
    st = vs_csv_parse_mem((const char *)buf, len, path, o, out, err);
    free(buf);
    return st;
}

vs_status vs_csv_table_append(vs_csv_table *a, vs_csv_table **pb, vs_error *err)
{
    if (!a || !pb || !*pb) return vs_error_set(err, VS_ERR_ARG, "vs_csv_table_append: NULL argument");
    vs_csv_table *b = *pb;
    if (a->n_cols != b->n_cols)
        return vs_error_set(err, VS_ERR_FORMAT, "%s has %zu columns but %s has %zu", a->source, a->n_cols, b->source,
                            b->n_cols);
    for (size_t j = 0; j < a->n_cols; j++)
        if (strcmp(a->names[j], b->names[j]) != 0)
            return vs_error_set(err, VS_ERR_FORMAT, "column %zu is '%s' in %s but '%s' in %s", j, a->names[j],
                                a->source, b->names[j], b->source);
    size_t rows, cells;
    if (!vs_size_add(a->n_rows, b->n_rows, &rows) || !vs_size_mul(rows, a->n_cols, &cells))
        return vs_error_set(err, VS_ERR_NOMEM, "appending %s: too many rows", b->source);
    if (b->n_rows) {
        char **c = realloc(a->cells, (cells ? cells : 1) * sizeof *c);
        if (c) a->cells = c;
        int64_t *l = c ? realloc(a->line, rows * sizeof *l) : NULL;
        if (l) a->line = l;
        const char **f = l ? realloc((void *)a->file, rows * sizeof *f) : NULL;
        if (f) a->file = f;
        char **bl = f ? realloc(a->blocks, (a->n_blocks + b->n_blocks) * sizeof *bl) : NULL;
        if (!bl) return vs_error_set(err, VS_ERR_NOMEM, "appending %s: out of memory", b->source);
        a->blocks = bl;
        memcpy(a->cells + a->n_rows * a->n_cols, b->cells, b->n_rows * b->n_cols * sizeof *c);
        memcpy(a->line + a->n_rows, b->line, b->n_rows * sizeof *l);
        memcpy((void *)(a->file + a->n_rows), b->file, b->n_rows * sizeof *f);
        memcpy(a->blocks + a->n_blocks, b->blocks, b->n_blocks * sizeof *bl);
        a->n_blocks += b->n_blocks;
        a->n_rows = rows;
        b->n_blocks = 0; /* the blocks now belong to a */
    }
    vs_csv_table_free(b);
    *pb = NULL;
    return VS_OK;
}
