#!/bin/sh
# cli_explain.sh - attribute, evaluate, explain snx and demo as a user meets them: trained models on
# synthetic data, the files written, the reports' numbers, and the exit status of every mistake.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_explain.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# a classifier on planted tabular data, and its inputs
check "train mlp" 0 $V train --arch mlp --data synthetic-tabular --n 300 --epochs 5 --seed 2 --out clf
check "export inputs" 0 $V data export synthetic-tabular --n 300 --seed 2 --out data
for m in saliency input_x_gradient integrated_gradients smoothgrad deeplift occlusion lime kernel_shap; do
    check "attribute $m" 0 $V attribute --model clf --input data/X.npy --method $m --samples 100 --out a_$m.npy
    exists "attributions of $m" a_$m.npy
done
check "IG with 1 thread" 0 $V attribute --model clf --input data/X.npy --method integrated_gradients --threads 1 --out t1.npy
check "IG with 2 threads" 0 $V attribute --model clf --input data/X.npy --method integrated_gradients --threads 2 --out t2.npy
same "attributions independent of the thread count" t1.npy t2.npy
check "IG one-vs-one with a report" 0 $V attribute --model clf --input data/X.npy --method integrated_gradients --target 1 \
    --contrast 0 --steps 100 --report ig.json --out a_ig.npy
grep_out "report has the completeness gap" '"largest_delta"' ig.json
grep_out "report has evaluations" '"evaluations": 30000' ig.json
check "deepshap with class baselines" 0 $V attribute --model clf --input data/X.npy --method deepshap --class-baselines 8 \
    --baseline-data synthetic-tabular --out a_ds.npy
check "evaluate" 0 $V evaluate --model clf --input data/X.npy --attributions a_integrated_gradients.npy --per-step 4 \
    --replace zero --out eval.json --curves curve.svg
grep_out "AOPC reported" '"aopc_all"' eval.json
grep_out "faithfulness reported" '"faithfulness"' eval.json
exists "curve written" curve.svg
check "unknown method" 2 $V attribute --model clf --input data/X.npy --method magic --out x.npy
grep_out "method named" "unknown method 'magic'" err.txt
check "missing model" 1 $V attribute --model nowhere --input data/X.npy --method saliency --out x.npy
grep_out "file named" "nowhere" err.txt
check "target out of range" 1 $V attribute --model clf --input data/X.npy --method saliency --target 9 --out x.npy
grep_out "class named" "target 9 outside \[0, 2)" err.txt
# issue 38: --target says what it takes (no internal bound), one target per row from a file, a scalar of the output
check "a target that is not a number" 2 $V attribute --model clf --input data/X.npy --method saliency --target x --out x.npy
grep_out "--target's message says what it takes" "an integer >= 0) or T.npy with one per row, got 'x'" err.txt
if grep -q 1073741824 err.txt; then bad "--target's message shows an internal bound"; else ok; fi
# T.npy: float32 [300] of 0, 1, 0, 1, ... (a .npy header of 128 bytes, then the values)
{ printf '\223NUMPY\001\000\166\000'; printf "{'descr': '<f4', 'fortran_order': False, 'shape': (300,), }%58s\n" ''
  i=0; while [ $i -lt 150 ]; do printf '\000\000\000\000\000\000\200\077'; i=$((i + 1)); done; } > T.npy
check "one target per row" 0 $V attribute --model clf --input data/X.npy --method saliency --target T.npy --report rt.json --out a_t.npy
grep_out "row 1 explains class 1" '"row": 1, "target": 1,' rt.json
grep_out "row 2 explains class 0" '"row": 2, "target": 0,' rt.json
check "evaluate with one target per row" 0 $V evaluate --model clf --input data/X.npy --attributions a_t.npy --target T.npy --out et.json
check "targets of the wrong length" 1 $V attribute --model clf --input data/X.npy --method saliency --target data/X.npy --out x.npy
grep_out "targets' length named" "one integer per input row (300)" err.txt
check "a class and a file of targets" 2 $V attribute --model clf --input data/X.npy --method saliency --target 1 --target T.npy --out x.npy
check "the sum of the outputs explained" 0 $V attribute --model clf --input data/X.npy --method integrated_gradients --score sum \
    --report rs.json --out a_s.npy
