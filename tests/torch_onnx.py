"""tests/torch_onnx.py - ONNX graphs exported by PyTorch, run by versus against PyTorch's own outputs.

torchvision's classification families (resnet18, vgg11, densenet121, mobilenet_v2, squeezenet1_1; random
weights, randomised batch-norm statistics, small inputs) are exported with torch.onnx.export in eval mode
and fed to `versus predict --model FILE.onnx`; the logits must equal torch's to 1e-4 relative (to the
largest logit).  On resnet18: `versus import` writes a model directory that predicts bit for bit the same,
and saliency and integrated gradients (Gauss-Legendre, as versus's default rule) equal the same
computations in PyTorch, and a layer method at an ONNX node name (and at its output tensor's name) equals
the same computation at the torchvision module's output.  A small residual CNN is exported at opsets 11, 13 and 17, and a torchvision model
with the x.view(x.size(0), -1) flatten exercises the folding of Shape -> Gather -> Unsqueeze -> Concat ->
Reshape.  The papers' kinds of model as a PyTorch user exports them: GANMEX's MNIST classifier, a Siamese
MLP with two inputs (predicted with --reference), a StarGAN generator with its label as planes (Tile, Expand,
ConstantOfShape, InstanceNormalization, ConvTranspose) predicted with the label as --reference.
usage: torch_onnx.py VERSUS WORKDIR [NAME...]; exit 0 pass, 1 fail, 77 skip (torch missing).
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:  # the test is skipped without torch
    print(f"SKIP: {e} (install python3-torch and python3-torchvision)")
    sys.exit(77)

VERSUS, WORK = sys.argv[1], sys.argv[2]
ONLY = set(sys.argv[3:])
torch.manual_seed(5)
failures = 0


def run(*args):
    r = subprocess.run([VERSUS, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: versus {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def compare(what, got, want, tol=1e-4):
    global failures
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64).reshape(np.shape(got))
    scale = max(float(np.abs(want).max()), 1e-6)
    err = float(np.abs(got - want).max()) / scale
    ok = err <= tol and float(np.abs(want).max()) > 0
    print(f"{'ok' if ok else 'FAIL'}: {what}: max |versus - torch| / max |torch| = {err:.2e}")
    if not ok:
        failures += 1


def randomize(m):
    """Batch-norm statistics and affine parameters away from their defaults, so that they matter."""
    g = torch.Generator().manual_seed(11)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
    return m.eval()


def export(name, m, shape, opset=13, dynamic=False):
    """dynamic: the batch as a named dim, so that x.view(x.size(0), -1) exports its Shape chain."""
    path = os.path.join(WORK, f"{name}.onnx")
    x = torch.randn(1, *shape)
    axes = {"x": {0: "n"}, "y": {0: "n"}} if dynamic else None
    torch.onnx.export(m, x, path, opset_version=opset, input_names=["x"], output_names=["y"], dynamic_axes=axes)
    return path


def predict(path, x, out_name):
    xp, yp = os.path.join(WORK, f"{out_name}_X.npy"), os.path.join(WORK, f"{out_name}_Y.npy")
    np.save(xp, x.numpy().astype(np.float32))
    run("predict", "--model", path, "--input", xp, "--out", yp)
    return np.load(yp)


def check_model(name, m, shape, n=2, opset=13, dynamic=False):
    m = randomize(m)
    path = export(f"{name}_o{opset}", m, shape, opset, dynamic)
    x = torch.randn(n, *shape)
    with torch.no_grad():
        want = m(x)
    compare(f"{name} (opset {opset}) logits", predict(path, x, f"{name}_o{opset}"), want)
    return m, path, x


class Residual(nn.Module):
    """A small network of the ops the families share, with a view() flatten (Shape/Gather/Concat/Reshape)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.c1(x)))
        h = h + torch.nn.functional.relu6(self.c2(h))
        h = torch.nn.functional.hardswish(self.dw(h))
        h = torch.nn.functional.max_pool2d(h, 2, ceil_mode=True)
        return torch.softmax(self.fc(h.view(h.size(0), -1)), dim=1)


def wanted(name):
    return not ONLY or name in ONLY


if wanted("residual"):
    for opset in (11, 13, 17):
        check_model("residual", Residual(), (3, 16, 16), opset=opset, dynamic=opset == 13)

