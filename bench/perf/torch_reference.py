#!/usr/bin/python3
"""bench/perf/torch_reference.py - time vs_bench's matrix products, convolutions, training steps, explainers and the
sweep (bench_sweep.c: convolutions and models the bench was not tuned on) in PyTorch (and numpy).

    torch_reference.py VERSUS_JSONL [--reps N]
    torch_reference.py --rss NAME THREADS [--reps N]

The training steps and explainers (suites "train" and "explain") are the models of bench/perf/train.c
rebuilt with torch.nn (same layers, batches, losses, Adam lr 1e-4, random data from a fixed seed),
timed the same way.  --rss runs one of them alone in a fresh process and prints the process's peak
resident memory (resource.getrusage), to set beside vs_bench --rss.

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


# The clock of the vs_bench run being repeated: wall-clock time, or the process's CPU time (--clock cpu).
CLOCK = {"now": time.perf_counter}


def measure(fn, reps):
    """Median and minimum seconds per call of fn, and the calls per timed sample."""
    now = CLOCK["now"]
    fn()  # first call: lazy initialisation, page faults
    t0 = now()
    fn()
    once = now() - t0
    iters = 1 if once >= MIN_SAMPLE_S else int(MIN_SAMPLE_S / max(once, 1e-9)) + 1
    start = now()
    while now() - start < WARMUP_S:
        fn()
    samples = []
    for _ in range(reps):
        t0 = now()
        for _ in range(iters):
            fn()
        samples.append((now() - t0) / iters)
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


def train_models(torch):
    """name -> function(batch) returning a zero-argument step function, mirroring bench_train.c."""
    nn = torch.nn
    F = torch.nn.functional

    class Res(nn.Module):
        def __init__(self, block):
            super().__init__()
            self.block = block

        def forward(self, x):
            return x + self.block(x)

    def conv_in(layers, cin, cout, k, s, p, relu=True, transpose=False):
        conv = nn.ConvTranspose2d if transpose else nn.Conv2d
        layers += [conv(cin, cout, k, s, p, bias=False), nn.InstanceNorm2d(cout, affine=True)]
        if relu:
            layers.append(nn.ReLU())

    def ganmex():
        return nn.Sequential(nn.Conv2d(1, 32, 6, 2, 2), nn.ReLU(), nn.Conv2d(32, 64, 6, 2, 2), nn.ReLU(), nn.Flatten(),
                             nn.Linear(3136, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))

    def cem():
        return nn.Sequential(nn.Conv2d(1, 32, 5, 1, 2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 5, 1, 2), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3136, 1024), nn.ReLU(), nn.Dropout(0.4),
                             nn.Linear(1024, 6))

    def stargan():
        layers = []
        conv_in(layers, 4, 32, 7, 1, 3)
        conv_in(layers, 32, 64, 4, 2, 1)
        conv_in(layers, 64, 128, 4, 2, 1)
        for _ in range(2):
            block = []
            conv_in(block, 128, 128, 3, 1, 1)
            conv_in(block, 128, 128, 3, 1, 1, relu=False)
            layers.append(Res(nn.Sequential(*block)))
        conv_in(layers, 128, 64, 4, 2, 1, transpose=True)
        conv_in(layers, 64, 32, 4, 2, 1, transpose=True)
        layers += [nn.Conv2d(32, 1, 7, 1, 3, bias=False), nn.Tanh()]
        return nn.Sequential(*layers)

    def critic():
        return nn.Sequential(nn.Conv2d(1, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 4, 2, 1), nn.LeakyReLU(0.2),
                             nn.Flatten(), nn.Linear(128 * 7 * 7, 1))

    def step_fn(model, loss_fn):
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn().backward()
            opt.step()
        return step

    def ganmex_step(n, make=ganmex, classes=10):
        m = make().train()
        x = torch.rand(n, 1, 28, 28)
        y = torch.arange(n) % classes
        return step_fn(m, lambda: F.cross_entropy(m(x), y))

    def siamese_step(n):
        m = nn.Sequential(nn.Linear(100, 64), nn.ReLU(), nn.Linear(64, 32))
        a, b = torch.rand(n, 100), torch.rand(n, 100)
        t = (torch.arange(n) % 2).float()
        return step_fn(m, lambda: F.binary_cross_entropy_with_logits(5 * F.cosine_similarity(m(a), m(b), dim=1), t))

    def dipvae_step(n):
        m = nn.Sequential(nn.Flatten(), nn.Linear(784, 1200), nn.ReLU(), nn.Linear(1200, 1200), nn.ReLU(),
                          nn.Linear(1200, 16))
        x, t = torch.rand(n, 1, 28, 28), torch.randn(n, 16)
        return step_fn(m, lambda: F.mse_loss(m(x), t))

    def stargan_step(n):
        m = stargan()
        x, t = torch.rand(n, 4, 28, 28) * 2 - 1, torch.rand(n, 1, 28, 28) * 2 - 1
        return step_fn(m, lambda: F.l1_loss(m(x), t))

    def wgan_step(n):
        m = critic()
        fake, real = torch.rand(n, 1, 28, 28) * 2 - 1, torch.rand(n, 1, 28, 28) * 2 - 1

        def loss():
            e = torch.rand(n, 1, 1, 1)
            xhat = (e * real + (1 - e) * fake).requires_grad_(True)
            g, = torch.autograd.grad(m(xhat).sum(), xhat, create_graph=True)
            norm = torch.sqrt((g * g).sum(dim=(1, 2, 3)) + 1e-12)
            gp = ((norm - 1) ** 2).mean()
            return m(fake).mean() - m(real).mean() + 10 * gp
        return step_fn(m, loss)

    def vae_step(n):
        from torch_models import VAE
        m = VAE().train()
        x = torch.rand(n, 1, 28, 28)

        def loss():  # the negative ELBO per example, as task "vae" (logits: fc4 before decode's sigmoid)
            mu, logvar = m.encode(x.view(-1, 784))
            z = m.reparameterize(mu, logvar)
            logits = m.fc4(F.relu(m.fc3(z)))
            recon = F.binary_cross_entropy_with_logits(logits, x.view(-1, 784), reduction="sum") / n
            kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / n
            return recon + kl
        return step_fn(m, loss)

    def stargan_gan_step(n):
        """StarGAN's solver.train() step (WGAN-GP form) on the zoo's sizes: critic then generator."""
        from torch_models import Discriminator, Generator
        G = Generator(conv_dim=32, c_dim=10, repeat_num=3, channels=1).train()
        D = Discriminator(image_size=28, conv_dim=32, c_dim=10, repeat_num=3, channels=1).train()
        g_opt, d_opt = torch.optim.Adam(G.parameters(), lr=1e-4), torch.optim.Adam(D.parameters(), lr=1e-4)
        x = torch.rand(n, 1, 28, 28) * 2 - 1
        y = torch.arange(n) % 10
        t = (y + 3) % 10
        c_org, c_trg = F.one_hot(y, 10).float(), F.one_hot(t, 10).float()

        def step():
            with torch.no_grad():
                fake = G(x, c_trg)
            e = torch.rand(n, 1, 1, 1)
            xhat = (e * x + (1 - e) * fake).requires_grad_(True)
            src, _ = D(xhat)
            g, = torch.autograd.grad(src.mean(dim=(1, 2, 3)).sum(), xhat, create_graph=True)
            gp = ((torch.sqrt((g * g).sum(dim=(1, 2, 3)) + 1e-12) - 1) ** 2).mean()
            src_real, cls_real = D(x)
            src_fake, _ = D(fake)
            d_loss = src_fake.mean() - src_real.mean() + 10 * gp + F.cross_entropy(cls_real, y)
            d_opt.zero_grad(set_to_none=True)
            d_loss.backward()
            d_opt.step()
            fake = G(x, c_trg)
            src_fake, cls_fake = D(fake)
            back = G(fake, c_org)
            g_loss = F.cross_entropy(cls_fake, t) - src_fake.mean() + 10 * F.l1_loss(back, x)
            g_opt.zero_grad(set_to_none=True)
            d_opt.zero_grad(set_to_none=True)
            g_loss.backward()
            g_opt.step()
        return step

    def input_grad(m, xb):
        xb.requires_grad_(True)
        g, = torch.autograd.grad(m(xb)[:, 3].sum(), xb)
        return g

    def ig_run(n):
        m = ganmex().eval()
        x = torch.rand(1, 1, 28, 28)

        def run():
            attr = torch.zeros(1, 1, 28, 28)
            for k0 in range(0, 200, n):
                b = min(n, 200 - k0)
                alpha = ((torch.arange(k0, k0 + b, dtype=torch.float32) + 0.5) / 200).view(b, 1, 1, 1)
                attr += (input_grad(m, alpha * x) * x / 200).sum(0, keepdim=True)
            return attr
        return run

    def ig_mlp():
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))

    def ig_convpool():
        return nn.Sequential(nn.Conv2d(1, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, 1, 1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))

    def ig_batch_run(make):
        """IG-200 (midpoints, zero baseline, target 3) of n images: all n * 200 points in batches of 64, as
        Captum's IntegratedGradients(internal_batch_size=64) evaluates them."""
        def build(n):
            m = make().eval()
            x = torch.rand(n, 1, 28, 28)
            alpha = (torch.arange(200, dtype=torch.float32) + 0.5) / 200
            pts = (alpha.view(1, 200, 1, 1, 1) * x.unsqueeze(1)).reshape(n * 200, 1, 28, 28)

            def run():
                grads = torch.cat([input_grad(m, pts[k:k + 64].clone()) for k in range(0, n * 200, 64)])
                return x * grads.view(n, 200, 1, 28, 28).mean(1)
            return run
        return build

    def occlusion_run(n):
        m = ganmex().eval()
        x = torch.rand(1, 1, 28, 28)

        def run():
            with torch.no_grad():
                base = m(x)[0, 3]
                drop = torch.empty(784)
                for p0 in range(0, 784, n):
                    b = min(n, 784 - p0)
                    xb = x.repeat(b, 1, 1, 1).view(b, 784)
                    xb[torch.arange(b), torch.arange(p0, p0 + b)] = 0
                    drop[p0:p0 + b] = base - m(xb.view(b, 1, 28, 28))[:, 3]
            return drop
        return run

    def saliency_run(n):
        m = ganmex().eval()
        x = torch.rand(n, 1, 28, 28)
        return lambda: input_grad(m, x.detach().clone())

    return {"ganmex_mnist_step": ganmex_step, "cem_fashion_step": lambda n: ganmex_step(n, cem, 6),
            "siamese_mlp_step": siamese_step, "dipvae_mlp_step": dipvae_step, "stargan_gen_step": stargan_step,
            "wgan_gp_disc_step": wgan_step, "vae_mlp_step": vae_step, "stargan_gan_step": stargan_gan_step,
            "ig200_mnist": ig_run, "occlusion1_mnist": occlusion_run,
            "ig200_mlp16": ig_batch_run(ig_mlp), "ig200_convpool16": ig_batch_run(ig_convpool),
            "saliency64_mnist": saliency_run}


