#!/usr/bin/python3
"""bench/perf/compare.py - join vs_bench and torch_reference.py JSON lines into Markdown tables.

    compare.py [--commit HASH] FILE...
    compare.py --summary [--commit HASH] RUN_DIR...


Matrix products: rows are (workload, threads); columns are GFLOP/s of versus, PyTorch and numpy
(OpenBLAS) and the ratios versus/PyTorch and versus/numpy (above 1: versus is faster).  Training
steps and explainers: seconds per run of each side and PyTorch time / versus time (above 1: versus
is faster); the sweep (convolutions and models the bench was not tuned on) in a section of its own;
then the peak resident memory of each side when the --rss lines are given.  Ends with
the performance targets of the kernels issue, reported (not asserted).

--summary reads several runs of `make bench-compare`, each a directory holding that run's
versus.jsonl and reference.jsonl (and process.jsonl, the whole-process train entry, and onnx.jsonl, resnet18
through ONNX, when present), and prints every ratio per run with its median across runs, the
thread scaling (pairwise when vs_bench measured it) and the targets with the medians.
"""
import json
import os
import sys


def load(paths):
    rows = {}   # (name, threads) -> {impl: record}
    order = []  # first-seen order of (name, threads)
    info = {}
    rss = {}    # (name, threads) -> {impl: max_rss_kb}
    scaling = {}  # name -> vs_bench's pairwise thread-scaling record
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
                if d.get("suite") == "scaling":
                    scaling[d["name"]] = d
                    continue
                if d.get("suite") == "rss":
                    rss.setdefault((d["name"], d["threads"]), {})[d["impl"]] = d["max_rss_kb"]
                    continue
                if "gflops" not in d:
                    continue
                key = (d["name"], d["threads"])
                if key not in rows:
                    rows[key] = {}
                    order.append(key)
                rows[key][d["impl"]] = d
    return rows, order, info, rss, scaling


def fmt(x, spec="%.1f"):
    return spec % x if x is not None else "-"


def gflops(row, impl):
    return row[impl]["gflops"] if impl in row else None


def ratio(a, b):
    return a / b if a is not None and b else None


def main(argv):
    commit = None
    paths = []
    summary_mode = False
    i = 1
    while i < len(argv):
        if argv[i] == "--commit" and i + 1 < len(argv):
            commit = argv[i + 1]
            i += 2
        elif argv[i] == "--summary":
            summary_mode = True
            i += 1
        else:
            paths.append(argv[i])
            i += 1
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if summary_mode:
        print("\n".join(summary(paths, commit)))
        return 0
    rows, order, info, rss, scaling = load(paths)
    out = []
    has_sgemm = any(rows[k].get("versus", {}).get("suite") == "sgemm" for k in order)
    out.append("# %s: versus against PyTorch%s" % ("SGEMM" if has_sgemm else "Training steps and explainers",
                                                   " and numpy (OpenBLAS)" if has_sgemm else ""))
    out.append("")
    meta = []
    if commit:
        meta.append("commit `%s`" % commit)
    if info:
        zmm = {"split": " (zmm FMAs as two ymm halves, Zen 4 tuning)", "full": " (full-width zmm FMAs)"}.get(info.get("zmm_fma"), "")
        meta.append("versus %s, %s kernels%s, %s cores" % (info.get("version", "?"), info.get("isa", "?"), zmm, info.get("cores", "?")))
    meta.append(peak_note(rows, order))
    clocks = sorted({r[i].get("clock", "wall") for r in rows.values() for i in r})
    meta.append("times are " + " and ".join({"wall": "wall-clock", "cpu": "the process's CPU time (--clock cpu)"}.get(c, c)
                                            for c in clocks))
    libs = sorted({(r[i]["impl"], r[i]["version"]) for r in rows.values() for i in r if i != "versus" and r[i].get("version")})
    meta += ["%s %s" % lib for lib in libs]
    if hasattr(os, "getloadavg"):
        meta.append("load average %.2f / %.2f / %.2f (1/5/15 min) when the comparison ended" % os.getloadavg())
    if meta:
        out.append("Measured at " + "; ".join(meta) + ".")
        out.append("A load average above zero means other programs shared the cores: numbers, and most of all the")
        out.append("2-thread ones, then measure the machine as much as the code.")
        out.append("")
    if has_sgemm:
        sgemm_table(out, rows, order)
    steps_table(out, rows, order, rss)
    if has_sgemm:
        targets(out, rows, order, scaling)
    print("\n".join(out))
    return 0