families = [("resnet18", lambda: torchvision.models.resnet18(num_classes=10), (3, 64, 64)),
            ("vgg11", lambda: torchvision.models.vgg11(num_classes=10), (3, 32, 32)),
            ("densenet121", lambda: torchvision.models.densenet121(num_classes=10), (3, 32, 32)),
            ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(num_classes=10), (3, 32, 32)),
            ("squeezenet1_1", lambda: torchvision.models.squeezenet1_1(num_classes=10), (3, 48, 48))]
for name, build, shape in families:
    if not wanted(name):
        continue
    m = build()
    if name == "vgg11":  # torchvision's 7x7 adaptive pool exports only for inputs of 224 and up
        m.avgpool = nn.AdaptiveAvgPool2d(1)
        m.classifier[0] = nn.Linear(512, 4096)
    m, path, x = check_model(name, m, shape)
    if name != "resnet18":
        continue
    # import: a model directory that predicts the same bits
    d = os.path.join(WORK, "resnet18_dir")
    run("import", path, "--out", d)
    a, b = predict(path, x, "r18a"), predict(d, x, "r18b")
    same = a.tobytes() == b.tobytes()
    print(f"{'ok' if same else 'FAIL'}: resnet18 imported directory predicts the same bits as the .onnx file")
    failures += not same
    # saliency and integrated gradients of the target logit, one image
    x1, target, steps = x[:1].clone(), 3, 16
    xp, ap = os.path.join(WORK, "ig_X.npy"), os.path.join(WORK, "ig_A.npy")
    np.save(xp, x1.numpy())
    run("attribute", "--model", path, "--input", xp, "--method", "saliency", "--target", str(target), "--out", ap)
    xs = x1.clone().requires_grad_(True)
    m(xs)[0, target].backward()
    compare("resnet18 saliency", np.load(ap), xs.grad, tol=1e-3)
    run("attribute", "--model", path, "--input", xp, "--method", "integrated_gradients", "--target", str(target),
        "--steps", str(steps), "--out", ap)
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    alphas, weights = (nodes + 1) / 2, weights / 2
    path_x = torch.cat([a * x1 for a in alphas]).requires_grad_(True)
    m(path_x)[:, target].sum().backward()
    ig = x1[0] * sum(float(w) * path_x.grad[k] for k, w in enumerate(weights))
    compare("resnet18 integrated gradients (16 Gauss-Legendre steps)", np.load(ap), ig, tol=1e-3)
    # a layer method at an ONNX node, and at its output tensor: the last block's output (its second relu)
    acts = {}
    hook = m.layer4[1].register_forward_hook(lambda mod, i, o: acts.setdefault("a", o))
    xs = x1.clone()
    out = m(xs)
    hook.remove()
    a4 = acts["a"]
    g4, = torch.autograd.grad(out[0, target], a4)
    got = []
    for layer in ("/layer4/layer4.1/relu_1/Relu", "/layer4/layer4.1/relu_1/Relu_output_0"):
        run("attribute", "--model", path, "--input", xp, "--method", "layer_gradient_x_activation", "--layer", layer,
            "--target", str(target), "--out", ap)
        got.append(np.load(ap))
    compare("resnet18 layer_gradient_x_activation at ONNX node /layer4/layer4.1/relu_1/Relu", got[0], (a4 * g4).detach(), tol=1e-3)
    same = got[0].tobytes() == got[1].tobytes()
    print(f"{'ok' if same else 'FAIL'}: --layer takes the node's output tensor name for the same layer")
    failures += not same
    r = subprocess.run([VERSUS, "attribute", "--model", path, "--input", xp, "--method", "layer_activation", "--layer",
                        "/layer9/Relu", "--out", ap], capture_output=True, text=True)
    ok = r.returncode == 1 and "--layer /layer9/Relu" in r.stderr and "/conv1/Conv, /relu/Relu, /maxpool/MaxPool" in r.stderr
    print(f"{'ok' if ok else 'FAIL'}: an unknown --layer lists the graph's node names: {r.stderr.strip()[:160]}...")
    failures += not ok



