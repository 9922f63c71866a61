"""tests/torch_export.py - a PyTorch user's path into versus, run as they would run it.

datasets/io/torch_to_versus.py writes three torch models as versus model directories: a sequential CNN (from a
state_dict saved with torch.save, through the script's command line), a Siamese model whose head is
learned (shared encoder, concat -> linear; a composite with two inputs, through save()) and an
autoencoder (encoder / decoder children, view).  versus predicts with each and must agree with torch to
1e-4 (relative to the largest output); then it explains each with three methods (the autoencoder's
reconstruction error, a region of its output, one output element per row), evaluates the attributions
(the pairs with one reference per row), draws labelled pictures and a report, and says what to do with a
.pt file given where a model is expected.
usage: torch_export.py VERSUS SRCDIR WORKDIR; exit 0 pass, 1 fail, 77 skip (torch missing).
"""
import json
import os
import struct
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:  # the test is skipped without torch
    print(f"SKIP: {e} (install python3-torch)")
    sys.exit(77)

VERSUS, SRC, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
SCRIPT = os.path.join(SRC, "datasets", "io", "torch_to_versus.py")
sys.path.insert(0, os.path.join(SRC, "datasets", "io"))
import torch_to_versus  # noqa: E402

torch.manual_seed(5)
failures = 0


def run(*args, want=0):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != want:
        raise SystemExit(f"FAIL: {' '.join(map(str, args))} exited {r.returncode}, wanted {want}:\n{r.stdout}{r.stderr}")
    return r


def compare(what, got, want, tol=1e-4):
    global failures
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        print(f"FAIL: {what}: shape {got.shape}, torch {want.shape}")
        failures += 1
        return
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)
    print(f"{what}: largest difference {err:.2e} of the largest output")
    if not err <= tol:
        print(f"FAIL: {what}: {err:.3g} > {tol}")
        failures += 1


def npy(name, a):
    path = os.path.join(WORK, name)
    np.save(path, np.ascontiguousarray(a, dtype=np.float32))
    return path


# ---- a sequential CNN, through the command line from a state_dict in a .pt file -----------------------
with open(os.path.join(WORK, "cnn.py"), "w") as f:
    f.write("import torch.nn as nn\n"
            "def Net(classes=3):\n"
            "    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1),\n"
            "                         nn.BatchNorm2d(6), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Dropout(0.2),\n"
            "                         nn.Linear(6 * 4 * 4, classes))\n")
sys.path.insert(0, WORK)
import cnn  # noqa: E402

def bars(n, gen):
    """16x16 images of class c = where a bright bar stands (left, middle, right), on faint noise."""
    y = torch.randint(0, 3, (n,), generator=gen)
    x = 0.1 * torch.rand(n, 1, 16, 16, generator=gen)
    for i in range(n):
        c = 2 + 5 * int(y[i])
        x[i, 0, 3:13, c:c + 3] = 0.9
    return x, y


net = cnn.Net(classes=3)
gen = torch.Generator().manual_seed(3)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
net.train()
for step in range(60):  # a good CNN: item 9's monotonicity is about a model that has learnt something
    xb, yb = bars(64, gen)
    opt.zero_grad()
    nn.functional.cross_entropy(net(xb), yb).backward()
    opt.step()
net.eval()
xt, yt = bars(200, gen)
with torch.no_grad():
    acc = (net(xt).argmax(1) == yt).float().mean().item()
print(f"the CNN's accuracy on fresh bars: {acc:.3f}")
if acc < 0.9:
    print("FAIL: the CNN did not learn the bars")
    failures += 1
pt = os.path.join(WORK, "cnn.pt")
torch.save(net.state_dict(), pt)
d_cnn = os.path.join(WORK, "cnn_model")
run(sys.executable, SCRIPT, "--module", os.path.join(WORK, "cnn.py") + ":Net", "--kwargs", '{"classes": 3}', "--weights", pt,
    "--input", "x=1,16,16", "--out", d_cnn)
