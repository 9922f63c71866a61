#!/bin/sh
# cli_ganmex.sh - GANMEX as a user meets it: a classifier, the GANMEX model trained against it
# (--arch ganmex --classifier), its baselines in `versus attribute --baseline gan:DIR`, a small
# `versus bench ganmex`, and the exit status and message of every mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_ganmex.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
D="--data synthetic-shapes --n 60"

check "classifier" 0 $V train --arch ganmex-mnist $D --epochs 2 --out clf
check "ganmex against it" 0 $V train --arch ganmex --classifier clf $D --epochs 1 --batch-size 8 --sample-every 4 --out gan
grep_out "the judge's metrics are printed" "target_class_rate" out.txt
grep_out "metrics.json has the rate" '"target_class_rate"' gan/metrics.json
grep_out "metrics.json has g_sim" '"g_sim"' gan/metrics.json
exists "a sample grid" gan/samples/step-00000004.png
grep_out "the model keeps its classifier" '"classifier"' gan/model.json
check "resume with the classifier" 0 $V train --arch ganmex --classifier clf $D --epochs 2 --batch-size 8 --out gan --resume
check "ganmex without a classifier" 1 $V train --arch ganmex $D --epochs 1 --out nogan
grep_out "names what is missing" 'no "classifier"' err.txt
check "--classifier on another arch" 2 $V train --arch stargan-gen --classifier clf $D --epochs 1 --out sg
grep_out "says where it applies" "applies to ganmex models" err.txt
check "--classifier that is no model" 1 $V train --arch ganmex --classifier nowhere $D --epochs 1 --out g2
grep_out "names the directory" "nowhere" err.txt

check "export" 0 $V data export synthetic-shapes --n 6 --out x
check "IG with GANMEX baselines" 0 $V attribute --model clf --input x/X.npy --method integrated_gradients --target 0 --contrast 1 \
    --baseline gan:gan --steps 8 --report rep.json --out a.npy
exists "attributions written" a.npy
grep_out "a baseline score per row" '"baseline_score"' rep.json
check "DeepLIFT with GANMEX baselines" 0 $V attribute --model clf --input x/X.npy --method deeplift --contrast 1 --baseline gan:gan --out d.npy
check "a classifier is no generator" 1 $V attribute --model clf --input x/X.npy --method deeplift --baseline gan:clf --out e.npy
grep_out "says so" 'not a GAN with a "generator"' err.txt
check "gan: needs a directory" 1 $V attribute --model clf --input x/X.npy --method deeplift --baseline gan:nowhere --out e.npy

check "bench ganmex" 0 $V bench ganmex $D --out b --clf-epochs 1 --gan-epochs 1 --gan-batch 8 --explain 3 --faith 1 --cascade 2 \
    --cascade-steps 2 --ig-steps 4 --per-step 32
for f in table.md results.json index.html cascade.svg curve_integrated_gradients.svg fig2_pairs.png b/models/ganmex/model.json; do
    case $f in b/*) exists "bench wrote $f" "$f" ;; *) exists "bench wrote $f" "b/$f" ;; esac
done
for k in target_class_rate distance aopc train_seconds command commit color_kept; do
    grep_out "results.json has $k" "\"$k\"" b/results.json
done
grep_out "the build's commit is stamped" "\"commit\": \"$($V --version | sed -n 's/^versus [0-9.]* (commit \(.*\))$/\1/p')\"" b/results.json
grep_out "Table 1" "Table 1: mean L2 distance" b/table.md
grep_out "Table 2 IG GANMEX" "^| IG | GANMEX |" b/table.md
grep_out "the stand-alone GAN" "stand-alone GAN" b/table.md
# the GANMEX generator re-trained against each randomised classifier: four ranks and four target rates
grep_out "cascade with GANMEX re-trained" '"ganmex_retrained": \[[-0-9]' b/results.json
grep_out "its target-class rates" '"ganmex_retrained_target_rate": \[[0-9]' b/results.json
grep_out "and how far S collapsed" '"randomised_top_class_share": \[[0-9]' b/results.json
grep_out "where x - b lies, per baseline" '"difference_inverse_localization": {"zero": [0-9]' b/results.json
grep_out "the page says why" "favours it by construction" b/table.md
grep_out "the page says how long" "re-trained 2 steps against each randomised S" b/table.md
cp b/models/ganmex/model.safetensors g0.safetensors
check "bench again loads the models" 0 $V bench ganmex $D --out b --explain 2 --faith 0 --cascade 1 --cascade-steps 1 --ig-steps 4 --per-step 32
same "the GAN is loaded, not retrained, and the cascade's re-training leaves it alone" g0.safetensors b/models/ganmex/model.safetensors
check "bench: a bad --cascade-steps" 2 $V bench ganmex $D --cascade-steps -1
check "bench: a bad flag" 2 $V bench ganmex $D --explain 0
check "bench: tabular data" 2 $V bench ganmex --data synthetic-tabular --out t
grep_out "says images" "square images" err.txt

# appendix D's colour claim is counted over every test row with a paired test (needs MNIST: $VERSUS_DATA)
if $V data describe colored-mnist >/dev/null 2>&1; then
    check "bench ganmex on coloured MNIST" 0 $V bench ganmex --data colored-mnist --out c --clf-epochs 1 --gan-epochs 1 --gan-batch 8 \
        --explain 3 --faith 1 --cascade 1 --cascade-steps 0 --ig-steps 4 --per-step 32
    grep_out "colour kept over all test rows" '"rows": 3000' c/results.json
    grep_out "with McNemar's test" '"mcnemar_p": [0-9]' c/results.json
    grep_out "the page says so" "McNemar's exact test" c/table.md
else
    echo "cli_ganmex: skipping the coloured-MNIST bench (MNIST not found; set VERSUS_DATA)"
fi

cd .. && rm -rf "$W"
echo "cli_ganmex: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