gap=$(sed -n 's/.*"largest_delta": \([-0-9.e]*\),.*/\1/p' rs.json)
if awk -v g="$gap" 'BEGIN { exit !(g != "" && g < 0.01 && g > -0.01) }'; then ok; else bad "IG of the sum of the outputs is complete: largest gap '$gap'"; fi
check "--score with --target" 2 $V attribute --model clf --input data/X.npy --method saliency --score sum --target 1 --out x.npy
check "an unknown --score" 2 $V attribute --model clf --input data/X.npy --method saliency --score mean --out x.npy
grep_out "--score names its choices" "sum, norm or reconstruction" err.txt
check "a reconstruction error needs the input's size" 1 $V attribute --model clf --input data/X.npy --method saliency \
    --score reconstruction --out x.npy
grep_out "sizes named" "outputs of the input's size" err.txt
check "a target mask of the wrong size" 1 $V attribute --model clf --input data/X.npy --method saliency --target-mask data/X.npy --out x.npy
# evaluate prints a table of means and writes the full summary beside the attributions
check "evaluate's table" 0 $V evaluate --model clf --input data/X.npy --attributions a_saliency.npy --per-step 4
grep_out "a table of the metrics" "monotonicity" out.txt
grep_out "the table names the JSON" "a_saliency.evaluation.json" out.txt
if grep -q mean_perturbation_curve out.txt; then bad "evaluate printed the curve"; else ok; fi
grep_out "the full summary beside the attributions" '"mean_perturbation_curve"' a_saliency.evaluation.json
grep_out "flips to zero by default" '"replace": "zero"' a_saliency.evaluation.json
check "evaluate --out - writes the JSON to standard output" 0 $V evaluate --model clf --input data/X.npy --attributions a_saliency.npy \
    --per-step 4 --out -
grep_out "JSON on standard output" '"mean_perturbation_curve"' out.txt
# a report of tabular attributions: bar charts named by feature
printf 'f%s\n' 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 > names.txt
check "attribute --html" 0 $V attribute --model clf --input data/X.npy --method saliency --html tabrep --feature-names names.txt --out x.npy
exists "the report page" tabrep/index.html
exists "a bar chart per row" tabrep/row_7.svg
grep_out "bars named by feature" '>f1[0-9]*<' tabrep/row_0.svg
check "--png draws images only" 2 $V attribute --model clf --input data/X.npy --method saliency --png x.png --out x.npy
check "attributions of another shape" 1 $V evaluate --model clf --input data/X.npy --attributions data/y.npy
check "gradcam needs a conv layer" 1 $V attribute --model clf --input data/X.npy --method gradcam --out x.npy

# a Siamese model explained with SNX
check "train siamese-mlp" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 300 --epochs 5 --seed 2 --out sn
check "explain snx" 0 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 0 --reference 1 --out expl
grep_out "masks printed with feature names" "=" out.txt
grep_out "faithfulness printed" "faithfulness" out.txt
exists "explanation written" expl/explanation.json
grep_out "metrics in the JSON" '"conformity"' expl/explanation.json
check "explain with --top-present" 0 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 0 --reference 1 \
    --top 3 --top-present --out expl3
grep_out "--top-present stamped" '"top": 3, "top_fraction": 0.75, "top_present": true' expl3/explanation.json
grep_out "the default selects over every feature" '"top_present": false' expl/explanation.json
check "help explain" 0 $V help explain
grep_out "--top-present documented" "top-present" out.txt
check "explain snx-kl" 0 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 3 --reference 4 --method snx-kl --out expl2
$V help explain >help_explain.txt 2>&1
grep_out "help lists SNX's registry entries with their older spellings" "snx_kl (snx-kl)" help_explain.txt
check "explain snx_kl, the registry's spelling" 0 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 3 --reference 4 \
    --method snx_kl --out expl2r