x, _ = bars(5, gen)
with torch.no_grad():
    want = net(x).numpy()
X = npy("cnn_X.npy", x.numpy())
run(VERSUS, "predict", "--model", d_cnn, "--input", X, "--out", os.path.join(WORK, "cnn_y.npy"))
compare("sequential CNN logits", np.load(os.path.join(WORK, "cnn_y.npy")), want)
for m in ("saliency", "integrated_gradients", "gradient_shap"):
    run(VERSUS, "attribute", "--model", d_cnn, "--input", X, "--method", m, "--baselines", X, "--out", os.path.join(WORK, f"cnn_{m}.npy"),
        "--png", os.path.join(WORK, f"cnn_{m}.png"))
    res = run(VERSUS, "evaluate", "--model", d_cnn, "--input", X, "--attributions", os.path.join(WORK, f"cnn_{m}.npy"),
              "--heatmaps", os.path.join(WORK, f"cnn_{m}_eval.png"))
    summary = json.load(open(os.path.join(WORK, f"cnn_{m}.evaluation.json")))  # the full summary beside the map
    if "monotonicity" not in res.stdout or "mean_perturbation_curve" in res.stdout or summary["replace"] != "zero":
        print(f"FAIL: evaluate {m}: a table on standard output, the JSON (flips to zero) in the file, got:\n{res.stdout}")
        failures += 1
    if m == "integrated_gradients":  # item 9: zero-baseline IG on a good CNN, flipped to the zero baseline
        mono = summary["monotonicity"]["mean"]
        print(f"zero-baseline IG's monotonicity on the CNN: {mono:.3f}")
        if not mono > 0:
            print("FAIL: zero-baseline IG scores negative monotonicity under evaluate's default replacement")
            failures += 1
for png in ("cnn_integrated_gradients.png", "cnn_integrated_gradients_eval.png"):
    with open(os.path.join(WORK, png), "rb") as f:
        head = f.read(24)
    w, h = struct.unpack(">II", head[16:24])
    print(f"{png}: {w} x {h} pixels")
    if head[:8] != b"\x89PNG\r\n\x1a\n" or w < 300 or h < 5 * 100:
        print(f"FAIL: {png} is not the labelled picture of 5 rows")
        failures += 1
run(VERSUS, "attribute", "--model", d_cnn, "--input", X, "--method", "integrated_gradients", "--html", os.path.join(WORK, "cnn_report"),
    "--out", os.path.join(WORK, "cnn_ig2.npy"))
page = open(os.path.join(WORK, "cnn_report", "index.html")).read()
if "data:image/png" not in page:
    print("FAIL: the report page does not embed the picture")
    failures += 1
# one target per row, as Captum's target tensor: saliency of logit T[i] for row i
T = np.array([2, 0, 1, 1, 0], dtype=np.float32)
np.save(os.path.join(WORK, "cnn_T.npy"), T)
run(VERSUS, "attribute", "--model", d_cnn, "--input", X, "--method", "saliency", "--target", os.path.join(WORK, "cnn_T.npy"),
    "--out", os.path.join(WORK, "cnn_sal_T.npy"))
xg = x.clone().requires_grad_(True)
net(xg).gather(1, torch.tensor(T, dtype=torch.long)[:, None]).sum().backward()
compare("saliency of one target per row", np.load(os.path.join(WORK, "cnn_sal_T.npy")), xg.grad.numpy(), 1e-4)
# the saliency map is torch's gradient of the predicted logit (versus's --abs off by default)
xg = x.clone().requires_grad_(True)
out = net(xg)
out.gather(1, out.argmax(1, keepdim=True)).sum().backward()
compare("saliency = d logit / dx", np.load(os.path.join(WORK, "cnn_saliency.npy")), xg.grad.numpy(), 1e-4)


# ---- a Siamese model with a learned head: a composite with two inputs ----------------------------------
class PairNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 8))  # smooth: IG's quadrature is exact enough
        self.head = nn.Sequential(nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, q, r):
        return self.head(torch.cat([self.enc(q), self.enc(r)], dim=1))