def steps_table(out, rows, order, rss):
    """Seconds per training step / explanation, and PyTorch time over versus time."""
    keys = [k for k in order if rows[k].get("versus", {}).get("suite") in ("conv", "train", "explain")]
    if keys:
        if out[-1] != "":
            out.append("")
        out.append("## Convolutions, training steps and explainers")
        out.append("")
        out.append("Median seconds per run (one convolution forward, or forward + backward; one training step = forward,")
        out.append("loss, backward, Adam step; one explanation);")
        out.append("versus/PyTorch is PyTorch's time over versus's, so above 1 means versus is faster.")
        out.append("Models and shapes: bench/perf/conv.c, bench/perf/train.c (the PyTorch twins are in bench/perf/torch_reference.py).")
        out.append("")
        out.append("The last two columns are each side's share of the FMA peak at that thread count: the workload's")
        out.append("dense conv/linear flops (2 per multiply-add, counted by vs_bench) over its time.  Occlusion's")
        out.append("count is that of 785 full forwards, so an incremental method can exceed 100%.")
        out.append("")
        time_rows(out, rows, order, keys)
    keys = [k for k in order if rows[k].get("versus", {}).get("suite") == "sweep"]
    if keys:
        out.append("")
        out.append("## Sweep: convolutions and models the bench was not tuned on")
        out.append("")
        out.append("Geometries drawn once from a fixed seed, and four small training steps (CE + Adam), in")
        out.append("bench/perf/sweep.c; same columns as above (the steps' flops are not counted).")
        out.append("")
        time_rows(out, rows, order, keys)
    if rss:
        out.append("")
        out.append("Peak resident memory (getrusage max RSS) of a process that built the model and ran the workload's")
        out.append("timed loop alone; PyTorch's includes the interpreter and the torch library itself.")
        out.append("")
        out.append("| workload | threads | versus | PyTorch |")
        out.append("|---|---:|---:|---:|")
        for (name, threads), d in sorted(rss.items()):
            out.append("| %s | %d | %s | %s |" % (name, threads, mib(d.get("versus")), mib(d.get("torch"))))


