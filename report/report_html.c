/* report_html.c - a vs_report as one self-contained HTML page: inline stylesheet, tables with
 * direction arrows, rank and significance marks and footnoted dashes, figures inlined as SVG with
 * numbered captions, runs of figures of one kind side by side (small multiples), and every PNG a
 * paragraph names (`fig2_pairs.png`) that lies in the report's directory embedded after it.  No script,
 * no external resource. */
#include "datasets/sbuf.h"
#include "report/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char css[] =
    ":root{--ink:#1d2330;--muted:#5b6475;--rule:#d9dde5;--band:#f5f7fa;--accent:#0072B2;--warn:#D55E00}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#fff;color:var(--ink);font:16px/1.55 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "main{max-width:1240px;margin:0 auto;padding:32px 28px 64px}\n"
    "h1{font-size:1.9rem;line-height:1.2;margin:0 0 .4em;letter-spacing:-.01em}\n"
    "h2{font-size:1.35rem;margin:2.2em 0 .5em;padding-bottom:.25em;border-bottom:2px solid var(--rule)}\n"
    "h3{font-size:1.1rem;margin:1.6em 0 .4em}\n"
    "p,ul{max-width:88ch}\n"
    "ul{padding-left:1.2em}li{margin:.2em 0}\n"
    "code{font:.88em/1.4 ui-monospace,'DejaVu Sans Mono',Menlo,monospace;background:var(--band);padding:.1em .3em;border-radius:4px;"
    "word-break:break-word}\n"
    ".table-wrap{overflow-x:auto;margin:1em 0 .4em}\n"
    "table{border-collapse:collapse;font-size:.86rem;min-width:50%}\n"
    "caption{caption-side:top;text-align:left;color:var(--muted);font-size:.88rem;padding:0 0 .5em;max-width:90ch}\n"
    "th,td{padding:.36em .6em;border-bottom:1px solid var(--rule);white-space:nowrap}\n"
    "td.text{white-space:normal;min-width:12ch;max-width:60ch}\n"
    "thead th{background:var(--band);border-bottom:2px solid #b9c0cc;text-align:right;font-weight:600;white-space:normal;vertical-align:bottom}\n"
    "thead th:first-child,td.text{text-align:left}\n"
    "tbody tr:nth-child(even){background:#fbfcfd}tbody tr:hover{background:#eef4fa}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td .sd{color:var(--muted);font-size:.85em}\n"
    "td.best{font-weight:700}td.second span.v{text-decoration:underline dotted;text-underline-offset:3px}\n"
    "td.na{text-align:center;color:var(--muted)}\n"
    ".dir{color:var(--accent);font-weight:700;margin-left:.2em}\n"
    ".sig{margin-left:.25em;font-weight:700}.sig.better{color:var(--accent)}.sig.worse{color:var(--warn)}\n"
    "sup{font-size:.7em;line-height:0}\n"
    ".notes{color:var(--muted);font-size:.84rem;margin:.2em 0 1.2em}\n"
    ".notes span{display:block}\n"
    "figure{margin:1.6em 0;padding:12px;border:1px solid var(--rule);border-radius:8px;background:#fff}\n"
    ".multiples{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:14px;margin:1.6em 0}\n"
    ".multiples figure{margin:0}\n"
    "figure img{max-width:100%;height:auto;display:block;margin:0 auto;image-rendering:pixelated}\n"
    "figure .svg{overflow-x:auto}figure svg{max-width:100%;height:auto;display:block;margin:0 auto}\n"
    "figcaption{color:var(--muted);font-size:.9rem;margin-top:.6em;max-width:90ch}\n"
    "figcaption b{color:var(--ink)}\n"
    "footer{margin-top:3em;color:var(--muted);font-size:.8rem}\n";

/* Escaped text with `code` and **bold** turned into <code> and <strong>. */
static void inline_text(vs_sbuf *b, const char *s)
{
    bool code = false, bold = false;
    for (const char *p = s; p && *p; p++) {
        if (*p == '`') {
            vs_sb_printf(b, code ? "</code>" : "<code>");
            code = !code;
        } else if (!code && p[0] == '*' && p[1] == '*') {
            vs_sb_printf(b, bold ? "</strong>" : "<strong>");
            bold = !bold;
            p++;
        } else {
            char one[2] = {*p, 0};
            vs_sb_text(b, one);
        }
    }
    if (code) vs_sb_printf(b, "</code>");
    if (bold) vs_sb_printf(b, "</strong>");
}

