#!/bin/sh
# cli_svae.sh - the SVAE paper from the command line on synthetic shapes: train svae and m2 with task
# options, predict, `versus explain svae` (files and shapes), `versus bench svae` at a tiny scale
# (report files, results.json's fields), and the exit status and message of each kind of mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_svae.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
D="--data synthetic-shapes --n 120"

check "help train lists svae" 0 $V help train
grep_out "svae in the zoo" "  svae " out.txt
grep_out "m2 in the zoo" "  m2 " out.txt
grep_out "beta documented" "beta" out.txt
check "train svae" 0 $V train --arch svae $D --epochs 2 --alpha 10 --beta 0.9 --out sv --sample-every 100
grep_out "--alpha and --beta are task options" '"task_opts": "alpha=10,beta=0.9"' sv/metrics.json
grep_out "accuracy printed" "test_accuracy" out.txt
grep_out "R printed" "test_R" out.txt
exists "invariance grid" sv/samples/step-00000004.png
check "train m2" 0 $V train --arch m2 $D --epochs 1 --task-opts alpha=10,unlabelled=1 --out m2
check "svae has no unlabelled" 1 $V train --arch svae $D --epochs 1 --task-opts unlabelled=1 --out bad
check "beta in [0, 1]" 1 $V train --arch svae $D --epochs 1 --beta 2 --out bad
grep_out "beta named" "beta" err.txt
check "export" 0 $V data export synthetic-shapes --n 120 --out x
check "predict class logits" 0 $V predict --model sv --input x/X.npy --out y.npy
shape_is "logits [N, 2]" y.npy "(120, 2)"

check "explain svae" 0 $V explain svae --model sv --input x/X.npy --row 4 --samples 2 --data synthetic-shapes --n 120 --out e
grep_out "class printed" "predicted class" out.txt
grep_out "divergence printed" "KL(q(z1|x)" out.txt
shape_is "invariant samples" e/invariant.npy "(2, 1, 16, 16)"
shape_is "divergence z1" e/divergence_z1.npy "(2, 1, 16, 16)"
shape_is "divergence z2" e/divergence_z2.npy "(2, 1, 16, 16)"
shape_is "counterfactuals" e/counterfactuals.npy "(2, 1, 16, 16)"
check "explain m2" 0 $V explain svae --model m2 --input x/X.npy --out e2
grep_out "M2 has no Eq. 9" "needs an SVAE" out.txt
shape_is "m2 counterfactuals" e2/counterfactuals.npy "(2, 1, 16, 16)"
check "explain needs --input" 2 $V explain svae --model sv --out e
check "explain row outside" 1 $V explain svae --model sv --input x/X.npy --row 500 --out e
grep_out "row named" "row 500" err.txt
check "explain a classifier" 1 $V explain svae --model y.npy --input x/X.npy --out e
check "explain bad method" 2 $V explain svae --model sv --input x/X.npy --method nope --out e

B="--data synthetic-shapes --test-data synthetic-shapes --n 120 --epochs 1 --hidden 16 --invariance 40 --divergence 5 --sigmas 0.5,1,2 --class 1"
check "bench svae" 0 $V bench svae $B --out b
for f in table.md results.json index.html labels_kept.svg diversity.svg fig3_invariant_grid.png fig4_classifier.png \
    fig5_divergence_z2.png fig6_divergence_z1.png fig7_counterfactuals.png; do
    exists "bench wrote $f" "b/$f"
done
commit=$($V --version | sed -n 's/^versus [0-9.]* (commit \(.*\))$/\1/p') # the build's, stamped by every bench
for k in '"accuracy"' '"reconstruction"' '"labels_kept"' '"command"' "\"commit\": \"$commit\"" '"SVAE a=6000 b=0.9"' '"M2 a=60"'; do
    grep_out "results.json has $k" "$k" b/results.json
done
check "bench svae is deterministic" 0 $V bench svae $B --out b2
# the same numbers but for training times and the command (OUT differs)
strip() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); d.pop("report"); d.pop("command")
for m in d["models"]: [m.pop(k) for k in list(m) if k.startswith("seconds")]
print(json.dumps(d, sort_keys=True))' "$1"; }
if command -v python3 >/dev/null 2>&1; then
    strip b/results.json >r1.json
    strip b2/results.json >r2.json
    same "same results but for times and OUT" r1.json r2.json
else
    echo "cli_svae: python3 absent, determinism of results.json not compared"
fi
grep_out "alpha / batch per example by default" '"alpha_per_example": 93.75' b/results.json
check "bench svae at equal time too" 0 $V bench svae $B --time-epochs 2 --alpha-per example --out b4
grep_out "the SVAE grid again at equal time" '"SVAE a=6000 b=0.9 2ep"' b4/results.json
grep_out "alpha per example" '"alpha_per_example": 6e+03' b4/results.json
grep_out "the table says which rows are equal time" "rows marked 2ep" b4/table.md
check "bench bad alpha reading" 2 $V bench svae $B --alpha-per pixel --out b3
check "bench needs a test set" 2 $V bench svae --data synthetic-shapes --out b3
check "bench bad sigmas" 2 $V bench svae $B --sigmas 0,1 --out b3
check "bench bad alphas" 2 $V bench svae $B --alphas 60 --out b3
check "bench unknown flag" 2 $V bench svae $B --gamma 1 --out b3

cd .. && rm -rf "$W"
echo "cli_svae: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
