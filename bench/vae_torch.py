#!/usr/bin/env python3
"""vae_torch.py - PyTorch's VAE example (examples/vae/main.py: fc1 784-400, fc21/fc22 400-20,
fc3 20-400, fc4 400-784, Bernoulli decoder) trained the way `versus train --arch vae` trains it:
the same training rows, batch size, Adam(lr 1e-3), one shuffled pass per epoch; then the test ELBO
in nats per example with one z sample per example, the figure versus writes as metrics.json's
test_elbo.

usage: vae_torch.py TRAIN_X.npy TEST_X.npy [--epochs 1] [--batch-size 128] [--seeds 1,2,3]
The .npy files are `versus data export mnist-train --out DIR` and `... mnist --out DIR` (X.npy).
Prints one line per seed ("seed S test_elbo E") and the mean.  Needs python3-torch.
"""
import argparse
import sys

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:
    print("vae_torch.py: skipped: python3-torch is not installed", file=sys.stderr)
    sys.exit(77)


class VAE(nn.Module):
    def __init__(self, p=784, hidden=400, latent=20):
        super().__init__()
        self.fc1 = nn.Linear(p, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, p)

    def forward(self, x):
        h = F.relu(self.fc1(x.view(x.shape[0], -1)))
        mu, logvar = self.fc21(h), self.fc22(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.fc4(F.relu(self.fc3(z))), mu, logvar


def parts(model, x):
    """Batch means of the reconstruction term (summed over pixels) and the KL term."""
    logits, mu, logvar = model(x)
    n = x.shape[0]
    recon = F.binary_cross_entropy_with_logits(logits, x.view(n, -1), reduction="sum") / n
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / n
    return recon, kl


def run(train, test, epochs, batch, seed):
    torch.manual_seed(seed)
    model = VAE(p=train[0].numel())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        perm = torch.randperm(train.shape[0])
        for i in range(0, train.shape[0], batch):
            x = train[perm[i:i + batch]]
            recon, kl = parts(model, x)
            opt.zero_grad()
            (recon + kl).backward()
            opt.step()
    total = 0.0
    with torch.no_grad():
        for i in range(0, test.shape[0], 256):
            x = test[i:i + 256]
            recon, kl = parts(model, x)
            total += float(recon + kl) * x.shape[0]
    return -total / test.shape[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--seeds", default="1,2,3")
    a = ap.parse_args()
    torch.set_num_threads(1)
    train = torch.from_numpy(np.load(a.train).astype(np.float32))
    test = torch.from_numpy(np.load(a.test).astype(np.float32))
    elbos = []
    for s in [int(v) for v in a.seeds.split(",")]:
        e = run(train, test, a.epochs, a.batch_size, s)
        elbos.append(e)
        print(f"seed {s} test_elbo {e:.4f}")
    print(f"mean test_elbo {np.mean(elbos):.4f} (torch {torch.__version__}, {len(elbos)} seeds)")


if __name__ == "__main__":
    main()