static void html_cell(vs_sbuf *b, const vs_report_table *t, const vs_report_cell *c)
{
    char buf[96], mark[32];
    switch (c->kind) {
    case VS_CELL_MISSING:
        vs_report_note_mark(c->note, mark, sizeof mark);
        vs_sb_printf(b, "<td class=\"na\" title=\"");
        vs_sb_text(b, c->note >= 0 && c->note < t->n_notes ? t->notes[c->note] : "");
        vs_sb_printf(b, "\">–<sup>%s</sup></td>", mark);
        return;
    case VS_CELL_TEXT:
        vs_sb_printf(b, "<td class=\"text\">");
        inline_text(b, c->text);
        vs_sb_printf(b, "</td>");
        return;
    case VS_CELL_NUMBER:
        vs_sb_printf(b, "<td class=\"num%s\"%s><span class=\"v\">", c->rank == VS_RANK_BEST ? " best" : c->rank == VS_RANK_SECOND ? " second" : "",
                     c->rank == VS_RANK_BEST ? " title=\"best\"" : c->rank == VS_RANK_SECOND ? " title=\"runner-up\"" : "");
        {
            vs_report_cell one = *c;
            one.spread = NAN;
            vs_report_cell_number(&one, buf, sizeof buf);
            vs_sb_printf(b, "%s</span>", buf);
            if (!isnan(c->spread)) {
                one.value = c->spread;
                vs_report_cell_number(&one, buf, sizeof buf);
                vs_sb_printf(b, " <span class=\"sd\">(%s)</span>", buf);
            }
        }
        vs_sb_printf(b, "</td>");
        return;
    case VS_CELL_PVALUE:
        vs_report_cell_number(c, buf, sizeof buf);
        vs_sb_printf(b, "<td class=\"num\">%s", buf);
        if (c->sig)
            vs_sb_printf(b, "<span class=\"sig %s\" title=\"%s\">%s</span>", c->sig == VS_SIG_BETTER ? "better" : "worse",
                         c->sig == VS_SIG_BETTER ? "the reference is significantly better" : "the reference is significantly worse",
                         vs_report_sig_mark(c->sig));
        vs_sb_printf(b, "</td>");
        return;
    }
}

static void html_table(vs_sbuf *b, const vs_report_table *t)
{
    bool dirs = false, ranks = false, sigs = false;
    for (int c = 0; c < t->n_cols; c++) dirs |= t->better[c] != VS_BETTER_NONE;
    for (int i = 0; i < t->n_rows * t->n_cols; i++) ranks |= t->cells[i].rank != VS_RANK_NONE, sigs |= t->cells[i].sig != VS_SIG_NONE;
    vs_sb_printf(b, "<div class=\"table-wrap\"><table>\n");
    if (t->caption) {
        vs_sb_printf(b, "<caption>");
        inline_text(b, t->caption);
        vs_sb_printf(b, "</caption>\n");
    }
    vs_sb_printf(b, "<thead><tr>");
    for (int c = 0; c < t->n_cols; c++) {
        vs_sb_printf(b, "<th%s>", t->better[c] == VS_BETTER_LOWER ? " title=\"lower is better\"" : t->better[c] == VS_BETTER_HIGHER ? " title=\"higher is better\"" : "");
        inline_text(b, t->header[c]);
        if (t->better[c]) vs_sb_printf(b, "<span class=\"dir\">%s</span>", vs_report_arrow(t->better[c]));
        vs_sb_printf(b, "</th>");
    }
    vs_sb_printf(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < t->n_rows; r++) {
        vs_sb_printf(b, "<tr>");
        for (int c = 0; c < t->n_cols; c++) html_cell(b, t, &t->cells[r * t->n_cols + c]);
        vs_sb_printf(b, "</tr>\n");
    }
    vs_sb_printf(b, "</tbody></table></div>\n");
    if (t->n_notes || dirs || ranks || sigs) {
        vs_sb_printf(b, "<p class=\"notes\">");
        if (dirs) vs_sb_printf(b, "<span>↓ lower is better, ↑ higher is better</span>");
        if (ranks) vs_sb_printf(b, "<span><b>bold</b>: best, <u style=\"text-decoration-style:dotted\">underlined</u>: runner-up</span>");
        if (sigs) vs_sb_printf(b, "<span>◦ / †: the reference method significantly better / worse (p &lt; 0.05)</span>");
        for (int i = 0; i < t->n_notes; i++) {
            char mark[32];
            vs_report_note_mark(i, mark, sizeof mark);
            vs_sb_printf(b, "<span><sup>%s</sup> –: ", mark);
            vs_sb_text(b, t->notes[i]);
            vs_sb_printf(b, "</span>");
        }
        vs_sb_printf(b, "</p>\n");
    }
}

