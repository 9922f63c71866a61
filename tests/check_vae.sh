#!/bin/sh
# check_vae.sh VERSUS - the VAE example (784-400-20, Bernoulli decoder) trained one epoch on
# mnist-train by versus and by PyTorch (bench/vae_torch.py: same data, batch 128, Adam 1e-3): the
# mean test ELBO over three seeds must agree within 2%.  Skipped (77) without python3-torch or MNIST.
set -u
V=$1
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
W=check_vae.dir
if ! "$PY" -c 'import torch' 2>/dev/null; then echo "check_vae: skipped: python3-torch is not installed"; exit 77; fi
if ! "$V" data describe mnist-train >/dev/null 2>&1; then echo "check_vae: skipped: no MNIST under \$VERSUS_DATA"; exit 77; fi
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1
"$V" data export mnist-train --out train >/dev/null && "$V" data export mnist --out test >/dev/null || exit 1
sum=0
for s in 1 2 3; do
    "$V" train --arch vae --data mnist-train --test-data mnist --epochs 1 --batch-size 128 --seed $s --out vae$s >/dev/null || exit 1
    e=$(sed -n 's/.*"test_elbo": \([-0-9.e+]*\).*/\1/p' vae$s/metrics.json)
    echo "versus seed $s test_elbo $e"
    sum=$(awk -v a="$sum" -v b="$e" 'BEGIN { print a + b }')
done
ours=$(awk -v a="$sum" 'BEGIN { print a / 3 }')
theirs=$("$PY" "$SRC/bench/vae_torch.py" train/X.npy test/X.npy --epochs 1 --batch-size 128 --seeds 1,2,3 | tee /dev/stderr |
         sed -n 's/^mean test_elbo \([-0-9.e+]*\).*/\1/p')
cd .. && rm -rf "$W"
echo "mean test_elbo: versus $ours, PyTorch $theirs"
awk -v a="$ours" -v b="$theirs" 'BEGIN { d = (a - b) / b; if (d < 0) d = -d; printf "relative difference %.4f (limit 0.02)\n", d; exit d < 0.02 ? 0 : 1 }'