# ---- the papers' kinds of model, as a PyTorch user would export them ----
class GanmexClassifier(nn.Module):
    """GANMEX A.1's MNIST classifier (k6 s2 convs, dropout)."""
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 32, 6, 2, 2), nn.Conv2d(32, 64, 6, 2, 2)
        self.f1, self.f2 = nn.Linear(64 * 7 * 7, 256), nn.Linear(256, 10)

    def forward(self, x):
        h = torch.flatten(torch.relu(self.c2(torch.relu(self.c1(x)))), 1)
        return self.f2(nn.functional.dropout(torch.relu(self.f1(h)), training=self.training))


class SiameseMLP(nn.Module):
    """Two inputs, one shared encoder, cosine head: versus reads it as a pair model (--reference)."""
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, x, r):
        return nn.functional.cosine_similarity(self.enc(x), self.enc(r), dim=1)


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.InstanceNorm2d(c, affine=True), nn.ReLU(),
                               nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.InstanceNorm2d(c, affine=True))

    def forward(self, x):
        return x + self.b(x)


class StarGANGenerator(nn.Module):
    """StarGAN's generator at a small width: the label as planes (view + repeat: Shape, ConstantOfShape,
    Expand, Tile), instance norms, a transposed convolution."""
    def __init__(self, k=10, d=16):
        super().__init__()
        self.m = nn.Sequential(nn.Conv2d(1 + k, d, 7, 1, 3, bias=False), nn.InstanceNorm2d(d, affine=True), nn.ReLU(),
                               nn.Conv2d(d, 2 * d, 4, 2, 1, bias=False), nn.InstanceNorm2d(2 * d, affine=True), nn.ReLU(),
                               ResBlock(2 * d), ResBlock(2 * d),
                               nn.ConvTranspose2d(2 * d, d, 4, 2, 1, bias=False), nn.InstanceNorm2d(d, affine=True), nn.ReLU(),
                               nn.Conv2d(d, 1, 7, 1, 3, bias=False), nn.Tanh())

    def forward(self, x, c):
        c = c.view(c.size(0), c.size(1), 1, 1).repeat(1, 1, x.size(2), x.size(3))
        return self.m(torch.cat([x, c], dim=1))


class TileWide(nn.Module):
    def forward(self, x):
        return x.repeat(1, 2, 1, 1)


def export_n(name, m, shapes, names):
    path = os.path.join(WORK, f"{name}.onnx")
    xs = [torch.randn(3, *s) for s in shapes]
    axes = {n: {0: "n"} for n in names + ["y"]}
    torch.onnx.export(m, tuple(xs), path, opset_version=13, input_names=names, output_names=["y"], dynamic_axes=axes)
    return path, xs


if wanted("zoo"):
    for name, m, shapes in [("ganmex_classifier", GanmexClassifier(), [(1, 28, 28)]),
                            ("siamese_mlp", SiameseMLP(), [(12,), (12,)]),
                            ("stargan_generator", StarGANGenerator(), [(1, 28, 28), (10,)])]:
        m.eval()
        for mod in m.modules():
            if isinstance(mod, nn.InstanceNorm2d):
                mod.weight.data.uniform_(0.5, 1.5)
                mod.bias.data.normal_(0, 0.1)
        names = ["x", "r"][:len(shapes)]
        path, xs = export_n(name, m, shapes, names)
        with torch.no_grad():
            want = m(*xs)
        xp, yp = os.path.join(WORK, f"{name}_X.npy"), os.path.join(WORK, f"{name}_Y.npy")
        np.save(xp, xs[0].numpy())
        args = ["predict", "--model", path, "--input", xp, "--out", yp]
        if len(xs) == 2:
            rp = os.path.join(WORK, f"{name}_R.npy")
            np.save(rp, xs[1].numpy())
            args += ["--reference", rp]
        run(*args)
        compare(f"{name} (two inputs)" if len(xs) == 2 else name, np.load(yp), want)
    # a Tile that repeats a dim of size 2 is no broadcast: refused with the node and the reason
    path, xs = export_n("tile_wide", TileWide(), [(2, 4, 4)], ["x"])
    r = subprocess.run([VERSUS, "import", path, "--out", os.path.join(WORK, "tile_wide_dir")], capture_output=True, text=True)
    ok = r.returncode == 1 and "only dims of size 1 can be tiled" in r.stderr and "Tile" in r.stderr
    print(f"{'ok' if ok else 'FAIL'}: a Tile of a dim of size 2 is refused: {r.stderr.strip()}")
    failures += not ok

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