static vs_status html_figure(vs_sbuf *b, const vs_report_figure *f, int number, vs_error *err)
{
    char *svg;
    size_t n;
    vs_status st = vs_report_figure_svg(f, &svg, &n, err);
    if (st != VS_OK) return st;
    const char *body = strstr(svg, "<svg");
    vs_sb_printf(b, "<figure id=\"fig-");
    vs_sb_text(b, f->name);
    vs_sb_printf(b, "\"><div class=\"svg\" role=\"img\" aria-label=\"");
    vs_sb_text(b, f->title ? f->title : f->name);
    vs_sb_printf(b, "\">\n");
    vs_sb_put(b, body ? body : svg, n - (size_t)((body ? body : svg) - svg));
    vs_sb_printf(b, "</div>\n<figcaption><b>Figure %d.</b> ", number);
    inline_text(b, f->caption ? f->caption : "");
    vs_sb_printf(b, "</figcaption></figure>\n");
    free(svg);
    return VS_OK;
}

#define PNG_MAX_BYTES (16u << 20) /* larger pictures stay files beside the page */

/* The bytes of dir/name when it is a readable PNG of at most PNG_MAX_BYTES; NULL otherwise. */
static unsigned char *read_png(const char *dir, const char *name, size_t *n)
{
    char path[4400];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size > 8 && (unsigned long)size <= PNG_MAX_BYTES && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) &&
        fread(buf, 1, (size_t)size, f) == (size_t)size && memcmp(buf, "\x89PNG\r\n\x1a\n", 8) == 0) {
        *n = (size_t)size;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void base64(vs_sbuf *b, const unsigned char *p, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[5] = {0};
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        q[0] = digits[v >> 18 & 63], q[1] = digits[v >> 12 & 63];
        q[2] = i + 1 < n ? digits[v >> 6 & 63] : '=', q[3] = i + 2 < n ? digits[v & 63] : '=';
        vs_sb_put(b, q, 4);
    }
}

/* After a paragraph or item: each `NAME.png` it names that dir holds, as a figure (the text is its caption). */
static void embed_named_pngs(vs_sbuf *b, const char *text, const char *dir)
{
    for (const char *p = dir && text ? strchr(text, '`') : NULL; p; p = strchr(p + 1, '`')) {
        const char *end = strchr(p + 1, '`');
        if (!end) break;
        size_t len = (size_t)(end - p - 1);
        char name[256];
        if (len > 4 && len < sizeof name && memcmp(end - 4, ".png", 4) == 0 && !memchr(p + 1, '/', len)) {
            memcpy(name, p + 1, len);
            name[len] = 0;
            size_t n;
            unsigned char *png = read_png(dir, name, &n);
            if (png) {
                vs_sb_printf(b, "<figure class=\"png\"><img alt=\"");
                vs_sb_text(b, name);
                vs_sb_printf(b, "\" src=\"data:image/png;base64,");
                base64(b, png, n);
                vs_sb_printf(b, "\">\n<figcaption><code>");
                vs_sb_text(b, name);
                vs_sb_printf(b, "</code></figcaption></figure>\n");
                free(png);
            }
        }
        p = end;
    }
}

/* Whether figures a and b repeat one kind of plot (small multiples): both line plots with the same
 * axis labels, or both bar charts, or both graph drawings. */