def time_rows(out, rows, order, keys):
    """A table of seconds per run, PyTorch's time over versus's and both shares of the peak, one row per key."""
    out.append("| workload | threads | versus | PyTorch | versus/PyTorch | versus % of peak | PyTorch % of peak |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    peaks = fma_peaks(rows, order)
    for key in keys:
        row = rows[key]
        v = row["versus"]["median_s"]
        t = row["torch"]["median_s"] if "torch" in row else None
        out.append("| %s | %d | %s | %s | %s | %s | %s |" % (key[0], key[1], ms(v), ms(t), fmt(ratio(t, v), "%.2f"),
                                                          pct(share(row, v, peaks.get(key[1]))),
                                                          pct(share(row, t, peaks.get(key[1])))))


def fma_peaks(rows, order):
    """threads -> measured FMA peak in GFLOP/s."""
    return {k[1]: rows[k]["versus"]["gflops"] for k in order if k[0] == "peak_fma" and "versus" in rows[k]}


def peak_note(rows, order):
    """The ISA and the measured FMA peak, as every result file states them."""
    isas = sorted({rows[k]["versus"].get("isa", "?") for k in order if "versus" in rows[k]} - {"?"})
    peaks = fma_peaks(rows, order)
    where = "ISA %s" % ("/".join(isas) if isas else "unknown")
    if not peaks:
        return where + ", FMA peak not measured in this run (run the peak_fma workload)"
    return where + ", measured FMA peak " + ", ".join("%.1f GFLOP/s at %d thread%s" % (g, t, "" if t == 1 else "s")
                                                     for t, g in sorted(peaks.items()))


def share(row, seconds, peak):
    """Fraction of the peak that the workload's flops (from versus's record) reach in `seconds`."""
    v = row.get("versus", {})
    flops = v.get("gflops", 0) * v.get("median_s", 0)
    if not flops or not seconds or not peak:
        return None
    return flops / seconds / peak


def pct(x):
    return "%.0f%%" % (100 * x) if x is not None else "-"


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_goal(name):
    """The kernels issue's target for PyTorch time / versus time, or None."""
    if name in ("ig200_mnist", "ig200_mlp16", "ig200_convpool16", "occlusion1_mnist"):
        return 2.0
    if name.endswith("_step") or name.startswith("train_process"):
        return 1.5
    return 1.0 if name.startswith(("conv_", "onnx_")) or (name.startswith("sweep_") and "_fwd" in name) else None


def summary(dirs, commit):
    """Ratios of several runs side by side (see the module doc)."""
    runs = [load([os.path.join(d, f) for f in ("versus.jsonl", "reference.jsonl", "process.jsonl", "onnx.jsonl")
                  if f in ("versus.jsonl", "reference.jsonl") or os.path.exists(os.path.join(d, f))]) for d in dirs]
    order = []
    for rows, o, _, _, _ in runs:
        order += [k for k in o if k not in order]
    nr = len(runs)
    head = "| workload | threads | " + " | ".join("run %d" % (r + 1) for r in range(nr)) + " | median | target |"
    rule = "|---|---:|" + "---:|" * (nr + 2)
    out = ["Runs: " + ", ".join("`%s`" % d for d in dirs) + (" at commit `%s`." % commit if commit else ".")]
    out += ["- `%s`: %s." % (d, peak_note(rows, o)) for d, (rows, o, _, _, _) in zip(dirs, runs)] + [""]

    def table(title, pick, target, show=lambda v: fmt(v, "%.2f")):
        out.extend([title, "", head, rule])
        for key in order:
            vals = [pick(rows.get(key, {}), rows) for rows, _, _, _, _ in runs]
            if all(v is None for v in vals):
                continue
            out.append("| %s | %d | %s | **%s** | %s |" % (key[0], key[1], " | ".join(show(v) for v in vals),
                                                          show(median(vals)), target(key)))
        out.append("")

    def time_ratio(row, rows):
        v, t = row.get("versus"), row.get("torch")
        if not v or not t or v.get("suite") not in ("conv", "train", "explain", "sweep"):
            return None
        return t["median_s"] / v["median_s"]

    def blas_ratio(row, rows):
        v, n = row.get("versus"), row.get("numpy")
        if not v or not n or v.get("suite") != "sgemm":
            return None
        return v["gflops"] / n["gflops"] if n["gflops"] else None

    def share_of_peak(impl):
        def pick(row, rows):
            v = row.get("versus")
            if not v or v.get("suite") not in ("train", "explain") or impl not in row:
                return None
            peaks = fma_peaks(rows, list(rows.keys()))
            return share(row, row[impl]["median_s"], peaks.get(v["threads"]))
        return pick

    def blas_goal(key):
        return "0.9" if key[0] in ("sgemm_nn_256", "sgemm_nn_512", "sgemm_nn_1024") else \
            "1.2" if key[0].startswith("linear_") else "-"

    table("PyTorch's median time / versus's (above 1: versus faster): single convolutions, training steps "
          "(forward, loss, backward, Adam), explainers and the sweep (bench_sweep.c).", time_ratio,
          lambda k: fmt(time_goal(k[0]), "%.1f") if k[1] == 1 else "-")
    table("SGEMM, versus GFLOP/s over numpy's OpenBLAS in the same run.", blas_ratio, blas_goal)
    table("Share of the FMA peak reached by versus (dense conv/linear flops over time; Occlusion counts 785 full "
          "forwards).", share_of_peak("versus"), lambda k: "-", pct)
    table("Share of the FMA peak reached by PyTorch on the same flops.", share_of_peak("torch"), lambda k: "-", pct)

    out.extend(["Thread scaling, versus: 1-thread time / 2-thread time.", "",
                "| workload | measure | " + " | ".join("run %d" % (r + 1) for r in range(nr)) + " | median | target |",
                "|---|---|" + "---:|" * (nr + 2)])
    for name in ("sgemm_nn_512", "ganmex_mnist_step"):
        meds, pairs = [], []
        for rows, _, _, _, scaling in runs:
            one, two = rows.get((name, 1), {}).get("versus"), rows.get((name, 2), {}).get("versus")
            meds.append(one["median_s"] / two["median_s"] if one and two else None)
            pairs.append(scaling[name]["ratio_median"] if name in scaling else None)
        out.append("| %s | ratio of medians | %s | **%s** | 1.8 |" % (name, " | ".join(fmt(v, "%.2f") for v in meds),
                                                                     fmt(median(meds), "%.2f")))
        if any(p is not None for p in pairs):
            out.append("| %s | median of alternating pairs | %s | **%s** | 1.8 |" % (
                name, " | ".join(fmt(v, "%.2f") for v in pairs), fmt(median(pairs), "%.2f")))
    out.append("")

    out.extend(["What each time target needs: the share of the FMA peak versus would have to reach to be the target's",
                "factor faster than PyTorch's median time (median over the runs); above 100% no implementation doing",
                "the same flops can meet it.", "",
                "| workload | target | PyTorch % of peak | needed % of peak | versus % of peak |", "|---|---:|---:|---:|---:|"])
    for key in order:
        goal = time_goal(key[0])
        if not goal or key[1] != 1:
            continue
        t = median([share_of_peak("torch")(rows.get(key, {}), rows) for rows, _, _, _, _ in runs])
        v = median([share_of_peak("versus")(rows.get(key, {}), rows) for rows, _, _, _, _ in runs])
        if t is None:
            continue
        out.append("| %s | %.1f | %s | %s | %s |" % (key[0], goal, pct(t), pct(goal * t), pct(v)))
    return out


def ms(seconds):
    if seconds is None:
        return "-"
    return "%.3g ms" % (seconds * 1e3) if seconds >= 1e-3 else "%.3g us" % (seconds * 1e6)


def mib(kb):
    return "%.1f MiB" % (kb / 1024.0) if kb is not None else "-"


def sgemm_table(out, rows, order):
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
    peaks = fma_peaks(rows, order)
    if peaks:
        out.append("")
        out.append("FMA peak: " + ", ".join("%.1f GFLOP/s at %d thread%s" % (g, t, "" if t == 1 else "s")
                                            for t, g in sorted(peaks.items())) + ".")


def targets(out, rows, order, scaling):
    """Targets of the kernels issue: reported, not asserted."""
    out.append("")
    out.append("## Targets")
    out.append("")
    out.append("For the time targets, *needs* is the share of the FMA peak that versus would have to reach to meet")
    out.append("the target against this run's PyTorch time (above 100%: impossible without skipping work).")
    out.append("")
    out.append("| target | workload | threads | got | needs |")
    out.append("|---|---|---:|---:|---:|")
    for key in order:
        row = rows[key]
        v, n = gflops(row, "versus"), gflops(row, "numpy")
        name = key[0]
        if name in ("sgemm_nn_256", "sgemm_nn_512", "sgemm_nn_1024"):
            out.append("| versus/OpenBLAS >= 0.9 | %s | %d | %s | |" % (name, key[1], fmt(ratio(v, n), "%.2f")))
        elif name.startswith("linear_"):
            out.append("| versus/OpenBLAS >= 1.2 | %s | %d | %s | |" % (name, key[1], fmt(ratio(v, n), "%.2f")))
    for name in ("sgemm_nn_512", "ganmex_mnist_step"):
        one, two = rows.get((name, 1), {}).get("versus"), rows.get((name, 2), {}).get("versus")
        if one and two and one.get("median_s") and two.get("median_s"):
            out.append("| 2 threads / 1 thread >= 1.8, ratio of medians | %s | 2 | %.2f | |" % (name, one["median_s"] / two["median_s"]))
        pair = scaling.get(name)
        if pair and pair.get("threads") == 2:
            out.append("| 2 threads / 1 thread >= 1.8, median of %d alternating pairs (range %.2f-%.2f) | %s | 2 | %.2f | |"
                       % (pair["pairs"], pair["ratio_min"], pair["ratio_max"], name, pair["ratio_median"]))
    peaks = fma_peaks(rows, order)
    for key in order:
        row = rows[key]
        v, t = row.get("versus"), row.get("torch")
        if key[1] != 1 or not v or not t or v.get("suite") not in ("train", "explain"):
            continue
        goal = time_goal(key[0])
        if goal:
            need = share(row, t["median_s"] / goal, peaks.get(1))
            out.append("| PyTorch time / versus time >= %.1f | %s | 1 | %.2f | %s |" % (goal, key[0], t["median_s"] / v["median_s"],
                                                                                    pct(need)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