pair = PairNet().eval()
d_pair = os.path.join(WORK, "pair_model")
doc = torch_to_versus.save(pair, d_pair, {"q": (10,), "r": (10,)})
assert list(doc["composite"]["models"]) == ["enc", "head"], doc
q, r = torch.randn(6, 10), torch.randn(6, 10)
with torch.no_grad():
    want = pair(q, r).numpy()
Q, R = npy("pair_Q.npy", q.numpy()), npy("pair_R.npy", r.numpy())
run(VERSUS, "predict", "--model", d_pair, "--input", Q, "--reference", R, "--out", os.path.join(WORK, "pair_y.npy"))
compare("learned-head pair outputs", np.load(os.path.join(WORK, "pair_y.npy")), want)
R1 = npy("pair_R1.npy", r[:1].numpy())
for m in ("saliency", "integrated_gradients", "deeplift"):
    run(VERSUS, "attribute", "--model", d_pair, "--input", Q, "--reference", R1, "--method", m, "--out", os.path.join(WORK, f"pair_{m}.npy"))
    run(VERSUS, "evaluate", "--model", d_pair, "--input", Q, "--reference", R1, "--attributions", os.path.join(WORK, f"pair_{m}.npy"),
        "--out", os.path.join(WORK, f"pair_{m}.json"))
# evaluate with one reference row per query (item 1): the curve starts at the mean of f(q_i, r_i)
run(VERSUS, "attribute", "--model", d_pair, "--input", Q, "--reference", R, "--method", "integrated_gradients",
    "--out", os.path.join(WORK, "pair_rows.npy"))
run(VERSUS, "evaluate", "--model", d_pair, "--input", Q, "--reference", R, "--attributions", os.path.join(WORK, "pair_rows.npy"),
    "--out", os.path.join(WORK, "pair_rows.json"))
start = json.load(open(os.path.join(WORK, "pair_rows.json")))["mean_perturbation_curve"][0]
compare("evaluate's pairs (q_i, r_i): the curve's first point", [start], [want[:, 0].mean()], 1e-5)
run(VERSUS, "attribute", "--model", d_pair, "--input", Q, "--reference", R, "--side", "both", "--method", "integrated_gradients",
    "--out", os.path.join(WORK, "pair_both.npy"))
both = np.load(os.path.join(WORK, "pair_both.npy"))
with torch.no_grad():
    gap = both.reshape(6, -1).sum(1) - (pair(q, r) - pair(torch.zeros_like(q), torch.zeros_like(r))).numpy()[:, 0]
compare("pair IG over both sides sums to f(q, r) - f(0, 0)", gap + want[:, 0], want[:, 0], 1e-3)


# ---- an autoencoder: encoder and decoder children, a view back to the image ---------------------------
class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(64, 12), nn.ReLU(), nn.Linear(12, 4))
        self.decoder = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 64), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x)).view(x.size(0), 1, 8, 8)


ae = AE().eval()
d_ae = os.path.join(WORK, "ae_model")
torch_to_versus.save(ae, d_ae, {"x": (1, 8, 8)})
xa = torch.rand(4, 1, 8, 8)
with torch.no_grad():
    want = ae(xa).numpy()
run(VERSUS, "predict", "--model", d_ae, "--input", npy("ae_X.npy", xa.numpy()), "--out", os.path.join(WORK, "ae_y.npy"))
compare("autoencoder reconstructions", np.load(os.path.join(WORK, "ae_y.npy")), want)
XA = os.path.join(WORK, "ae_X.npy")


def torch_grad(score):
    xg = xa.clone().requires_grad_(True)
    score(ae(xg), xg).sum().backward()
    return xg.grad.numpy()


def recon(out, inp):
    return ((out - inp) ** 2).flatten(1).sum(1)