static bool alike(const vs_report_figure *a, const vs_report_figure *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == VS_FIGURE_MATRIX) return false;
    bool x = (!a->xlabel && !b->xlabel) || (a->xlabel && b->xlabel && strcmp(a->xlabel, b->xlabel) == 0);
    bool y = (!a->ylabel && !b->ylabel) || (a->ylabel && b->ylabel && strcmp(a->ylabel, b->ylabel) == 0);
    return x && y;
}

static bool figure_block(const vs_report *r, size_t i) { return i < r->n_blocks && r->blocks[i].kind == VS_BLOCK_FIGURE; }

vs_status vs_report_html(const vs_report *r, char **out, size_t *len, vs_error *err) { return vs_report_html_in(r, NULL, out, len, err); }

vs_status vs_report_html_in(const vs_report *r, const char *dir, char **out, size_t *len, vs_error *err)
{
    if (!r || !out) return vs_error_set(err, VS_ERR_ARG, "report: no report or output");
    *out = NULL;
    if (r->oom) return vs_error_set(err, VS_ERR_NOMEM, "report: out of memory while it was built");
    const char *title = "versus report";
    for (size_t i = 0; i < r->n_blocks; i++)
        if (r->blocks[i].kind == VS_BLOCK_HEADING) {
            title = r->blocks[i].text;
            break;
        }
    vs_sbuf b = {0};
    vs_sb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    vs_sb_text(&b, title);
    vs_sb_printf(&b, "</title>\n<style>\n%s</style>\n</head><body><main>\n", css);
    int figures = 0;
    vs_status st = VS_OK;
    for (size_t i = 0; i < r->n_blocks && st == VS_OK; i++) {
        const vs_report_block *k = &r->blocks[i];
        bool prev_item = i > 0 && r->blocks[i - 1].kind == VS_BLOCK_ITEM;
        bool next_item = i + 1 < r->n_blocks && r->blocks[i + 1].kind == VS_BLOCK_ITEM;
        switch (k->kind) {
        case VS_BLOCK_HEADING:
            vs_sb_printf(&b, "<h%d>", k->level);
            inline_text(&b, k->text);
            vs_sb_printf(&b, "</h%d>\n", k->level);
            break;
        case VS_BLOCK_PARAGRAPH:
            vs_sb_printf(&b, "<p>");
            inline_text(&b, k->text);
            vs_sb_printf(&b, "</p>\n");
            embed_named_pngs(&b, k->text, dir);
            break;
        case VS_BLOCK_ITEM:
            vs_sb_printf(&b, "%s<li>", prev_item ? "" : "<ul>\n");
            inline_text(&b, k->text);
            vs_sb_printf(&b, "</li>\n%s", next_item ? "" : "</ul>\n");
            if (!next_item) { /* the list's pictures after the list, in its order */
                size_t j = i;
                while (j > 0 && r->blocks[j - 1].kind == VS_BLOCK_ITEM) j--;
                for (; j <= i; j++) embed_named_pngs(&b, r->blocks[j].text, dir);
            }
            break;
        case VS_BLOCK_TABLE: html_table(&b, k->table); break;
        case VS_BLOCK_FIGURE: {
            /* a run of alike figures is drawn as small multiples, side by side */
            bool run_start = !(i > 0 && figure_block(r, i - 1) && alike(r->blocks[i - 1].figure, k->figure)) && figure_block(r, i + 1) &&
                             alike(k->figure, r->blocks[i + 1].figure);
            bool run_end = i > 0 && figure_block(r, i - 1) && alike(r->blocks[i - 1].figure, k->figure) &&
                           !(figure_block(r, i + 1) && alike(k->figure, r->blocks[i + 1].figure));
            if (run_start) vs_sb_printf(&b, "<div class=\"multiples\">\n");
            st = html_figure(&b, k->figure, ++figures, err);
            if (run_end) vs_sb_printf(&b, "</div>\n");
            break;
        }
        }
    }
    vs_sb_printf(&b, "<footer>Written by versus; this page is self-contained (styles and figures inline).</footer>\n"
                     "</main></body></html>\n");
    if (st == VS_OK && b.oom) st = vs_error_set(err, VS_ERR_NOMEM, "report: out of memory writing HTML");
    if (st != VS_OK) {
        free(b.p);
        return st;
    }
    *out = b.p;
    if (len) *len = b.len;
    return VS_OK;
}
