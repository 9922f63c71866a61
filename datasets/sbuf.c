/* sbuf.c - the growing text buffer of the SVG, Markdown and HTML writers, XML escaping, and text
 * width estimates for laying out labels. */
#include "datasets/sbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(vs_sbuf *b, size_t extra)
{
    if (b->oom) return 0;
    if (b->cap - b->len > extra) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= extra) {
        if (cap > SIZE_MAX / 2) return b->oom = 1, 0;
        cap *= 2;
    }
    char *np = realloc(b->p, cap);
    if (!np) return b->oom = 1, 0;
    b->p = np;
    b->cap = cap;
    return 1;
}

void vs_sb_printf(vs_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n + 1)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void vs_sb_put(vs_sbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n + 1)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void put_escaped(vs_sbuf *b, unsigned char c)
{
    switch (c) {
    case '&': vs_sb_put(b, "&amp;", 5); break;
    case '<': vs_sb_put(b, "&lt;", 4); break;
    case '>': vs_sb_put(b, "&gt;", 4); break;
    case '"': vs_sb_put(b, "&quot;", 6); break;
    case '\'': vs_sb_put(b, "&apos;", 6); break;
    default: {
        char ch = c < 32 && c != '\t' && c != '\n' ? '?' : (char)c;
        vs_sb_put(b, &ch, 1);
    }
    }
}

void vs_sb_text(vs_sbuf *b, const char *s)
{
    for (; s && *s; s++) put_escaped(b, (unsigned char)*s);
}

int vs_sb_text_cut(vs_sbuf *b, const char *s, size_t max_chars)
{
    if (!s) return 0;
    size_t total = vs_utf8_chars(s);
    size_t keep = total <= max_chars ? total : max_chars ? max_chars - 1 : 0, k = 0;
    for (; *s; s++) {
        if (((unsigned char)*s & 0xC0) != 0x80 && k++ == keep) break;
        put_escaped(b, (unsigned char)*s);
    }
    if (total > max_chars) vs_sb_put(b, "\xe2\x80\xa6", 3);
    return total > max_chars;
}

size_t vs_utf8_chars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

double vs_text_width(const char *s, double px)
{
    /* advance widths in em, rounded up from DejaVu Sans so that estimates err on the wide side */
    double w = 0;
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) == 0x80) continue;
        if (c >= 0x80) w += 0.75;
        else if (strchr("iljtf!.,:;'|()[] ", c)) w += 0.36;
        else if (strchr("mwMW@%", c)) w += 0.92;
        else if (c >= 'A' && c <= 'Z') w += 0.72;
        else w += 0.62;
    }
    return w * px;
}
