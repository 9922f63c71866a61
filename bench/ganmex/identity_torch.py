#!/usr/bin/python3
"""bench/ganmex/identity_torch.py - can GANMEX's generator learn to copy its input under the
similarity term alone?  The colour ablation of the GANMEX paper (appendix D) needs G(x, c) to follow
x; on coloured MNIST ours does not (bench/results/ganmex.md).  This rebuilds the generator of the
ganmex zoo entry in PyTorch (StarGAN: label planes concatenated to x, 7x7 conv 16 wide, two stride-2
convs, 2 residual blocks, two transposed convs, 7x7 conv, tanh; instance norm with affine weights,
images in [-1,1]) and trains it with the L1 term mean |G(x, c) - x| only (Adam 1e-4, betas 0.5,
0.999, batch 16) on the first 7000 MNIST test digits, gray or coloured as colored-mnist does (each
digit in one random channel of three).

    ganmex_identity_torch.py [--steps N] [--every K] [--seed S]

Prints per data set and every K steps the L1 of the batch, the L1 an all-black output would have
(the median of the data: the trap), and on coloured data the share of the batch whose output's
dominant channel is the input's (1/3 by chance).  Needs the MNIST test images under
$VERSUS_DATA/mnist (t10k-images-idx3-ubyte.gz).
"""
import argparse
import gzip
import os
import sys

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("ganmex_identity_torch: PyTorch is not installed (import torch failed)")


def mnist(root):
    path = os.path.join(root, "mnist", "t10k-images-idx3-ubyte.gz")
    with gzip.open(path) as f:
        return (np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28) / 255.0).astype(np.float32)[:7000]


def colorize(x, rng):
    col = rng.integers(0, 3, len(x))
    y = np.zeros((len(x), 3, 28, 28), np.float32)
    y[np.arange(len(x)), col] = x[:, 0]
    return y


def generator(c):
    def norm(k):
        return nn.InstanceNorm2d(k, affine=True)

    class Residual(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.m = nn.Sequential(nn.Conv2d(k, k, 3, 1, 1, bias=False), norm(k), nn.ReLU(), nn.Conv2d(k, k, 3, 1, 1, bias=False), norm(k))

        def forward(self, x):
            return x + self.m(x)

    return nn.Sequential(nn.Conv2d(c + 10, 16, 7, 1, 3, bias=False), norm(16), nn.ReLU(),
                         nn.Conv2d(16, 32, 4, 2, 1, bias=False), norm(32), nn.ReLU(),
                         nn.Conv2d(32, 64, 4, 2, 1, bias=False), norm(64), nn.ReLU(), Residual(64), Residual(64),
                         nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), norm(32), nn.ReLU(),
                         nn.ConvTranspose2d(32, 16, 4, 2, 1, bias=False), norm(16), nn.ReLU(),
                         nn.Conv2d(16, c, 7, 1, 3, bias=False), nn.Tanh())


def run(name, x, steps, every, seed):
    torch.manual_seed(seed)
    g = generator(x.shape[1])
    opt = torch.optim.Adam(g.parameters(), lr=1e-4, betas=(0.5, 0.999))
    xt = torch.tensor(x) * 2 - 1
    c = x.shape[1]
    for step in range(1, steps + 1):
        xb = xt[torch.randint(0, len(xt), (16,))]
        planes = torch.zeros(16, 10, 28, 28)
        planes[torch.arange(16), torch.randint(0, 10, (16,))] = 1
        y = g(torch.cat([xb, planes], 1))
        loss = (y - xb).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            black = (xb + 1).abs().mean().item()
            kept = ""
            if c == 3:
                same = (y.detach().view(16, c, -1).sum(2).argmax(1) == xb.view(16, c, -1).sum(2).argmax(1)).float().mean().item()
                kept = f"  colour kept {same:.2f}"
            print(f"{name:8s} step {step:5d}  L1 {loss.item():.4f}  all-black L1 {black:.4f}{kept}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(1)
    gray = mnist(os.environ.get("VERSUS_DATA", "/work/shared/datasets"))
    run("mnist", gray, a.steps, a.every, a.seed)
    run("colored", colorize(gray, np.random.default_rng(a.seed)), a.steps, a.every, a.seed)


if __name__ == "__main__":
    main()