# its reconstruction error explained by three methods, evaluated and drawn
for m in ("saliency", "input_x_gradient", "integrated_gradients"):
    run(VERSUS, "attribute", "--model", d_ae, "--input", XA, "--method", m, "--score", "reconstruction", "--steps", "200",
        "--png", os.path.join(WORK, f"ae_{m}.png"), "--out", os.path.join(WORK, f"ae_{m}.npy"))
    run(VERSUS, "evaluate", "--model", d_ae, "--input", XA, "--attributions", os.path.join(WORK, f"ae_{m}.npy"), "--score", "reconstruction",
        "--heatmaps", os.path.join(WORK, f"ae_{m}_eval.png"))
g = torch_grad(recon)
compare("saliency of the reconstruction error", np.load(os.path.join(WORK, "ae_saliency.npy")), g, 1e-4)
compare("input x gradient of the reconstruction error", np.load(os.path.join(WORK, "ae_input_x_gradient.npy")), xa.numpy() * g, 1e-4)
with torch.no_grad():
    gap = recon(ae(xa), xa) - recon(ae(torch.zeros_like(xa)), torch.zeros_like(xa))
ig = np.load(os.path.join(WORK, "ae_integrated_gradients.npy")).reshape(4, -1).sum(1)
compare("IG of the reconstruction error sums to its change from the zero image", ig, gap.numpy(), 1e-3)
# a region of the output (the centre 4x4) and one output element per row
mask = np.zeros((1, 1, 8, 8), dtype=np.float32)
mask[0, 0, 2:6, 2:6] = 1
np.save(os.path.join(WORK, "ae_mask.npy"), mask)
run(VERSUS, "attribute", "--model", d_ae, "--input", XA, "--method", "saliency", "--target-mask", os.path.join(WORK, "ae_mask.npy"),
    "--out", os.path.join(WORK, "ae_region.npy"))
compare("saliency of the output's centre", np.load(os.path.join(WORK, "ae_region.npy")),
        torch_grad(lambda out, inp: (out * torch.tensor(mask)).flatten(1).sum(1)), 1e-4)
pix = np.array([0, 9, 27, 63], dtype=np.float32)
np.save(os.path.join(WORK, "ae_T.npy"), pix)
run(VERSUS, "attribute", "--model", d_ae, "--input", XA, "--method", "saliency", "--target", os.path.join(WORK, "ae_T.npy"),
    "--out", os.path.join(WORK, "ae_pixel.npy"))
compare("saliency of one output pixel per row", np.load(os.path.join(WORK, "ae_pixel.npy")),
        torch_grad(lambda out, inp: out.flatten(1).gather(1, torch.tensor(pix, dtype=torch.long)[:, None])), 1e-4)

# ---- what cannot be exported says so; a .pt file where a model is expected points at the script --------
try:
    torch_to_versus.save(nn.Sequential(nn.Conv2d(2, 4, 3, groups=2)), os.path.join(WORK, "bad"), {"x": (2, 8, 8)})
    print("FAIL: a grouped convolution was exported")
    failures += 1
except torch_to_versus.ExportError as e:
    print(f"refused as expected: {e}")
os.makedirs(os.path.join(WORK, "renamed"), exist_ok=True)
os.replace(pt, os.path.join(WORK, "renamed", "model.safetensors"))
with open(os.path.join(WORK, "renamed", "model.json"), "w") as f:
    f.write(open(os.path.join(d_cnn, "model.json")).read())
for model in (os.path.join(WORK, "renamed"), os.path.join(WORK, "renamed", "model.safetensors")):
    res = run(VERSUS, "predict", "--model", model, "--input", X, "--out", os.path.join(WORK, "x.npy"), want=1)
    if "torch_to_versus.py" not in res.stderr:
        print(f"FAIL: --model {model} (a torch.save file): no pointer to datasets/io/torch_to_versus.py in: {res.stderr.strip()}")
        failures += 1

print(f"torch_export: {failures} failures")
sys.exit(1 if failures else 0)
