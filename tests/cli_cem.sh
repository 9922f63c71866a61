#!/bin/sh
# cli_cem.sh - `versus explain cem` and `versus bench cem` as a user meets them: small trained models on
# synthetic images, the files written, and the exit status of every mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_cem.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

check "train a classifier" 0 $V train --arch ganmex-mnist --data synthetic-shapes --n 64 --epochs 1 --seed 3 --out clf
check "train a DIP-VAE-ii" 0 $V train --arch dip-vae-ii --data synthetic-shapes --n 64 --epochs 1 --seed 3 --out vae
check "export inputs" 0 $V data export synthetic-shapes --n 3 --seed 4 --out data
check "explain cem" 0 $V explain cem --model clf --vae vae --input data/X.npy --attrs "size:+0,bar:-3:-2:2" \
    --searches 2 --pn-iters 20 --pp-iters 10 --class-names other,square --out ex
for f in explanation.json pn.npy pp.npy cem.png; do exists "explain cem wrote $f" ex/$f; done
grep_out "explanation names the attributes" '"bar"' ex/explanation.json
grep_out "explanation has the PP size" '"pp_features"' ex/explanation.json
check "explain cem on superpixels with FISTA" 0 $V explain cem --model clf --vae vae --input data/X.npy --superpixels 8 --fista \
    --searches 1 --pn-iters 5 --pp-iters 5 --out ex2
check "explain cem without --vae" 2 $V explain cem --model clf --input data/X.npy --out ex3
check "explain cem with a bad attribute" 2 $V explain cem --model clf --vae vae --input data/X.npy --attrs "a:+99" --out ex3
check "explain cem with a bad range" 2 $V explain cem --model clf --vae vae --input data/X.npy --attrs "a:+0:3:1" --out ex3
check "explain cem with a bad number" 2 $V explain cem --model clf --vae vae --input data/X.npy --kappa x --out ex3
check "explain cem with a missing input" 1 $V explain cem --model clf --vae vae --input nothere.npy --out ex3
check "explain cem with a classifier as VAE" 1 $V explain cem --model clf --vae clf --input data/X.npy --out ex3
printf 'not a npy' > bad.npy
check "explain cem with a broken input" 1 $V explain cem --model clf --vae vae --input bad.npy --out ex3
check "bench cem without --data" 2 $V bench cem
check "bench cem on unknown data" 2 $V bench cem --data mnist --model clf --vae vae --out b
check "bench cem with a bad --dip" 2 $V bench cem --data fashion-mnist-shoes --dip iii
check "bench cem with a classifier of other images" 1 $V bench cem --data synthetic --model clf --vae vae --train-rows 10 --images 1 --out b

cd .. && rm -rf "$W"
echo "cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
