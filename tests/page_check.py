#!/usr/bin/env python3
"""page_check.py DOM.html - the DOM of a rendered report page (chromium --dump-dom) is whole.

Every <figure> holds an inline <svg> that draws something (path, line, rect, circle or text), every
<img> has a data: source (the page is self-contained) and a non-empty one, no element loads from the
network, and no table cell shows a raw sentinel (nan, inf, -1).  Prints each problem; exit 1 if any."""
import re
import sys
from html.parser import HTMLParser

DRAW = {"path", "line", "rect", "circle", "text", "polyline", "polygon"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.problems, self.figures, self.svgs = [], 0, []
        self.in_svg, self.in_td, self.td_text = 0, False, ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a and re.match(r"(https?:)?//", a[k] or ""):
                self.problems.append(f"<{tag}> loads {a[k]} from the network")
        if tag == "figure":
            self.figures += 1
        elif tag == "svg":
            if self.in_svg == 0:
                self.svgs.append(0)
            self.in_svg += 1
        elif self.in_svg and tag in DRAW:
            self.svgs[-1] += 1
        elif tag == "img":
            src = a.get("src") or ""
            if not src.startswith("data:") or len(src) < 40:
                self.problems.append(f"<img> without an inline image: {src[:60]!r}")
        elif tag == "td":
            self.in_td, self.td_text = True, ""

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_svg -= 1
        elif tag == "td" and self.in_td:
            self.in_td = False
            t = self.td_text.strip().lower()
            if re.search(r"\b(nan|inf)\b", t) or t == "-1":
                self.problems.append(f"a table cell shows {t!r}")

    def handle_data(self, data):
        if self.in_td:
            self.td_text += data


def main():
    p = Page()
    with open(sys.argv[1], encoding="utf-8") as f:
        p.feed(f.read())
    if p.figures == 0:
        p.problems.append("no figure on the page")
    if len(p.svgs) < p.figures:
        p.problems.append(f"{p.figures} figures but {len(p.svgs)} inline SVG images")
    for i, n in enumerate(p.svgs):
        if n == 0:
            p.problems.append(f"SVG image {i + 1} draws nothing")
    for q in p.problems:
        print(q)
    print(f"page_check: {p.figures} figures, {len(p.svgs)} SVG images, {len(p.problems)} problems")
    return 1 if p.problems else 0


if __name__ == "__main__":
    sys.exit(main())
