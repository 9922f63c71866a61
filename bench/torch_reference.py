#!/usr/bin/python3
"""bench/torch_reference.py - time vs_bench's matrix products in PyTorch and numpy.

    torch_reference.py VERSUS_JSONL [--reps N]

Reads the JSON lines vs_bench wrote (--json FILE), and for every sgemm case (same shape, same
transposes, same thread count, same repetitions) times torch.mm and numpy.matmul with the method
vs_bench uses: a first call, one run to size a sample (>= 2 ms of repeated runs), 50 ms of warm-up, then the
median of the samples.  Prints one JSON line per (case, threads, impl) in vs_bench's format, with
impl "torch" or "numpy".  Each thread count runs in a fresh process with OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS set before the libraries load (and torch.set_num_threads), since OpenBLAS
fixes its thread pool when it starts.  A missing library is reported on stderr and skipped.
"""
import json
import os
import subprocess
import sys
import time

MIN_SAMPLE_S = 2e-3
WARMUP_S = 50e-3


def measure(fn, reps):
    """Median and minimum seconds per call of fn, and the calls per timed sample."""
    fn()  # first call: lazy initialisation, page faults
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    iters = 1 if once >= MIN_SAMPLE_S else int(MIN_SAMPLE_S / max(once, 1e-9)) + 1
    start = time.perf_counter()
    while time.perf_counter() - start < WARMUP_S:
        fn()
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t0) / iters)
    samples.sort()
    mid = len(samples) // 2
    median = samples[mid] if len(samples) % 2 else 0.5 * (samples[mid - 1] + samples[mid])
    return median, samples[0], iters


def stored_operands(np, case):
    """A and B stored as vs_bench stores them: row-major, A as [K,M] when trans_a, B as [N,K] when trans_b."""
    rng = np.random.default_rng(1)
    m, n, k = case["m"], case["n"], case["k"]
    a = rng.random((k, m) if case["trans_a"] else (m, k), dtype=np.float32) * 2 - 1
    b = rng.random((n, k) if case["trans_b"] else (k, n), dtype=np.float32) * 2 - 1
    return a, b


def op(x, trans):
    """op(X): a transposed view (no copy; the BLAS call gets a transpose flag) or X itself."""
    return x.T if trans else x


def run_worker(threads, cases, reps):
    libs = {}
    try:
        import numpy
        libs["numpy"] = numpy
    except ImportError:
        print("torch_reference: numpy is not installed; skipping numpy", file=sys.stderr)
        return
    try:
        import torch
        torch.set_num_threads(threads)
        libs["torch"] = torch
    except ImportError:
        print("torch_reference: torch is not installed; skipping PyTorch", file=sys.stderr)
    np = libs["numpy"]
    for case in cases:
        a, b = stored_operands(np, case)
        c = np.empty((case["m"], case["n"]), dtype=np.float32)
        na, nb = op(a, case["trans_a"]), op(b, case["trans_b"])
        runs = {"numpy": lambda: np.matmul(na, nb, out=c)}
        if "torch" in libs:
            ta, tb = op(torch.from_numpy(a), case["trans_a"]), op(torch.from_numpy(b), case["trans_b"])
            tc = torch.from_numpy(c)
            runs["torch"] = lambda: torch.mm(ta, tb, out=tc)
        flops = 2.0 * case["m"] * case["n"] * case["k"]
        for impl in ("torch", "numpy"):
            if impl not in runs:
                continue
            median, best, iters = measure(runs[impl], reps)
            line = {"name": case["name"], "suite": "sgemm", "impl": impl, "threads": threads,
                    "version": libs[impl].__version__, "reps": reps, "iters": iters,
                    "median_s": median, "min_s": best, "gflops": round(flops / median * 1e-9, 3)}
            for key in ("m", "n", "k", "trans_a", "trans_b"):
                line[key] = case[key]
            print(json.dumps(line, separators=(",", ":")), flush=True)


def main(argv):
    if len(argv) >= 2 and argv[1] == "--worker":
        job = json.load(sys.stdin)
        run_worker(job["threads"], job["cases"], job["reps"])
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    reps_override = None
    if "--reps" in argv:
        reps_override = int(argv[argv.index("--reps") + 1])
    by_threads = {}
    with open(argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if d.get("suite") != "sgemm" or d.get("impl") != "versus":
                continue
            job = by_threads.setdefault(d["threads"], {"threads": d["threads"], "reps": reps_override or d["reps"], "cases": []})
            job["cases"].append({key: d[key] for key in ("name", "m", "n", "k", "trans_a", "trans_b")})
    if not by_threads:
        print("torch_reference: no sgemm cases in %s" % argv[1], file=sys.stderr)
        return 1
    for threads in sorted(by_threads):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                              input=json.dumps(by_threads[threads]), text=True)
        if proc.returncode != 0:
            return proc.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
