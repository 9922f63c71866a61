/* datasets/sbuf.h - a growing text buffer for the writers of SVG, Markdown and HTML (private).
 * The buffer owns its bytes (free b->p); running out of memory sets b->oom and later writes do
 * nothing, so a writer checks once at the end. */
#ifndef VERSUS_SBUF_H
#define VERSUS_SBUF_H

#include <stddef.h>

typedef struct vs_sbuf {
    char *p;            /* NUL-terminated once anything was written */
    size_t len, cap;
    int oom;
} vs_sbuf;

void vs_sb_printf(vs_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* s[0..n) as it is. */
void vs_sb_put(vs_sbuf *b, const char *s, size_t n);
/* Text with & < > " ' escaped for XML and HTML; control characters (invalid in XML 1.0) become '?'. */
void vs_sb_text(vs_sbuf *b, const char *s);
/* At most max_chars UTF-8 characters of s, escaped, with "…" when cut; returns whether it was cut. */
int vs_sb_text_cut(vs_sbuf *b, const char *s, size_t max_chars);
/* Characters (UTF-8 code points) of s. */
size_t vs_utf8_chars(const char *s);
/* Approximate width in pixels of s set in a sans-serif font of size px (per-character widths of
 * DejaVu Sans / Helvetica classes: narrow, digits, average, wide). */
double vs_text_width(const char *s, double px);

#endif
