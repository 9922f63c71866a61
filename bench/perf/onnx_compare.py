#!/usr/bin/python3
"""bench/perf/onnx_compare.py - torchvision's resnet18 (random weights, 3xSxS, S = 224 by default) through ONNX:
versus against PyTorch in the same run, on the same machine.  Two workloads: the forward at batch 8, and
integrated gradients with 50 steps on one image (versus's default Gauss-Legendre rule; PyTorch: the 50 path
points as one batch, one backward - the same sum).

    onnx_compare.py VERSUS [--reps N] [--threads T] [--size S] [--clock wall|cpu] [--filter fwd8|ig50] [--json FILE]

The model is exported once (opset 13) and imported once (`versus import`, timed and reported apart); each
repetition then runs versus (`versus predict` / `versus attribute --model DIR`, a process of its own: its
time includes starting and loading the 45 MB model directory, so it is an upper bound of versus's work)
and PyTorch (in this process, the model already built) one after the other, so the two sides see the
same load.  --clock cpu times user + system CPU (the child's for versus, this process's for PyTorch), the
fair clock at one thread on a machine other programs share; wall is the default.  Prints the ISA
versus's kernels use, each side's median, and the median of the pairwise ratios versus / PyTorch (below
1: versus is faster); --json also writes one line per side and workload in vs_bench's format (suite
"explain", name onnx_resnet18_fwd8 / onnx_resnet18_ig50) for compare.py.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:
    print(f"onnx_compare: skipped: {e} (install python3-torch and python3-torchvision)", file=sys.stderr)
    sys.exit(0)

ap = argparse.ArgumentParser()
ap.add_argument("versus")
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--size", type=int, default=224)
ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
ap.add_argument("--filter", default="", help="only the workloads whose name holds this")
ap.add_argument("--json")
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
m = torchvision.models.resnet18().eval()
work = tempfile.mkdtemp(prefix="versus_onnx_bench.")
onnx, model_dir = os.path.join(work, "resnet18.onnx"), os.path.join(work, "resnet18")
torch.onnx.export(m, torch.randn(1, 3, a.size, a.size), onnx, opset_version=13)
x8 = torch.randn(8, 3, a.size, a.size)
np.save(os.path.join(work, "X8.npy"), x8.numpy())
np.save(os.path.join(work, "X1.npy"), x8[:1].numpy())
env = dict(os.environ, VERSUS_THREADS=str(a.threads))
STEPS, TARGET = 50, 0


def child(*args):
    """Seconds the versus process took on the chosen clock."""
    before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([a.versus, *args], check=True, capture_output=True, env=env)
    wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall if a.clock == "wall" else (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def inproc(f):
    t, c = time.perf_counter(), time.process_time()
    f()
    return time.perf_counter() - t if a.clock == "wall" else time.process_time() - c


def torch_forward():
    with torch.no_grad():
        m(x8)


def torch_ig():
    nodes, w = np.polynomial.legendre.leggauss(STEPS)
    x = x8[:1]
    p = torch.cat([float((n + 1) / 2) * x for n in nodes]).requires_grad_(True)
    m(p)[:, TARGET].sum().backward()
    return x[0] * sum(float(wk / 2) * p.grad[k] for k, wk in enumerate(w))


def isa():
    r = subprocess.run([a.versus, "bench", "perf", "--filter", "peak_fma", "--reps", "1", "--threads", "1"], capture_output=True,
                       text=True, env=env)
    found = re.search(r"\b(avx512|avx2|scalar)\b", r.stdout + r.stderr)
    return found.group(1) if found else "unknown"


workloads = {
    "onnx_resnet18_fwd8": (lambda: child("predict", "--model", model_dir, "--input", os.path.join(work, "X8.npy"),
                                         "--out", os.path.join(work, "Y.npy")), torch_forward, "forward, batch 8"),
    "onnx_resnet18_ig50": (lambda: child("attribute", "--model", model_dir, "--input", os.path.join(work, "X1.npy"), "--method",
                                         "integrated_gradients", "--steps", str(STEPS), "--target", str(TARGET), "--out",
                                         os.path.join(work, "A.npy")), torch_ig, f"IG-{STEPS} (Gauss-Legendre), one image"),
}
t_import = child("import", onnx, "--out", model_dir)
kernel_isa = isa()
print(f"resnet18 3x{a.size}x{a.size} through ONNX, versus {subprocess.run([a.versus, '--version'], capture_output=True, text=True).stdout.strip()}, "
      f"ISA {kernel_isa}, PyTorch {torch.__version__}, threads {a.threads}, {a.reps} pairwise repetitions, {a.clock} clock, "
      f"load average {os.getloadavg()[0]:.1f}")
print(f"versus import (read + translate + write the model directory): {t_import:.2f} s")
lines = []
for name, (vs, pt, label) in workloads.items():
    if a.filter not in name:
        continue
    vs(), pt()  # warm-up: page cache, PyTorch's first-call setup
    v, t = [], []
    for _ in range(a.reps):
        v.append(vs())
        t.append(inproc(pt))
    ratios = [x / y for x, y in zip(v, t)]
    print(f"{label}: versus {statistics.median(v):.3f} s, PyTorch {statistics.median(t):.3f} s, "
          f"versus / PyTorch median of pairs {statistics.median(ratios):.2f} (pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
    for impl, ts in (("versus", v), ("torch", t)):
        lines.append({"name": name, "suite": "explain", "impl": impl, "threads": a.threads, "isa": kernel_isa, "reps": a.reps,
                      "median_s": statistics.median(ts), "min_s": min(ts), "gflops": 0, "clock": a.clock,
                      "ratio_median": statistics.median(ratios)})
if os.path.exists(os.path.join(work, "A.npy")):  # the two sides compute the same attributions (relative to the largest)
    want = torch_ig().detach().numpy()
    got = np.load(os.path.join(work, "A.npy"))
    print(f"IG-{STEPS}: max |versus - PyTorch| / max |PyTorch| = {np.abs(got - want).max() / np.abs(want).max():.1e}")
print(f"load average at the end {os.getloadavg()[0]:.1f}")
if a.json:
    with open(a.json, "w") as f:
        f.writelines(json.dumps(d) + "\n" for d in lines)