cmp -s expl2/explanation.json expl2r/explanation.json && ok || bad "snx_kl and its alias snx-kl explain alike"
check "a misspelt SNX method" 2 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 3 --reference 4 --method snx_kll --out e5
grep_out "did you mean" "did you mean 'snx_kl'" err.txt
check "attribute refuses an SNX method" 1 $V attribute --model clf --input data/X.npy --method snx --out x.npy
grep_out "where SNX's methods run" "versus explain snx" err.txt
check "query outside the test portion" 1 $V explain snx --model sn --data synthetic-tabular --n 300 --seed 2 --query 5000 --reference 1 --out e3
grep_out "size named" "test portion has" err.txt
check "a classifier is not Siamese" 1 $V explain snx --model clf --data synthetic-tabular --n 300 --seed 2 --query 0 --reference 1 --out e4
check "unknown explainer" 2 $V explain lime --model sn

# pairs and interactions through the method registry
check "help attribute lists the registry" 0 $V help attribute
grep_out "integrated_hessians documented" "integrated_hessians" out.txt
grep_out "--side documented" "side" out.txt
check "predict pairs row by row" 0 $V predict --model sn --input data/X.npy --reference data/X.npy --out sim.npy
check "IG of both sides of each pair" 0 $V attribute --model sn --input data/X.npy --reference data/X.npy --side both \
    --method integrated_gradients --report pair.json --out a_pair.npy
grep_out "report names the side" '"side": "both"' pair.json
check "the reference side" 0 $V attribute --model sn --input data/X.npy --reference data/X.npy --side reference --method saliency --out a_ref.npy
check "integrated hessians of pairs" 0 $V attribute --model sn --input data/X.npy --reference data/X.npy --side both \
    --method integrated_hessians --steps 4 --out ih.npy
check "evaluate interactions" 0 $V evaluate --model sn --input data/X.npy --reference data/X.npy --side both --attributions ih.npy --out ih.json
grep_out "interactions judged by completeness" '"completeness"' ih.json
check "a report of the interaction matrices" 0 $V evaluate --model sn --input data/X.npy --reference data/X.npy --side both \
    --attributions ih.npy --report ihrep
exists "interactions page" ihrep/index.html
exists "matrix of row 0" ihrep/interactions_row_0.svg
exists "matrix of row 3" ihrep/interactions_row_3.svg
grep_out "matrix cells drawn" '<rect class="cell"' ihrep/interactions_row_0.svg
grep_out "query and reference features labelled" '>r[0-9][0-9]*<' ihrep/interactions_row_0.svg
grep_out "a colour bar" 'class="colorbar"' ihrep/interactions_row_0.svg
grep_out "the page inlines the matrices" 'id="fig-interactions_row_3"' ihrep/index.html
grep_out "results.json knows the matrix kind" '"kind": "matrix"' ihrep/results.json
cp ihrep/index.html ihrep.html
check "the interactions page rebuilt" 0 $V report ihrep
same "the page rebuilt bit for bit" ihrep.html ihrep/index.html
check "--report needs interactions" 2 $V evaluate --model clf --input data/X.npy --attributions a_integrated_gradients.npy --report x
check "curves do not apply to interactions" 2 $V evaluate --model sn --input data/X.npy --reference data/X.npy --side both \
    --attributions ih.npy --curves c.svg
check "unknown side" 2 $V attribute --model sn --input data/X.npy --reference data/X.npy --side left --method saliency --out x.npy
check "a method option out of range" 2 $V attribute --model clf --input data/X.npy --method integrated_gradients --steps 0 --out x.npy
grep_out "option named" "--steps" err.txt

# the demo and its report
check "demo" 0 $V demo --out demo
exists "demo report" demo/index.html
exists "demo figure" demo/tabular_masks.svg
grep_out "demo explains with SNX" "SNX, other-class reference" out.txt

cd .. && rm -rf "$W"
echo "cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
