#!/usr/bin/python3
"""torch_explain.py - the attribution computations of `versus attribute` in PyTorch, timed the same way.

Usage: torch_explain.py MODEL_DIR X.npy ROWS THREADS
Loads the GANMEX MNIST classifier from MODEL_DIR/model.safetensors (parsed here: Debian's PyTorch has no
safetensors module), and for each of ROWS images times, as the median over the rows:
  integrated_gradients  200 Gauss-Legendre steps, zero baseline, gradients of all steps in one batch
  deeplift              rescale rule through ReLU (inputs and baseline in one batch of 2)
  occlusion             784 single-pixel occlusions (Occlusion-1), forwards in batches of 64
  kernel_shap           2000 coalitions of the 784 pixels, forwards in batches of 64, weighted least
                        squares with the efficiency constraint eliminated
Prints one JSON line per method: {"impl": "torch", "method": ..., "threads": T, "seconds": median}.
"""
import json
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"]).copy())
    return out


class RescaleReLU(torch.autograd.Function):
    """ReLU whose backward is DeepLIFT's rescale multiplier between the two halves of the batch."""

    @staticmethod
    def forward(ctx, x):
        y = x.clamp(min=0)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        h = x.shape[0] // 2
        dx = x[:h] - x[h:]
        dy = y[:h] - y[h:]
        m = torch.where(dx.abs() > 1e-6, dy / torch.where(dx.abs() > 1e-6, dx, torch.ones_like(dx)), (x[:h] > 0).float())
        return g * torch.cat([m, m])


class Net(nn.Module):
    def __init__(self, rescale=False):
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 6, 2, 2)
        self.c2 = nn.Conv2d(32, 64, 6, 2, 2)
        self.f1 = nn.Linear(3136, 256)
        self.f2 = nn.Linear(256, 10)
        self.act = RescaleReLU.apply if rescale else torch.relu

    def forward(self, x):
        h = self.act(self.c1(x))
        h = self.act(self.c2(h))
        h = self.act(self.f1(h.flatten(1)))
        return self.f2(h)


def load_net(model_dir, rescale=False):
    w = load_safetensors(model_dir + "/model.safetensors")
    net = Net(rescale)
    names = {"c1": "0", "c2": "2", "f1": "5", "f2": "8"}
    sd = {}
    for ours, theirs in names.items():
        sd[ours + ".weight"] = w[theirs + ".weight"]
        sd[ours + ".bias"] = w[theirs + ".bias"]
    net.load_state_dict(sd)
    return net.eval()


def score(net, x, t):
    return net(x)[:, t]


def ig(net, x, t, steps=200):
    a, wq = np.polynomial.legendre.leggauss(steps)
    a = torch.tensor((a + 1) / 2, dtype=torch.float32).view(-1, 1, 1, 1)
    wq = torch.tensor(wq / 2, dtype=torch.float32).view(-1, 1, 1, 1)
    path = (a * x).requires_grad_(True)  # zero baseline
    g, = torch.autograd.grad(score(net, path, t).sum(), path)
    return x * (wq * g).sum(0, keepdim=True)


def deeplift(net_r, x, t):
    xb = torch.cat([x, torch.zeros_like(x)]).requires_grad_(True)
    s = score(net_r, xb, t)
    g, = torch.autograd.grad(s[0], xb)
    return x * g[:1]


def occlusion(net, x, t, batch=64):
    with torch.no_grad():
        base = score(net, x, t)
        d = x.numel()
        out = torch.empty(d)
        flat = x.flatten()
        for b0 in range(0, d, batch):
            n = min(batch, d - b0)
            rows = flat.repeat(n, 1)
            rows[torch.arange(n), torch.arange(b0, b0 + n)] = 0
            out[b0:b0 + n] = base - score(net, rows.view(n, *x.shape[1:]), t)
    return out.view_as(x)


def kernel_shap(net, x, t, budget=2000, batch=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    M = x.numel()
    s = torch.arange(1, M, dtype=torch.float64)
    p = 1.0 / (s * (M - s))
    p /= p.sum()
    sizes = torch.multinomial(p, budget // 2, replacement=True, generator=g) + 1
    z = torch.zeros(budget, M)
    for i, k in enumerate(sizes.tolist()):
        idx = torch.randperm(M, generator=g)[:k]
        z[2 * i, idx] = 1
        z[2 * i + 1] = 1 - z[2 * i]
    flat = x.flatten()
    with torch.no_grad():
        v = torch.empty(budget)
        for b0 in range(0, budget, batch):
            zz = z[b0:b0 + batch]
            v[b0:b0 + len(zz)] = score(net, (zz * flat).view(len(zz), *x.shape[1:]), t)
        v0 = score(net, torch.zeros_like(x), t)[0]
        v1 = score(net, x, t)[0]
    zd = z.double()
    y = v.double() - v0.double() - zd[:, -1] * (v1 - v0).double()
    X = zd[:, :-1] - zd[:, -1:]
    A = X.T @ X + 1e-12 * torch.eye(M - 1, dtype=torch.float64)
    phi = torch.linalg.solve(A, X.T @ y)
    return torch.cat([phi, ((v1 - v0) - phi.sum()).view(1)]).float()


def main():
    model_dir, xfile, rows, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(threads)
    net, net_r = load_net(model_dir), load_net(model_dir, rescale=True)
    X = torch.from_numpy(np.load(xfile)[:rows].astype(np.float32))
    methods = {"integrated_gradients": lambda x, t: ig(net, x, t), "deeplift": lambda x, t: deeplift(net_r, x, t),
               "occlusion": lambda x, t: occlusion(net, x, t), "kernel_shap": lambda x, t: kernel_shap(net, x, t)}
    for name, fn in methods.items():
        x0 = X[:1]
        fn(x0, int(net(x0).argmax()))  # warm-up
        times = []
        for r in range(rows):
            x = X[r:r + 1]
            t = int(net(x).argmax())
            t0 = time.perf_counter()
            fn(x, t)
            times.append(time.perf_counter() - t0)
        print(json.dumps({"impl": "torch", "method": name, "threads": threads, "seconds": float(np.median(times))}))


if __name__ == "__main__":
    main()
