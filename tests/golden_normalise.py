#!/usr/bin/env python3
"""golden_normalise.py FILE - FILE on standard output with its timing and commit fields blanked, for bench_golden.sh.

What a run measures with the clock differs between two runs of one command, and the commit a run
stamps is the build's (vs_build_commit); everything else a bench writes must not differ.  Blanked
(replaced by T, or C for the commit): in results.json every member whose key names seconds (and
"threads") and the member "commit", the cells of report table columns headed by TIME_COLUMNS, and the
sentences of TIME_TEXT; in table.md and index.html the same columns and sentences.  Other files (SVG,
PNG) pass unchanged."""
import json
import re
import sys

TIME_COLUMNS = {"seconds", "train s"}
TIME_TEXT = [
    # CEM: "wall time 87 s of which 13 s training"
    (re.compile(r"wall time [0-9.]+ s of which [0-9.]+ s training"), "wall time T s of which T s training"),
    # GANMEX: "training seconds as recorded when trained (...): classifier 0, GANMEX 1, ..."
    (re.compile(r"(classifier|GANMEX|stand-alone GAN|GAN without L_sim) [0-9.]+(?=[,\s<]|$)"), r"\1 T"),
    # the demo: "Finished in 23.5 s."
    (re.compile(r"Finished in [0-9.]+ s\."), "Finished in T s."),
    # every report: "commit `85fb9fb-dirty`" (Markdown), "commit <code>85fb9fb</code>" (HTML)
    (re.compile(r"(commit:? )`[^`]*`"), r"\1`C`"),
    (re.compile(r"(commit:? )<code>[^<]*</code>"), r"\1<code>C</code>"),
]


def text(s):
    for pattern, repl in TIME_TEXT:
        s = pattern.sub(repl, s)
    return s


def json_walk(v):
    if isinstance(v, dict):
        if isinstance(v.get("table"), dict):
            table = v["table"]
            cols = [i for i, c in enumerate(table.get("columns", [])) if isinstance(c, dict) and c.get("header") in TIME_COLUMNS]
            for row in table.get("rows", []):
                for i in cols:
                    if i < len(row) and isinstance(row[i], dict) and "value" in row[i]:
                        row[i] = "T"
        return {k: ("T" if "seconds" in k or k == "threads" else "C" if k == "commit" else json_walk(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [json_walk(x) for x in v]
    if isinstance(v, str):
        return text(v)
    return v


def markdown(lines):
    out, cols = [], None
    for line in lines:
        if not line.startswith("|"):
            cols = None
        elif cols is None:
            cells = line.split("|")
            cols = [i for i, c in enumerate(cells) if re.sub(r"\s*[↑↓]?\s*$", "", c.strip()) in TIME_COLUMNS]
        elif cols and not re.match(r"^\|[-:| ]+\|?\s*$", line):
            cells = line.split("|")
            for i in cols:
                if i < len(cells) - 1:
                    cells[i] = " T "
            line = "|".join(cells)
        out.append(text(line))
    return out


TD = re.compile(r"<td[^>]*>.*?</td>")


def html(lines):
    out, cols = [], None
    for line in lines:
        if "<thead>" in line:
            heads = [re.sub(r"<[^>]*>|[↑↓]", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", line)]
            cols = [i for i, h in enumerate(heads) if h in TIME_COLUMNS]
        elif "</table>" in line:
            cols = None
        elif cols and line.startswith("<tr>"):
            cells = TD.findall(line)
            for i in cols:
                if i < len(cells):
                    cells[i] = "<td>T</td>"
            line = "<tr>" + "".join(cells) + "</tr>" + line[line.rindex("</tr>") + 5:]
        out.append(text(line))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    path = sys.argv[1]
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        sys.stdout.write(json.dumps(json_walk(data), indent=1, ensure_ascii=False) + "\n")
    elif path.endswith(".md") or path.endswith(".html"):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        sys.stdout.write("\n".join(markdown(lines) if path.endswith(".md") else html(lines)))
    else:
        with open(path, "rb") as f:
            sys.stdout.buffer.write(f.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
