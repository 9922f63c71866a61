#!/usr/bin/python3
"""bench/compare.py - join vs_bench and torch_reference.py JSON lines into one Markdown table.

    compare.py [--commit HASH] FILE...

Rows are (workload, threads); columns are GFLOP/s of versus, PyTorch and numpy (OpenBLAS) and the
ratios versus/PyTorch and versus/numpy (above 1: versus is faster).  Ends with the performance
targets of the kernels issue, reported (not asserted).
"""
import json
import os
import sys


def load(paths):
    rows = {}   # (name, threads) -> {impl: record}
    order = []  # first-seen order of (name, threads)
    info = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                d = json.loads(line)
                if d.get("suite") == "info":
                    info = d
                    continue
                if "gflops" not in d:
                    continue
                key = (d["name"], d["threads"])
                if key not in rows:
                    rows[key] = {}
                    order.append(key)
                rows[key][d["impl"]] = d
    return rows, order, info


def fmt(x, spec="%.1f"):
    return spec % x if x is not None else "-"


def gflops(row, impl):
    return row[impl]["gflops"] if impl in row else None


def ratio(a, b):
    return a / b if a is not None and b else None


def main(argv):
    commit = None
    paths = []
    i = 1
    while i < len(argv):
        if argv[i] == "--commit" and i + 1 < len(argv):
            commit = argv[i + 1]
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rows, order, info = load(paths)
    out = []
    out.append("# SGEMM: versus against PyTorch and numpy (OpenBLAS)")
    out.append("")
    meta = []
    if commit:
        meta.append("commit `%s`" % commit)
    if info:
        meta.append("versus %s, %s kernels, %s cores" % (info.get("version", "?"), info.get("isa", "?"), info.get("cores", "?")))
    libs = sorted({(r[i]["impl"], r[i].get("version", "")) for r in rows.values() for i in r if i != "versus"})
    meta += ["%s %s" % lib for lib in libs]
    if hasattr(os, "getloadavg"):
        meta.append("load average %.2f / %.2f / %.2f (1/5/15 min) when the comparison ended" % os.getloadavg())
    if meta:
        out.append("Measured at " + "; ".join(meta) + ".")
        out.append("A load average above zero means other programs shared the cores: numbers, and most of all the")
        out.append("2-thread ones, then measure the machine as much as the code.")
        out.append("")
    out.append("Median of repeated runs after warm-up (GFLOP/s, higher is better); ratio > 1 means versus is faster.")
    out.append("Shapes: `linear_*_BxIxO` are the three products of a linear layer with batch B, I inputs, O outputs.")
    out.append("")
    out.append("| workload | threads | versus | PyTorch | numpy | versus/PyTorch | versus/numpy |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for key in order:
        row = rows[key]
        if "versus" not in row or row["versus"].get("suite") != "sgemm":
            continue
        v, t, n = gflops(row, "versus"), gflops(row, "torch"), gflops(row, "numpy")
        out.append("| %s | %d | %s | %s | %s | %s | %s |" % (key[0], key[1], fmt(v), fmt(t), fmt(n),
                                                           fmt(ratio(v, t), "%.2f"), fmt(ratio(v, n), "%.2f")))
    peaks = {k[1]: rows[k]["versus"]["gflops"] for k in order if k[0] == "peak_fma" and "versus" in rows[k]}
    if peaks:
        out.append("")
        out.append("FMA peak: " + ", ".join("%.1f GFLOP/s at %d thread%s" % (g, t, "" if t == 1 else "s")
                                            for t, g in sorted(peaks.items())) + ".")

    # Targets of the kernels issue: reported, not asserted.
    out.append("")
    out.append("## Targets")
    out.append("")
    out.append("| target | workload | threads | got |")
    out.append("|---|---|---:|---:|")
    for key in order:
        row = rows[key]
        v, n = gflops(row, "versus"), gflops(row, "numpy")
        name = key[0]
        if name in ("sgemm_nn_256", "sgemm_nn_512", "sgemm_nn_1024"):
            out.append("| versus/OpenBLAS >= 0.9 | %s | %d | %s |" % (name, key[1], fmt(ratio(v, n), "%.2f")))
        elif name.startswith("linear_"):
            out.append("| versus/OpenBLAS >= 1.2 | %s | %d | %s |" % (name, key[1], fmt(ratio(v, n), "%.2f")))
    one, two = rows.get(("sgemm_nn_512", 1), {}), rows.get(("sgemm_nn_512", 2), {})
    if "versus" in one and "versus" in two:
        out.append("| 2 threads / 1 thread >= 1.8 | sgemm_nn_512 | 2 | %.2f |" % (two["versus"]["gflops"] / one["versus"]["gflops"]))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