def timed_line(case, suite, impl, lib, threads, reps, fn, flops=0.0, **extra):
    """Time fn with measure() and print one JSON line in vs_bench's format (flops per run: 0 = unknown)."""
    median, best, iters = measure(fn, reps)
    line = {"name": case["name"], "suite": suite, "impl": impl, "threads": threads, "version": lib.__version__,
            "reps": reps, "iters": iters, "median_s": median, "min_s": best,
            "clock": "cpu" if CLOCK["now"] is time.process_time else "wall",
            "gflops": round(flops / median * 1e-9, 3) if flops else 0.0}
    line.update(extra)
    print(json.dumps(line, separators=(",", ":")), flush=True)


def run_train(torch, threads, case, reps, rss=False):
    torch.manual_seed(7)
    make = train_models(torch).get(case["name"])
    if make is None:
        print("torch_reference: no PyTorch version of %s" % case["name"], file=sys.stderr)
        return
    timed_line(case, case["suite"], "torch", torch, threads, reps, make(case["batch"]), batch=case["batch"])
    if rss:
        import resource
        print(json.dumps({"name": case["name"], "suite": "rss", "impl": "torch", "threads": threads,
                          "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}, separators=(",", ":")),
              flush=True)


def run_conv(torch, threads, case, reps):
    """F.conv2d (or F.conv_transpose2d) on a shape of bench_conv.c or bench_sweep.c: forward, or forward + backward
    to x, w and b."""
    import torch.nn.functional as F
    torch.manual_seed(5)
    n, c, h, w, o, k, s, p = (case[key] for key in ("n", "c", "h", "w", "o", "k", "stride", "pad"))
    back = bool(case["backward"])
    tr = bool(case.get("transpose"))
    d = case.get("dilation", 1)
    x = torch.randn(n, c, h, w, requires_grad=back)
    wt = (0.1 * torch.randn(*((c, o) if tr else (o, c)), k, k)).requires_grad_(back)
    b = (0.1 * torch.randn(o)).requires_grad_(back)
    if tr:
        oh, ow = (h - 1) * s - 2 * p + d * (k - 1) + 1, (w - 1) * s - 2 * p + d * (k - 1) + 1
    else:
        oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
    g = torch.randn(n, o, oh, ow)
    conv = F.conv_transpose2d if tr else F.conv2d

    def run():
        if back:
            x.grad = wt.grad = b.grad = None
            conv(x, wt, b, stride=s, padding=p, dilation=d).backward(g)
        else:
            with torch.no_grad():
                conv(x, wt, b, stride=s, padding=p, dilation=d)

    px = h * w if tr else oh * ow
    timed_line(case, case["suite"], "torch", torch, threads, reps, run, 2.0 * n * o * px * c * k * k * (3 if back else 1))


def sweep_models(torch):
    """name -> (function() building the model, input shape of one example): bench_sweep.c's training steps."""
    nn = torch.nn
    return {
        "sweep_convpool_step": (lambda: nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 8 * 8, 10)), (3, 32, 32)),
        "sweep_mlp_step": (lambda: nn.Sequential(
            nn.Linear(300, 200), nn.ReLU(), nn.Linear(200, 100), nn.ReLU(), nn.Linear(100, 10)), (300,)),
        "sweep_bnconv_step": (lambda: nn.Sequential(
            nn.Conv2d(1, 24, 3, 1, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(24, 48, 3, 2, 1, bias=False), nn.BatchNorm2d(48), nn.ReLU(), nn.Flatten(),
            nn.Linear(48 * 7 * 7, 10)), (1, 28, 28)),
        "sweep_leaky_mlp_step": (lambda: nn.Sequential(
            nn.Linear(784, 256), nn.LeakyReLU(0.01), nn.Dropout(0.3), nn.Linear(256, 128), nn.LeakyReLU(0.01),
            nn.Dropout(0.3), nn.Linear(128, 10)), (784,)),
    }


def run_sweep(torch, threads, case, reps):
    """A case of suite "sweep": a convolution (run_conv), or a training step (forward, cross entropy, backward, Adam
    lr 1e-4) of sweep_models."""
    if "k" in case:
        run_conv(torch, threads, case, reps)
        return
    import torch.nn.functional as F
    torch.manual_seed(7)
    make, shape = sweep_models(torch)[case["name"]]
    n = case["batch"]
    m = make().train()
    x, y = torch.rand(n, *shape), torch.arange(n) % 10
    opt = torch.optim.Adam(m.parameters(), lr=1e-4)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(m(x), y).backward()
        opt.step()
    timed_line(case, "sweep", "torch", torch, threads, reps, step, batch=n)


def run_worker(threads, cases, reps, rss=False):
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
        if case.get("suite") in ("train", "explain"):
            if "torch" in libs:
                run_train(libs["torch"], threads, case, reps, rss)
            continue
        if case.get("suite") in ("conv", "sweep"):
            if "torch" in libs:
                (run_conv if case["suite"] == "conv" else run_sweep)(libs["torch"], threads, case, reps)
            continue
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
            timed_line(case, "sgemm", impl, libs[impl], threads, reps, runs[impl], flops,
                       **{key: case[key] for key in ("m", "n", "k", "trans_a", "trans_b")})


def main(argv):
    if len(argv) >= 2 and argv[1] == "--worker":
        job = json.load(sys.stdin)
        if job.get("clock") == "cpu":
            CLOCK["now"] = time.process_time
        run_worker(job["threads"], job["cases"], job["reps"], job.get("rss", False))
        return 0
    reps_override = None
    if "--reps" in argv:
        reps_override = int(argv[argv.index("--reps") + 1])
    if len(argv) >= 4 and argv[1] == "--rss":
        threads = int(argv[3])
        suite = "explain" if argv[2] in ("ig200_mnist", "ig200_mlp16", "ig200_convpool16", "occlusion1_mnist",
                                         "saliency64_mnist") else "train"
        batch = 128 if argv[2] in ("siamese_mlp_step", "vae_mlp_step") else \
            16 if argv[2] in ("stargan_gen_step", "wgan_gp_disc_step", "stargan_gan_step") else 64
        job = {"threads": threads, "reps": reps_override or 15, "rss": True,
               "cases": [{"name": argv[2], "suite": suite, "batch": batch}]}
        return spawn(job)
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    by_threads = {}
    with open(argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            if d.get("suite") not in ("sgemm", "conv", "train", "explain", "sweep") or d.get("impl") != "versus":
                continue
            job = by_threads.setdefault(d["threads"], {"threads": d["threads"], "reps": reps_override or d["reps"], "cases": [],
                                                       "clock": d.get("clock", "wall")})
            conv_keys = ("name", "n", "c", "h", "w", "o", "k", "stride", "pad", "backward")
            keys = {"sgemm": ("name", "m", "n", "k", "trans_a", "trans_b"), "conv": conv_keys,
                    "sweep": conv_keys if "k" in d else ("name", "batch")}.get(d["suite"], ("name", "batch"))
            case = {key: d[key] for key in keys}
            for key in ("transpose", "dilation"):
                if d.get(key):
                    case[key] = d[key]
            case["suite"] = d["suite"]
            job["cases"].append(case)
    if not by_threads:
        print("torch_reference: no sgemm, conv, train, explain or sweep cases in %s" % argv[1], file=sys.stderr)
        return 1
    for threads in sorted(by_threads):
        status = spawn(by_threads[threads])
        if status != 0:
            return status
    return 0


def spawn(job):
    """Run a job in a fresh worker process with the thread variables set before the libraries load."""
    threads = str(job["threads"])
    env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                          input=json.dumps(job), text=True)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
