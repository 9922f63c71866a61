"""bench/perf/onnx_compare.py - torchvision's resnet18 (random weights, 3x224x224) through ONNX: versus against
PyTorch in the same run, on the same machine.  Forward at batch 8 and integrated gradients with 50 steps on
one image (versus's default Gauss-Legendre rule; PyTorch: the 50 path points as one batch, one backward).
versus is timed from the command line (`versus predict` / `versus attribute --model resnet18.onnx`), so its
times include reading and importing the .onnx file; the import alone is timed too and given apart.
Each is the median of --reps runs.  usage: onnx_compare.py VERSUS [--reps N] [--threads T]"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("versus")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--threads", type=int, default=os.cpu_count())
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
m = torchvision.models.resnet18().eval()
work = tempfile.mkdtemp(prefix="versus_onnx_bench.")
onnx = os.path.join(work, "resnet18.onnx")
torch.onnx.export(m, torch.randn(1, 3, 224, 224), onnx, opset_version=13)
x8 = torch.randn(8, 3, 224, 224)
np.save(os.path.join(work, "X8.npy"), x8.numpy())
np.save(os.path.join(work, "X1.npy"), x8[:1].numpy())
env = dict(os.environ, VERSUS_THREADS=str(a.threads))


def med(f):
    ts = []
    for _ in range(a.reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def cli(*args):
    subprocess.run([a.versus, *args], check=True, capture_output=True, env=env)


def torch_ig(steps=50):
    nodes, w = np.polynomial.legendre.leggauss(steps)
    x = x8[:1]
    p = torch.cat([float((n + 1) / 2) * x for n in nodes]).requires_grad_(True)
    m(p)[:, 0].sum().backward()
    return p.grad


with torch.no_grad():
    t_fwd = med(lambda: m(x8))
t_ig = med(torch_ig)
d = os.path.join(work, "dir")
v_import = med(lambda: cli("import", onnx, "--out", d))
v_fwd = med(lambda: cli("predict", "--model", onnx, "--input", os.path.join(work, "X8.npy"), "--out", os.path.join(work, "Y.npy")))
v_ig = med(lambda: cli("attribute", "--model", onnx, "--input", os.path.join(work, "X1.npy"), "--method", "integrated_gradients",
                       "--steps", "50", "--target", "0", "--out", os.path.join(work, "A.npy")))
print(f"threads {a.threads}, reps {a.reps} (medians, seconds)")
print(f"import (read + translate + write a model directory): versus {v_import:.3f}")
print(f"resnet18 forward, batch 8: versus CLI {v_fwd:.3f}, torch {t_fwd:.3f}, ratio versus/torch {v_fwd / t_fwd:.2f}")
print(f"resnet18 IG-50, one image: versus CLI {v_ig:.3f}, torch {t_ig:.3f}, ratio versus/torch {v_ig / t_ig:.2f}")
